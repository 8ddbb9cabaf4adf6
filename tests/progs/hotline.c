/* tests/progs/hotline.c - one function whose time is all in one source line (the whole loop,
 * marked HOT), for line-level attribution. Argument: millions of iterations (200).
 * The loop's control shares the body's line: a timer sample names the instruction after the
 * one that was stalled, and on AMD EPYC 74-87% of them named the loop's add/cmp/jne when the
 * `for` had a line of its own (Intel Xeons: the body's), so which of two lines came top
 * depended on the CPU, not on the profiler. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

unsigned long __attribute__((noinline)) hot_function(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; /* HOT */
	return x;
}

int main(int argc, char **argv)
{
	sink = hot_function((argc > 1 ? strtoul(argv[1], NULL, 10) : 200) * 1000000UL);
	printf("sink %lu\n", sink);
	return 0;
}
