/* tests/progs/citcat_tiny.c - a static program without libc (built by mk/citcat.mk): reads
 * getrandom bytes, rdtsc and cpuid, loops a few hundred times with input-independent control
 * flow, writes a line and exits 5. Small enough to single-step under ptrace as an oracle. */
#include <stdint.h>

static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

void _start(void)
{
	uint64_t rnd = 0, h = 5381;
	uint32_t lo, hi, a = 0, b, c = 0, d;
	char line[18];
	sys3(318, (long)&rnd, sizeof(rnd), 0);	/* getrandom */
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	h ^= ((uint64_t)hi << 32 | lo) ^ b;
	for (int i = 0; i < 300; i++)
		h = h * 33 + (rnd >> (i & 63));
	for (int i = 0; i < 16; i++) {
		unsigned v = (unsigned)(h >> (60 - 4 * i)) & 15;
		line[i] = (char)("0123456789abcdef"[v]);
	}
	line[16] = '\n';
	sys3(1, 1, (long)line, 17);		/* write */
	sys3(231, 5, 0, 0);			/* exit_group(5) */
	for (;;)
		;
}
