/* tests/unit/test_counters.c - the perfex library: counting on the calling thread, reset,
 * overflow handlers at a known period, and nested/repeated named regions. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "spent/counters.h"

static volatile unsigned long sink;

static void spin_ms(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

static void counts_only_between_start_and_stop(void **state)
{
	(void)state;
	struct spent_counters *c;
	assert_int_equal(spent_counters_open("task-clock,page-faults", 0, &c), 0);
	assert_int_equal(spent_counters_count(c), 2);
	assert_string_equal(spent_counters_name(c, 1), "page-faults");
	uint64_t v[2];
	spin_ms(5);
	assert_int_equal(spent_counters_read(c, v, 2), 0);
	assert_int_equal(v[0], 0); /* opened stopped */
	assert_int_equal(spent_counters_start(c), 0);
	spin_ms(20);
	assert_int_equal(spent_counters_stop(c), 0);
	assert_int_equal(spent_counters_read(c, v, 2), 0);
	assert_true(v[0] >= 19000000 && v[0] < 200000000); /* ~20 ms of this thread's CPU */
	uint64_t again[2];
	spin_ms(5);
	assert_int_equal(spent_counters_read(c, again, 2), 0);
	assert_true(again[0] == v[0]); /* stopped: nothing more */
	assert_int_equal(spent_counters_reset(c), 0);
	assert_int_equal(spent_counters_read(c, v, 2), 0);
	assert_int_equal(v[0], 0);
	assert_int_equal(spent_counters_fast(c, 0), 0); /* software events have no PMU index */
	spent_counters_free(c);
}

static void unknown_events_explain_themselves(void **state)
{
	(void)state;
	struct spent_counters *c = NULL;
	assert_int_equal(spent_counters_open("task-clokc", 0, &c), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(spent_counters_error(), "task-clock"));
	/* what spent stat -e refuses, and a flag this library does not know, are refused */
	assert_int_equal(spent_counters_open("task-clock,", 0, &c), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(spent_counters_error(), "empty event name"));
	assert_int_equal(spent_counters_open("task-clock", 0x80, &c), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(spent_counters_error(), "unknown flags 0x80"));
}

/* misuse is -EINVAL before anything is done, as spent_stat_read does (it crashed, or read
 * fewer values than asked and said 0) */
