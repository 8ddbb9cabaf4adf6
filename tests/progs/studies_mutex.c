/* tests/progs/studies_mutex.c - three threads take one mutex `mtx` ROUNDS times each and work
 * while holding it, every third round yielding the CPU while holding it (so the others find it
 * taken, even under Valgrind's serialised threads: the holder yields until a waiter has failed
 * its trylock, at most 50 times, and all threads start together at a barrier). Before each
 * lock a trylock tells whether the
 * lock was busy; the program prints "contended N" (its own count, the oracle for spent locks)
 * and "acquired N". A waiter that failed its trylock must find the lock still held when its
 * pthread_mutex_lock starts (spent counts a lock call contended when it needed a second atomic
 * or a futex wait): so the holder that saw it also waits until the mutex's word says a waiter
 * is in the slow path (glibc's 2), else a waiter descheduled between the two calls (Valgrind's
 * time slice ending there, rare) took the lock uncontended and the counts differed. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 60
#define WORK 4000

pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static volatile int waiters_seen;
static volatile long shared;
static long contended, acquired;

static void *run(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int r = 0; r < ROUNDS; r++) {
		if (pthread_mutex_trylock(&mtx) != 0) {
			__atomic_fetch_add(&waiters_seen, 1, __ATOMIC_SEQ_CST);
			pthread_mutex_lock(&mtx);
			contended++;
		}
		acquired++;
		if (r % 3 == 0) {
			int seen = __atomic_load_n(&waiters_seen, __ATOMIC_SEQ_CST);
			for (int k = 0; k < 50 && __atomic_load_n(&waiters_seen, __ATOMIC_SEQ_CST) == seen; k++)
				sched_yield();
			if (__atomic_load_n(&waiters_seen, __ATOMIC_SEQ_CST) != seen)
				for (int k = 0; k < 100000 && __atomic_load_n(&mtx.__data.__lock, __ATOMIC_SEQ_CST) != 2; k++)
					sched_yield();
		}
		for (int i = 0; i < WORK; i++)
			shared += i;
		pthread_mutex_unlock(&mtx);
		for (int i = 0; i < WORK / 10; i++)	/* a little work outside */
			__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	pthread_barrier_init(&start, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, run, NULL);
	run(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("contended %ld\nacquired %ld\n", contended, acquired);
	return 0;
}
