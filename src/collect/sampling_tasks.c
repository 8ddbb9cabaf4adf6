/* collect/sampling_tasks.c - who took each sample and when (collect/sampling_int.h): the name of
 * every thread from side-band COMM records (exec and renames) and FORK records (a new thread or
 * child starts with its parent's name), the profile task index of each (comm, pid, tid), which
 * threads have events of their own (--per-thread), and the conversion of sample times
 * (CLOCK_MONOTONIC, see fill_attr) to wall-clock time. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/sampling_int.h"
#include "collect/thread_tracker.h"

struct sampling_thread {
	uint64_t tid;		/* the key (core/hashtab.h); never 0 */
	uint32_t pid;
	uint32_t task;		/* profile task index, SPENT_PROFILE_NO_TASK until first needed */
	char comm[16];		/* "" until known */
	bool followed;		/* --per-thread: its own events are open (until its EXIT record) */
	uint64_t followed_ns;	/* CLOCK_MONOTONIC when followed was last set */
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sampling_tasks_init(struct sampling *s)
{
	s->threads = (struct hashtab)HASHTAB_INIT(struct sampling_thread);
	/* CLOCK_REALTIME - CLOCK_MONOTONIC, read between two monotonic reads so that the
	 * scheduling delay of one read does not skew it */
	uint64_t m1 = clock_ns(CLOCK_MONOTONIC), rt = clock_ns(CLOCK_REALTIME);
	uint64_t m2 = clock_ns(CLOCK_MONOTONIC);
	s->realtime_offset = (int64_t)(rt - (m1 + (m2 - m1) / 2));
}

uint64_t sampling_wall_ns(const struct sampling *s, uint64_t mono_ns)
{
	return mono_ns ? mono_ns + (uint64_t)s->realtime_offset : 0;
}

uint64_t sampling_now_wall_ns(const struct sampling *s)
{
	return sampling_wall_ns(s, clock_ns(CLOCK_MONOTONIC));
}

/* The entry of TID, made (empty name) when ADD and it is new; NULL when absent or no memory. */
static struct sampling_thread *thread_slot(struct sampling *s, uint32_t tid, bool add)
{
	if (!tid)
		return NULL;
	if (!add)
		return hashtab_find(&s->threads, tid);
	struct sampling_thread *t;
	int isnew = hashtab_insert(&s->threads, tid, (void **)&t);
	if (isnew < 0)
		return NULL;
	if (isnew)
		t->task = SPENT_PROFILE_NO_TASK;
	return t;
}

static void set_comm(struct sampling_thread *t, uint32_t pid, const char *comm, size_t len)
{
	if (len > sizeof(t->comm) - 1)
		len = sizeof(t->comm) - 1;
	memcpy(t->comm, comm, len);
	t->comm[len] = 0;
	t->pid = pid;
	t->task = SPENT_PROFILE_NO_TASK;	/* a new (comm, pid, tid): interned when next sampled */
}

int sampling_task_comm(struct sampling *s, uint32_t pid, uint32_t tid, const char *comm,
		       size_t maxlen)
{
	struct sampling_thread *t = thread_slot(s, tid, true);
	if (!t)
		return -ENOMEM;
	set_comm(t, pid, comm, strnlen(comm, maxlen));
	return 0;
}

int sampling_task_fork(struct sampling *s, uint32_t pid, uint32_t tid, uint32_t ptid)
{
	struct sampling_thread *parent = thread_slot(s, ptid, false);
	char comm[16] = "";
	if (parent)	/* copied before the insert below may move the slots */
		memcpy(comm, parent->comm, sizeof(comm));
	struct sampling_thread *t = thread_slot(s, tid, true);
	if (!t)
		return -ENOMEM;
	/* a reused tid must not keep the name of the thread that had it before */
	set_comm(t, pid, comm, strlen(comm));
	return 0;
}

int sampling_task_reread_comm(struct sampling *s, uint32_t pid, uint32_t tid)
{
	char comm[16];
	thread_comm((pid_t)pid, (pid_t)tid, comm);
	return comm[0] ? sampling_task_comm(s, pid, tid, comm, sizeof(comm)) : 0;
}

bool sampling_task_followed(struct sampling *s, uint32_t tid)
{
	const struct sampling_thread *t = thread_slot(s, tid, false);
	return t && t->followed;
}

int sampling_task_set_followed(struct sampling *s, uint32_t tid, bool followed)
{
	struct sampling_thread *t = thread_slot(s, tid, followed);
	if (t) {
		t->followed = followed;
		if (followed)
			t->followed_ns = clock_ns(CLOCK_MONOTONIC);
	}
	return t || !followed ? 0 : -ENOMEM;
}

/* The kernel lists a new task in /proc a little before it writes the FORK record (and takes
 * that record's time), so a scan can open the task first: a mark up to this much older than
 * the fork is still the task's own. A tid comes back only after pid_max others (32768 at
 * least): far more forks than fit in 100 ms. */
#define FOLLOWED_BEFORE_FORK_NS 100000000ull

bool sampling_task_followed_since(struct sampling *s, uint32_t tid, uint64_t fork_ns)
{
	const struct sampling_thread *t = thread_slot(s, tid, false);
	return t && t->followed && t->followed_ns + FOLLOWED_BEFORE_FORK_NS >= fork_ns;
}

int sampling_task_index(struct sampling *s, uint32_t pid, uint32_t tid, uint32_t *idx)
{
	if (!tid) {	/* the idle task (every CPU's, -a): no /proc entry, and no key 0 here */
		struct spent_profile_task idle = { .comm = "swapper", .pid = 0, .tid = 0 };
		return spent_profile_task_intern(s->prof, &idle, idx);
	}
	struct sampling_thread *t = thread_slot(s, tid, true);
	if (!t)
		return -ENOMEM;
	if (t->task != SPENT_PROFILE_NO_TASK && t->pid == pid) {
		*idx = t->task;
		return 0;
	}
	if (!t->comm[0] || t->pid != pid) {
		/* no COMM or FORK record named it (threads of an attached process are named at
		 * the attach): /proc has the name while the thread lives; perf's ":TID" else */
		char comm[16];
		thread_comm((pid_t)pid, (pid_t)tid, comm);
		if (!comm[0])
			snprintf(comm, sizeof(comm), ":%u", tid);
		set_comm(t, pid, comm, strlen(comm));
	}
	struct spent_profile_task task = { .comm = t->comm, .pid = pid, .tid = tid };
	int err = spent_profile_task_intern(s->prof, &task, &t->task);
	if (err)
		return err;
	*idx = t->task;
	return 0;
}

void sampling_tasks_release(struct sampling *s)
{
	hashtab_release(&s->threads);
}
