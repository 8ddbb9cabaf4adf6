/* tests/progs/demo.c - the bundled demo: three functions with a known 60/30/10 split of CPU
 * time, a 32 MiB buffer touched page by page (page faults), and a few sleeps (context switches).
 * Usage: demo [SCALE]  (SCALE 1 = about 0.5 s of CPU) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

/* always_inline so each of heavy/medium/light runs its own loop (tests build with -fno-inline)
 * and a profile shows the 60/30/10 split by function */
static inline __attribute__((always_inline)) unsigned long spin(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void heavy(unsigned long n) { sink += spin(6 * n); }
__attribute__((noinline)) void medium(unsigned long n) { sink += spin(3 * n); }
__attribute__((noinline)) void light(unsigned long n) { sink += spin(n); }

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long unit = (unsigned long)(scale * 2.5e7);
	size_t bytes = 32u << 20;
	char *buf = malloc(bytes);
	if (!buf)
		return 1;
	for (size_t i = 0; i < bytes; i += 4096)
		buf[i] = (char)i;
	for (int round = 0; round < 10; round++) {
		heavy(unit / 10);
		medium(unit / 10);
		light(unit / 10);
		usleep(1000);
	}
	free(buf);
	printf("demo: done (checksum %lu)\n", sink & 0xffff);
	return 0;
}
