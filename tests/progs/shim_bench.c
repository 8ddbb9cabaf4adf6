/* tests/progs/shim_bench.c - the application for bench/shim.sh: a fixed amount of work that
 * publishes two software signals as it goes (a phase tag per chunk and a counter of work
 * blocks, written every 64 iterations), and prints its own CPU and wall time for that work.
 * Usage: shim_bench [BLOCKS] (default 4000000: about half a second). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spent/shim.h"

SPENT_SHIM_SIGNAL(phase);
SPENT_SHIM_SIGNAL(blocks);

static volatile unsigned long sink;

static unsigned long now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (unsigned long)ts.tv_sec * 1000000000UL + (unsigned long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long nblocks = argc > 1 ? strtoul(argv[1], NULL, 0) : 4000000;
	unsigned long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
	unsigned long x = 1;

	for (unsigned long b = 0; b < nblocks; b++) {
		if ((b & 1023) == 0)
			SPENT_SHIM_SET(phase, (b >> 10) % 3 + 1);
		for (int i = 0; i < 64; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		SPENT_SHIM_ADD(blocks, 1);
	}
	sink = x;
	printf("cpu_ns %lu wall_ns %lu\n", now_ns(CLOCK_THREAD_CPUTIME_ID) - c0,
	       now_ns(CLOCK_MONOTONIC) - w0);
	return 0;
}
