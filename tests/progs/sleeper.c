/* tests/progs/sleeper.c - a deterministic counting target: touches 2000 fresh pages (page
 * faults) and sleeps 50 times for 200 us with almost no CPU work, so its context switches
 * are the voluntary ones (preemption has nothing to interrupt). */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(void)
{
	size_t pages = 2000;
	char *buf = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < pages; i++)
		buf[i * 4096] = 1;
	struct timespec ts = { 0, 200000 };
	for (int i = 0; i < 50; i++)
		nanosleep(&ts, NULL);
	return 0;
}
