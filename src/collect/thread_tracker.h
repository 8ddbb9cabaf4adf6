/* collect/thread_tracker.h - exact per-thread and per-process counts of a launched command.
 *
 * The command is ptrace-seized before it execs; every thread or process it creates gets its
 * own non-inherited counters at its creation stop (before it runs an instruction), read at its
 * exit stop (before it is gone). The tracee stops only at clone, fork, exec and exit, so the
 * cost is a few microseconds per thread, never per instruction. Inherited counters give the
 * same totals without stops; this is for the breakdown perf stat only offers with -p. */
#ifndef SPENT_COLLECT_THREAD_TRACKER_H
#define SPENT_COLLECT_THREAD_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/counting.h"

struct thread_counts {
	pid_t pid, tid;
	char comm[16];
	bool exited;
	struct count_value *values;	/* one per event */
};

struct thread_tracker;

/* The name of thread TID of process PID (/proc/PID/task/TID/comm), "" when unreadable. */
void thread_comm(pid_t pid, pid_t tid, char comm[16]);
/* The threads of process PID now (/proc/PID/task) into *TIDS (malloc'd, *N of them): -ESRCH
 * when the process is gone. */
int thread_list(pid_t pid, pid_t **tids, size_t *n);
/* The children of thread TID of PID now (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN),
 * into *KIDS (malloc'd, NULL when none), *N of them. No file (the thread has ended, or a kernel
 * without it) is no children. 0 or -ENOMEM. */
int thread_children(pid_t pid, pid_t tid, pid_t **kids, size_t *n);

/* EVENTS/GROUP as in struct counting_config (copied). */

int thread_tracker_new(const struct spent_event *events, const int *group, size_t n_events,
		       struct thread_tracker **out);
void thread_tracker_free(struct thread_tracker *t);

/* Seize ROOT, a child of the caller that has not exec'd yet (blocked on a barrier), and open
 * its counters to start at its exec. On -ENOENT etc. *BAD_EVENT names the event. */
int thread_tracker_attach(struct thread_tracker *t, pid_t root, size_t *bad_event);

/*
 * Handle one waitpid(-1, &status, __WALL) result. Returns 1 when ROOT has exited, with its
 * wait status in *ROOT_STATUS (spent_stat_wait's callers and workload_exit_code() decode it,
 * once: decoding it here too made exit 3 read as 131); 0 otherwise; -errno when
 * a new thread's counters could not be opened (the thread still runs, uncounted).
 */
int thread_tracker_handle(struct thread_tracker *t, pid_t tid, int status, int *root_status);

/* Every thread seen, exited or alive (alive ones read now, with their names now), in the
 * order they were seen (a later call lists the same threads first). Owned by T. */
int thread_tracker_results(struct thread_tracker *t, const struct thread_counts **out, size_t *n);

#endif
