/* tests/progs/jit_map.c - a tiny JIT: generates a counting loop into anonymous executable
 * memory, names it in /tmp/perf-PID.map (perf's JIT map convention) as "jit_spin_loop", and
 * runs it for SECONDS of CPU time (default 0.5). A second generated loop is left out of the
 * map: its samples stay unknown. Usage: jit_map [SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
	static const unsigned char loop[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	unsigned char *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (code == MAP_FAILED)
		return perror("mmap"), 1;
	memcpy(code, loop, sizeof(loop));
	memcpy(code + 4096, loop, sizeof(loop));	/* the unmapped one */
	if (mprotect(code, 8192, PROT_READ | PROT_EXEC) < 0)
		return perror("mprotect"), 1;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return perror(path), 1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)code, sizeof(loop));
	fclose(f);
	void (*named)(unsigned long) = (void (*)(unsigned long))code;
	void (*unnamed)(unsigned long) = (void (*)(unsigned long))(code + 4096);
	for (double end = cpu_seconds() + secs; cpu_seconds() < end;) {
		named(1UL << 22);
		named(1UL << 22);
		unnamed(1UL << 22);
	}
	printf("jit_map: done (%s)\n", path);
	return 0;
#else
	fprintf(stderr, "jit_map: x86-64 only\n");
	return 2;
#endif
}
