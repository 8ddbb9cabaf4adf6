/* tests/progs/daemon_split.c - a workload with a known 60/30/10 split of CPU time across three
 * functions (each runs its own loop: no shared helper to blur attribution). It measures its
 * own per-function thread CPU time and prints the split it actually got, as the oracle:
 *   heavy 60.1
 *   medium 29.9
 *   light 10.0
 * Usage: daemon_split [SECONDS of CPU, default 1.5] [NH NM NL]
 *        daemon_split fixed N   (N rounds of fixed work, no output: a benchmark workload)
 * NH NM NL: calls of heavy, medium, light per round (default 1 1 1: the 60/30/10 split), so
 * two processes of this program can do different known work (per-process profiles). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define SPIN(n)                                                                 \
	do {                                                                    \
		unsigned long x_ = 1;                                           \
		for (unsigned long i_ = 0; i_ < (n); i_++)                      \
			x_ = x_ * 6364136223846793005UL + 1442695040888963407UL; \
		sink += x_;                                                     \
	} while (0)

__attribute__((noinline)) void heavy(unsigned long n) { SPIN(6 * n); }
__attribute__((noinline)) void medium(unsigned long n) { SPIN(3 * n); }
__attribute__((noinline)) void light(unsigned long n) { SPIN(n); }

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5, t[3] = { 0, 0, 0 }, total = 0;
	unsigned long unit = 200000;
	long calls[3] = { 1, 1, 1 };

	if (argc > 2 && argv[1][0] == 'f') {
		for (long r = atol(argv[2]); r > 0; r--) {
			heavy(unit);
			medium(unit);
			light(unit);
		}
		return 0;
	}

	for (int i = 0; i < 3 && argc > 4; i++)
		calls[i] = atol(argv[2 + i]);
	if (calls[0] + calls[1] + calls[2] <= 0)
		return 2;
	/* interleave small slices so each function sees the same machine conditions */
	while (total < secs) {
		double a = cpu_now();
		for (long k = 0; k < calls[0]; k++)
			heavy(unit);
		double b = cpu_now();
		for (long k = 0; k < calls[1]; k++)
			medium(unit);
		double c = cpu_now();
		for (long k = 0; k < calls[2]; k++)
			light(unit);
		double d = cpu_now();
		t[0] += b - a;
		t[1] += c - b;
		t[2] += d - c;
		total = t[0] + t[1] + t[2];
	}
	printf("heavy %.1f\nmedium %.1f\nlight %.1f\n", 100 * t[0] / total, 100 * t[1] / total,
	       100 * t[2] / total);
	return 0;
}
