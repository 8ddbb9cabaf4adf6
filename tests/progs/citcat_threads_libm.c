/* citcat_threads_libm - three threads summing sin() terms, under a mutex every 1000 terms:
 * glibc's sin saves MXCSR with stmxcsr in its stack frame and keeps the copy in rbx, where the
 * CPU's copy has the sticky inexact flag (0x1fa0) and the simulator's never does (0x1f80). A
 * preemption inside sin then never matched its point (10 recordings in 10 on an AMD EPYC,
 * --time-slice 1); citcat_threads.sh replays such recordings. Argument: terms per thread
 * (default 800000). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 3
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double total;
static long terms = 800000;

static void *sum_sines(void *arg)
{
	long k = (long)arg;
	double s = 0;
	for (long i = 1; i < terms; i++) {
		s += sin((double)i * 0.001 * (double)k) / (double)i;
		if (i % 1000 == 0) {
			pthread_mutex_lock(&lock);
			total += s;
			pthread_mutex_unlock(&lock);
		}
	}
	return (void *)(long)(s * 1e6);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		terms = atol(argv[1]);
	pthread_t t[THREADS];
	for (long k = 0; k < THREADS; k++)
		pthread_create(&t[k], NULL, sum_sines, (void *)(k + 1));
	for (int k = 0; k < THREADS; k++) {
		void *v;
		pthread_join(t[k], &v);
		printf("thread %d: %ld\n", k + 1, (long)v);
	}
	printf("total %.6e\n", total);
	return 0;
}
