/* tests/progs/threads2.c - two threads doing equal CPU work in different functions
 * (thread_a_work, thread_b_work): each should get half of the samples. Argument: millions of
 * iterations per thread (150). Equal work is not equal time on a guest whose two vCPUs the host
 * runs at different speeds, so each thread's own CPU time is printed too (second line, ms). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long iters;
static volatile unsigned long sink_a, sink_b;
static double cpu_ms_a, cpu_ms_b;

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *__attribute__((noinline)) thread_a_work(void *arg)
{
	unsigned long x = sink_a;
	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink_a = x;
	cpu_ms_a = thread_cpu_ms();
	return arg;
}

static void *__attribute__((noinline)) thread_b_work(void *arg)
{
	unsigned long x = sink_b;
	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink_b = x;
	cpu_ms_b = thread_cpu_ms();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	iters = (argc > 1 ? strtoul(argv[1], NULL, 10) : 150) * 1000000UL;
	pthread_create(&a, NULL, thread_a_work, NULL);
	pthread_create(&b, NULL, thread_b_work, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu %lu\n%.1f %.1f\n", sink_a, sink_b, cpu_ms_a, cpu_ms_b);
	return 0;
}
