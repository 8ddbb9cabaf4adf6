/* tests/unit/test_cachesim_execs.c - the cache simulator fed batches of superblock executions
 * (spent_trace_batch.execs) counts exactly what it counts fed the same stream as instructions:
 * the split walk with fetch plans (one core, split i-cache), the interleaved walk (a unified
 * first level), the expansion (several cores, feed groups), chunk boundaries inside executions,
 * a group's followers walked as chains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/cachesim.h"
#include "trace/memsource.h"

/* Feed T to the N simulators CS (a feed group when N > 1), as executions or instructions;
 * THREADS > 0: through cachesim_parallel with that many threads, in chunks of 2000 references
 * (about four batches: 62 chunks). */
static void feed_threads(struct cachesim **cs, size_t n, const struct memtrace *t, int execs, unsigned threads)
{
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	struct cachesim_parallel *par = NULL;
	int rc;
	assert_int_equal(memtrace_source_new(t, 777, &src), 0);	/* batches end inside runs */
	if (execs)
		assert_int_equal(spent_trace_source_want_execs(src), 0);
	if (threads)
		assert_int_equal(cachesim_parallel_new(cs, n, threads, 2000, &par), 0);
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		assert_true(execs ? b.execs != NULL : b.execs == NULL);
		if (par)
			assert_int_equal(cachesim_parallel_feed(par, &b), 0);
		else
			assert_int_equal(n > 1 ? cachesim_feed_group(cs, n, &b) : cachesim_feed(cs[0], &b), 0);
	}
	assert_int_equal(rc, 0);
	if (par) {
		assert_int_equal(cachesim_parallel_drain(par), 0);
		cachesim_parallel_free(par);
	}
	spent_trace_source_free(src);
	for (size_t i = 0; i < n; i++)
		cachesim_finish(cs[i]);
}

static void feed_all(struct cachesim **cs, size_t n, const struct memtrace *t, int execs)
{
	feed_threads(cs, n, t, execs, 0);
}

static void assert_same(const struct cachesim *a, const struct cachesim *z, uint32_t n_levels)
{
	for (uint32_t l = 0; l < n_levels; l++) {
		struct cache_stats x, y;
		cachesim_stats(a, l, &x);
		cachesim_stats(z, l, &y);
		assert_memory_equal(&x, &y, sizeof(x));
		assert_true(x.misses > 20);	/* not trivial */
	}
	for (int k = 0; k < TRAFFIC_NKINDS; k++)
		assert_int_equal(cachesim_traffic(a, (enum cache_traffic)k), cachesim_traffic(z, (enum cache_traffic)k));
	assert_int_equal(cachesim_instructions(a), cachesim_instructions(z));
	assert_int_equal(cachesim_n_chunks(a), cachesim_n_chunks(z));
	for (size_t c = 0; c < cachesim_n_chunks(a); c++) {
		assert_int_equal(cachesim_chunk_instructions(a, c), cachesim_chunk_instructions(z, c));
		for (int k = 0; k < TRAFFIC_NKINDS; k++)
			assert_int_equal(cachesim_chunk_traffic(a, c, (enum cache_traffic)k),
					 cachesim_chunk_traffic(z, c, (enum cache_traffic)k));
	}
}

static void executions_count_as_instructions(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
		"I1 size=2K line=64 assoc=2 kind=insn level=1\n"
		"D1 size=2K line=64 assoc=4 kind=data subblock=16 level=1\n"
		"L2 size=16K line=64 assoc=8 level=2\n",
		"I1 size=1K line=32 assoc=2 kind=insn repl=fifo level=1\n"
		"D1 size=2K line=32 assoc=2 kind=data level=1\n"
		"L2 size=8K line=64 assoc=4 repl=random level=2\n",
		"L1 size=4K line=64 assoc=4 kind=unified subblock=16\n"
		"L2 size=32K line=64 assoc=4 level=2\n",
		"alpha21164", "alpha21064", "cachegrind",
	};
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 7, .n_insns = 200000, .threads = 2,
				   .code_bytes = 24 << 10, .data_bytes = 160 << 10,
				   .array_bytes = 48 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		for (uint32_t cores = 1; cores <= 2; cores++) {
			struct cachesim_config cfg;
			char err[256];
			if (strchr(cfgs[c], ' '))
				assert_int_equal(cachesim_config_parse(cfgs[c], &cfg, err, sizeof(err)), 0);
			else
				assert_int_equal(cachesim_config_preset(cfgs[c], &cfg, err, sizeof(err)), 0);
			cfg.chunk = 1000 + 37 * c;	/* boundaries inside executions */
			cfg.cores = cores;
			struct cachesim *a, *z;
			assert_int_equal(cachesim_new(&cfg, &a, err, sizeof(err)), 0);
			assert_int_equal(cachesim_new(&cfg, &z, err, sizeof(err)), 0);
			feed_all(&a, 1, t, 0);
			feed_all(&z, 1, t, 1);
			assert_same(a, z, cfg.n_levels);
			cachesim_free(a);
			cachesim_free(z);
		}
	}
	memtrace_free(t);
}

