/* tests/unit/test_hitcurve.c - the one-pass hit curves against brute-force simulations: an
 * explicit LRU stack (position = stack distance) and one direct-mapped cache per size. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/hitcurve.h"
#include "trace/memsource.h"

/* Brute force: a most-recent-first array of every distinct line. */
struct brute {
	uint64_t *stack;
	size_t n, cap;
	uint64_t lru_hits[HC_NSTREAMS][HITCURVE_MAX_SIZES];
	uint64_t dm_hits[HC_NSTREAMS][HITCURVE_MAX_SIZES];
	uint64_t *dm[HITCURVE_MAX_SIZES];
	size_t n_sizes;
	uint64_t min_lines;
};

/* sets HIT[k] when LINE is held by the size-k LRU (lru) and direct-mapped (dm) caches */
static void brute_line(struct brute *b, uint64_t line, int *lru, int *dm)
{
	size_t pos = b->n;
	for (size_t i = 0; i < b->n; i++)
		if (b->stack[i] == line) {
			pos = i;
			break;
		}
	for (size_t k = 0; k < b->n_sizes; k++) {
		uint64_t lines = b->min_lines << k;
		lru[k] = pos < b->n && pos < lines;
		uint64_t *t = &b->dm[k][line % lines];
		dm[k] = *t == line + 1;
		*t = line + 1;
	}
	if (pos == b->n) {
		if (b->n == b->cap) {
			b->cap = b->cap ? b->cap * 2 : 1024;
			b->stack = realloc(b->stack, b->cap * sizeof(uint64_t));
			assert_non_null(b->stack);
		}
		b->n++;
	}
	memmove(&b->stack[1], &b->stack[0], pos * sizeof(uint64_t));
	b->stack[0] = line;
}

/* one access: hits in a size only when every line it touches does */
static void brute_access(struct brute *b, int stream, uint64_t addr, uint64_t size, uint64_t line)
{
	int l1[HITCURVE_MAX_SIZES], d1[HITCURVE_MAX_SIZES], l2[HITCURVE_MAX_SIZES],
		d2[HITCURVE_MAX_SIZES];
	uint64_t a = addr / line, z = (addr + size - 1) / line;
	brute_line(b, a, l1, d1);
	if (z != a)
		brute_line(b, z, l2, d2);
	for (size_t k = 0; k < b->n_sizes; k++) {
		b->lru_hits[stream][k] += l1[k] && (z == a || l2[k]);
		b->dm_hits[stream][k] += d1[k] && (z == a || d2[k]);
	}
}

static void compare_with_brute(const struct memtrace *t, uint32_t line, uint64_t min, uint64_t max)
{
	struct hitcurve_config cfg = { line, min, max };
	struct hitcurve *hc;
	assert_int_equal(hitcurve_new(&cfg, &hc), 0);
	struct spent_trace_source *src;
	assert_int_equal(memtrace_source_new(t, 777, &src), 0);
	struct spent_trace_batch b;
	int rc;
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		assert_int_equal(hitcurve_feed(hc, &b), 0);
	assert_int_equal(rc, 0);
	spent_trace_source_free(src);
	struct hitcurve_result r;
	hitcurve_result(hc, &r);

	struct brute br = { 0 };
	br.n_sizes = r.n_sizes;
	br.min_lines = min / line;
	for (size_t k = 0; k < br.n_sizes; k++)
		br.dm[k] = calloc(br.min_lines << k, sizeof(uint64_t));
	for (size_t i = 0; i < t->n_insns; i++) {
		const struct spent_trace_insn *in = &t->insns[i];
		brute_access(&br, HC_ISTREAM, in->pc, in->len, line);
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct spent_trace_ref *rf = &t->refs[in->ref0 + k];
			brute_access(&br, HC_DSTREAM, rf->addr, rf->size, line);
		}
	}
	assert_int_equal(r.instructions, t->n_insns);
	for (int s = 0; s < HC_NSTREAMS; s++)
		for (size_t k = 0; k < r.n_sizes; k++) {
			assert_int_equal(r.lru_hits[s][k], br.lru_hits[s][k]);
			assert_int_equal(r.dm_hits[s][k], br.dm_hits[s][k]);
		}
	for (size_t k = 0; k < br.n_sizes; k++)
		free(br.dm[k]);
	free(br.stack);
	hitcurve_free(hc);
}

static void lru_curve_equals_brute_force_at_every_size(void **state)
{
	(void)state;
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 7, .n_insns = 60000, .threads = 2, .slice = 500,
				   .code_bytes = 48 << 10, .data_bytes = 256 << 10,
				   .array_bytes = 96 << 10, .data_pct = 45 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	compare_with_brute(t, 64, 1024, 1 << 20);
	memtrace_free(t);
}

static void small_lines_and_tree_compaction_match_brute_force(void **state)
{
	(void)state;
	/* 16-byte lines and a large working set force many demotions and compactions */
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 99, .n_insns = 120000, .threads = 3, .slice = 70,
				   .code_bytes = 200 << 10, .data_bytes = 4 << 20,
				   .array_bytes = 1 << 20, .data_pct = 80 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	compare_with_brute(t, 16, 256, 4 << 20);
	memtrace_free(t);
}

static void cyclic_sweep_misses_in_smaller_lru_caches(void **state)
{
	(void)state;
	/* a cyclic sweep over 64 lines: LRU hits only when the cache holds all 64 lines */
	struct hitcurve_config cfg = { 64, 1024, 16384 };
	struct hitcurve *hc;
	assert_int_equal(hitcurve_new(&cfg, &hc), 0);
	for (int rep = 0; rep < 10; rep++)
		for (uint64_t l = 0; l < 64; l++)
			assert_int_equal(hitcurve_access(hc, HC_DSTREAM, 0x100000 + l * 64, 8), 0);
	struct hitcurve_result r;
	hitcurve_result(hc, &r);
	assert_int_equal(r.refs[HC_DSTREAM], 640);
	assert_int_equal(r.lru_hits[HC_DSTREAM][0], 0);	/* 1K = 16 lines */
	assert_int_equal(r.lru_hits[HC_DSTREAM][1], 0);	/* 2K */
	assert_int_equal(r.lru_hits[HC_DSTREAM][2], 576);	/* 4K = 64 lines: all but cold */
	hitcurve_free(hc);
}

static void cpi_estimate_adds_service_time_per_level(void **state)
{
	(void)state;
	struct hitcurve_result r = { 0 };
	r.n_sizes = 2;
	r.sizes[0] = 1024;
	r.sizes[1] = 2048;
	r.instructions = 1000;
	r.refs[HC_ISTREAM] = 1000;
	r.dm_hits[HC_ISTREAM][0] = 900;
	r.dm_hits[HC_ISTREAM][1] = 950;	/* 50 incremental at 2K, 50 beyond */
	uint64_t sizes[] = { 1024, 2048 };
	double cycles[] = { 0, 10 };
	double cpi = hitcurve_cpi(&r, 0, sizes, cycles, 2, 100);
	/* 1 + (50*10 + 50*100)/1000 */
	assert_true(cpi > 6.499 && cpi < 6.501);
}

static void bad_sizes_are_rejected(void **state)
{
	(void)state;
	struct hitcurve *hc;
	struct hitcurve_config bad1 = { 48, 1024, 4096 }, bad2 = { 64, 4096, 1024 };
	assert_int_equal(hitcurve_new(&bad1, &hc), -EINVAL);
	assert_int_equal(hitcurve_new(&bad2, &hc), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lru_curve_equals_brute_force_at_every_size),
		cmocka_unit_test(small_lines_and_tree_compaction_match_brute_force),
		cmocka_unit_test(cyclic_sweep_misses_in_smaller_lru_caches),
		cmocka_unit_test(cpi_estimate_adds_service_time_per_level),
		cmocka_unit_test(bad_sizes_are_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
