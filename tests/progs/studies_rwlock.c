/* tests/progs/studies_rwlock.c - a read-write lock whose holds are known by construction.
 * PHASES times: both workers take `rw` as readers and meet at a barrier inside (so the two read
 * holds overlap: the barrier cannot open unless both hold it at once), work IN_WORK iterations
 * and unlock; then each takes it as the writer in turn for IN_WORK iterations. Worker 0 also
 * takes its read lock twice (recursively) in each phase: one acquisition, held to the outer
 * unlock. Then two waits by construction: worker 1 asks for the write lock while worker 0
 * holds a read lock and sleeps 100 ms, then worker 0 asks for a read lock while worker 1
 * holds the write lock and sleeps. Then main holds `rw` as the writer while a thread tries it
 * every way that must fail (tryrdlock, trywrlock: EBUSY; timedrdlock, timedwrlock: ETIMEDOUT
 * after 1 ms), counting each result, and takes a second rwlock `rw_try` with tryrdlock and
 * trywrlock (both succeed). Prints what it did; the numbers are the test's oracle:
 *   reads N, writes N           acquisitions of rw (a reader's re-take is none)
 *   contended N                 of those, the ones that waited for another thread
 *   failed N                    lock calls on rw that returned an error (no acquisition)
 *   try_reads N, try_writes N   acquisitions of rw_try
 *   in_work N, out_work N       iterations inside a hold, and between holds holding nothing */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define PHASES 4
#define IN_WORK 2000
#define OUT_WORK 30000

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t rw_try = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t inside, phase;
static pthread_mutex_t count_mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static int reads, writes, contended, failed, try_reads, try_writes;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

static void count(int *what)
{
	pthread_mutex_lock(&count_mtx);
	++*what;
	pthread_mutex_unlock(&count_mtx);
}

static void *worker(void *arg)
{
	int w = (int)(long)arg;
	for (int k = 0; k < PHASES; k++) {
		work(OUT_WORK);
		pthread_barrier_wait(&phase);
		if (pthread_rwlock_rdlock(&rw) == 0)
			count(&reads);
		if (w == 0 && pthread_rwlock_rdlock(&rw) != 0)	/* taken again: no acquisition */
			count(&failed);
		pthread_barrier_wait(&inside);	/* both readers hold it here */
		work(IN_WORK);
		if (w == 0)
			pthread_rwlock_unlock(&rw);
		pthread_rwlock_unlock(&rw);
		pthread_barrier_wait(&phase);
		work(OUT_WORK);
		if (pthread_rwlock_wrlock(&rw) == 0)
			count(&writes);
		work(IN_WORK);
		pthread_rwlock_unlock(&rw);
		pthread_barrier_wait(&phase);
	}
	/* one thread holds rw and sleeps; the other asks for it meanwhile and waits */
	for (int k = 0; k < 2; k++) {
		work(OUT_WORK);
		int holder = w == k, as_reader = k == 0;
		pthread_barrier_wait(&phase);
		if (holder && (as_reader ? pthread_rwlock_rdlock(&rw) : pthread_rwlock_wrlock(&rw)) == 0)
			count(as_reader ? &reads : &writes);
		pthread_barrier_wait(&phase);
		if (holder) {
			work(IN_WORK);
			usleep(100000);
		} else if ((as_reader ? pthread_rwlock_wrlock(&rw) : pthread_rwlock_rdlock(&rw)) == 0) {
			count(as_reader ? &writes : &reads);
			count(&contended);
			work(IN_WORK);
		}
		pthread_rwlock_unlock(&rw);
		pthread_barrier_wait(&phase);
	}
	return NULL;
}

/* Every way to take rw that must fail while main holds it as the writer. */
static void *failing(void *arg)
{
	struct timespec ts;
	(void)arg;
	if (pthread_rwlock_tryrdlock(&rw) == EBUSY)
		count(&failed);
	if (pthread_rwlock_trywrlock(&rw) == EBUSY)
		count(&failed);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (pthread_rwlock_timedrdlock(&rw, &ts) == ETIMEDOUT)
		count(&failed);
	if (pthread_rwlock_timedwrlock(&rw, &ts) == ETIMEDOUT)
		count(&failed);
	if (pthread_rwlock_tryrdlock(&rw_try) == 0)
		count(&try_reads);
	work(IN_WORK);
	pthread_rwlock_unlock(&rw_try);
	if (pthread_rwlock_trywrlock(&rw_try) == 0)
		count(&try_writes);
	work(IN_WORK);
	pthread_rwlock_unlock(&rw_try);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	pthread_barrier_init(&inside, NULL, 2);
	pthread_barrier_init(&phase, NULL, 2);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_rwlock_wrlock(&rw);
	writes++;
	pthread_t f;
	pthread_create(&f, NULL, failing, NULL);
	pthread_join(f, NULL);
	pthread_rwlock_unlock(&rw);
	printf("reads %d\nwrites %d\ncontended %d\nfailed %d\ntry_reads %d\ntry_writes %d\n"
	       "in_work %d\nout_work %d\n",
	       reads, writes, contended, failed, try_reads, try_writes, IN_WORK, OUT_WORK);
	return 0;
}
