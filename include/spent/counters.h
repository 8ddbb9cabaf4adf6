/* spent/counters.h - the perfex library: count events in your own program.
 *
 *   struct spent_counters *c;
 *   spent_counters_open("task-clock,page-faults,instructions", 0, &c);
 *   spent_counters_start(c);
 *   work();
 *   spent_counters_stop(c);
 *   uint64_t v[3];
 *   spent_counters_read(c, v, 3);          // scaled to the enabled time
 *
 *   spent_region_begin("solve"); solve(); spent_region_end("solve");
 *   spent_region_get("solve", &r);          // this thread's totals for "solve"
 *
 * Counters count the calling thread only (the R10000 kept counters per process context;
 * Linux keeps them per thread). Hardware events are read with rdpmc through the perf mmap
 * page when the kernel allows it (cap_user_rdpmc), without a system call; everything else is
 * read with read(2). Every call returns 0 or -errno and never prints or exits. A set belongs to
 * the process that opened it: in a forked child its calls return -ECHILD (its events count the
 * parent's thread; open a new set there). Regions start afresh in a forked child. A NULL set
 * or a NULL pointer to fill is -EINVAL (count and name give 0 and NULL), checked before
 * anything is done.
 */
#ifndef SPENT_COUNTERS_H
#define SPENT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spent_counters;

/* Flags for spent_counters_open. */
#define SPENT_COUNTERS_INHERIT 1	/* also count threads the caller creates later */

/*
 * Open EVENTS (comma-separated names as spent stat -e takes them) on the calling thread,
 * stopped. Returns 0, -ENOENT (unknown event or no PMU for a hardware event: see
 * spent_counters_error), -EINVAL (EVENTS or OUT NULL, an empty name in EVENTS, or FLAGS
 * other than the SPENT_COUNTERS_* above), -EACCES/-EPERM (perf_event_paranoid), -ENOMEM.
 */
SPENT_API int spent_counters_open(const char *events, int flags, struct spent_counters **out);
SPENT_API void spent_counters_free(struct spent_counters *c);

/* The message of the last failed open on this thread ("" when none). */
SPENT_API const char *spent_counters_error(void);

SPENT_API int spent_counters_start(struct spent_counters *c);
SPENT_API int spent_counters_stop(struct spent_counters *c);
/* Zero the counts (running or not). */
SPENT_API int spent_counters_reset(struct spent_counters *c);

SPENT_API size_t spent_counters_count(const struct spent_counters *c);
SPENT_API const char *spent_counters_name(const struct spent_counters *c, size_t i);

/* Scaled values (multiplexing projection) of the first N events into VALUES: -EINVAL when N
 * is more than spent_counters_count (as spent_stat_read), nothing written. */
SPENT_API int spent_counters_read(struct spent_counters *c, uint64_t *values, size_t n);

/* Raw value and times of event I (ENABLED_NS and RUNNING_NS may be NULL). */
SPENT_API int spent_counters_read_one(struct spent_counters *c, size_t i, uint64_t *value,
			    uint64_t *enabled_ns, uint64_t *running_ns);

/* 1 when event I is read with rdpmc (no system call), 0 when with read(2). */
SPENT_API int spent_counters_fast(const struct spent_counters *c, size_t i);

/*
 * The R10000's overflow interrupt: call HANDLER every PERIOD occurrences of event I, on the
 * counting thread, from a signal handler (SIGNO, a real-time signal is best; 0 = SIGRTMIN+4):
 * keep it async-signal-safe. COUNT is how many overflows so far. Replaces an earlier handler.
 */
typedef void (*spent_overflow_fn)(struct spent_counters *c, size_t event, uint64_t count, void *arg);
SPENT_API int spent_counters_on_overflow(struct spent_counters *c, size_t i, uint64_t period, int signo,
			       spent_overflow_fn handler, void *arg);

/*
 * Named regions, accumulated per thread: begin/end pairs may nest and repeat. They count the
 * events in $SPENT_REGION_EVENTS (default "task-clock,page-faults"), opened on first use in
 * each thread (and again in a forked child, whose regions start empty).
 */
SPENT_API int spent_region_begin(const char *name);
SPENT_API int spent_region_end(const char *name);

struct spent_region {
	const char *name;
	uint64_t entries;	/* completed begin/end pairs */
	size_t n_events;
	const char *const *event_names;
	const uint64_t *values;	/* summed over the completed pairs */
};

/* This thread's totals for NAME: -ENOENT when it never completed. */
SPENT_API int spent_region_get(const char *name, struct spent_region *out);
/* Call FN for every region of this thread; stops at a non-zero return, which it returns. */
SPENT_API int spent_region_foreach(int (*fn)(const struct spent_region *r, void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif
