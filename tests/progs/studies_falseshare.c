/* tests/progs/studies_falseshare.c - two threads (main + one) each increment their own counter
 * of `counters`, adjacent in one cache line (default) or 64 bytes apart ("pad"). They start at
 * a barrier and take turns every 1024 increments, so the line really moves between the two
 * writers even under Valgrind's serialised scheduler, where merely yielding sometimes let one
 * thread finish before the other began. Waits are bounded, so a finished thread never hangs
 * the other. The turn flags sit on lines of their own. Prints the sum. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define ITERS 400000
#define BURST 1024

long counters[16] __attribute__((aligned(64)));
static int stride = 1;
static pthread_barrier_t start;
static volatile int turn __attribute__((aligned(64)));
static volatile int done0 __attribute__((aligned(64)));
static volatile int done1 __attribute__((aligned(64)));

static void *run(void *arg)
{
	long k = (long)arg;
	volatile int *mine = k ? &done1 : &done0, *other = k ? &done0 : &done1;
	volatile long *c = &counters[k * stride];
	pthread_barrier_wait(&start);
	for (int i = 0; i < ITERS; i++) {
		if (i % BURST == 0) {
			for (int n = 0; n < 10000 && turn != k && !*other; n++)
				sched_yield();
		}
		(*c)++;
		if (i % BURST == BURST - 1)
			turn = (int)(1 - k);
	}
	*mine = 1;
	turn = (int)(1 - k);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "pad"))
		stride = 8;
	pthread_barrier_init(&start, NULL, 2);
	pthread_t t;
	pthread_create(&t, NULL, run, (void *)1L);
	run((void *)0L);
	pthread_join(t, NULL);
	printf("%ld\n", counters[0] + counters[stride]);
	return 0;
}
