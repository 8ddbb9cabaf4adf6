/* tests/progs/citcat_alarm.c - asynchronous signals: an interval timer (SIGALRM every 2 ms)
 * interrupts a compute loop that makes a syscall now and then; the loop runs until the
 * handler ran 3 times, so the control flow depends on when the signals came. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile int hits;
static volatile uint64_t state = 7;

static void on_alarm(int sig)
{
	hits++;
	state = state * 31 + (uint64_t)sig;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	int rounds = 0;
	while (hits < 3 && rounds < 100000) {
		for (int k = 0; k < 20000; k++)
			state = state * 6364136223846793005ULL + (uint64_t)k;
		getppid();
		rounds++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("hits %d rounds %d state %016llx\n", hits, rounds, (unsigned long long)state);
	return hits >= 3 ? 0 : 1;
}
