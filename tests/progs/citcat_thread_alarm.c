/* tests/progs/citcat_thread_alarm.c - two threads spinning on a flag (no syscall) while the
 * main thread takes SIGALRMs every 2 ms until it has 15, then stops them: a recording at short
 * time slices switches threads right after a handler's rt_sigreturn, and a replay that ran on
 * past that switch spun for ever (the flag is set by a thread it never switched to). Sized
 * by time: the same 15 signals on any CPU. Prints whether it got them. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static volatile int stop;
static volatile double sink;

static void on_alarm(int sig)
{
	(void)sig;
	hits++;
}

/* The loop's state is in general registers and changes every iteration, so each signal's
 * exact point is unique (a floating-point loop once left the replay unable to match one:
 * its general registers repeat, and the point then rests on the vector state alone). */
static void *spin(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)&x, n = 0;
	while (!stop) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x += x / ((x >> 32) | 1);	/* a division: few instructions a microsecond */
		n++;
	}
	sink = (double)(x ^ n);
	return arg;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spin, NULL))
			return 1;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	while (hits < 15)
		usleep(500);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	printf("alarms %d\n", hits >= 15 ? 15 : (int)hits);
	return 0;
}
