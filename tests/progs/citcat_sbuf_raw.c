/* tests/progs/citcat_sbuf_raw.c - a static program without libc (built by mk/citcat.mk; no
 * preload library reaches it) that registers a citcat syscall buffer of its own and fills it
 * by hand, then makes a traced syscall, where the recorder drains the buffer. Modes (argv[1]):
 *   (none)   a well-formed buffered write(1, "buffered\n", 9) made through the untraced page,
 *            as the preload library does: records and replays verified (the fuzz seeds' small
 *            recording with a buffered record)
 *   unknown  an entry for mmap, a call the buffer never takes
 *   cut      a read entry whose data is cut short by the buffer's used size
 * Without the recorder it prints "not recorded" and exits 3. */
#include <stdint.h>

#include "citcat/syscallbuf_abi.h"

static uint64_t sb[CC_SB_SIZE / 8] __attribute__((aligned(4096)));

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			 "r"(r9) : "rcx", "r11", "memory");
	return r;
}

/* write(1, P, N) through the page's untraced instruction (built with -mno-red-zone) */
static long untraced_write(const char *p, long n)
{
	register long r10 __asm__("r10") = 0;	/* the entry says the unused arguments are 0 */
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long r;
	__asm__ volatile("movabs %[page], %%r11\n\tcall *%%r11" : "=a"(r) : "a"(CC_SB_WRITE), "D"(1L),
			 "S"(p), "d"(n), "r"(r10), "r"(r8), "r"(r9), [page] "i"(CC_SB_PAGE)
			 : "rcx", "r11", "memory");
	return r;
}

static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

__attribute__((used)) void raw_main(uint64_t *sp)
{
	const char *mode = sp[0] > 1 ? (const char *)sp[2] : "";
	static const char msg[] = "buffered\n";
	uint64_t *e = sb + CC_SB_HDR / 8;
	sb[0] = CC_SB_MAGIC;
	if (sys6(CC_SB_NR_REGISTER, (long)sb, CC_SB_SIZE, CC_SB_VERSION, 0, 0, 0) != 0) {
		sys6(1, 1, (long)"not recorded\n", 13, 0, 0, 0);
		sys6(231, 3, 0, 0, 0, 0, 0);
	}
	if (same(mode, "cut")) {	/* read(0, sb, 100) = 50 with 50 bytes, only 8 of them used */
		e[0] = CC_SB_READ, e[1] = 0, e[2] = (uint64_t)sb, e[3] = 100, e[7] = 50, e[8] = 50;
		sb[1] = CC_SB_ENTRY_HDR + 8;
	} else if (same(mode, "unknown")) {	/* mmap: never a buffered call */
		e[0] = 9, e[8] = 0;
		sb[1] = CC_SB_ENTRY_HDR;
	} else {
		/* mmap(CC_SB_PAGE, 4096, RWX, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE) */
		uint8_t *page = (uint8_t *)sys6(9, (long)CC_SB_PAGE, 4096, 7, 0x100022, -1, 0);
		if (page != (uint8_t *)CC_SB_PAGE)
			sys6(231, 4, 0, 0, 0, 0, 0);
		page[0] = 0x0f, page[1] = 0x05, page[2] = 0xc3;	/* syscall; ret */
		long r = untraced_write(msg, 9);
		e[0] = CC_SB_WRITE, e[1] = 1, e[2] = (uint64_t)msg, e[3] = 9, e[7] = (uint64_t)r;
		e[8] = r == 9 ? 9 : 0;
		for (int i = 0; i < 9 && r == 9; i++)
			((char *)(e + 9))[i] = msg[i];
		sb[1] = CC_SB_ENTRY_HDR + (r == 9 ? 16 : 0);
	}
	sys6(39, 0, 0, 0, 0, 0, 0);	/* getpid: a traced stop, where the recorder drains */
	sys6(231, 0, 0, 0, 0, 0, 0);
}

__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall raw_main\n\thlt\n");
