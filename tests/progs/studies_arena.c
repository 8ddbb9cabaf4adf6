/* tests/progs/studies_arena.c - glibc malloc's arena locks from threads: THREADS workers each
 * allocate and free ROUNDS blocks too big for the thread cache (3000-3600 bytes), so every
 * malloc and every free takes the lock of the worker's arena once (glibc's lll_lock, in code
 * nobody here wrote); a few more acquisitions come from choosing an arena at the first malloc.
 * Prints: threads N, rounds N, work N (iterations between malloc and free, nothing held) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 3
#define ROUNDS 2000
#define WORK 200

static volatile unsigned long sink;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(3000 + (size_t)(i % 7) * 100);
		if (!p)
			abort();
		p[0] = 1;
		sink += (unsigned long)p[0];
		for (int k = 0; k < WORK; k++)
			sink += (unsigned long)k;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("threads %d\nrounds %d\nwork %d\n", THREADS, ROUNDS, WORK);
	return 0;
}
