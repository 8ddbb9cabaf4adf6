/* tests/progs/citcat_busyalarm.c - a busy loop ended by SIGALRM, with no syscall in it: the
 * signal can only be placed by an exact point (pc + complete register state), never at a
 * syscall boundary. Prints how many iterations ran and a value computed in them, so a replay
 * that delivered the signal anywhere else prints something else. Each iteration waits on a
 * 64-bit division by a value of the iteration: the loop runs its MS of wall time in a few
 * instructions per microsecond, so a replay (and its --dump, a line per instruction) stays short.
 *   citcat_busyalarm [MS]        loop whose registers change every iteration (unique point)
 *   citcat_busyalarm spin [MS]   loop whose registers repeat while a counter in memory
 *                                changes: an ambiguous point (docs/citcat.md)
 *   citcat_busyalarm deep [MS]   loop calling a function that computes the same thing each
 *                                call, with the count in the caller's frame, more than 256
 *                                bytes up the stack (openssl speed's shape): only the POINT's
 *                                deep stack hash tells the calls apart
 *   citcat_busyalarm fxsave [MS] after an inexact division (MXCSR's PE flag set on the CPU,
 *                                never in the simulator) a loop that fxsaves into its frame,
 *                                within the 256 stack bytes a POINT hashes, as ld.so's
 *                                lazy-binding trampoline does: the flag must not tell the
 *                                replay's stack from the recorded one (format version 7) */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t done;
static uint64_t in_memory;	/* changed only by a memory-destination increment */
static volatile uint64_t result;

/* The same work at every call: its registers and its own 512-byte frame repeat exactly. Long
 * enough (16 x 64 steps) that the replay's candidate checks, one per call, stay cheap. */
static __attribute__((noinline)) uint64_t same_work(void)
{
	volatile uint64_t scratch[64];
	uint64_t x = 1, s = 0;
	for (int i = 0; i < 64 * 16; i++) {
		scratch[i % 64] = x;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	for (int i = 0; i < 64; i++)
		s += scratch[i];
	return s;
}

static __attribute__((noinline)) uint64_t first_byte(const uint8_t *p)
{
	return p[0] & 0;
}

/* fxsave into a frame-local area each iteration; the count stays in a register. The call
 * after the loop keeps the area above rsp (a leaf function would put it in the red zone,
 * which a POINT does not hash). 16 divisions between two fxsaves: the replay hooks each
 * fxsave (replay_fxsave.c, several microseconds), so the loop runs few of them. */
static __attribute__((noinline)) uint64_t fxsave_loop(void)
{
	uint8_t area[512] __attribute__((aligned(16)));
	uint64_t n = 0, x = 1;
	while (!done) {
		__asm__ volatile("fxsave64 %0" : "=m"(area));
		for (int i = 0; i < 16; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			x += x / ((x >> 32) | 1);
		}
		n++;
	}
	result = x;
	return n + first_byte(area);
}

static void on_alarm(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	int spin = argc > 1 && !strcmp(argv[1], "spin");
	int deep = argc > 1 && !strcmp(argv[1], "deep");
	int fx = argc > 1 && !strcmp(argv[1], "fxsave");
	int mode = spin + deep + fx;
	long ms = argc > 1 + mode ? atol(argv[1 + mode]) : 30;
	volatile double third = 1.0;
	if (fx)
		third /= 3.0;	/* inexact: sets MXCSR.PE on the CPU */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	if (spin) {
		while (!done)
			__asm__ volatile("incq %0" : "+m"(in_memory));
		printf("spin %llu\n", (unsigned long long)in_memory);
		return 0;
	}
	if (deep) {
		volatile uint64_t calls = 0;	/* in main's frame, in memory only */
		while (!done) {
			result = same_work();
			calls++;
		}
		printf("calls %llu result %llx\n", (unsigned long long)calls,
		       (unsigned long long)result);
		return 0;
	}
	if (fx) {
		printf("fxsave iterations %llu\n", (unsigned long long)fxsave_loop());
		return 0;
	}
	uint64_t x = 1, n = 0;
	while (!done) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x += x / ((x >> 32) | 1);
		n++;
	}
	printf("iterations %llu value %llx\n", (unsigned long long)n, (unsigned long long)x);
	return 0;
}
