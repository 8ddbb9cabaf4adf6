/* tests/progs/studies_mix.c - a cache workload with misses at every level: a 256 KB array swept
 * with read-modify-writes, strided reads over 12 MB, random reads in 2 MB, and calls through a
 * table of functions (i-stream spread). Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#define BIG (12 << 20)
static unsigned char big[BIG];
static long mid[32768];

static long f0(long x) { return x * 3 + 1; }
static long f1(long x) { return x ^ 0x5a5a; }
static long f2(long x) { return x + (x >> 3); }
static long f3(long x) { return x - 7; }
static long (*const fns[4])(long) = { f0, f1, f2, f3 };

int main(void)
{
	long s = 0;
	unsigned r = 12345;
	for (int rep = 0; rep < 4; rep++) {
		for (int i = 0; i < 32768; i++)
			mid[i] += i ^ rep;
		for (long i = 0; i < BIG; i += 4096 + 64 * rep)
			s += big[i];
		for (int i = 0; i < 60000; i++) {
			r = r * 1103515245u + 12345u;
			s += mid[(r >> 8) & 32767];
			s = fns[i & 3](s);
		}
	}
	printf("%ld\n", s);
	return 0;
}
