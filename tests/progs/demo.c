/* tests/progs/demo.c - the bundled demo: three functions with a known 60/30/10 split of CPU
 * time, a 32 MiB buffer touched page by page (page faults), and a few sleeps (context switches).
 * Usage: demo [SECONDS]  (about SECONDS of CPU time, default 0.5). The work is sized by the
 * thread's CPU clock, not by an iteration count: it runs as long on a fast CPU as on a slow one,
 * so tests that need "a run of at least N ms" hold on any machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Spin for SECS of CPU time. always_inline so each of heavy/medium/light runs its own loop
 * (tests build with -fno-inline) and a profile shows the 60/30/10 split by function; the clock
 * is read every 64K iterations (well under 1% of the time). */
static inline __attribute__((always_inline)) unsigned long spin(double secs)
{
	unsigned long x = 1;
	double end = cpu_seconds() + secs;
	do {
		for (unsigned long i = 0; i < 65536; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	} while (cpu_seconds() < end);
	return x;
}

__attribute__((noinline)) void heavy(double s) { sink += spin(0.6 * s); }
__attribute__((noinline)) void medium(double s) { sink += spin(0.3 * s); }
__attribute__((noinline)) void light(double s) { sink += spin(0.1 * s); }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	size_t bytes = 32u << 20;
	char *buf = malloc(bytes);
	if (!buf)
		return 1;
	for (size_t i = 0; i < bytes; i += 4096)
		buf[i] = (char)i;
	for (int round = 0; round < 10; round++) {
		heavy(secs / 10);
		medium(secs / 10);
		light(secs / 10);
		usleep(1000);
	}
	free(buf);
	printf("demo: done (checksum %lu)\n", sink & 0xffff);
	return 0;
}
