/* collect/sampling.h - counter-overflow sampling into an in-memory profile (SpeedShop's
 * "hits" histogram): perf events per CPU with inherit (or per thread), mmap ring buffers,
 * side-band MMAP2/COMM/FORK/EXIT so every sample maps to (image, offset), optional call
 * chains (kernel frame-pointer chains, or user stack copies unwound with libdwfl), and a detail
 * row per sample: the task (comm, pid, tid) and wall-clock time that took it. */
#ifndef SPENT_COLLECT_SAMPLING_H
#define SPENT_COLLECT_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/events.h"
#include "spent/profile.h"

enum sampling_callchain {
	SAMPLING_CG_NONE = 0,
	SAMPLING_CG_FP,		/* PERF_SAMPLE_CALLCHAIN: the kernel walks frame pointers */
	SAMPLING_CG_DWARF,	/* user registers + stack copy, unwound with libdwfl (CFI) */
};

struct sampling_event {
	struct spent_event ev;
	uint64_t period;	/* events per sample, or Hz when FREQ */
	bool freq;
};

struct sampling_config {
	const struct sampling_event *events;
	size_t nevents;
	enum sampling_callchain callchain;
	bool per_thread;	/* one event per thread (no inherit) instead of per CPU + inherit */
	bool no_inherit;	/* per CPU, not inherited: the attached threads alone */
	bool start_disabled;	/* a command's events stay off at its exec until sampling_enable */
	const int *cpus;	/* sampling_attach_all_cpus: these CPUs (NULL: every online one) */
	size_t n_cpus;
	size_t ring_pages;	/* data pages per ring (power of two); 0 = 128 (512 KiB), 1024 for DWARF */
	uint32_t stack_dump;	/* bytes of user stack copied per sample for DWARF; 0 = 8192 */
};

struct sampling_stats {
	uint64_t samples;	/* sample records read */
	uint64_t placed;	/* samples attributed to an image */
	uint64_t unknown;	/* samples with no image (reason in the profile) */
	uint64_t lost;		/* PERF_RECORD_LOST totals */
	uint64_t throttled;	/* PERF_RECORD_THROTTLE records */
	uint64_t unwound_frames;/* DWARF: user frames recovered beyond the leaf */
	uint64_t followed_threads;	/* per-thread: threads created after the attach */
};

struct sampling;

/* A sampler for CFG (copied). 0, -EINVAL (bad config) or -ENOMEM. */
int sampling_new(const struct sampling_config *cfg, struct sampling **out);
void sampling_free(struct sampling *s);

/*
 * Open the events for process PID (all its threads, and children through inherit) on every
 * online CPU, or per thread. ENABLE_ON_EXEC: counting starts when PID calls exec (a freshly
 * forked command), else immediately. Returns 0 or -errno from perf_event_open; *FAILED_EVENT
 * (may be NULL) receives the index of the event that could not be opened.
 */
int sampling_attach(struct sampling *s, pid_t pid, bool enable_on_exec, size_t *failed_event);

/* Every task on every online CPU (perf record -a), enabled now: what the machine runs, the
 * idle task included (named swapper, as perf does). Not in per-thread mode (-EINVAL); else as
 * sampling_attach. */
int sampling_attach_all_cpus(struct sampling *s, size_t *failed_event);

/* Enable every event opened so far (start_disabled: the command's, when its delay is over;
 * images it mapped meanwhile are read from /proc when first sampled). 0 or -errno. */
int sampling_enable(struct sampling *s);

/* Per-thread mode: process PID, found in /proc rather than by a FORK record (an orphan of the
 * recorded tree that came to a child subreaper), is followed with its threads and children,
 * its maps read now. Already followed: nothing. 0 or -ENOMEM. */
int sampling_follow_process(struct sampling *s, pid_t pid);

/* Wait up to TIMEOUT_MS for data, then read every ring. 0 or -errno. */
int sampling_poll(struct sampling *s, int timeout_ms);
/* Read everything left (after the target exited) and stop the events. */
int sampling_finish(struct sampling *s);

/* The aggregated profile (owned by the sampler; valid until sampling_free). */
struct spent_profile *sampling_profile(struct sampling *s);
void sampling_get_stats(const struct sampling *s, struct sampling_stats *st);

/* SpeedShop-style preset prime periods for EV: FAST (more samples) or slow. */
uint64_t sampling_preset_period(const struct spent_event *ev, bool fast);

/* kernel.perf_event_max_sample_rate (the kernel refuses a frequency above it, and lowers it
 * itself when sampling interrupts take too long), or 0 when it cannot be read. */
uint64_t sampling_max_frequency(void);

/* Lower *HZ to sampling_max_frequency() when above it (perf record's -F does the same) and
 * say so in MSG (LEN bytes; "" when *HZ was kept): one wording for record, top and daemon. */
void sampling_clamp_frequency(uint64_t *hz, char *msg, size_t len);

#endif
