/* tests/unit/test_stat_session.c - the spent_stat_* session (include/spent/stat.h): what a
 * second start says once the session has counted; no_inherit and delay_ms where
 * they have no meaning; a null run (no events). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "spent/events.h"
#include "spent/stat.h"

/* after a wait the session has counted: a second start is refused, saying a session runs
 * once (it said "already counting", which it no longer was), and the counts stay readable */
static void a_session_runs_once(void **state)
{
	(void)state;
	struct spent_event ev;
	char err[256];
	assert_int_equal(spent_event_parse("task-clock", &ev, err, sizeof(err)), 0);
	struct spent_stat_opts o = { .events = &ev, .n_events = 1 };
	struct spent_stat *s;
	char *argv[] = { "true", NULL };
	int status = -1;
	assert_int_equal(spent_stat_new(&o, &s), 0);
	int rc = spent_stat_start(s, argv);
	if (rc == -EACCES || rc == -EPERM) {	/* perf_event_paranoid */
		spent_stat_free(s);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(spent_stat_wait(s, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(spent_stat_start(s, argv), -EBUSY);
	assert_non_null(strstr(spent_stat_error(s), "runs once"));
	assert_null(strstr(spent_stat_error(s), "already counting"));
	struct spent_stat_value v;
	assert_int_equal(spent_stat_read(s, &v, 1), 0);
	spent_stat_free(s);
}

/* no_inherit counts the first threads alone: every CPU's tasks and a followed tree contradict
 * it, and the start says so before anything runs (no child is left) */
static void no_inherit_is_refused_where_it_means_nothing(void **state)
{
	(void)state;
	struct spent_event ev;
	char err[256];
	assert_int_equal(spent_event_parse("task-clock", &ev, err, sizeof(err)), 0);
	struct spent_stat_opts cpus = { .events = &ev, .n_events = 1, .system_wide = 1, .no_inherit = 1 };
	struct spent_stat_opts tree = { .events = &ev, .n_events = 1, .follow_threads = 1, .no_inherit = 1 };
	char *argv[] = { "true", NULL };
	struct spent_stat *s;
	assert_int_equal(spent_stat_new(&cpus, &s), 0);
	assert_int_equal(spent_stat_start(s, NULL), -EINVAL);
	assert_non_null(strstr(spent_stat_error(s), "no_inherit"));
	spent_stat_free(s);
	assert_int_equal(spent_stat_new(&tree, &s), 0);
	assert_int_equal(spent_stat_start(s, argv), -EINVAL);
	assert_non_null(strstr(spent_stat_error(s), "follow_threads"));
	spent_stat_free(s);
}

/* delay_ms delays a command's counting: without one (CPUs alone) or with a followed tree it
 * is refused at the start */
static void delay_needs_a_command(void **state)
{
	(void)state;
	struct spent_event ev;
	char err[256];
	assert_int_equal(spent_event_parse("task-clock", &ev, err, sizeof(err)), 0);
	struct spent_stat_opts cpus = { .events = &ev, .n_events = 1, .system_wide = 1, .delay_ms = 10 };
	struct spent_stat_opts tree = { .events = &ev, .n_events = 1, .follow_threads = 1, .delay_ms = 10 };
	char *argv[] = { "true", NULL };
	struct spent_stat *s;
	assert_int_equal(spent_stat_new(&cpus, &s), 0);
	assert_int_equal(spent_stat_start(s, NULL), -EINVAL);
	assert_non_null(strstr(spent_stat_error(s), "delay_ms"));
	spent_stat_free(s);
	assert_int_equal(spent_stat_new(&tree, &s), 0);
	assert_int_equal(spent_stat_start(s, argv), -EINVAL);
	assert_non_null(strstr(spent_stat_error(s), "follow_threads"));
	spent_stat_free(s);
}

/* no events: a null run (perf stat --null), the command timed; with nothing to run, refused */
static void no_events_times_a_command(void **state)
{
	(void)state;
	struct spent_stat_opts o = { .n_events = 0 };
	char *argv[] = { "sleep", "0.05", NULL };
	struct spent_stat *s;
	int status = -1;
	assert_int_equal(spent_stat_new(&o, &s), 0);
	assert_int_equal(spent_stat_start(s, argv), 0);
	assert_int_equal(spent_stat_start(s, argv), -EBUSY);
	assert_int_equal(spent_stat_wait(s, &status), 0);
	assert_int_equal(status, 0);
	assert_true(spent_stat_elapsed_ns(s) >= 45000000);
	assert_int_equal(spent_stat_read(s, NULL, 0), 0);
	assert_int_equal(spent_stat_wait(s, &status), -EINVAL);
	spent_stat_free(s);
	assert_int_equal(spent_stat_new(&o, &s), 0);
	assert_int_equal(spent_stat_start(s, NULL), -EINVAL);
	assert_non_null(strstr(spent_stat_error(s), "no events"));
	assert_int_equal(spent_stat_wait(s, &status), -EINVAL);
	spent_stat_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_session_runs_once),
		cmocka_unit_test(no_inherit_is_refused_where_it_means_nothing),
		cmocka_unit_test(delay_needs_a_command),
		cmocka_unit_test(no_events_times_a_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
