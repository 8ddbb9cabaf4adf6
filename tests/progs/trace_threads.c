/* tests/progs/trace_threads.c - three threads each calling tick() a different, known number of
 * times; prints how many ticks each made, the oracle for per-thread trace completeness. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void tick(unsigned long i)
{
	sink += i * i;
}

static void *worker(void *arg)
{
	unsigned long n = (unsigned long)arg;
	for (unsigned long i = 0; i < n; i++)
		tick(i);
	return NULL;
}

int main(void)
{
	static const unsigned long counts[3] = { 30000, 60000, 90000 };
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)counts[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++)
		printf("ticks %lu\n", counts[i]);
	return 0;
}
