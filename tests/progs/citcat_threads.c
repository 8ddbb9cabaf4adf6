/* tests/progs/citcat_threads.c - two threads for citcat's thread recording: a mutex/condvar
 * handoff (a token passed back and forth ROUNDS times, so the recorder must switch at futex
 * waits) and a compute part in each thread, whose result each thread prints itself.
 * usage: citcat_threads [ROUNDS [WORK]]
 *        citcat_threads par WORK    both threads compute WORK steps at once, no lock
 *                                   (CPU-bound: the recorder must preempt them)
 *        citcat_threads spin WORK   the worker computes, main spins on a flag it sets,
 *                                   without a syscall (only a preemption lets it end)
 *        citcat_threads spawn N WORK  main starts N threads one after another, each
 *                                   computes WORK steps and prints; main joins them all
 *                                   (thread creation while other threads are ready) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;		/* whose turn it is: 0 main, 1 worker */
static long rounds = 200, work = 20000;
static atomic_int done;

/* Deterministic work whose result depends on every step (so a replay that skips or repeats
 * any of it prints another number). */
static uint64_t compute(uint64_t seed, long n)
{
	uint64_t x = seed;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL + (x >> 29);
	return x;
}

/* Take ROUNDS turns as player ME, computing a little in each; returns the running result. */
static uint64_t play(int me)
{
	uint64_t acc = (uint64_t)me + 1;
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&lock);
		while (turn != me)
			pthread_cond_wait(&turn_changed, &lock);
		acc = compute(acc ^ (uint64_t)r, work);
		turn = !me;
		pthread_cond_signal(&turn_changed);
		pthread_mutex_unlock(&lock);
	}
	return acc;
}

static void *worker(void *arg)
{
	uint64_t own = compute(7, work * 10);	/* computed while main may wait */
	uint64_t acc = play(1);
	printf("worker: %016llx %016llx\n", (unsigned long long)own, (unsigned long long)acc);
	fflush(stdout);
	return arg;
}

static void *par_worker(void *arg)
{
	printf("worker: %016llx\n", (unsigned long long)compute(11, work));
	fflush(stdout);
	atomic_store(&done, 1);
	return arg;
}

static void *spawned(void *arg)
{
	long i = (long)(intptr_t)arg;
	printf("thread %ld: %016llx\n", i, (unsigned long long)compute((uint64_t)i, work));
	fflush(stdout);
	return arg;
}

static int spawn(long n)
{
	pthread_t t[64];
	if (n < 1 || n > 64)
		return 2;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, spawned, (void *)(intptr_t)i))
			return 1;
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("main: joined %ld\n", n);
	return 0;
}

/* The CPU-bound modes: "par" (main computes too) and "spin" (main waits for the worker). */
static int cpu_bound(int spin)
{
	pthread_t t;
	if (pthread_create(&t, NULL, par_worker, NULL))
		return 1;
	uint64_t acc = 0;
	if (spin)
		while (!atomic_load_explicit(&done, memory_order_acquire))
			acc++;	/* as many as the schedule gives: not printed */
	else
		acc = compute(5, work);
	pthread_join(t, NULL);
	printf("main: %016llx\n", spin ? 0ULL : (unsigned long long)acc);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 2 && (!strcmp(argv[1], "par") || !strcmp(argv[1], "spin"))) {
		work = atol(argv[2]);
		return cpu_bound(argv[1][0] == 's');
	}
	if (argc > 3 && !strcmp(argv[1], "spawn")) {
		work = atol(argv[3]);
		return spawn(atol(argv[2]));
	}
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		work = atol(argv[2]);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	uint64_t acc = play(0);
	pthread_join(t, NULL);
	printf("main: %016llx\n", (unsigned long long)acc);
	return 0;
}
