/* citcat_fxsave - prints what fxsave and fxsave64 store over a buffer filled with a pattern,
 * after loading x87 values, and what ld.so's lazy-binding trampoline (fxsave under the CITCAT
 * CPU model) leaves in the stack below a call. The recorded run's output is the CPU's; the
 * replay's must be the same (citcat_fpu.sh). Not printed: the last x87 instruction and data
 * pointers (bytes 8-23: Intel stores them, AMD only with an exception pending) and the MXCSR
 * mask (bytes 28-31: CPU-specific). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint8_t area[512] __attribute__((aligned(16)));

static void show(const char *name)
{
	printf("%s", name);
	for (int i = 0; i < 512; i++) {
		if ((i >= 8 && i < 24) || (i >= 28 && i < 32))
			continue;
		if (i % 32 == 0)
			printf("\n%3d ", i);
		printf("%02x", area[i]);
	}
	printf("\n");
}

/* A frame that fills the stack below it with a pattern, then a lazily bound call (getpid's
 * first call resolves its PLT slot through the trampoline), then what the trampoline's fxsave
 * left below the frame: bytes the CPU zeroed show up. */
static __attribute__((noinline)) void fill_stack(void)
{
	volatile uint8_t pad[4096];
	memset((void *)pad, 0xa5, sizeof(pad));
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static __attribute__((noinline)) uint64_t trampoline_leftovers(void)
{
	volatile uint8_t probe[4096];
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < sizeof(probe); i++)
		h = (h ^ probe[i]) * 1099511628211ULL;
	return h;
}

/* the vector registers hold what start-up code left, which differs under the recorder */
static void clear_xmm(void)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
			 "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			 "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
			 "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
			 "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\t"
			 "pxor %%xmm15, %%xmm15" : : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
			 "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
			 "xmm15");
}

int main(void)
{
	static const long double a = 1.25L, b = -3.5L;	/* in .rodata: no x87 code to set them */
	/* first, before any x87 instruction: the CPU stores the last one's address in fxsave's
	 * bytes 8-15 (Intel), which the simulator does not know */
	fill_stack();
	pid_t p = getpid();	/* lazily bound when not linked -z now */
	uint64_t left = trampoline_leftovers();
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a replay that differs stops at the line */
	memset(area, 0xa5, sizeof(area));
	clear_xmm();
	__asm__ volatile("fldt %1\n\tfldt %2\n\tfxsave64 %0\n\tfstp %%st(0)\n\tfstp %%st(0)"
			 : "=m"(area) : "m"(a), "m"(b));
	show("fxsave64");
	memset(area, 0x5a, sizeof(area));
	clear_xmm();
	__asm__ volatile("fldpi\n\tfxsave %0\n\tfstp %%st(0)" : "=m"(area));
	show("fxsave");
	printf("pid-call %d leftovers %016llx\n", p > 0, (unsigned long long)left);
	return 0;
}
