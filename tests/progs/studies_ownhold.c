/* tests/progs/studies_ownhold.c - a hold that spans another thread's work, for `spent locks`'
 * own hold: Valgrind runs one thread at a time, and a thread that blocks in a syscall lets
 * another run. Main holds `mtx` for IN_WORK iterations of work, a 2 ms sleep and IN_WORK more,
 * HOLDS times, while a burner thread that never takes the lock is ready to run until its
 * BURN_ROUNDS are done: a sleep lets the burner run inside main's hold. So by construction
 * holds span the burner's work on the trace's instruction axis, while main itself runs 2 x IN_WORK
 * iterations (and a few calls) in each. Prints its counts. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define HOLDS 12
#define IN_WORK 1000
#define BURN_ROUNDS 3000	/* the burner's work: about 20 M instructions at most */

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static volatile unsigned long sink;

static void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

/* bounded: Valgrind's scheduler is not fair by default, and a burner that never blocks may keep
 * main from running again after its sleep for as long as it burns (a run of 82 G
 * instructions, against 50 M usually) */
static void *burner(void *arg)
{
	for (int i = 0; i < BURN_ROUNDS && !stop; i++)
		work(1000);
	return NULL;
}

int main(void)
{
	pthread_t b;
	pthread_create(&b, NULL, burner, NULL);
	for (int k = 0; k < HOLDS; k++) {
		pthread_mutex_lock(&mtx);
		work(IN_WORK);
		/* Valgrind lets the burner run here, inside the hold */
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
		work(IN_WORK);
		pthread_mutex_unlock(&mtx);
		sched_yield();
	}
	stop = 1;
	pthread_join(b, NULL);
	printf("holds %d\nin_work %d\n", HOLDS, 2 * IN_WORK);
	return 0;
}
