/* tests/unit/test_sampling_tasks.c - thread names in record (collect/sampling_tasks.c): COMM
 * records rename a thread (a new task from then on), FORK gives a new thread or child its
 * parent's name and forgets what a reused tid was called, unknown threads get perf's ":TID",
 * --per-thread's followed marks are told from a reused tid's, and sample times convert to the
 * wall clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "collect/sampling_int.h"

static struct sampling *new_sampler(void)
{
	struct sampling_event ev = { .period = 1000003 };
	char err[128];
	assert_int_equal(spent_event_parse("cpu-clock", &ev.ev, err, sizeof(err)), 0);
	struct sampling_config cfg = { .events = &ev, .nevents = 1 };
	struct sampling *s = NULL;
	assert_int_equal(sampling_new(&cfg, &s), 0);
	return s;
}

static const struct spent_profile_task *task_of(struct sampling *s, uint32_t pid, uint32_t tid)
{
	uint32_t idx;
	assert_int_equal(sampling_task_index(s, pid, tid, &idx), 0);
	return spent_profile_task_get(sampling_profile(s), idx);
}

/* tids far above pid_max: no /proc entry can name them */
#define P 4000000000u

static void comm_and_fork(void **state)
{
	struct sampling *s = new_sampler();
	assert_int_equal(sampling_task_comm(s, P, P, "gzip\0garbage", 16), 0);
	assert_string_equal(task_of(s, P, P)->comm, "gzip");
	/* a thread of it, then a child process: both start with the parent's name */
	assert_int_equal(sampling_task_fork(s, P, P + 1, P), 0);
	assert_int_equal(sampling_task_fork(s, P + 2, P + 2, P), 0);
	assert_string_equal(task_of(s, P, P + 1)->comm, "gzip");
	const struct spent_profile_task *child = task_of(s, P + 2, P + 2);
	assert_string_equal(child->comm, "gzip");
	assert_int_equal(child->pid, P + 2);
	/* the child execs: a new task with the new name, the old one stays in the profile */
	uint32_t before, after;
	assert_int_equal(sampling_task_index(s, P + 2, P + 2, &before), 0);
	assert_int_equal(sampling_task_comm(s, P + 2, P + 2, "xz", 16), 0);
	assert_int_equal(sampling_task_index(s, P + 2, P + 2, &after), 0);
	assert_int_not_equal(before, after);
	assert_string_equal(spent_profile_task_get(sampling_profile(s), after)->comm, "xz");
	assert_string_equal(spent_profile_task_get(sampling_profile(s), before)->comm, "gzip");
	/* a name of 16 bytes or more keeps the kernel's 15 */
	assert_int_equal(sampling_task_comm(s, P, P + 1, "a-very-long-thread-name", 24), 0);
	assert_string_equal(task_of(s, P, P + 1)->comm, "a-very-long-thr");
	sampling_free(s);
}

static void unknown_and_reused(void **state)
{
	struct sampling *s = new_sampler();
	char want[16];
	snprintf(want, sizeof(want), ":%u", P + 7);
	assert_string_equal(task_of(s, P, P + 7)->comm, want);
	/* a tid reused by a thread of another process forgets the old name */
	assert_int_equal(sampling_task_comm(s, P, P + 8, "old", 16), 0);
	assert_int_equal(sampling_task_fork(s, P + 9, P + 8, P + 10), 0);
	snprintf(want, sizeof(want), ":%u", P + 8);
	assert_string_equal(task_of(s, P + 9, P + 8)->comm, want);
	/* many threads: the table grows and keeps every name */
	for (uint32_t i = 0; i < 2000; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t%u", i);
		assert_int_equal(sampling_task_comm(s, P, 100 + i, name, 16), 0);
	}
	for (uint32_t i = 0; i < 2000; i += 97) {
		char name[16];
		snprintf(name, sizeof(name), "t%u", i);
		assert_string_equal(task_of(s, P, 100 + i)->comm, name);
	}
	sampling_free(s);
}

static uint64_t mono_now(void)
{
	struct timespec m;
	clock_gettime(CLOCK_MONOTONIC, &m);
	return (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
}

/* --per-thread's followed mark against a FORK record's time: a mark set after the fork (a
 * scan opened the task first, even a little before the kernel wrote the record) is the
 * task's own; one set long before the fork is a reused tid's previous task, whose EXIT record
 * was lost, and must not keep the new task unfollowed. */
static void followed_mark_and_fork_time(void **state)
{
	struct sampling *s = new_sampler();
	uint64_t before = mono_now();
	assert_false(sampling_task_followed_since(s, P + 20, before));
	assert_int_equal(sampling_task_set_followed(s, P + 20, true), 0);
	uint64_t after = mono_now();
	assert_true(sampling_task_followed(s, P + 20));
	assert_true(sampling_task_followed_since(s, P + 20, before));	/* scan after the fork */
	assert_true(sampling_task_followed_since(s, P + 20, after + 1000000));	/* 1 ms early */
	assert_false(sampling_task_followed_since(s, P + 20, after + 2000000000ull)); /* stale */
	/* the EXIT record clears it: no task, no mark */
	assert_int_equal(sampling_task_set_followed(s, P + 20, false), 0);
	assert_false(sampling_task_followed_since(s, P + 20, before));
	sampling_free(s);
}

static void wall_clock(void **state)
{
	struct sampling *s = new_sampler();
	struct timespec m, r;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	uint64_t mono = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	uint64_t real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
	uint64_t wall = sampling_wall_ns(s, mono);
	assert_true(wall > real - 50000000ull && wall < real + 50000000ull);
	assert_int_equal(sampling_wall_ns(s, 0), 0);	/* unknown stays unknown */
	sampling_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comm_and_fork),
		cmocka_unit_test(unknown_and_reused),
		cmocka_unit_test(followed_mark_and_fork_time),
		cmocka_unit_test(wall_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
