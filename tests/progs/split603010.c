/* tests/progs/split603010.c - three functions with a known 60/30/10 split of CPU time: each
 * runs the same latency-bound loop (a dependent multiply-add chain, so time is proportional
 * to iterations) for 6, 3 and 1 units per round. Argument: total millions of iterations. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

#define WORK(n)                                                                          \
	do {                                                                             \
		unsigned long x = sink;                                                  \
		for (unsigned long i = 0; i < (n); i++)                                  \
			x = x * 6364136223846793005UL + 1442695040888963407UL; /* hot */ \
		sink = x;                                                                \
	} while (0)

void __attribute__((noinline)) func_sixty(unsigned long n) { WORK(6 * n); }
void __attribute__((noinline)) func_thirty(unsigned long n) { WORK(3 * n); }
void __attribute__((noinline)) func_ten(unsigned long n) { WORK(n); }

int main(int argc, char **argv)
{
	unsigned long total = (argc > 1 ? strtoul(argv[1], NULL, 10) : 300) * 1000000UL;
	unsigned long rounds = 50, unit = total / rounds / 10;
	for (unsigned long r = 0; r < rounds; r++) {
		func_sixty(unit);
		func_thirty(unit);
		func_ten(unit);
	}
	printf("sink %lu\n", sink);
	return 0;
}
