/* tests/progs/wide_code.c - spin for SECONDS through 16384 distinct instructions, so nearly
 * every sample of a sampling profiler lands on a new pc: fills the daemon's kernel map (a map
 * of N keys fills after about N samples) and exercises its overflow path.
 *   wide_code SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* one pass: 16384 three-byte adds, each its own pc */
__attribute__((noinline)) static unsigned wide_pass(unsigned x)
{
	__asm__ volatile(".rept 16384\n\taddl $1, %0\n\t.endr" : "+r"(x));
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end = now() + secs;
	unsigned x = 0;
	while (now() < end)
		for (int i = 0; i < 64; i++)
			x = wide_pass(x);
	printf("%u\n", x);
	return 0;
}
