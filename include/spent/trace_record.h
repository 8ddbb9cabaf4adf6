/* spent/trace_record.h - write a trace log of a command from your own program: what
 * `spent trace -- CMD` does, as a library. The command runs under Valgrind with spent's tool
 * (every instruction, and with data every load and store, of it and of the processes it
 * starts); the tool's records are collected into a compact log that spent/trace.h's
 * spent_trace_source_open() reads.
 *
 *   struct spent_trace_opts o = { .valgrind_lib = "/usr/local/lib/spent/valgrind" };
 *   struct spent_trace *t;
 *   int status;
 *   if (spent_trace_new(&o, "run.log", &t) == 0 && spent_trace_start(t, argv) == 0 &&
 *       spent_trace_wait(t, &status) == 0)
 *           spent_trace_commit(t);
 *   spent_trace_free(t);            // without a commit, nothing is left at "run.log"
 *
 * Every call returns 0 or -errno and never prints or exits (reason: spent_trace_error()).
 * The library installs no signal handler: a program stops the command with
 * spent_trace_stop(), which may be called from a signal handler.
 */
#ifndef SPENT_TRACE_RECORD_H
#define SPENT_TRACE_RECORD_H

#include <stdint.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spent_trace_opts {
	const char *valgrind_lib;	/* VALGRIND_LIB: the directory of spent-amd64-linux */
	int no_data;		/* instructions only, no data references */
	int no_children;	/* the command's process only, not the processes it starts */
	const char *start;	/* trace from the first entry into this function on; NULL: all */
	uint64_t max_insns;	/* stop the trace after this many instructions; 0: no limit */
};

/* What the log holds. */
struct spent_trace_totals {
	uint64_t records;	/* records written */
	uint64_t data;		/* instruction/data records (0: nothing ran, e.g. --start unmet) */
	uint64_t streams;	/* processes traced */
};

struct spent_trace;

/* A tracer writing the log PATH (a temporary until spent_trace_commit). 0, or -errno with the
 * reason in spent_trace_error() (*OUT is set whenever it could be allocated). */
SPENT_API int spent_trace_new(const struct spent_trace_opts *opts, const char *path,
			      struct spent_trace **out);

/* Start valgrind on ARGV (NULL-terminated). 0, or -errno when it cannot be forked. An exec
 * failure of valgrind itself shows as its exit status 127 and an empty log. */
SPENT_API int spent_trace_start(struct spent_trace *t, char *const argv[]);

/* Collect the records until every traced process has closed its stream, then reap valgrind
 * (its wait status in *STATUS). 0; -EBADMSG (a malformed record: do not commit), -ETIMEDOUT
 * (stopped, processes left behind kept the stream open), or another -errno when a stream broke
 * off (the log holds what arrived and is marked incomplete). */
SPENT_API int spent_trace_wait(struct spent_trace *t, int *status);

/* Stop the command: the first call passes SIG on to valgrind (its client dies of it and flushes
 * its records), a later one, or SIG = SIGKILL, kills valgrind. Async-signal-safe. */
SPENT_API void spent_trace_stop(struct spent_trace *t, int sig);
/* The signal of the first spent_trace_stop(), 0 when none. */
SPENT_API int spent_trace_stopped(const struct spent_trace *t);

/* How far a running trace is, for a progress display. */
struct spent_trace_progress {
	uint64_t instructions;	/* executed so far by the traced processes (a lower bound) */
	uint64_t processes;	/* processes traced so far */
	uint64_t bytes;		/* log bytes written so far */
};
typedef void (*spent_trace_progress_fn)(void *arg, const struct spent_trace_progress *p);
/* Have spent_trace_wait() call FN(ARG, ...) a few times per second while it collects (on the
 * thread calling it; FN NULL: never). Call before spent_trace_start(): the tool then counts
 * instructions, which costs a few percent of its time. */
SPENT_API void spent_trace_set_progress(struct spent_trace *t, spent_trace_progress_fn fn, void *arg);

SPENT_API void spent_trace_get_totals(const struct spent_trace *t, struct spent_trace_totals *tot);
/* After spent_trace_wait: how many processes of the tree ended without their exit record (killed
 * by SIGKILL, or an exec valgrind could not start: their last records are lost), and the pid
 * of the first into *FIRST_PID (may be NULL). */
SPENT_API uint64_t spent_trace_unended(const struct spent_trace *t, int *first_pid);
/* The log's header says it is incomplete (what was stopped or cut off is not the whole run). */
SPENT_API void spent_trace_mark_incomplete(struct spent_trace *t);
/* Put the log at its path. 0 or -errno. */
SPENT_API int spent_trace_commit(struct spent_trace *t);
/* Bytes written to the log. */
SPENT_API uint64_t spent_trace_bytes(const struct spent_trace *t);

SPENT_API const char *spent_trace_error(const struct spent_trace *t);
/* Free T; an uncommitted log is removed, and valgrind, when still running (never waited for),
 * is killed and reaped. A second wait or commit is -EINVAL; opts->valgrind_lib is required. */
SPENT_API void spent_trace_free(struct spent_trace *t);

#ifdef __cplusplus
}
#endif
#endif
