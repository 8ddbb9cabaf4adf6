/* tests/progs/studies_stdiolock.c - glibc's own lock (lll_lock: a cmpxchg takes it, an xchg
 * releases it, __lll_lock_wait_private waits for it) with holds known by construction: stderr's
 * stream lock, taken by flockfile and released by funlockfile. PHASES times, each of two
 * workers does OUT_WORK iterations holding nothing, then holds the lock for IN_WORK; in every
 * other phase it also takes and releases a mutex (INNER) in the middle of that hold, so the
 * stream's lock is held across pthread lock calls. Then worker 0 holds it and sleeps 100 ms
 * while worker 1 asks for it and waits. No stdio call is made while the workers run, so these
 * are the lock's only acquisitions then. Prints:
 *   acquisitions N, contended N, in_work N, out_work N, inner N (the mutex's acquisitions) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define PHASES 4
#define IN_WORK 2000
#define OUT_WORK 30000

static volatile unsigned long sink;
static pthread_barrier_t meet;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void *worker(void *arg)
{
	long w = (long)arg;
	for (int k = 0; k < PHASES; k++) {
		/* each phase starts together: no thread runs long enough for Valgrind to switch
		 * threads in the middle of a hold, which would then span the other's work */
		pthread_barrier_wait(&meet);
		work(OUT_WORK);
		flockfile(stderr);
		if (k % 2) {
			work(IN_WORK / 2);
			pthread_mutex_lock(&inner);
			work(10);
			pthread_mutex_unlock(&inner);
			work(IN_WORK / 2);
		} else {
			work(IN_WORK);
		}
		funlockfile(stderr);
	}
	pthread_barrier_wait(&meet);
	if (w == 0) {
		flockfile(stderr);
		pthread_barrier_wait(&meet);
		work(IN_WORK);
		usleep(100000);	/* worker 1 asks for it meanwhile */
		funlockfile(stderr);
	} else {
		pthread_barrier_wait(&meet);
		flockfile(stderr);
		work(IN_WORK);
		funlockfile(stderr);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	pthread_barrier_init(&meet, NULL, 2);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("acquisitions %d\ncontended %d\nin_work %d\nout_work %d\ninner %d\n", 2 * PHASES + 2, 1,
	       IN_WORK, OUT_WORK, 2 * (PHASES / 2));
	return 0;
}
