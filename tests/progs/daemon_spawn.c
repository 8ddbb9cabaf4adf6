/* tests/progs/daemon_spawn.c - many short-lived processes: RATE fork+exec's per second for
 * SECONDS, each child (this program re-executed) spinning CHILD_MS of CPU before it exits.
 * Prints what it did, as the oracle: "spawned N", "children_cpu_ms X" (getrusage) and
 * "pids P..." (its own pid, then every child's: a test tells the workload's samples apart).
 * Usage: daemon_spawn RATE SECONDS CHILD_MS | daemon_spawn child MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void child_spin(double ms)
{
	unsigned long x = 1;
	double end = cpu_now() + ms / 1000.0;
	while (cpu_now() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child")) {
		child_spin(atof(argv[2]));
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: daemon_spawn RATE SECONDS CHILD_MS\n");
		return 2;
	}
	int rate = atoi(argv[1]);
	double secs = atof(argv[2]);
	long total = (long)(rate * secs), spawned = 0;
	pid_t *pids = calloc(total > 0 ? total : 1, sizeof(*pids));
	struct timespec next;

	if (!pids)
		return 1;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < total; i++) {
		pid_t p = fork();
		if (p == 0) {
			execl("/proc/self/exe", argv[0], "child", argv[3], (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			pids[spawned++] = p;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next.tv_nsec += 1000000000L / rate;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	while (wait(NULL) > 0)
		;
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("spawned %ld\nchildren_cpu_ms %.1f\n", spawned,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	printf("pids %d", (int)getpid());
	for (long i = 0; i < spawned; i++)
		printf(" %d", (int)pids[i]);
	printf("\n");
	free(pids);
	return 0;
}
