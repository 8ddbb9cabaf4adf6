/* tests/progs/citcat_inputs.c - a program whose output depends on every kind of external
 * input citcat records: file contents (argv[1..]), time(), clock_gettime, gettimeofday,
 * getrandom, rdtsc, malloc'd memory (brk and mmap), then prints a checksum of all of it and
 * exits with a status derived from it (for citcat record/replay tests). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0x100000001b3ULL;
}

static uint64_t sum_file(const char *path, uint64_t h, size_t *total)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(2);
	}
	unsigned char buf[1000];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n; i++)
			h = mix(h, buf[i]);
		*total += n;
	}
	fclose(f);
	return h;
}

int main(int argc, char **argv)
{
	uint64_t h = 1;
	size_t total = 0;
	for (int i = 1; i < argc; i++)
		h = sum_file(argv[i], h, &total);
	struct timespec ts;
	struct timeval tv;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h = mix(h, (uint64_t)ts.tv_nsec);
	clock_gettime(CLOCK_REALTIME, &ts);
	h = mix(h, (uint64_t)ts.tv_sec ^ (uint64_t)ts.tv_nsec);
	gettimeofday(&tv, NULL);
	h = mix(h, (uint64_t)tv.tv_usec);
	h = mix(h, (uint64_t)time(NULL));
	uint64_t rnd[4];
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return 3;
	for (int i = 0; i < 4; i++)
		h = mix(h, rnd[i]);
	h = mix(h, __rdtsc());
	/* small allocations (brk) and a large one (mmap), filled from the random state */
	uint64_t *small[64];
	for (int i = 0; i < 64; i++) {
		small[i] = malloc(64 + (size_t)i * 24);
		small[i][0] = mix(h, (uint64_t)i);
	}
	size_t big_n = 1 << 18;
	uint64_t *big = malloc(big_n * sizeof(*big));
	big[0] = h;
	for (size_t i = 1; i < big_n; i++)
		big[i] = mix(big[i - 1], i);
	for (int i = 0; i < 64; i++) {
		h = mix(h, small[i][0]);
		free(small[i]);
	}
	h = mix(h, big[big_n - 1]);
	free(big);
	printf("bytes %zu checksum %016llx\n", total, (unsigned long long)h);
	fprintf(stderr, "stderr line %llu\n", (unsigned long long)(h % 1000));
	return (int)(h % 7) + 10;
}