static void null_and_oversized_arguments_are_einval(void **state)
{
	(void)state;
	struct spent_counters *c = NULL;
	assert_int_equal(spent_counters_open("task-clock,page-faults", 0, NULL), -EINVAL);
	assert_non_null(strstr(spent_counters_error(), "NULL"));
	assert_int_equal(spent_counters_open(NULL, 0, &c), -EINVAL);
	assert_null(c);
	assert_int_equal(spent_counters_start(NULL), -EINVAL);
	assert_int_equal(spent_counters_stop(NULL), -EINVAL);
	assert_int_equal(spent_counters_reset(NULL), -EINVAL);
	assert_int_equal(spent_counters_count(NULL), 0);
	assert_null(spent_counters_name(NULL, 0));
	assert_int_equal(spent_counters_fast(NULL, 0), 0);
	uint64_t v[4] = { 7, 7, 7, 7 }, raw;
	assert_int_equal(spent_counters_read(NULL, v, 1), -EINVAL);
	assert_int_equal(spent_counters_read_one(NULL, 0, &raw, NULL, NULL), -EINVAL);
	assert_int_equal(spent_counters_on_overflow(NULL, 0, 1000, 0, NULL, NULL), -EINVAL);
	assert_int_equal(spent_counters_open("task-clock,page-faults", 0, &c), 0);
	assert_int_equal(spent_counters_read(c, NULL, 2), -EINVAL);
	assert_int_equal(spent_counters_read(c, v, 4), -EINVAL);
	assert_true(v[0] == 7 && v[2] == 7);	/* nothing written */
	assert_int_equal(spent_counters_read_one(c, 0, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(spent_counters_read(c, NULL, 0), 0);
	assert_int_equal(spent_counters_read(c, v, 2), 0);
	spent_counters_free(c);
}

static void overflow(struct spent_counters *c, size_t event, uint64_t count, void *arg)
{
	(void)c;
	(void)event;
	*(volatile uint64_t *)arg = count;
}

static void overflow_handler_runs_every_period(void **state)
{
	(void)state;
	struct spent_counters *c;
	volatile uint64_t seen = 0;
	assert_int_equal(spent_counters_open("task-clock", 0, &c), 0);
	/* every 1 ms of CPU time, for ~50 ms: the R10000's overflow interrupt */
	assert_int_equal(spent_counters_on_overflow(c, 0, 1000000, 0, overflow, (void *)&seen), 0);
	assert_int_equal(spent_counters_start(c), 0);
	spin_ms(50);
	assert_int_equal(spent_counters_stop(c), 0);
	uint64_t v;
	assert_int_equal(spent_counters_read(c, &v, 1), 0);
	assert_true(v >= 45000000); /* the event still counts while it samples */
	/* one call per full period of the counter's own count: task-clock includes time the host
	 * steals from the vCPU, which the thread's CPU clock above leaves out, so the number of
	 * periods comes from the counter itself (signals may coalesce: allow a few fewer) */
	uint64_t periods = v / 1000000;
	assert_true(seen >= periods / 2 && seen >= 25 && seen <= periods + 1);
	spent_counters_free(c);
}

/* Two events with handlers: each runs (adding the second disarmed the first for good), also
 * when an event's descriptor is 0 (stdin closed, as in a daemon: 0 meant an empty slot). */
static void overflow_handlers_of_two_events_both_run(void **state)
{
	(void)state;
	struct spent_counters *c;
	volatile uint64_t seen_clock = 0, seen_task = 0;
	int saved = dup(0);
	close(0);	/* the first event gets descriptor 0 */
	int err = spent_counters_open("cpu-clock,task-clock", 0, &c);
	dup2(saved, 0);
	close(saved);
	assert_int_equal(err, 0);
	assert_int_equal(spent_counters_on_overflow(c, 0, 1000000, 0, overflow, (void *)&seen_clock), 0);
	assert_int_equal(spent_counters_on_overflow(c, 1, 1000000, 0, overflow, (void *)&seen_task), 0);
	assert_int_equal(spent_counters_start(c), 0);
	spin_ms(50);
	assert_int_equal(spent_counters_stop(c), 0);
	uint64_t v[2];
	assert_int_equal(spent_counters_read(c, v, 2), 0);
	assert_true(v[0] >= 45000000 && v[1] >= 45000000);	/* both still count */
	assert_true(seen_clock >= 20 && seen_task >= 20);
	spent_counters_free(c);
}

/* A forked child's calls on its parent's set: -ECHILD (reading the perf page the kernel did not
 * copy crashed it); its regions start afresh and count. */
static void a_forked_child_gets_echild_and_fresh_regions(void **state)
{
	(void)state;
	struct spent_counters *c;
	assert_int_equal(spent_counters_open("task-clock", 0, &c), 0);
	assert_int_equal(spent_counters_start(c), 0);
	assert_int_equal(spent_region_begin("forked"), 0);
	assert_int_equal(spent_region_end("forked"), 0);
	pid_t p = fork();
	if (p == 0) {
		uint64_t v;
		struct spent_region r;
		int ok = spent_counters_read(c, &v, 1) == -ECHILD && spent_counters_stop(c) == -ECHILD &&
			 spent_region_get("forked", &r) == -ENOENT && spent_region_begin("child") == 0 &&
			 spent_region_end("child") == 0 && spent_region_get("child", &r) == 0 &&
			 r.entries == 1;
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	uint64_t v;
	assert_int_equal(spent_counters_read(c, &v, 1), 0);	/* the parent's are unharmed */
	spent_counters_free(c);
}

static void regions_accumulate_per_name(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(spent_region_begin("solve"), 0);
		assert_int_equal(spent_region_begin("solve"), 0); /* recursion counts once */
		spin_ms(4);
		assert_int_equal(spent_region_end("solve"), 0);
		assert_int_equal(spent_region_end("solve"), 0);
	}
	assert_int_equal(spent_region_begin("io"), 0);
	spin_ms(1);
	assert_int_equal(spent_region_end("io"), 0);
	struct spent_region r;
	assert_int_equal(spent_region_get("solve", &r), 0);
	assert_int_equal(r.entries, 3);
	assert_string_equal(r.event_names[0], "task-clock");
	assert_true(r.values[0] >= 11000000 && r.values[0] < 100000000);
	struct spent_region io;
	assert_int_equal(spent_region_get("io", &io), 0);
	assert_true(io.values[0] < r.values[0]);
	assert_int_equal(spent_region_get("never", &r), -ENOENT);
	assert_int_equal(spent_region_end("never"), -ENOENT);
}

static void *other_thread(void *arg)
{
	struct spent_region r;
	*(int *)arg = spent_region_get("solve", &r); /* regions are per thread */
	return NULL;
}

static void regions_are_per_thread(void **state)
{
	(void)state;
	int rc = 0;
	pthread_t t;
	pthread_create(&t, NULL, other_thread, &rc);
	pthread_join(t, NULL);
	assert_int_equal(rc, -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_only_between_start_and_stop),
		cmocka_unit_test(unknown_events_explain_themselves),
		cmocka_unit_test(null_and_oversized_arguments_are_einval),
		cmocka_unit_test(overflow_handler_runs_every_period),
		cmocka_unit_test(overflow_handlers_of_two_events_both_run),
		cmocka_unit_test(a_forked_child_gets_echild_and_fresh_regions),
		cmocka_unit_test(regions_accumulate_per_name),
		cmocka_unit_test(regions_are_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
