/* collect/sampling_follow.c - --per-thread recording: the events of every task the recorded
 * tree creates (collect/sampling_int.h).
 *
 * Per-thread events are not inherited, so a new thread or child gets its own when its FORK
 * record is read (sampling_records.c), milliseconds after it started. A FORK record goes to the
 * rings of the creator's events: what a task created before its own events were open went into
 * no ring. sh -> sh -> gzip lost gzip, and g++ -> collect2 -> ld lost ld, in most runs. So once
 * a task's events are open, the threads of its process (/proc/PID/task) and its children
 * (/proc/PID/task/TID/children) that have no events yet are opened too, and theirs in turn.
 *
 * Why that leaves no gap: a task created by T after T's events are open writes a FORK record
 * into T's ring and is followed when that is read. One created before is listed in T's
 * children or its process's threads when they are read, which is after the open, unless it
 * has ended by then: its samples are over, and only its own orphans (reparented away from it,
 * so listed under no followed task) are missed here; they come to the recorder, a child
 * subreaper, which follows them (collect/record.c). A task created between the open and the scan
 * is found both ways; the followed mark (sampling_task_followed) opens it once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "collect/sampling_int.h"
#include "collect/thread_tracker.h"
#include "core/alloc.h"

/* Tasks found and not opened yet: a stack, so a deep tree needs no deep recursion. */
struct found_tasks {
	struct found_task { pid_t pid, tid; } *v;
	size_t n, cap;
};

static int push(struct found_tasks *w, pid_t pid, pid_t tid)
{
	if (ALLOC_GROW(w->v, w->n + 1, w->cap))
		return -ENOMEM;
	w->v[w->n++] = (struct found_task){ .pid = pid, .tid = tid };
	return 0;
}

/*
 * The children of thread TID of PID, each a new process. No file (the thread has ended, or a
 * kernel without CONFIG_PROC_CHILDREN) finds none: the children it made before its events
 * were open go unsampled then, as they all did before. The kernel builds the list while the
 * tasks run: a child forked meanwhile may be missing (its FORK record is in TID's ring), and
 * so may one whose sibling exits at that moment (rare: left to chance).
 */
static int push_children(struct found_tasks *w, pid_t pid, pid_t tid)
{
	pid_t *kids;
	size_t n;
	int err = thread_children(pid, tid, &kids, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = push(w, kids[i], kids[i]);
	free(kids);
	return err;
}

/* The threads of PID without events of their own (made by one that had none yet). */
static int push_threads(struct sampling *s, struct found_tasks *w, pid_t pid)
{
	pid_t *tids;
	size_t n;
	int err = thread_list(pid, &tids, &n);
	if (err)	/* the process has ended: nothing to open */
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < n && !err; i++)
		if (!sampling_task_followed(s, (uint32_t)tids[i]))
			err = push(w, pid, tids[i]);
	free(tids);
	return err;
}

/* Open and enable TID's events: 1 when open, 0 when it has ended or no descriptors are left
 * (its samples are missed, the others go on), -ENOMEM. */
static int open_task(struct sampling *s, pid_t pid, pid_t tid)
{
	size_t first = s->nfds;
	int err = sampling_open_task(s, tid, -1, false, NULL);
	for (size_t i = first; i < s->nfds && !err; i++)
		if (ioctl(s->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			err = -errno;
	if (err)
		return err == -ENOMEM ? err : 0;
	s->stats.followed_threads++;
	if ((err = sampling_task_set_followed(s, (uint32_t)tid, true)))
		return err;
	/* its name now: it may have exec'd or renamed itself before its events could say so */
	err = sampling_task_reread_comm(s, (uint32_t)pid, (uint32_t)tid);
	return err ? err : 1;
}

/* Open TID of PID and what it made before, recursively; FIRST_BY_SCAN: PID itself was found
 * in /proc, not by its FORK record. */
static int follow(struct sampling *s, pid_t pid, pid_t tid, bool first_by_scan)
{
	struct found_tasks w = { 0 };
	int err = push(&w, pid, tid);
	while (!err && w.n) {
		struct found_task t = w.v[--w.n];
		bool by_scan = first_by_scan || t.pid != pid || t.tid != tid;
		if (sampling_task_followed(s, (uint32_t)t.tid))
			continue;	/* listed twice, or opened since its FORK record was written */
		int opened = open_task(s, t.pid, t.tid);
		if (opened <= 0) {
			err = opened;
			continue;
		}
		/* a process found by the scan has no FORK record to copy its parent's maps from,
		 * and may have exec'd: its maps as they are, while it surely still exists */
		if (by_scan && t.pid == t.tid && procmaps_load_pid(s->maps, t.pid) == -ENOMEM)
			err = -ENOMEM;
		/* a process's threads are listed when the process opens (what it made before);
		 * a thread's own FORK records name the threads it makes once it is open. Listing
		 * them after every thread's open cost O(threads) per FORK record: with 1500 threads
		 * the backlog never caught up, and half the threads went unsampled */
		if (!err && !(err = push_children(&w, t.pid, t.tid)) && t.pid == t.tid)
			err = push_threads(s, &w, t.pid);
	}
	free(w.v);
	return err;
}

int sampling_follow_task(struct sampling *s, pid_t pid, pid_t tid)
{
	return follow(s, pid, tid, false);
}

int sampling_follow_process(struct sampling *s, pid_t pid)
{
	return follow(s, pid, pid, true);
}
