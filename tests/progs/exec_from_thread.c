/* tests/progs/exec_from_thread.c - a second thread execs this program again (it takes the
 * process's id, and the old main thread ends); the new image spins its main thread for 0.5 s
 * of its own CPU time beside a helper thread spinning 0.2 s, then prints its main thread's
 * CPU seconds (CLOCK_THREAD_CPUTIME_ID): the oracle for that thread's samples. The exec
 * comes 0.2 s after the thread starts.
 * Usage: exec_from_thread */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static char **args;

static double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void spin(double seconds)
{
	volatile unsigned long x = 0;
	double end = thread_cpu_s() + seconds;
	while (thread_cpu_s() < end)
		x++;
}

static void *exec_again(void *arg)
{
	(void)arg;
	/* after --per-thread has followed this thread (its FORK record is read within a few ms):
	 * a thread that execs before that takes the process unobserved (docs/record.md) */
	usleep(200000);
	char *again[] = { args[0], "again", NULL };
	execv("/proc/self/exe", again);
	return NULL;
}

static void *helper(void *arg)
{
	(void)arg;
	spin(0.2);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	args = argv;
	if (argc > 1) {
		pthread_create(&t, NULL, helper, NULL);
		spin(0.5);
		pthread_join(t, NULL);
		printf("main_cpu_s %.3f\n", thread_cpu_s());
		return 0;
	}
	pthread_create(&t, NULL, exec_again, NULL);
	pause();
	return 0;
}
