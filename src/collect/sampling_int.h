/* collect/sampling_int.h - internals shared by sampling.c (opening, polling),
 * sampling_records.c (record decoding and aggregation) and sampling_unwind.c (DWARF). */
#ifndef SPENT_COLLECT_SAMPLING_INT_H
#define SPENT_COLLECT_SAMPLING_INT_H

#include <poll.h>

#include "collect/sampling.h"
#include "core/hashtab.h"
#include "core/perf_ring.h"
#include "core/procmaps.h"

struct sampling_fd {
	int fd;
	size_t ev;		/* index into events */
	uint64_t id;		/* PERF_EVENT_IOC_ID */
};

/* Records copied out of every ring, then processed in time order. */
struct record_batch {
	uint8_t *buf;
	size_t len, cap;
	struct rec_ref { uint64_t time; size_t off; } *idx;
	size_t n, capidx;
};

struct unwinder;
struct sampling_thread;

struct sampling {
	struct sampling_config cfg;
	struct sampling_event *events;
	uint32_t prof_ev[64];		/* profile event index of each event */
	struct sampling_fd *fds;
	size_t nfds, capfds;
	struct perf_ring *rings;
	struct pollfd *pollfds;		/* by ring, beside rings */
	size_t nrings, caprings, cappollfds;
	struct record_batch recs;
	struct image_cache *cache;
	struct procmaps *maps;
	struct spent_profile *prof;
	struct sampling_stats stats;
	pid_t *tried;			/* pids whose /proc maps were (re)loaded once */
	size_t ntried, captried;
	struct {			/* image_info -> profile image index, direct mapped */
		const struct image_info *img;
		uint32_t idx;
	} imgcache[256];
	struct unwinder *unw;
	struct hashtab threads;		/* tid -> struct sampling_thread: name and task */
	int64_t realtime_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at sampling_new */
	uint64_t start_wall_ns;		/* first attach, wall clock: the profile's span start */
};

int sampling_read_rings(struct sampling *s);
/* Open every event for task PID (or -1) on CPU (or -1), sharing one ring; events not enabled.
 * On failure *FAILED (when not NULL) is the event that failed. 0 or -errno. */
int sampling_open_task(struct sampling *s, pid_t pid, int cpu, bool enable_on_exec,
		       size_t *failed);
/* Per-thread mode (sampling_follow.c): open and enable the events for TID of PID, a thread or
 * process created after the attach, which the kernel does not follow without inherit, and
 * those of every thread and child it created before that, recursively. 0 or -ENOMEM; a task
 * that is gone, or no descriptors left, only loses its samples. */
int sampling_follow_task(struct sampling *s, pid_t pid, pid_t tid);
/* Profile image index for IMG (interned on first use). */
int sampling_image_index(struct sampling *s, const struct image_info *img, uint32_t *idx);

/* Who and when (sampling_tasks.c; sampling_tasks_init at sampling_new). Sample times are CLOCK_MONOTONIC (attr.use_clockid: the
 * realtime clock is not NMI-safe); wall time = monotonic + the offset measured at start. */
void sampling_tasks_init(struct sampling *s);
uint64_t sampling_wall_ns(const struct sampling *s, uint64_t mono_ns);
uint64_t sampling_now_wall_ns(const struct sampling *s);
/* A COMM record: thread TID of PID is now called COMM (at most MAXLEN bytes). 0 or -ENOMEM. */
int sampling_task_comm(struct sampling *s, uint32_t pid, uint32_t tid, const char *comm,
		       size_t maxlen);
/* A FORK record: thread TID of PID was created by thread PTID and has its name. */
int sampling_task_fork(struct sampling *s, uint32_t pid, uint32_t tid, uint32_t ptid);
/* TID's name as /proc has it now (kept when it is gone): a thread followed after its FORK
 * record (--per-thread) may have renamed itself before its event was open to say so. */
int sampling_task_reread_comm(struct sampling *s, uint32_t pid, uint32_t tid);
/* --per-thread: whether TID's own events are open (sampling_attach, sampling_follow_task),
 * so that a task found both by a /proc scan and by its FORK record is opened once. Cleared by
 * TID's EXIT record, before the tid can be reused. set: 0 or -ENOMEM. */
bool sampling_task_followed(struct sampling *s, uint32_t tid);
int sampling_task_set_followed(struct sampling *s, uint32_t tid, bool followed);
/* Whether TID's mark was set after FORK_NS (CLOCK_MONOTONIC, a FORK record's time; within a
 * margin, see sampling_tasks.c): the task that fork made is the one followed. A mark set
 * before is a task that had the tid earlier and whose EXIT record was lost (a full ring). */
bool sampling_task_followed_since(struct sampling *s, uint32_t tid, uint64_t fork_ns);
/* The profile task of (PID, TID) under its current name (interned on first use). */
int sampling_task_index(struct sampling *s, uint32_t pid, uint32_t tid, uint32_t *idx);
void sampling_tasks_release(struct sampling *s);

/* DWARF unwinding (sampling_unwind.c). */
uint64_t sampling_unwind_regs_mask(void);
/*
 * Unwind the user stack of one sample: REGS as selected by sampling_unwind_regs_mask (in bit
 * order), STACK/STACK_LEN the copy taken at SP. Fills IPS (leaf first, at most MAX) with
 * return addresses beyond the leaf. Returns the number of frames (>= 0) or -errno.
 */
int sampling_unwind(struct sampling *s, pid_t pid, pid_t tid, const uint64_t *regs,
		    size_t nregs, const uint8_t *stack, size_t stack_len, uint64_t *ips, size_t max);
/* Maps of PID changed: cached unwinding state for it is stale. */
void sampling_unwind_invalidate(struct sampling *s, pid_t pid);
void sampling_unwind_release(struct sampling *s);

#endif
