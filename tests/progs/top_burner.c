/* tests/progs/top_burner.c - a CPU burner for `spent top`'s tests: all its time is in one
 * function with a name nothing else has (top_burner_spin), for SECONDS of wall time
 * (argument, default 10), so a live view can be watched while it runs. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a dependent multiply-add chain, checking the clock every few million steps */
__attribute__((noinline)) void top_burner_spin(double until)
{
	unsigned long x = sink;

	while (now_s() < until) {
		for (unsigned long i = 0; i < 4000000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL) : 10.0;

	top_burner_spin(now_s() + secs);
	printf("sink %lu\n", sink);
	return 0;
}
