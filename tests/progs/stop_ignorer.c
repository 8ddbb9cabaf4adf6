/* tests/progs/stop_ignorer.c - a program that ignores SIGINT, SIGTERM and SIGHUP and runs until
 * it is killed: it wakes every 10 ms (a syscall each time, a few instructions between), so a
 * tool stopping it must use its grace period and kill it, while its trace stays small. */
#include <signal.h>
#include <time.h>

int main(void)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	struct timespec ts = { 0, 10000000 };
	for (;;)
		nanosleep(&ts, NULL);
}
