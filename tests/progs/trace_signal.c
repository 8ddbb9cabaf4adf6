/* tests/progs/trace_signal.c - raises SIGUSR1 a known number of times; the handler counts its
 * runs; prints the count (oracle for signal delivery in the reconstructed stream). */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t hits;

__attribute__((noinline)) static void on_usr1(int sig)
{
	hits++;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	long sum = 0;
	for (int i = 0; i < 50; i++) {
		raise(SIGUSR1);
		for (int k = 0; k < 100; k++)
			sum += k ^ i;
	}
	printf("handled %d %ld\n", (int)hits, sum);
	return 0;
}
