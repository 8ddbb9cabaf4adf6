/* tests/progs/top_burner.c - a CPU burner for `spent top`'s tests: all its time is in one
 * function with a name nothing else has (top_burner_spin), for SECONDS of wall time
 * (argument, default 10), so a live view can be watched while it runs. A second argument MB
 * first touches that many megabytes, so that its exit (unmapping them) takes long enough to
 * be sampled: the task runs on after its EXIT record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	char *mem = mb ? malloc(mb << 20) : NULL;

	if (mem) {
		memset(mem, 1, mb << 20);
		sink = (unsigned char)mem[(mb << 20) - 1];	/* kept: the memory is used */
	}

	top_burner_spin(now_s() + secs);
	printf("sink %lu\n", sink);
	return 0;
}
