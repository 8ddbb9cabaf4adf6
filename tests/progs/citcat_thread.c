/* tests/progs/citcat_thread.c - creates a thread that only returns, and joins it. */
#include <pthread.h>
#include <stdio.h>

static void *run(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, run, NULL))
		return 1;
	pthread_join(t, NULL);
	puts("joined");
	return 0;
}
