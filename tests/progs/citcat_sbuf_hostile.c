/* tests/progs/citcat_sbuf_hostile.c - a static program without libc (built by mk/citcat.mk;
 * no preload library reaches it) that registers its own citcat syscall buffer and puts a
 * malformed entry in it, then makes a traced syscall, where the recorder drains the buffer:
 * mode 1 (no argument) an entry for mmap, a call the buffer never takes; mode 2 (any argument)
 * a read entry whose data is cut short by the buffer's used size. Without the recorder it
 * prints "not recorded" and exits 3. */
#include <stdint.h>

#include "citcat/syscallbuf_abi.h"

static uint64_t sb[CC_SB_SIZE / 8] __attribute__((aligned(4096)));

static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

__attribute__((used)) void hostile_main(uint64_t *sp)
{
	int cut = sp[0] > 1;	/* argc */
	sb[0] = CC_SB_MAGIC;
	if (sys3(CC_SB_NR_REGISTER, (long)sb, CC_SB_SIZE, CC_SB_VERSION) != 0) {
		sys3(1, 1, (long)"not recorded\n", 13);
		sys3(231, 3, 0, 0);
	}
	uint64_t *e = sb + CC_SB_HDR / 8;
	if (cut) {	/* read(0, sb, 100) = 50 with 50 bytes of data, but only 8 of them used */
		e[0] = CC_SB_READ, e[1] = 0, e[2] = (uint64_t)sb, e[3] = 100, e[7] = 50, e[8] = 50;
		sb[1] = CC_SB_ENTRY_HDR + 8;
	} else {	/* mmap: never a buffered call */
		e[0] = 9, e[8] = 0;
		sb[1] = CC_SB_ENTRY_HDR;
	}
	sys3(39, 0, 0, 0);	/* getpid: a traced stop, where the recorder drains */
	sys3(1, 1, (long)"drained\n", 8);
	sys3(231, 0, 0, 0);
}

__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall hostile_main\n\thlt\n");
