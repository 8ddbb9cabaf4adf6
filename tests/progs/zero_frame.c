/* tests/progs/zero_frame.c - CPU time spent with the frame pointer on a frame whose return
 * address is 0 (what a frame-pointer walk reads in code built without frame pointers that uses
 * rbp for data, or at the end of a hand-made stack): a profile must stop the walk there, not
 * credit address 0 (or 0 - 1) to some symbol. Usage: zero_frame [SECONDS] (default 0.5). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long zero_frame[2];	/* { next frame pointer, return address } = { 0, 0 } */

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void spin_on_zero_frame(unsigned long n)
{
#if defined(__x86_64__)
	/* below the red zone, then rbp on the zero frame for the loop; restored after */
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "mov %1, %%rbp\n\t"
			 "1: dec %0\n\t"
			 "jnz 1b\n\t"
			 "pop %%rbp\n\t"
			 "add $128, %%rsp\n\t"
			 : "+r"(n)
			 : "r"(zero_frame)
			 : "memory", "cc");
#else
	for (volatile unsigned long i = 0; i < n; i++)
		;
#endif
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5, end = cpu_seconds() + secs;
	while (cpu_seconds() < end)
		spin_on_zero_frame(1UL << 20);
	printf("zero_frame: done\n");
	return 0;
}
