/* tests/progs/split603010.c - three functions with a known 60/30/10 split of CPU time: each
 * runs the same latency-bound loop (a dependent multiply-add chain, so time is proportional
 * to iterations) for 6, 3 and 1 units per round. Argument: total millions of iterations.
 * On stderr, each function's share of the thread CPU time it measured around its calls: on a
 * shared host the split of time moves a few points from 60/30/10 (a slower stretch of the
 * host lands in one function), and a profiler must match the time, not the iterations. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long total = (argc > 1 ? strtoul(argv[1], NULL, 10) : 300) * 1000000UL;
	unsigned long rounds = 50, unit = total / rounds / 10;
	double spent[3] = { 0, 0, 0 };
	for (unsigned long r = 0; r < rounds; r++) {
		double t0 = thread_cpu();
		func_sixty(unit);
		double t1 = thread_cpu();
		func_thirty(unit);
		double t2 = thread_cpu();
		func_ten(unit);
		double t3 = thread_cpu();
		spent[0] += t1 - t0, spent[1] += t2 - t1, spent[2] += t3 - t2;
	}
	printf("sink %lu\n", sink);
	double all = spent[0] + spent[1] + spent[2];
	if (all > 0)
		fprintf(stderr, "split603010 cpu share: func_sixty %.2f func_thirty %.2f func_ten %.2f\n",
			100 * spent[0] / all, 100 * spent[1] / all, 100 * spent[2] / all);
	return 0;
}
