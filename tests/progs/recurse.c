/* tests/progs/recurse.c - CPU time spent inside a recursion: main -> root -> rec(depth) ...
 * each level burns a little before and after recursing, so every sample's stack runs through
 * root and (usually) several rec frames. Argument: total millions of iterations (200). */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static void __attribute__((noinline)) burn(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

void __attribute__((noinline)) rec(int depth, unsigned long n)
{
	burn(n);
	if (depth > 0)
		rec(depth - 1, n);
	burn(n);
}

void __attribute__((noinline)) root(unsigned long total)
{
	for (int r = 0; r < 100; r++)
		rec(9, total / 100 / 20);
}

int main(int argc, char **argv)
{
	root((argc > 1 ? strtoul(argv[1], NULL, 10) : 200) * 1000000UL);
	printf("sink %lu\n", sink);
	return 0;
}