/* A feed group (configurations sharing their i-cache) fed executions counts as fed instructions
 * and as each configuration fed alone, time series included (chunks end inside executions).
 * CHUNK_STEP != 0 gives each configuration its own chunk (the group then expands the
 * executions: the followers cannot take the leader's spans). */
static void group_matches_alone(uint64_t chunk_step)
{
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 3, .n_insns = 100000, .threads = 1,
				   .code_bytes = 24 << 10, .data_bytes = 128 << 10,
				   .array_bytes = 32 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	/* instructions, executions, alone, on 2 and 3 threads (cachesim_parallel), alone on 2 */
	struct cachesim *sims[6][3];
	for (int way = 0; way < 6; way++) {
		for (int k = 0; k < 3; k++) {
			char text[300], err[256];
			struct cachesim_config cfg;
			snprintf(text, sizeof(text),
				 "I1 size=2K line=64 assoc=2 kind=insn level=1\n"
				 "D1 size=%dK line=64 assoc=2 kind=data level=1\n"
				 "L2 size=16K line=64 assoc=4 level=2\n", 1 << k);
			assert_int_equal(cachesim_config_parse(text, &cfg, err, sizeof(err)), 0);
			cfg.chunk = 997 + chunk_step * (uint64_t)k;
			assert_int_equal(cachesim_new(&cfg, &sims[way][k], err, sizeof(err)), 0);
		}
		if (way < 2)
			feed_all(sims[way], 3, t, way);
		else if (way == 2)
			for (int k = 0; k < 3; k++)
				feed_all(&sims[way][k], 1, t, 1);
		else if (way < 5)
			feed_threads(sims[way], 3, t, 1, way == 3 ? 2 : 3);
		else
			for (int k = 0; k < 3; k++)
				feed_threads(&sims[way][k], 1, t, 1, 2);
	}
	assert_true(cachesim_group_reads_execs(sims[1], 3) == (chunk_step == 0));
	for (int k = 0; k < 3; k++) {
		assert_same(sims[0][k], sims[1][k], 3);
		assert_same(sims[2][k], sims[1][k], 3);
		assert_same(sims[3][k], sims[1][k], 3);
		assert_same(sims[4][k], sims[1][k], 3);
		assert_same(sims[5][k], sims[1][k], 3);
		for (int way = 0; way < 6; way++)
			cachesim_free(sims[way][k]);
	}
	memtrace_free(t);
}

static void groups_count_executions_as_instructions(void **state)
{
	(void)state;
	group_matches_alone(0);
}

static void groups_with_different_chunks_count_alike(void **state)
{
	(void)state;
	group_matches_alone(131);
}

/* Followers walked as chains (cachesim_chain.c) count as each configuration alone: data caches
 * whose front ways nest (LRU, allocating, 1 to 32 sets, listed out of order, with and without
 * subblocks, one fully associative, one write-through), a mix for which they do not (FIFO,
 * random, no write allocation, write-through, 32-byte lines), and 24 sets (no chain at all),
 * above L2. Serial (a chain), and on 2 and 3 threads (each follower alone). */
