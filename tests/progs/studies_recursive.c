/* tests/progs/studies_recursive.c - two threads share a recursive mutex `rmtx`, each taking it
 * twice per task, the second time by pthread_mutex_lock or, every other task,
 * pthread_mutex_timedlock (glibc counts the inner lock and unlock in __count: no atomic, no
 * lock word write): a little work under both, the inner unlock, then IN_WORK iterations still holding
 * it, the outer unlock, and OUT_WORK iterations outside it. So by construction every hold of
 * `rmtx` runs at least IN_WORK loop iterations past the inner unlock, and none spans the work
 * outside. Prints its counts.
 *   studies_recursive */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define TASKS 16
#define IN_WORK 2000
#define OUT_WORK 20000

static pthread_mutex_t rmtx;
static volatile unsigned long sink;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void *tasks(void *arg)
{
	for (int k = 0; k < TASKS; k++) {
		pthread_mutex_lock(&rmtx);
		if (k % 2) {
			struct timespec deadline;
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_sec += 60;
			if (pthread_mutex_timedlock(&rmtx, &deadline))
				return NULL;
		} else {
			pthread_mutex_lock(&rmtx);
		}
		work(10);
		pthread_mutex_unlock(&rmtx);	/* the inner unlock: still held */
		work(IN_WORK);
		pthread_mutex_unlock(&rmtx);
		work(OUT_WORK);
	}
	return arg;
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rmtx, &a);
	pthread_t t;
	if (pthread_create(&t, NULL, tasks, NULL))
		return 1;
	tasks(NULL);
	pthread_join(t, NULL);
	printf("tasks %d\nthreads 2\nin_work %d\nout_work %d\n", TASKS, IN_WORK, OUT_WORK);
	return 0;
}
