/* tests/progs/shim_rate.c - a software counter (spent_shim_sig_ticks) advanced at a known rate
 * by the clock: it holds floor(elapsed_ns / STEP_NS) at every moment the program runs. At the
 * end the program prints the rate it achieved by its own clock, "rate_per_s R", the oracle for
 * `spent shim --rate ticks=ticks`. Usage: shim_rate [SECONDS] [STEP_NS] (0.8 s, 50 ns). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spent/shim.h"

SPENT_SHIM_SIGNAL(ticks);

static unsigned long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.8;
	unsigned long step = argc > 2 ? strtoul(argv[2], NULL, 0) : 50;
	unsigned long start = now_ns(), t = start, end = start + (unsigned long)(seconds * 1e9);

	if (!step)
		step = 1;
	while ((t = now_ns()) < end)
		SPENT_SHIM_SET(ticks, (t - start) / step);
	SPENT_SHIM_SET(ticks, (t - start) / step);	/* the count at the final clock reading */
	printf("ticks %lu elapsed_ns %lu rate_per_s %.3f\n", (unsigned long)SPENT_SHIM_GET(ticks),
	       t - start, (double)SPENT_SHIM_GET(ticks) * 1e9 / (double)(t - start));
	return 0;
}