static void chain_matches_alone(const struct memtrace *t, const char *const *d1, size_t n, const char *l2)
{
	struct cachesim *sims[4][8];
	assert_true(n <= 8);
	for (int way = 0; way < 4; way++) {
		for (size_t k = 0; k < n; k++) {
			char text[300], err[256];
			struct cachesim_config cfg;
			snprintf(text, sizeof(text),
				 "I1 size=2K line=64 assoc=2 kind=insn level=1\n"
				 "D1 %s kind=data level=1\n"
				 "L2 %s level=2\n", d1[k], l2);
			assert_int_equal(cachesim_config_parse(text, &cfg, err, sizeof(err)), 0);
			cfg.chunk = 1009;
			assert_int_equal(cachesim_new(&cfg, &sims[way][k], err, sizeof(err)), 0);
		}
		if (way == 0)
			for (size_t k = 0; k < n; k++)
				feed_all(&sims[way][k], 1, t, 1);
		else if (way == 1)
			feed_all(sims[way], n, t, 1);
		else
			feed_threads(sims[way], n, t, 1, (unsigned)way);
	}
	for (size_t k = 0; k < n; k++) {
		for (int way = 1; way < 4; way++)
			assert_same(sims[way][k], sims[0][k], 3);
		for (int way = 0; way < 4; way++)
			cachesim_free(sims[way][k]);
	}
}

/* Lines written (a miss whose fill crosses the pins: pending), then read beyond the bytes
 * written (the fill was useful), then overwritten whole: a read at the front that waits on a
 * fill must not be counted for the chain at once, or the fill would end redundant. Code in
 * 100 places: the i-cache misses too. */
static struct memtrace *pending_reads_trace(void)
{
	struct memtrace *t = memtrace_new();
	for (uint64_t i = 0; i < 3000; i++) {
		uint64_t line = 0x10000000 + 64 * ((i * 7) % 3000), pc = 0x100000 + 48 * (i % 100);
		assert_int_equal(memtrace_insn(t, 1, pc, 4, 0), 0);
		assert_int_equal(memtrace_ref(t, line, 8, SPENT_TRACE_REF_WRITE), 0);
		assert_int_equal(memtrace_insn(t, 1, pc + 4, 4, 0), 0);
		assert_int_equal(memtrace_ref(t, line + 32, 8, SPENT_TRACE_REF_READ), 0);
		for (uint64_t j = 0; j < 8; j++) {
			assert_int_equal(memtrace_insn(t, 1, pc + 8 + 4 * j, 4, 0), 0);
			assert_int_equal(memtrace_ref(t, line + 8 * j, 8, SPENT_TRACE_REF_WRITE), 0);
		}
	}
	return t;
}

static void chains_count_as_alone(void **state)
{
	(void)state;
	static const char *const nested[] = {
		"size=4K line=64 assoc=4", "size=1K line=64 assoc=2", "size=2K line=64 assoc=1",
		"size=2K line=64 assoc=2 subblock=16", "size=8K line=64 assoc=8",
		"size=1K line=64 assoc=0", "size=4K line=64 assoc=2",
		"size=2K line=64 assoc=4 write=through alloc=yes",
	};
	static const char *const mixed[] = {
		"size=2K line=64 assoc=2", "size=2K line=64 assoc=2 repl=fifo",
		"size=1K line=64 assoc=2 repl=random", "size=2K line=64 assoc=2 alloc=no",
		"size=4K line=64 assoc=4 write=through", "size=2K line=32 assoc=2",
	};
	static const char *const unchained[] = {
		"size=2K line=64 assoc=2", "size=3K line=64 assoc=2", "size=4K line=64 assoc=4",
	};
	/* a small L2: most reads wait on a fill somewhere (pending write-miss fills); a large one:
	 * few do, and most reads at a front are counted for the chain at once */
	static const char *const l2[] = { "size=16K line=64 assoc=4", "size=512K line=64 assoc=8" };
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 11, .n_insns = 120000, .threads = 1,
				   .code_bytes = 24 << 10, .data_bytes = 128 << 10,
				   .array_bytes = 32 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	for (int k = 0; k < 2; k++) {
		chain_matches_alone(t, nested, sizeof(nested) / sizeof(nested[0]), l2[k]);
		chain_matches_alone(t, mixed, sizeof(mixed) / sizeof(mixed[0]), l2[k]);
		chain_matches_alone(t, unchained, sizeof(unchained) / sizeof(unchained[0]), l2[k]);
	}
	memtrace_free(t);
	t = pending_reads_trace();
	chain_matches_alone(t, nested, 3, l2[0]);
	memtrace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(executions_count_as_instructions),
		cmocka_unit_test(groups_count_executions_as_instructions),
		cmocka_unit_test(groups_with_different_chunks_count_alike),
		cmocka_unit_test(chains_count_as_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
