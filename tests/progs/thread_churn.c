/* tests/progs/thread_churn.c - a pool that keeps replacing short-lived threads: each spins
 * about 300 us and ends, and a new one takes its place, for SECONDS seconds. An attach at any
 * moment finds threads that end while it opens their counters.
 * Usage: thread_churn SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

enum { POOL = 8 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *short_worker(void *arg)
{
	(void)arg;
	double end = now_s() + 300e-6;
	while (now_s() < end)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	double stop = now_s() + (argc > 1 ? atof(argv[1]) : 1.0);
	pthread_t t[POOL];
	while (now_s() < stop) {
		for (int k = 0; k < POOL; k++)
			if (pthread_create(&t[k], NULL, short_worker, NULL))
				return 1;
		for (int k = 0; k < POOL; k++)
			pthread_join(t[k], NULL);
	}
	return 0;
}
