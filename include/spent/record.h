/* spent/record.h - record a profile of a command (or a running process) from your own program:
 * what `spent record` does, as a library. Samples are taken on counter overflows (a preset
 * prime period per event, a period, or a frequency) and aggregated while recording into a
 * struct spent_profile (spent/profile.h), which can be written as a profile directory for
 * `spent report -i DIR`.
 *
 *   struct spent_record_opts o = { .callgraph = SPENT_RECORD_CG_FP };
 *   struct spent_record *r;
 *   char *argv[] = { "./solver", "input", NULL };
 *   int status;
 *   if (spent_record_new(&o, &r) == 0 && spent_record_start(r, argv, 0) == 0 &&
 *       spent_record_wait(r, &status) == 0)
 *           spent_record_write(r, "solver.profile");
 *   else
 *           fprintf(stderr, "%s\n", spent_record_error(r));
 *   spent_record_free(r);
 *
 * Every call returns 0 or -errno and never prints or exits: the reason for a failure is in
 * spent_record_error(), warnings (no PMU, a clamped frequency, ...) go to opts.warn.
 * The library installs no signal handler: a program recording a pid stops it with
 * spent_record_stop(), which may be called from a signal handler.
 */
#ifndef SPENT_RECORD_H
#define SPENT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/api.h"
#include "spent/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

enum spent_record_callgraph {
	SPENT_RECORD_CG_NONE = 0,
	SPENT_RECORD_CG_FP,	/* the kernel walks frame pointers */
	SPENT_RECORD_CG_DWARF,	/* user stack copies unwound with the binaries' CFI */
};

/* A warning for the user (the text only: the caller adds its own prefix). */
typedef void (*spent_record_warn_fn)(void *arg, const char *msg);

struct spent_record_opts {
	/* event specs as `spent record -e` takes them: EV, EV:PERIOD, EV@fast, EV@slow, or a
	 * comma-separated list of those; none: cycles (cpu-clock without a hardware PMU) */
	const char *const *events;
	size_t n_events;
	uint64_t freq;		/* samples per second (clamped to the kernel's maximum); 0: none */
	uint64_t period;	/* sample every PERIOD events; 0 and no freq: the preset period */
	enum spent_record_callgraph callgraph;
	/* one event per thread (threads created later too), not inherited. With a command, the
	 * calling process is a child subreaper until spent_record_wait() returns: the command's
	 * orphans are reparented to it, followed and reaped (children it had before the start are
	 * left alone; one it forks meanwhile is taken for an orphan) */
	int per_thread;
	spent_record_warn_fn warn;	/* NULL: warnings are dropped */
	void *warn_arg;
	/* bytes of user stack copied per sample for SPENT_RECORD_CG_DWARF (perf's dwarf,SIZE):
	 * a multiple of 8 up to 65528; 0: 8192 */
	uint32_t dwarf_stack_bytes;
	/* the command's first thread (or PID's threads at the start) alone: the threads and
	 * children they create are not sampled (perf record --no-inherit). Not with per_thread,
	 * nor with every CPU */
	int no_inherit;
	/* with a command: sampling starts DELAY_MS after it starts, in spent_record_wait()
	 * (perf record -D). Not with per_thread, nor with every CPU */
	uint64_t delay_ms;
	/* with every CPU (SPENT_RECORD_ALL_CPUS): only these CPUS (N_CPUS of them; perf record
	 * -C); NULL: every online CPU */
	const int *cpus;
	size_t n_cpus;
};

/* What a recording took. */
struct spent_record_stats {
	uint64_t samples;	/* sample records read */
	uint64_t placed;	/* samples attributed to an image */
	uint64_t unknown;	/* samples with no image (the reason is in the profile) */
	uint64_t lost;		/* samples lost in full ring buffers */
	uint64_t throttled;	/* times the kernel throttled sampling */
};

struct spent_record;

/* A recorder for OPTS (copied; the strings must outlive it). 0, -EINVAL (freq and period both
 * given) or -ENOMEM; on -EINVAL *OUT is still set, with the reason in spent_record_error(). */
SPENT_API int spent_record_new(const struct spent_record_opts *opts, struct spent_record **out);

/* spent_record_start's PID for every task on every online CPU (perf record -a): while ARGV
 * runs, or until spent_record_stop() when ARGV is NULL. Not with per_thread. */
#define SPENT_RECORD_ALL_CPUS ((pid_t)-1)

/*
 * Start recording: ARGV (NULL-terminated, argv[0] looked up in PATH) is started with its
 * counters opened before it runs a single instruction, or, when ARGV is NULL, the running
 * process PID is attached to (SPENT_RECORD_ALL_CPUS: every CPU, see above). 0, or -errno with the reason in spent_record_error():
 * -EINVAL/-ENOENT/-ENODEV for a bad event, -ENOENT/-EACCES/-ENOEXEC when the command cannot be
 * run (spent_record_exit_code() then says 127 or 126), or perf_event_open's error.
 */
SPENT_API int spent_record_start(struct spent_record *r, char *const argv[], pid_t pid);

/* Read samples until the command exits (its wait status in *STATUS, may be NULL; 0 for a
 * pid), the process PID exits, or spent_record_stop(); then stop the events. 0 or -errno. */
SPENT_API int spent_record_wait(struct spent_record *r, int *status);

/* Ask spent_record_wait() to end (a recorded command runs on; a pid is detached from).
 * Async-signal-safe. */
SPENT_API void spent_record_stop(struct spent_record *r);

/* Send SIG to the recorded command, which spent_record_wait() then waits for as for any end;
 * without a running command (a pid recorded, or before the start), spent_record_stop().
 * Async-signal-safe: what a CLI's SIGTERM handler calls. */
SPENT_API void spent_record_signal(struct spent_record *r, int sig);

/* The profile recorded so far (owned by R: valid until spent_record_free()). */
SPENT_API struct spent_profile *spent_record_profile(struct spent_record *r);
SPENT_API void spent_record_get_stats(const struct spent_record *r, struct spent_record_stats *st);

/* Write the profile to the profile directory DIR, with the kernel symbols and the images'
 * symbols in the build-id cache, through a temporary sibling and a rename: an existing profile
 * directory there is replaced, anything else refused (-EEXIST, -ENOTEMPTY, -EBADMSG, ...). */
SPENT_API int spent_record_write(struct spent_record *r, const char *dir);

/* Whether DIR can take a profile (absent, or a profile directory): check it before a long
 * recording. 0 or the -errno spent_record_write() would fail with (reason in the error). */
SPENT_API int spent_record_check_output(struct spent_record *r, const char *dir);

/* The shell's exit code for the recorded command: its exit status or 128 + signal after
 * spent_record_wait(), 127/126 when it could not be run, 0 otherwise. */
SPENT_API int spent_record_exit_code(const struct spent_record *r);

/* Why the last call on R failed, for the user ("" when none). */
SPENT_API const char *spent_record_error(const struct spent_record *r);

/* Free R; a command it started and nobody waited for is killed and reaped (no child is left
 * behind). After a failed start nothing records: a wait is -EINVAL and a new start may follow. */
SPENT_API void spent_record_free(struct spent_record *r);

#ifdef __cplusplus
}
#endif
#endif
