/* tests/unit/test_dcpi_table.c - the DCPI 4-way sample table: exact totals against a naive
 * counter, mod-4 eviction, overflow buffer pairing, saturation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collect/dcpi_table.h"

#define NKEYS 3000

struct oracle {
	uint64_t want[NKEYS];	/* exact count per key index */
	uint64_t got[NKEYS];	/* summed from what the table emitted */
	uint64_t emitted;
};

static uint64_t key_pc(int k) { return 0x400000u + (uint64_t)k * 4; }
static uint32_t key_pid(int k) { return 100 + k % 7; }
static uint16_t key_event(int k) { return (uint16_t)(k % 2); }

static void oracle_emit(void *arg, const struct dcpi_entry *e)
{
	struct oracle *o = arg;
	int k = (int)((e->pc - 0x400000u) / 4);

	assert_true(k >= 0 && k < NKEYS);
	assert_int_equal(e->pid, key_pid(k));
	assert_int_equal(e->event, key_event(k));
	o->got[k] += e->count;
	o->emitted++;
}

static void take_all_overflow(struct dcpi_table *t, struct oracle *o)
{
	const struct dcpi_entry *e;
	size_t n;

	while ((n = dcpi_table_take_overflow(t, &e)) > 0) {
		for (size_t i = 0; i < n; i++)
			oracle_emit(o, &e[i]);
		dcpi_table_release_overflow(t);
	}
}

static void test_totals_match_naive_counter(void **state)
{
	struct dcpi_table *t;
	struct oracle *o = calloc(1, sizeof(*o));
	struct dcpi_table_stats st;
	uint64_t x = 12345, total = 200000;

	assert_int_equal(dcpi_table_new(256, 64, &t), 0);
	for (uint64_t i = 0; i < total; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		/* skewed: half the samples on 20 hot keys */
		int k = (x >> 33) % 2 ? (int)((x >> 40) % 20) : (int)((x >> 20) % NKEYS);
		o->want[k]++;
		if (dcpi_table_add(t, key_pid(k), key_pc(k), key_event(k)))
			take_all_overflow(t, o);
	}
	dcpi_table_drain(t, oracle_emit, o);
	for (int k = 0; k < NKEYS; k++)
		assert_int_equal(o->got[k], o->want[k]);
	dcpi_table_get_stats(t, &st);
	assert_int_equal(st.samples, total);
	assert_int_equal(st.dropped, 0);
	/* aggregation must reduce what is emitted */
	assert_true(o->emitted < total);
	dcpi_table_free(t);
	free(o);
}

static void test_hot_keys_reduce_twentyfold(void **state)
{
	struct dcpi_table *t;
	struct oracle *o = calloc(1, sizeof(*o));

	assert_int_equal(dcpi_table_new(1024, 256, &t), 0);
	for (int i = 0; i < 100000; i++) {
		int k = i % 50;
		o->want[k]++;
		if (dcpi_table_add(t, key_pid(k), key_pc(k), key_event(k)))
			take_all_overflow(t, o);
	}
	dcpi_table_drain(t, oracle_emit, o);
	assert_true(o->emitted * 20 <= 100000);
	for (int k = 0; k < 50; k++)
		assert_int_equal(o->got[k], o->want[k]);
	dcpi_table_free(t);
	free(o);
}

static void test_one_bucket_evicts_mod4(void **state)
{
	struct dcpi_table *t;
	const struct dcpi_entry *e;

	/* one bucket, overflow buffers of one entry: every eviction fills a buffer */
	assert_int_equal(dcpi_table_new(1, 1, &t), 0);
	for (int k = 0; k < 4; k++)
		assert_int_equal(dcpi_table_add(t, 1, key_pc(k), 0), 0);
	/* 5th key evicts way 0, 6th key evicts way 1 */
	assert_int_equal(dcpi_table_add(t, 1, key_pc(4), 0), 1);
	assert_int_equal(dcpi_table_take_overflow(t, &e), 1);
	assert_int_equal(e[0].pc, key_pc(0));
	dcpi_table_release_overflow(t);
	assert_int_equal(dcpi_table_add(t, 1, key_pc(5), 0), 1);
	assert_int_equal(dcpi_table_take_overflow(t, &e), 1);
	assert_int_equal(e[0].pc, key_pc(1));
	dcpi_table_release_overflow(t);
	dcpi_table_free(t);
}

static void test_both_buffers_full_counts_drops(void **state)
{
	struct dcpi_table *t;
	struct dcpi_table_stats st;

	assert_int_equal(dcpi_table_new(1, 1, &t), 0);
	for (int k = 0; k < 4; k++)
		dcpi_table_add(t, 1, key_pc(k), 0);
	assert_int_equal(dcpi_table_add(t, 1, key_pc(4), 0), 1);	/* fills buffer 0 */
	assert_int_equal(dcpi_table_add(t, 1, key_pc(5), 0), 1);	/* fills buffer 1 */
	assert_int_equal(dcpi_table_add(t, 1, key_pc(6), 0), 0);	/* nowhere to go */
	dcpi_table_get_stats(t, &st);
	assert_int_equal(st.evictions, 2);
	assert_int_equal(st.dropped, 1);
	dcpi_table_free(t);
}

static void test_saturated_count_is_flushed(void **state)
{
	struct dcpi_table *t;
	struct oracle *o = calloc(1, sizeof(*o));
	uint64_t n = 3 * (uint64_t)DCPI_COUNT_MAX + 17;

	assert_int_equal(dcpi_table_new(4, 4, &t), 0);
	for (uint64_t i = 0; i < n; i++) {
		if (dcpi_table_add(t, key_pid(3), key_pc(3), key_event(3)))
			take_all_overflow(t, o);
	}
	dcpi_table_drain(t, oracle_emit, o);
	assert_int_equal(o->got[3], n);
	dcpi_table_free(t);
	free(o);
}

static void test_rejects_huge_sizes(void **state)
{
	struct dcpi_table *t = (void *)1;

	assert_int_equal(dcpi_table_new(1u << 30, 4, &t), -22);
	assert_null(t);
	dcpi_table_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals_match_naive_counter),
		cmocka_unit_test(test_hot_keys_reduce_twentyfold),
		cmocka_unit_test(test_one_bucket_evicts_mod4),
		cmocka_unit_test(test_both_buffers_full_counts_drops),
		cmocka_unit_test(test_saturated_count_is_flushed),
		cmocka_unit_test(test_rejects_huge_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
