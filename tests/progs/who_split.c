/* tests/progs/who_split.c - three threads named who-1, who-2 and who-3 (prctl renames, so a
 * profiler sees COMM records) burning 1, 2 and 3 units of their own CPU time, sized by time
 * (CLOCK_THREAD_CPUTIME_ID) not iterations, so the split holds on any CPU. Each prints its tid
 * and the CPU time it measured: the oracle for `spent report --sort tid`.
 * Usage: who_split [UNIT_MS] (default 200) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double unit_ms = 200;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "who-%ld", k);
	pthread_setname_np(pthread_self(), name);
	volatile unsigned long x = 1;
	while (thread_cpu_ms() < unit_ms * (double)k)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1;
	double ms = thread_cpu_ms();
	pthread_mutex_lock(&print_lock);
	printf("thread %ld tid %ld comm %s cpu_ms %.3f\n", k, (long)syscall(SYS_gettid), name, ms);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		unit_ms = strtod(argv[1], NULL);
	pthread_t t[3];
	for (long k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, worker, (void *)(k + 1));
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	return 0;
}
