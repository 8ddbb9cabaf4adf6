/* tests/progs/split603010.c - three functions burning CPU in a known 60/30/10 split: each
 * spins until its share of a fixed CPU-time budget (thread CPU clock) is used, repeatedly in
 * small slices so the split holds for any sampling start point. Argument: total ms (800). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static void __attribute__((noinline)) spin_until(double end)
{
	unsigned long x = sink;
	while (cpu_ms() < end) {
		for (int i = 0; i < 2000; i++)	/* the hot loop */
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	sink = x;
}

void __attribute__((noinline)) func_sixty(double ms) { spin_until(cpu_ms() + ms); }
void __attribute__((noinline)) func_thirty(double ms) { spin_until(cpu_ms() + ms); }
void __attribute__((noinline)) func_ten(double ms) { spin_until(cpu_ms() + ms); }

int main(int argc, char **argv)
{
	double total = argc > 1 ? atof(argv[1]) : 800;
	double slice = 20;	/* ms per round: 12 + 6 + 2 */
	for (double done = 0; done < total; done += slice) {
		func_sixty(slice * 0.6);
		func_thirty(slice * 0.3);
		func_ten(slice * 0.1);
	}
	printf("sink %lu\n", sink);
	return 0;
}
