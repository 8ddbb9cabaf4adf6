/* tests/unit/test_events.c - event-name parsing, modifiers, suggestions and fallbacks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "spent/events.h"

static void generic_and_software_names_map_to_perf_types(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("cycles", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_true(spent_event_needs_pmu(&ev));
	assert_int_equal(spent_event_parse("task-clock", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_string_equal(ev.unit, "msec");
	assert_false(spent_event_needs_pmu(&ev));
	assert_int_equal(spent_event_parse("cs", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
}

static void cache_events_encode_id_op_result(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("L1-dcache-load-misses", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(ev.attr.config, PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
						 PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	assert_int_equal(spent_event_parse("dTLB-stores", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.config, PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_WRITE << 8 |
						 PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16);
}

static void raw_and_modifiers(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("r01c2", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.type, PERF_TYPE_RAW);
	assert_int_equal(ev.attr.config, 0x1c2);
	assert_int_equal(spent_event_parse("instructions:u", &ev, NULL, 0), 0);
	assert_string_equal(ev.name, "instructions");
	assert_string_equal(ev.spec, "instructions:u");
	assert_int_equal(ev.attr.exclude_kernel, 1);
	assert_int_equal(ev.attr.exclude_user, 0);
	assert_int_equal(spent_event_parse("page-faults:k", &ev, NULL, 0), 0);
	assert_int_equal(ev.attr.exclude_user, 1);
	assert_int_equal(ev.attr.exclude_kernel, 0);
}

static void unknown_names_suggest_closest(void **state)
{
	(void)state;
	struct spent_event ev;
	char err[256];
	assert_int_equal(spent_event_parse("cylces", &ev, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown event 'cylces'"));
	assert_non_null(strstr(err, "'cycles'"));
	assert_int_equal(spent_event_parse("page-fault", &ev, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'page-faults'"));
	assert_int_equal(spent_event_parse("", &ev, err, sizeof(err)), -EINVAL);
	assert_int_equal(spent_event_parse("a b", &ev, err, sizeof(err)), -EINVAL);
}

static void lists_split_on_commas_and_fail_whole(void **state)
{
	(void)state;
	struct spent_event *evs = NULL;
	size_t n = 0;
	char err[256];
	assert_int_equal(spent_event_parse_list("task-clock,page-faults:u,cycles", &evs, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(evs[1].name, "page-faults");
	free(evs);
	evs = NULL;
	assert_int_equal(spent_event_parse_list("task-clock,nope-event", &evs, &n, err, sizeof(err)), -ENOENT);
	assert_null(evs);
	assert_int_equal(spent_event_parse_list(",,", &evs, &n, err, sizeof(err)), -EINVAL);
	/* an empty name anywhere is refused, as spent stat -e refuses it (it was skipped) */
	static const char *const empty[] = { "task-clock,", ",task-clock", "task-clock,,page-faults" };
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		assert_int_equal(spent_event_parse_list(empty[i], &evs, &n, err, sizeof(err)), -EINVAL);
		assert_null(evs);
		assert_non_null(strstr(err, "empty event name"));
	}
}

static void cycles_falls_back_to_clocks(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("cycles:u", &ev, NULL, 0), 0);
	assert_int_equal(spent_event_fallback(&ev, false), 0);
	assert_string_equal(ev.name, "task-clock");
	assert_int_equal(ev.attr.exclude_kernel, 1);
	assert_int_equal(spent_event_parse("cycles", &ev, NULL, 0), 0);
	assert_int_equal(spent_event_fallback(&ev, true), 0);
	assert_string_equal(ev.name, "cpu-clock");
	assert_int_equal(spent_event_parse("instructions", &ev, NULL, 0), 0);
	assert_int_equal(spent_event_fallback(&ev, false), -ENOENT);
}

static void software_events_open_and_catalogue_marks_them(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("task-clock", &ev, NULL, 0), 0);
	int fd = spent_event_open(&ev, NULL, 0, -1, -1, 0);
	assert_true(fd >= 0);
	close(fd);
	struct spent_event_info *list;
	size_t n;
	assert_int_equal(spent_event_catalogue(&list, &n), 0);
	bool saw_task_clock = false, saw_cycles = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].name, "task-clock") == 0) {
			saw_task_clock = true;
			assert_true(list[i].available);
		}
		if (strcmp(list[i].name, "cycles") == 0) {
			saw_cycles = true;
			/* the catalogue's hardware verdict agrees with the PMU probe */
			assert_int_equal(list[i].available, spent_pmu_present());
		}
	}
	assert_true(saw_task_clock && saw_cycles);
	spent_event_catalogue_free(list, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(generic_and_software_names_map_to_perf_types),
		cmocka_unit_test(cache_events_encode_id_op_result),
		cmocka_unit_test(raw_and_modifiers),
		cmocka_unit_test(unknown_names_suggest_closest),
		cmocka_unit_test(lists_split_on_commas_and_fail_whole),
		cmocka_unit_test(cycles_falls_back_to_clocks),
		cmocka_unit_test(software_events_open_and_catalogue_marks_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
