/* tests/progs/citcat_thread_signal.c - signals sent (pthread_kill) to a thread that is not
 * running: the worker blocks in read() on a pipe while main sleeps, then main sends it
 * SIGUSR1 (handler without SA_RESTART: the read fails with EINTR after the handler) and
 * SIGUSR2 (SA_RESTART: the read restarts after the handler and gets the byte main writes).
 * Under citcat record only one thread runs at a time, so each signal arrives in a thread
 * blocked in the kernel while main runs. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static volatile sig_atomic_t usr1, usr2;

static void on_usr1(int sig)
{
	usr1++;
}

static void on_usr2(int sig)
{
	usr2++;
}

static void *worker(void *arg)
{
	char c = 0;
	ssize_t n = read(pipefd[0], &c, 1);
	int e = errno;
	printf("first read: %s, usr1 handled %d\n", n < 0 && e == EINTR ? "EINTR" : "not interrupted",
	       (int)usr1);
	n = read(pipefd[0], &c, 1);
	printf("second read: %zd byte '%c', usr2 handled %d\n", n, n == 1 ? c : '?', (int)usr2);
	return arg;
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(pipefd) || pthread_create(&t, NULL, worker, NULL))
		return 1;
	pause_ms(50);	/* the worker blocks in its first read meanwhile */
	pthread_kill(t, SIGUSR1);
	pause_ms(50);	/* it prints, then blocks in its second read */
	pthread_kill(t, SIGUSR2);
	pause_ms(50);
	if (write(pipefd[1], "x", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	puts("joined");
	return 0;
}
