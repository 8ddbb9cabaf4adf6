/* tests/progs/shim_phases.c - a main loop in three phases (by default 50/30/20 of the work)
 * that publishes the current phase (1, 2, 3; 0 outside the loop) in the software signal
 * spent_shim_sig_phase, and measures each phase's own CPU and wall time by the clock: the
 * oracle for `spent shim --histogram phase`. Usage: shim_phases [SECONDS] [W1,W2,W3]
 * (default 0.8 s, weights 50,30,20: each weight point is about 2.5 us of work per round).
 * Prints "phase N cpu_ns C wall_ns W" per phase. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spent/shim.h"

SPENT_SHIM_SIGNAL(phase);
extern int spent_shim_start(void) __attribute__((weak));

static volatile unsigned long sink;

static unsigned long now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

static void work(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.8;
	unsigned long weight[3] = { 50, 30, 20 };
	unsigned long cpu[3] = { 0 }, wall[3] = { 0 };
	unsigned long unit = 1000, t_end;

	if (argc > 2 && sscanf(argv[2], "%lu,%lu,%lu", &weight[0], &weight[1], &weight[2]) != 3) {
		fprintf(stderr, "shim_phases: weights '%s': expected W1,W2,W3\n", argv[2]);
		return 2;
	}
	if (spent_shim_start)	/* static builds link libspent-shim.a; the call is idempotent */
		spent_shim_start();
	/* calibrate a work unit (one weight point) to about 2.5 us: short phases spread
	 * scheduling gaps evenly */
	unsigned long t0 = now_ns(CLOCK_MONOTONIC);
	work(100000);
	unsigned long dt = now_ns(CLOCK_MONOTONIC) - t0;
	unit = dt ? 100000UL * 2500UL / dt : 5000;
	t_end = now_ns(CLOCK_MONOTONIC) + (unsigned long)(seconds * 1e9);
	while (now_ns(CLOCK_MONOTONIC) < t_end) {
		for (int p = 0; p < 3; p++) {
			unsigned long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
			SPENT_SHIM_SET(phase, p + 1);
			work(weight[p] * unit);
			SPENT_SHIM_SET(phase, 0);
			cpu[p] += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall[p] += now_ns(CLOCK_MONOTONIC) - w0;
		}
	}
	for (int p = 0; p < 3; p++)
		printf("phase %d cpu_ns %lu wall_ns %lu\n", p + 1, cpu[p], wall[p]);
	return 0;
}
