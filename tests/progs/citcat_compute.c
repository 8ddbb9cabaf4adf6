/* tests/progs/citcat_compute.c - a compute-bound loop (integer hashing over an array) for
 * bench/citcat.sh: few syscalls, many instructions. Usage: citcat_compute [ROUNDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	enum { N = 1 << 14 };
	static uint32_t a[N];
	uint64_t h = 14695981039346656037ULL;
	for (uint32_t i = 0; i < N; i++)
		a[i] = i * 2654435761u;
	for (long r = 0; r < rounds; r++) {
		for (uint32_t i = 0; i < N; i++) {
			h = (h ^ a[i]) * 1099511628211ULL;
			a[i] = (uint32_t)(h >> 17) + (a[(i + 7) & (N - 1)] >> 3);
		}
	}
	printf("%016llx\n", (unsigned long long)h);
	return 0;
}
