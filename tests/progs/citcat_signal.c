/* tests/progs/citcat_signal.c - signals with handlers: SIGUSR1 sent to itself with kill(),
 * SIGUSR2 with raise(), the handlers change program state and write; a checksum of it all is
 * printed (for citcat record/replay of signal delivery at syscall boundaries). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t state = 1;
static volatile int hits;

static void on_usr(int sig)
{
	state = state * 31 + (uint64_t)sig;
	hits++;
	char msg[] = "handler\n";
	write(1, msg, strlen(msg));
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < 5; i++) {
		for (int k = 0; k < 10000; k++)
			state = state * 6364136223846793005ULL + (uint64_t)k;
		if (i & 1)
			raise(SIGUSR2);
		else
			kill(getpid(), SIGUSR1);
	}
	printf("hits %d state %016llx\n", hits, (unsigned long long)state);
	return hits == 5 ? 0 : 1;
}
