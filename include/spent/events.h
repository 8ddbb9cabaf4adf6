/* spent/events.h - the event catalogue: names -> perf_event_attr, for every collector.
 *
 * Names accepted (as perf spells them): generic hardware events (cycles, instructions,
 * branches, branch-misses, cache-references, cache-misses, bus-cycles, ref-cycles,
 * stalled-cycles-frontend/backend), hardware cache events (L1-dcache-load-misses,
 * LLC-loads, dTLB-load-misses, ...), software events (cpu-clock, task-clock, page-faults,
 * minor-faults, major-faults, context-switches, cpu-migrations, alignment-faults,
 * emulation-faults), raw events rNNNN (hex config), and PMU-specific names through libpfm4
 * (e.g. INST_RETIRED:ANY_P). Modifiers :u (user only) and :k (kernel only) may follow.
 */
#ifndef SPENT_EVENTS_H
#define SPENT_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum spent_event_class {
	SPENT_EV_HARDWARE = 1,	/* generic hardware event: needs a PMU */
	SPENT_EV_HW_CACHE,	/* hardware cache event: needs a PMU */
	SPENT_EV_SOFTWARE,	/* kernel software event: always there */
	SPENT_EV_RAW,		/* rNNNN: needs a PMU */
	SPENT_EV_PMU,		/* libpfm4-encoded PMU-specific event: needs a PMU */
	SPENT_EV_TRACEPOINT,	/* SYSTEM:EVENT, a kernel tracepoint (tracefs): always there */
};

struct spent_event {
	char name[128];		/* canonical name without modifiers: "cycles", "r01c2" */
	char spec[160];		/* as the user wrote it, modifiers included */
	enum spent_event_class cls;
	struct perf_event_attr attr;	/* type/config/exclude_* filled; flags left to the opener */
	const char *unit;	/* "msec" for the clocks (counts are ns), else "" */
};

/*
 * Parse one event SPEC into EV. Returns 0, -ENOENT for an unknown name (ERR then says so and
 * lists the closest known names), or -EINVAL for a malformed spec (bad modifier, bad raw hex).
 * ERR may be NULL.
 */
SPENT_API int spent_event_parse(const char *spec, struct spent_event *ev, char *err, size_t errlen);

/*
 * Parse a comma-separated list of specs into a new array (caller frees *EVS). Same errors as
 * spent_event_parse; on error nothing is allocated.
 */
SPENT_API int spent_event_parse_list(const char *list, struct spent_event **evs, size_t *n,
			   char *err, size_t errlen);

/* True when EV needs a hardware PMU (hardware, cache, raw, PMU-specific). */
SPENT_API bool spent_event_needs_pmu(const struct spent_event *ev);

/* 1 when this machine has a hardware PMU that perf can open, 0 when not (cached). */
SPENT_API int spent_pmu_present(void);

/*
 * Replace EV by perf's fallback when its hardware event cannot be opened: cycles and
 * cpu-cycles -> task-clock for a command (SYSTEM_WIDE false) or cpu-clock for all CPUs.
 * Returns 0 when replaced, -ENOENT when EV has no fallback.
 */
SPENT_API int spent_event_fallback(struct spent_event *ev, bool system_wide);

/*
 * Count EV in user space only: exclude_kernel and exclude_hv set, ":u" added to its spec.
 * 0, or -ENOENT when EV already excludes the kernel or the user (an explicit :u or :k).
 */
SPENT_API int spent_event_user_only(struct spent_event *ev);

/*
 * perf's fallback for kernel.perf_event_paranoid >= 2, where an unprivileged user may not
 * count kernel events: EV is test-opened for the calling thread and, when the kernel refuses
 * it (EACCES/EPERM) but accepts it without the kernel, switched to user space only
 * (spent_event_user_only). 1 when switched, 0 when EV opens as it is, -errno when it opens
 * neither way (EV unchanged; the caller's real open reports the error).
 */
SPENT_API int spent_event_user_fallback(struct spent_event *ev);

/*
 * perf_event_open(2) for EV with the caller's ATTR tweaks already applied to a copy of
 * ev->attr (ATTR may be NULL to use ev->attr as is). Returns the fd or -errno.
 */
SPENT_API int spent_event_open(const struct spent_event *ev, const struct perf_event_attr *attr,
		     pid_t pid, int cpu, int group_fd, unsigned long flags);

/*
 * Read a counter opened with read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING (and nothing
 * else): its raw count and the nanoseconds it was enabled and on a counter. 0 or -errno.
 */
SPENT_API int spent_event_read(int fd, uint64_t *value, uint64_t *enabled, uint64_t *running);

/* One entry of the catalogue, for `spent stat --list`. */
struct spent_event_info {
	const char *name;
	const char *group;	/* "hardware", "hardware cache", "software", "pmu: <name>" */
	const char *desc;
	bool available;		/* opened successfully on this machine just now */
};

/*
 * The events this machine knows, each probed by opening it for the calling thread.
 * *OUT is a new array the caller frees with spent_event_catalogue_free().
 */
SPENT_API int spent_event_catalogue(struct spent_event_info **out, size_t *n);
SPENT_API void spent_event_catalogue_free(struct spent_event_info *list, size_t n);

#ifdef __cplusplus
}
#endif
#endif
