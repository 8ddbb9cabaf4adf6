/* citcat_cpuid.c - cpuid in the places citcat's software CPUID faulting must handle:
 *   citcat_cpuid static   a cpuid compiled into this program, executed 3 times
 *   citcat_cpuid fork     the same cpuid in a forked child (its patched image is inherited)
 *   citcat_cpuid jit      a cpuid generated at run time in anonymous memory (no file: the
 *                         patcher cannot see it; only real CPUID faulting traps it)
 * Each prints the vendor string the program saw. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void vendor_from(unsigned b, unsigned c, unsigned d, char out[13])
{
	memcpy(out, &b, 4);
	memcpy(out + 4, &d, 4);
	memcpy(out + 8, &c, 4);
	out[12] = 0;
}

__attribute__((noinline)) static void vendor_compiled(char out[13])
{
	unsigned a = 0, b, c = 0, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	vendor_from(b, c, d, out);
}

/* push rbx; xor eax,eax; xor ecx,ecx; cpuid; mov [rdi],ebx; mov [rdi+4],edx; mov [rdi+8],ecx;
 * pop rbx; ret */
static const unsigned char jit_code[] = {
	0x53, 0x31, 0xc0, 0x31, 0xc9, 0x0f, 0xa2, 0x89, 0x1f, 0x89, 0x57, 0x04, 0x89, 0x4f, 0x08,
	0x5b, 0xc3,
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "static";
	char v[13];
	if (!strcmp(mode, "static")) {
		for (int i = 0; i < 3; i++) {
			vendor_compiled(v);
			printf("compiled cpuid %d: %s\n", i, v);
		}
	} else if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			vendor_compiled(v);
			_exit(strlen(v) == 12 ? 7 : 1);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		vendor_compiled(v);
		printf("child exit %d, parent saw %s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, v);
	} else if (!strcmp(mode, "jit")) {
		unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (code == MAP_FAILED)
			return 2;
		memcpy(code, jit_code, sizeof(jit_code));
		unsigned regs[4] = { 0 };
		((void (*)(unsigned *))code)(regs);
		memcpy(v, regs, 12);
		v[12] = 0;
		printf("generated cpuid: %s\n", v);
	} else {
		fprintf(stderr, "usage: citcat_cpuid static|fork|jit\n");
		return 2;
	}
	return 0;
}
