/* tests/unit/test_counting.c - counting sessions on the calling process and every CPU, the
 * scaling arithmetic, and the cost estimates. */
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

#include "analysis/costs.h"
#include "collect/counting.h"

static volatile unsigned long sink;

static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 31 + i;
}

static void scaling_projects_multiplexed_counts(void **state)
{
	(void)state;
	struct count_value v = { .value = 100, .enabled = 1000, .running = 250 };
	assert_true(count_value_scaled(&v) == 400.0);
	assert_true(count_value_running_pct(&v) == 25.0);
	struct count_value full = { .value = 7, .enabled = 10, .running = 10 };
	assert_true(count_value_scaled(&full) == 7.0);
	struct count_value never = { .value = 0, .enabled = 10, .running = 0 };
	assert_true(count_value_scaled(&never) == 0.0);
	count_value_add(&v, &full);
	assert_int_equal(v.value, 107);
	assert_int_equal(v.running, 260);
}

static void task_counting_sees_own_work(void **state)
{
	(void)state;
	struct spent_event ev[2];
	assert_int_equal(spent_event_parse("task-clock", &ev[0], NULL, 0), 0);
	assert_int_equal(spent_event_parse("page-faults", &ev[1], NULL, 0), 0);
	int group[2] = { 1, 1 };
	struct counting_config cfg = { .events = ev, .n_events = 2, .group = group,
				       .mode = COUNTING_TASK, .pid = getpid(), .inherit = true };
	struct counting *c;
	size_t bad;
	assert_int_equal(counting_new(&cfg, &c, &bad), 0);
	assert_int_equal(counting_enable(c), 0);
	spin(20000000);
	size_t pages = 64;
	char *buf = malloc(pages * 4096 + 4096);
	for (size_t i = 0; i < pages; i++)
		buf[i * 4096] = 1;
	assert_int_equal(counting_disable(c), 0);
	struct count_value tot[2];
	assert_int_equal(counting_read_totals(c, tot), 0);
	assert_true(tot[0].value > 1000000);		/* > 1 ms of CPU */
	assert_true(tot[1].value >= pages / 2);		/* malloc may reuse some pages */
	assert_true(count_value_running_pct(&tot[0]) == 100.0); /* software events never multiplex */
	counting_free(c);
	free(buf);
}

static void thread_and_cpu_modes_have_slots(void **state)
{
	(void)state;
	struct spent_event ev;
	assert_int_equal(spent_event_parse("cpu-clock", &ev, NULL, 0), 0);
	struct counting_config cfg = { .events = &ev, .n_events = 1, .mode = COUNTING_CPUS };
	struct counting *c;
	size_t bad;
	assert_int_equal(counting_new(&cfg, &c, &bad), 0);
	assert_int_equal(counting_n_slots(c), (size_t)sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(counting_slot_id(c, 0), 0);
	assert_int_equal(counting_enable(c), 0);
	usleep(20000);
	struct count_value v;
	assert_int_equal(counting_read_slot(c, 0, &v), 0);
	assert_true(v.value > 10000000); /* cpu-clock runs whether or not the CPU is busy */
	counting_free(c);

	cfg.mode = COUNTING_THREADS;
	cfg.pid = getpid();
	assert_int_equal(counting_new(&cfg, &c, &bad), 0);
	assert_int_equal(counting_n_slots(c), 1);
	assert_int_equal(counting_slot_id(c, 0), getpid());
	counting_free(c);

	cfg.pid = 0x3ffffe; /* no such process */
	assert_int_equal(counting_new(&cfg, &c, &bad), -ESRCH);
}

static void costs_multiply_counts_by_cited_costs(void **state)
{
	(void)state;
	const struct cost_model *m = costs_model_for("GenuineIntel", 6);
	const char *names[] = { "branch-misses", "task-clock", "LLC-load-misses" };
	double counts[] = { 1000, 5, 10 };
	struct cost_estimate est[4];
	size_t n = costs_estimate(m, names, counts, 3, 1e6, 0.001, est, 4);
	assert_int_equal(n, 2); /* task-clock has no cost entry */
	assert_string_equal(est[0].event, "branch-misses");
	assert_true(est[0].cycles == 1000 * est[0].entry->cycles);
	assert_true(est[0].pct_of_cycles > 0 && est[0].pct_of_cycles < 100);
	assert_true(est[0].seconds > 0);
	assert_non_null(est[1].entry->source);
	assert_non_null(strstr(costs_model_for("Unknown", 1)->cpu, "unknown"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scaling_projects_multiplexed_counts),
		cmocka_unit_test(task_counting_sees_own_work),
		cmocka_unit_test(thread_and_cpu_modes_have_slots),
		cmocka_unit_test(costs_multiply_counts_by_cited_costs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
