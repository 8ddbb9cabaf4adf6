/* tests/progs/shim_funcs.c - three functions with a known split of CPU time (about 60/30/10),
 * each timed by the program itself with CLOCK_THREAD_CPUTIME_ID: the oracle for a
 * -finstrument-functions build (build/progs/shim_funcs-instr) under `spent shim --histogram
 * func`. Usage: shim_funcs [SECONDS] (default 0.8). Prints "func NAME cpu_ns C". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

/* each function does its work inline: no calls, so its share is its own */
__attribute__((noinline)) void heavy(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < 6 * n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void medium(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < 3 * n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void light(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.8;
	void (*fn[3])(unsigned long) = { heavy, medium, light };
	const char *name[3] = { "heavy", "medium", "light" };
	unsigned long t[3] = { 0 }, n = 20000;
	unsigned long c0 = cpu_ns(), end = c0 + (unsigned long)(seconds * 1e9);

	while (cpu_ns() < end) {
		for (int f = 0; f < 3; f++) {
			unsigned long a = cpu_ns();
			fn[f](n);
			t[f] += cpu_ns() - a;
		}
	}
	for (int f = 0; f < 3; f++)
		printf("func %s cpu_ns %lu\n", name[f], t[f]);
	return 0;
}
