/* tests/progs/trace_fault.c - ten synchronous SIGSEGVs, each caught by a handler that
 * siglongjmps out (the handler never returns); prints a checksum. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf jb;

static void on_segv(int sig)
{
	siglongjmp(jb, 1);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sa, NULL);
	int n = 0;
	for (int i = 0; i < 10; i++) {
		if (sigsetjmp(jb, 1) == 0) {
			volatile int *p = 0;
			n += i;
			*p = i;
		} else {
			n++;
		}
	}
	printf("faults %d\n", n);
	return 0;
}
