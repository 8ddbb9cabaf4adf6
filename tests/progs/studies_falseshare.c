/* tests/progs/studies_falseshare.c - two threads (main + one) each increment their own counter
 * of `counters`, adjacent in one cache line (default) or 64 bytes apart ("pad"), yielding every
 * 1024 increments so the threads interleave even under Valgrind's serialised scheduler.
 * Prints the sum. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define ITERS 400000

long counters[16] __attribute__((aligned(64)));
static int stride = 1;

static void *run(void *arg)
{
	volatile long *c = &counters[(long)arg * stride];
	for (int i = 0; i < ITERS; i++) {
		(*c)++;
		if ((i & 1023) == 0)
			sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "pad"))
		stride = 8;
	pthread_t t;
	pthread_create(&t, NULL, run, (void *)1L);
	run((void *)0L);
	pthread_join(t, NULL);
	printf("%ld\n", counters[0] + counters[stride]);
	return 0;
}
