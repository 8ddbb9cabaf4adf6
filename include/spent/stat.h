/* spent/stat.h - count the events of a command (or a running process, a thread, the CPUs)
 * from your own program: what `spent stat` does, as a library. The command is started with
 * its counters open before it runs a single instruction; the threads and children it creates
 * are folded in; counts that shared a counter with others (multiplexing) carry the times to
 * scale them by.
 *
 *   struct spent_event ev;
 *   char err[256];
 *   spent_event_parse("task-clock", &ev, err, sizeof(err));
 *   struct spent_stat_opts o = { .events = &ev, .n_events = 1 };
 *   struct spent_stat *s;
 *   char *argv[] = { "./solver", NULL };
 *   struct spent_stat_value v;
 *   int status;
 *   if (spent_stat_new(&o, &s) == 0 && spent_stat_start(s, argv) == 0 &&
 *       spent_stat_wait(s, &status) == 0 && spent_stat_read(s, &v, 1) == 0)
 *           printf("%.0f ns\n", spent_stat_scaled(&v));
 *   spent_stat_free(s);
 *
 * Every call returns 0 or -errno and never prints or exits; the reason for a failure is in
 * spent_stat_error(). The library installs no signal handler, except SIGALRM while a command
 * whose threads are followed (follow_threads) is waited for with an interval.
 */
#ifndef SPENT_STAT_H
#define SPENT_STAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/api.h"
#include "spent/events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One reading: the raw count, and the times the event was enabled and on a counter. */
struct spent_stat_value {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
};

struct spent_stat;

/* Called every interval_ms while spent_stat_wait() waits; SECONDS since the start. */
typedef void (*spent_stat_interval_fn)(void *arg, struct spent_stat *s, double seconds);

/* A warning for the user (the text only: the caller adds its own prefix). */
typedef void (*spent_stat_warn_fn)(void *arg, const char *msg);

struct spent_stat_opts {
	const struct spent_event *events;	/* parsed with spent_event_parse() */
	size_t n_events;	/* 0: a null run, a command timed and nothing counted */
	/* group[i] == group[i-1] puts event i in the group of event i-1; NULL: no groups */
	const int *group;
	/* without a command: the running process PID (its threads, and what they create later),
	 * the one thread TID, or with system_wide every CPU (CPUS, N_CPUS; NULL: all online) */
	pid_t pid, tid;
	int system_wide;
	const int *cpus;
	size_t n_cpus;
	/* a command's threads followed one by one (ptrace), for a per-thread breakdown */
	int follow_threads;
	uint64_t interval_ms;	/* 0: no interval callback */
	spent_stat_interval_fn interval;
	void *interval_arg;
	spent_stat_warn_fn warn;	/* NULL: warnings are dropped */
	void *warn_arg;
	/* the command's first thread (or PID's threads at the start) alone: the threads and
	 * children they create are not counted (perf stat --no-inherit). Not with system_wide
	 * nor follow_threads */
	int no_inherit;
	/* with a command: counting starts DELAY_MS after it starts, in spent_stat_wait() (perf
	 * stat -D); the elapsed time is then the counted part. Not with follow_threads */
	uint64_t delay_ms;
};

/* A counting session for OPTS (copied; the arrays must outlive it). 0 or -ENOMEM. */
SPENT_API int spent_stat_new(const struct spent_stat_opts *opts, struct spent_stat **out);

/*
 * Open the counters and start: the command ARGV (NULL-terminated, argv[0] looked up in PATH),
 * or with ARGV NULL the pid, tid or CPUs of the options. 0, or -errno with the reason in
 * spent_stat_error(): -ESRCH (no such process), perf_event_open's error for an event, or the
 * exec's error when the command cannot run (spent_stat_exit_code() then says 127 or 126),
 * -EBUSY when S is counting or has counted: a session runs once (make a new one).
 */
SPENT_API int spent_stat_start(struct spent_stat *s, char *const argv[]);

/* Wait until the command (wait status in *STATUS, may be NULL), the pid or the thread ends, or
 * spent_stat_interrupt() when there is no command. 0 or -errno. */
SPENT_API int spent_stat_wait(struct spent_stat *s, int *status);

/* Ctrl-C: a command is sent SIGINT (it ends, the counts stay readable); without a command the
 * wait ends. Async-signal-safe. */
SPENT_API void spent_stat_interrupt(struct spent_stat *s);
/* The same for another signal the caller received (SIGTERM, SIGHUP...): a command is sent SIG,
 * so its exit status says what stopped it (143 for SIGTERM). Async-signal-safe. */
SPENT_API void spent_stat_pass_signal(struct spent_stat *s, int sig);

/* The totals of the first N events (raw, with their times), over every thread or CPU. */
SPENT_API int spent_stat_read(struct spent_stat *s, struct spent_stat_value *values, size_t n);
/* VALUE scaled to its whole enabled time (the multiplexing projection). */
SPENT_API double spent_stat_scaled(const struct spent_stat_value *v);
/* Wall time from the start to the end of spent_stat_wait() (or now, while running). */
SPENT_API uint64_t spent_stat_elapsed_ns(const struct spent_stat *s);

/* The shell's exit code for the command: its exit status or 128 + signal after
 * spent_stat_wait(), 127/126 when it could not be run, 1 when it could not be started. */
SPENT_API int spent_stat_exit_code(const struct spent_stat *s);
/* Why the last call on S failed, for the user ("" when none). */
SPENT_API const char *spent_stat_error(const struct spent_stat *s);
/* Free S; a command it started and nobody waited for is killed and reaped (no child is left
 * behind). After a failed start nothing counts: a wait is -EINVAL and a new start may follow. */
SPENT_API void spent_stat_free(struct spent_stat *s);

#ifdef __cplusplus
}
#endif
#endif
