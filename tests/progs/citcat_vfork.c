/* tests/progs/citcat_vfork.c - a parent that reads what its vfork children wrote into its
 * memory (tests/e2e/citcat_vfork.sh): a vfork child sets a global and a local of the parent's
 * frame, makes calls the syscall buffer takes (write to a pipe, close) and execs PROG; another
 * writes a heap string and _exits; a posix_spawn child (clone with CLONE_VM | CLONE_VFORK)
 * runs PROG. The parent prints what it then finds, so a replay that misses the children's
 * writes diverges or prints something else. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
int child_set;

int main(int argc, char **argv)
{
	const char *prog = argc > 1 ? argv[1] : "/bin/true";
	int fds[2], st = 0;
	if (pipe(fds))
		return 1;
	volatile int local = 1;
	pid_t p = vfork();
	if (p == 0) {
		child_set = 42;
		local = 43;
		if (write(fds[1], "from child", 10) != 10)
			_exit(126);
		close(fds[0]);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char buf[32];
	ssize_t n = read(fds[0], buf, sizeof(buf));
	waitpid(p, &st, 0);
	printf("vfork exec: global %d local %d pipe '%.*s' status %d\n", child_set, local,
	       (int)(n > 0 ? n : 0), buf, st);

	char *heap = malloc(64);
	strcpy(heap, "written by the parent");
	p = vfork();
	if (p == 0) {
		strcpy(heap, "written by the child");
		child_set = 7;
		_exit(3);
	}
	waitpid(p, &st, 0);
	printf("vfork _exit: heap '%s' global %d status %d\n", heap, child_set, WEXITSTATUS(st));
	free(heap);

	char *args[] = { (char *)prog, NULL };
	int rc = posix_spawn(&p, prog, NULL, NULL, args, environ);
	if (rc == 0)
		waitpid(p, &st, 0);
	printf("posix_spawn: rc %d status %d\n", rc, st);
	return 0;
}
