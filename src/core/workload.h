/* core/workload.h - the one way spent starts the command it measures (stat, record, trace, shim,
 * citcat): fork, an optional hold before exec (the counters open on the child before it runs a
 * single instruction), exec with or without a PATH lookup, a failed exec reported to the parent
 * as -errno through a close-on-exec pipe (the child exits 127), waiting, the shell's exit-code
 * conventions, and forwarding SIGTERM/SIGHUP to the command while the caller waits. The argv may
 * be of any length. Nothing here prints: the caller words the error. */
#ifndef SPENT_CORE_WORKLOAD_H
#define SPENT_CORE_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A started command. pid is -1 until workload_spawn() succeeds. */
struct workload {
	pid_t pid;
	int go_fd;	/* held: writing a byte lets the child exec; -1 when not held or released */
	int err_fd;	/* the exec's errno, or EOF once the exec succeeded; -1 once read */
};

#define WORKLOAD_INIT { .pid = -1, .go_fd = -1, .err_fd = -1 }

struct workload_opts {
	/* the executable to exec; NULL: argv[0], looked up in PATH when it holds no '/' */
	const char *file;
	/* stop before exec until workload_start() (or workload_abort(), and it exits 127) */
	bool hold;
	/* SIGINT and SIGQUIT back to their defaults in the child: the caller ignores them while
	 * the command runs, and an ignored signal stays ignored across exec */
	bool default_signals;
	/* run in the child right before exec (after the hold): 0, or a positive errno that is
	 * reported to the parent as the exec's failure */
	int (*setup)(void *arg);
	void *setup_arg;
};

/* Fork the command ARGV (NULL-terminated). 0 with W filled, or -errno (nothing started). */
int workload_spawn(struct workload *w, char *const argv[], const struct workload_opts *o);

/* Let a held command exec (nothing to do when not held), then wait for the exec: 0 when the
 * command runs, -errno when its exec or setup failed (the child then exits 127; reap it). */
int workload_start(struct workload *w);

/* Give up a command that has not exec'd (held, or not started): it exits 127 without running
 * anything of its own, and is reaped. */
void workload_abort(struct workload *w);

/* waitpid(PID, STATUS, FLAGS), retried when a signal interrupts it: PID, or -errno. */
pid_t workload_wait(pid_t pid, int *status, int flags);

/* A wait status as a shell exit code: the exit status, or 128 + the signal; 1 otherwise. */
int workload_exit_code(int status);

/* The exit code for a command that could not be run (-errno from workload_start): 127 when it
 * does not exist, 126 when it exists but cannot run (the shell's convention). */
int workload_exec_exit_code(int err);

/* Find CMD as execvp would: CMD itself when it holds a '/', else the first executable PATH
 * entry (an empty entry is the current directory; no PATH: /usr/bin:/bin). 0 with the path in
 * OUT, -ENOENT when none is executable (-EACCES for a CMD with a '/' that exists but cannot be
 * run), -ENAMETOOLONG when OUT is too small. */
int workload_find(const char *cmd, char *out, size_t outlen);

/* PREFIX (N strings) then CMD (NULL-terminated), as one NULL-terminated array to free(); the
 * strings are not copied. NULL when out of memory. */
char **workload_argv_join(char *const *prefix, size_t n, char *const *cmd);

/* While the caller waits for PID: SIGINT and SIGQUIT (which the terminal sends to the command
 * too) are ignored, SIGTERM and SIGHUP are forwarded to PID. SAVED keeps what was there. */
struct workload_signals {
	struct sigaction old[4];
};
void workload_forward_signals(pid_t pid, struct workload_signals *saved);
void workload_restore_signals(const struct workload_signals *saved);

#endif
