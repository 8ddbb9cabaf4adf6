/* tests/progs/citcat_wait_alarm.c - a caught SIGALRM interrupts a wait, twice: select on an
 * empty pipe (the kernel ends it with -ERESTARTNOHAND, EINTR once the handler ran) and
 * nanosleep (-ERESTART_RESTARTBLOCK); each is retried for the time left, as libraries do.
 * Prints the handler's count and what the waits returned. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int hits;

static void on_alarm(int sig)
{
	(void)sig;
	hits++;
}

static void alarm_in(long usec)
{
	struct itimerval it = { .it_value = { .tv_sec = 0, .tv_usec = usec } };
	setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: the waits end with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	int p[2];
	if (pipe(p))
		return 1;
	alarm_in(50000);
	int eintr = 0, n;
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };	/* Linux leaves the time left */
	do {
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		n = select(p[0] + 1, &rd, NULL, NULL, &tv);
		eintr += n < 0 && errno == EINTR;
	} while (n < 0 && errno == EINTR);
	alarm_in(50000);
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200000000 }, left;
	while (nanosleep(&ts, &left) < 0 && errno == EINTR) {
		eintr++;
		ts = left;
	}
	printf("hits %d, select %d, waits cut short %d\n", hits, n, eintr);
	return 0;
}
