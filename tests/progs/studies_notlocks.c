/* tests/progs/studies_notlocks.c - synchronization that is no lock beside locks: two
 * workers, PHASES times each, make the first call of a libc function of their own (with lazy
 * binding the dynamic linker's _dl_fixup stores 1 into the thread's scope flag and resets it
 * with an xchg) and do OUT_WORK iterations holding nothing. Then, PHASES times, they pass the
 * binary semaphore `sem_gate` (sem_wait ... sem_post) and the read-write lock `rw` (as a
 * writer) around IN_WORK iterations each, take the mutex `mtx` and the bare spin locks
 * `spin_flag` (a byte: test-and-set, clear) and `spin_word` (an int: xchg, store of 0) for
 * IN_WORK iterations each, and
 * post and wait on a heap semaphore. At the end main frees that one and writes over a new
 * block of its size (plain stores into its old words); takes and drops a reference on a
 * heap object by atomic adds, frees it and reuses its memory (a counter); and empties a list
 * head by an 8-byte xchg and pushes onto it with plain stores, as glibc's malloc does its
 * fastbins while single-threaded. Only `mtx`, the spin locks and `rw` (by writers) are locks,
 * each taken once a phase by each worker; no hold spans OUT_WORK.
 *   studies_notlocks [exec]   with "exec": then runs itself again in the same pid */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PHASES 4
#define IN_WORK 200
#define OUT_WORK 20000

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem_gate;
static sem_t *sem_heap;
static volatile unsigned long sink;
static void *volatile list_head;
static unsigned char spin_flag;
static int spin_word;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

/* a libc function this thread calls for the first time in phase K (a lazy binding each) */
static void first_call(int worker, int k)
{
	switch (worker * PHASES + k) {
	case 0: sink += (unsigned long)getuid(); break;
	case 1: sink += (unsigned long)geteuid(); break;
	case 2: sink += (unsigned long)getgid(); break;
	case 3: sink += (unsigned long)getegid(); break;
	case 4: sink += (unsigned long)getppid(); break;
	case 5: sink += (unsigned long)getpgrp(); break;
	case 6: sink += (unsigned long)getpagesize(); break;
	default: sink += (unsigned long)strverscmp("a1", "a2"); break;
	}
}

static void *worker(void *arg)
{
	int w = (int)(long)arg;
	for (int k = 0; k < PHASES; k++) {
		first_call(w, k);
		work(OUT_WORK);
	}
	for (int k = 0; k < PHASES; k++) {
		sem_wait(&sem_gate);
		work(IN_WORK);
		sem_post(&sem_gate);
		pthread_rwlock_wrlock(&rw);
		work(IN_WORK);
		pthread_rwlock_unlock(&rw);
		pthread_mutex_lock(&mtx);
		work(IN_WORK);
		pthread_mutex_unlock(&mtx);
		while (__atomic_test_and_set(&spin_flag, __ATOMIC_ACQUIRE))
			sched_yield();
		work(IN_WORK);
		__atomic_clear(&spin_flag, __ATOMIC_RELEASE);
		while (__atomic_exchange_n(&spin_word, 1, __ATOMIC_ACQUIRE))
			sched_yield();
		work(IN_WORK);
		__atomic_store_n(&spin_word, 0, __ATOMIC_RELEASE);
		sem_post(sem_heap);
		sem_wait(sem_heap);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	sem_init(&sem_gate, 0, 1);
	sem_heap = malloc(sizeof(*sem_heap));
	if (!sem_heap || sem_init(sem_heap, 0, 0))
		return 1;
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sem_destroy(sem_heap);
	free(sem_heap);
	char *reuse = malloc(sizeof(sem_t));
	if (!reuse)
		return 1;
	memset(reuse, 0x5a, sizeof(sem_t));
	sink += (unsigned long)reuse[3];
	free(reuse);
	for (int k = 0; k < PHASES; k++) {
		int *obj = malloc(64);	/* a reference count at the start of an object */
		if (!obj)
			return 1;
		*obj = 1;
		__atomic_add_fetch(obj, 1, __ATOMIC_ACQ_REL);
		work(IN_WORK);
		__atomic_sub_fetch(obj, 1, __ATOMIC_ACQ_REL);
		free(obj);
		char *again = malloc(64);	/* the same block: its words written plainly */
		if (!again)
			return 1;
		memset(again, 0, 64);
		sink += (unsigned long)again[5];
		free(again);
		static void *nodes[PHASES];
		void *old = __atomic_exchange_n(&list_head, NULL, __ATOMIC_ACQUIRE);
		sink += (unsigned long)(old != NULL);
		work(OUT_WORK);
		list_head = &nodes[k];	/* pushed with a plain store */
	}
	printf("lock_acquisitions %d\nin_work %d\nout_work %d\n", 2 * PHASES, IN_WORK, OUT_WORK);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		execl(argv[0], argv[0], (char *)NULL);	/* not /proc/self/exe: valgrind's */
		return 1;
	}
	return 0;
}
