/* tests/progs/studies_condpool.c - a thread pool on a condition variable, for `spent locks`:
 * two workers wait in pthread_cond_wait (which releases the mutex) for tasks the main thread
 * posts. The mutex is held only while a task is posted (IN_WORK iterations of work in the
 * critical section, by main) and while a worker takes one; the long work (OUT_WORK) is done
 * outside it, and so are the signals (no syscall while main holds it: Valgrind may run
 * another thread at a syscall, and the hold would span that thread's work). So by
 * construction the hold time of `mtx` is at least TASKS x IN_WORK loop iterations and a small
 * part of the run; the condvar `cv` is no lock. Prints its counts.
 *   studies_condpool [timed]   timed: the workers wait in pthread_cond_timedwait (a deadline a
 *                              minute away), a symbol glibc 2.36 has in two versions */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TASKS 24
#define IN_WORK 2000
#define OUT_WORK 40000

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pending, done, taken, timed;
static volatile unsigned long sink;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void *worker(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&mtx);
		while (!pending && !done) {
			if (timed) {
				struct timespec deadline;
				clock_gettime(CLOCK_REALTIME, &deadline);
				deadline.tv_sec += 60;
				pthread_cond_timedwait(&cv, &mtx, &deadline);
			} else {
				pthread_cond_wait(&cv, &mtx);
			}
		}
		if (!pending) {
			pthread_mutex_unlock(&mtx);
			return NULL;
		}
		pending--;
		taken++;
		pthread_mutex_unlock(&mtx);
		work(OUT_WORK);
	}
}

int main(int argc, char **argv)
{
	timed = argc > 1 && !strcmp(argv[1], "timed");
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < TASKS; i++) {
		work(OUT_WORK);
		pthread_mutex_lock(&mtx);
		pending++;
		work(IN_WORK);
		pthread_mutex_unlock(&mtx);
		/* woken after the unlock: the wake is a futex syscall, and Valgrind can run
		 * another thread at a syscall (a worker's whole OUT_WORK). Inside the critical
		 * section main would rightly be seen holding mtx across it. */
		pthread_cond_signal(&cv);
	}
	pthread_mutex_lock(&mtx);
	done = 1;
	pthread_mutex_unlock(&mtx);
	pthread_cond_broadcast(&cv);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("tasks %d\ntaken %d\nin_work %d\nout_work %d\n", TASKS, taken, IN_WORK, OUT_WORK);
	return taken == TASKS ? 0 : 1;
}
