/* tests/progs/threads3.c - three threads doing 1, 2 and 3 units of work: each touches
 * 100/200/300 fresh pages (page faults) and spins, then prints its tid, pages and its own
 * CPU time (CLOCK_THREAD_CPUTIME_ID): the oracle for per-thread counts.
 * Usage: threads3 [UNIT_MILLION_ITERS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned long unit = 20000000;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	long k = (long)arg;
	size_t pages = 100 * (size_t)k;
	char *buf = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < pages; i++)
		buf[i * 4096] = 1;
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < unit * (unsigned long)k; i++)
		x = x * 6364136223846793005UL + 1;
	/* unmap before reading the clock: on a VM the TLB shootdown can wait milliseconds for a
	 * preempted vCPU, CPU time the thread's counter sees but a later clock read would miss */
	munmap(buf, pages * 4096);
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	pthread_mutex_lock(&print_lock);
	printf("thread %ld tid %ld pages %zu cpu_ms %.3f\n", k, (long)syscall(SYS_gettid), pages,
	       ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		unit = strtoul(argv[1], NULL, 10) * 1000000UL;
	pthread_t t[3];
	for (long k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, worker, (void *)(k + 1));
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	return 0;
}
