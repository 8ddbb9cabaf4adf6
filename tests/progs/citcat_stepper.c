/* tests/progs/citcat_stepper.c - an independent oracle for citcat replay: runs a program
 * under ptrace single-stepping and prints the address of every instruction it executes
 * (one "0x..." line each; the program's stdout goes to stderr), then "exit N" on
 * stderr. Usage: citcat_stepper PROG [ARGS...] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: citcat_stepper PROG [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		dup2(2, 1);	/* the program's output must not mix with the addresses */
		execv(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);	/* the exec SIGTRAP: at the entry point */
	unsigned long steps = 0;
	while (WIFSTOPPED(st)) {
		struct user_regs_struct r;
		ptrace(PTRACE_GETREGS, pid, NULL, &r);
		printf("%#llx\n", r.rip);
		steps++;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
			break;
		waitpid(pid, &st, 0);
	}
	fprintf(stderr, "exit %d steps %lu\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, steps);
	return 0;
}
