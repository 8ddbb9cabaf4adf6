/* core/workload.c - starting the measured command: fork, hold, exec, the exec's errno back to
 * the parent, waiting and signal forwarding (core/workload.h). */
#include "core/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

/* The child: wait for the go byte when held, set up, exec; a failure's errno goes up the
 * pipe and the child exits 127 as a shell does for a command it cannot run. */
static void __attribute__((noreturn))
child_run(char *const argv[], const struct workload_opts *o, int go_fd, int err_fd)
{
	int e = 0;
	char c;
	if (o->default_signals) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
	}
	if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
		_exit(127);	/* the parent gave up before starting us */
	if (o->setup)
		e = o->setup(o->setup_arg);
	if (!e) {
		if (o->file)
			execv(o->file, argv);
		else
			execvp(argv[0], argv);
		e = errno;
	}
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int workload_spawn(struct workload *w, char *const argv[], const struct workload_opts *o)
{
	static const struct workload_opts defaults;
	int go[2] = { -1, -1 }, errp[2];
	if (!o)
		o = &defaults;
	w->pid = -1;
	w->go_fd = w->err_fd = -1;
	if (!argv || !argv[0])
		return -EINVAL;
	if (pipe2(errp, O_CLOEXEC) < 0)
		return -errno;
	if (o->hold && pipe2(go, O_CLOEXEC) < 0) {
		int err = -errno;
		close_pair(errp);
		return err;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close_pair(errp);
		if (o->hold)
			close_pair(go);
		return err;
	}
	if (pid == 0) {
		close(errp[0]);
		if (o->hold)
			close(go[1]);
		child_run(argv, o, go[0], errp[1]);
	}
	close(errp[1]);
	if (o->hold)
		close(go[0]);
	w->pid = pid;
	w->go_fd = go[1];
	w->err_fd = errp[0];
	return 0;
}

int workload_start(struct workload *w)
{
	int e = 0;
	if (w->go_fd >= 0) {
		ssize_t n;
		do
			n = write(w->go_fd, "g", 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			e = errno ? errno : EPIPE;
		close(w->go_fd);
		w->go_fd = -1;
	}
	if (w->err_fd >= 0) {
		int child_err = 0;
		ssize_t n;
		do
			n = read(w->err_fd, &child_err, sizeof(child_err));
		while (n < 0 && errno == EINTR);
		if (!e && n == (ssize_t)sizeof(child_err))
			e = child_err;
		close(w->err_fd);
		w->err_fd = -1;
	}
	return -e;
}

void workload_abort(struct workload *w)
{
	if (w->go_fd >= 0)
		close(w->go_fd);	/* a held child reads EOF and exits 127 */
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->go_fd = w->err_fd = -1;
	if (w->pid > 0)
		workload_wait(w->pid, NULL, 0);
}

pid_t workload_wait(pid_t pid, int *status, int flags)
{
	pid_t r;
	while ((r = waitpid(pid, status, flags)) < 0)
		if (errno != EINTR)
			return -errno;
	return r;
}

int workload_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int workload_exec_exit_code(int err)
{
	return err == -ENOENT ? 127 : 126;
}

int workload_find(const char *cmd, char *out, size_t outlen)
{
	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(out, outlen, "%s", cmd) >= outlen)
			return -ENAMETOOLONG;
		/* there but not runnable (a data file, a directory): the shell's 126, not 127 */
		return access(cmd, X_OK) == 0 ? 0 : access(cmd, F_OK) == 0 ? -EACCES : -ENOENT;
	}
	const char *path = getenv("PATH");
	int err = -ENOENT;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t l = strcspn(p, ":");
		if ((size_t)snprintf(out, outlen, "%.*s/%s", (int)l, l ? p : ".", cmd) >= outlen)
			err = -ENAMETOOLONG;
		else if (access(out, X_OK) == 0)
			return 0;
		p += l + (p[l] == ':');
	}
	return err;
}

char **workload_argv_join(char *const *prefix, size_t n, char *const *cmd)
{
	size_t m = 0;
	while (cmd && cmd[m])
		m++;
	if (n > SIZE_MAX / sizeof(char *) - m - 1)
		return NULL;
	char **argv = malloc((n + m + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	if (n)
		memcpy(argv, prefix, n * sizeof(*argv));
	if (m)
		memcpy(argv + n, cmd, m * sizeof(*argv));
	argv[n + m] = NULL;
	return argv;
}

/* The command a forwarded SIGTERM/SIGHUP goes to. */
static volatile sig_atomic_t forward_pid;

static void forward_signal(int sig)
{
	if (forward_pid > 0)
		kill((pid_t)forward_pid, sig);
}

static const int forwarded[4] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };

void workload_forward_signals(pid_t pid, struct workload_signals *saved)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward_signal };
	forward_pid = pid;
	for (int i = 0; i < 4; i++)
		sigaction(forwarded[i], i < 2 ? &ign : &fwd, &saved->old[i]);
}

void workload_restore_signals(const struct workload_signals *saved)
{
	for (int i = 0; i < 4; i++)
		sigaction(forwarded[i], &saved->old[i], NULL);
	forward_pid = 0;
}
