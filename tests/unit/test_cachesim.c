/* tests/unit/test_cachesim.c - the cache simulator against a straightforward reference model
 * (timestamped ways, cachegrind's straddle rule; split and unified caches), the PatchWrx paper's
 * write-buffer and write-back traffic rules on hand-built reference strings, configuration
 * parsing, and false sharing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "analysis/cachesim.h"
#include "trace/memsource.h"

/* Reference cache: each way has a tag and a last-use (LRU) or insertion (FIFO) stamp. */
struct ref_cache {
	uint64_t sets, assoc, line;
	uint64_t *tag, *stamp;
	uint64_t clock, accesses, misses;
	int fifo;
};

static void ref_init(struct ref_cache *c, uint64_t size, uint64_t line, uint64_t assoc, int fifo)
{
	memset(c, 0, sizeof(*c));
	c->line = line;
	c->assoc = assoc;
	c->sets = size / line / assoc;
	c->tag = calloc(c->sets * assoc, sizeof(uint64_t));
	c->stamp = calloc(c->sets * assoc, sizeof(uint64_t));
	c->fifo = fifo;
}

static int ref_line(struct ref_cache *c, uint64_t line)
{
	uint64_t *t = &c->tag[(line % c->sets) * c->assoc], *s = &c->stamp[(line % c->sets) * c->assoc];
	c->clock++;
	for (uint64_t w = 0; w < c->assoc; w++)
		if (t[w] == line + 1) {
			if (!c->fifo)
				s[w] = c->clock;
			return 0;
		}
	uint64_t v = 0;
	for (uint64_t w = 1; w < c->assoc; w++)
		if (s[w] < s[v])
			v = w;
	t[v] = line + 1;
	s[v] = c->clock;
	return 1;
}

/* one access of [addr, addr+size): at most one miss (cachegrind's rule) */
static int ref_access(struct ref_cache *c, uint64_t addr, uint64_t size)
{
	uint64_t a = addr / c->line, z = (addr + size - 1) / c->line;
	int miss = ref_line(c, a);
	if (z != a)
		miss |= ref_line(c, z);
	c->accesses++;
	c->misses += (uint64_t)miss;
	return miss;
}

static void run_trace(struct cachesim *cs, const struct memtrace *t)
{
	struct spent_trace_source *src;
	assert_int_equal(memtrace_source_new(t, 1000, &src), 0);
	struct spent_trace_batch b;
	int rc;
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		assert_int_equal(cachesim_feed(cs, &b), 0);
	assert_int_equal(rc, 0);
	spent_trace_source_free(src);
	cachesim_finish(cs);
}

static void check_against_reference(const char *config_text, int fifo)
{
	struct cachesim_config cfg;
	char err[256];
	assert_int_equal(cachesim_config_parse(config_text, &cfg, err, sizeof(err)), 0);
	struct cachesim *cs;
	assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 3, .n_insns = 200000, .threads = 1,
				   .code_bytes = 24 << 10, .data_bytes = 96 << 10,
				   .array_bytes = 40 << 10, .data_pct = 50 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	run_trace(cs, t);

	struct ref_cache i1, d1, ll;
	ref_init(&i1, cfg.levels[0].size, cfg.levels[0].line, cfg.levels[0].assoc, fifo);
	ref_init(&d1, cfg.levels[1].size, cfg.levels[1].line, cfg.levels[1].assoc, fifo);
	ref_init(&ll, cfg.levels[2].size, cfg.levels[2].line, cfg.levels[2].assoc, fifo);
	for (size_t i = 0; i < t->n_insns; i++) {
		const struct spent_trace_insn *in = &t->insns[i];
		if (ref_access(&i1, in->pc, in->len))
			ref_access(&ll, in->pc, in->len);
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct spent_trace_ref *r = &t->refs[in->ref0 + k];
			if (ref_access(&d1, r->addr, r->size))
				ref_access(&ll, r->addr, r->size);
		}
	}
	struct cache_stats s;
	cachesim_stats(cs, 0, &s);
	assert_int_equal(s.accesses, i1.accesses);
	assert_int_equal(s.misses, i1.misses);
	cachesim_stats(cs, 1, &s);
	assert_int_equal(s.accesses, d1.accesses);
	assert_int_equal(s.misses, d1.misses);
	cachesim_stats(cs, 2, &s);
	assert_int_equal(s.accesses, ll.accesses);
	assert_int_equal(s.misses, ll.misses);
	assert_true(i1.misses > 100 && d1.misses > 100 && ll.misses > 10);	/* not trivial */
	free(i1.tag), free(i1.stamp), free(d1.tag), free(d1.stamp), free(ll.tag), free(ll.stamp);
	memtrace_free(t);
	cachesim_free(cs);
}

static void lru_hierarchy_matches_reference_model(void **state)
{
	(void)state;
	check_against_reference("I1 size=4K line=64 assoc=2 kind=insn level=1\n"
				"D1 size=8K line=32 assoc=4 kind=data level=1\n"
				"LL size=64K line=64 assoc=8 level=2\n", 0);
}

static void fifo_hierarchy_matches_reference_model(void **state)
{
	(void)state;
	check_against_reference("I1 size=2K line=32 assoc=4 kind=insn repl=fifo level=1\n"
				"D1 size=4K line=64 assoc=2 kind=data repl=fifo level=1\n"
				"LL size=32K line=64 assoc=4 repl=fifo level=2\n", 1);
}

/* One unified cache serving both streams, so a data miss can evict the line the last fetches
 * hit: with a power-of-two number of sets, with 48 sets and fully associative, against the
 * reference model (batches of 1000 instructions, so state also crosses batches). */
static void unified_cache_matches_reference_model(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
		"L1 size=4K line=32 assoc=2 kind=unified\n",
		"L1 size=12K line=64 assoc=4 kind=unified\n",
		"L1 size=2K line=64 assoc=0 kind=unified\n",
	};
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 7, .n_insns = 200000, .threads = 1,
				   .code_bytes = 16 << 10, .data_bytes = 48 << 10,
				   .array_bytes = 32 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		struct cachesim_config cfg;
		char err[256];
		assert_int_equal(cachesim_config_parse(cfgs[c], &cfg, err, sizeof(err)), 0);
		struct cachesim *cs;
		assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
		run_trace(cs, t);
		const struct cache_level_config *l = &cfg.levels[0];
		struct ref_cache u;
		ref_init(&u, l->size, l->line, l->assoc ? l->assoc : l->size / l->line, 0);
		for (size_t i = 0; i < t->n_insns; i++) {
			const struct spent_trace_insn *in = &t->insns[i];
			ref_access(&u, in->pc, in->len);
			for (uint32_t k = 0; k < in->nrefs; k++)
				ref_access(&u, t->refs[in->ref0 + k].addr, t->refs[in->ref0 + k].size);
		}
		struct cache_stats s;
		cachesim_stats(cs, 0, &s);
		assert_int_equal(s.accesses, u.accesses);
		assert_int_equal(s.misses, u.misses);
		assert_int_equal(s.ifetches, t->n_insns);
		assert_true(u.misses > 1000);	/* not trivial */
		free(u.tag), free(u.stamp);
		cachesim_free(cs);
	}
	memtrace_free(t);
}

static struct cachesim *new_sim(const char *preset)
{
	struct cachesim_config cfg;
	char err[256];
	assert_int_equal(cachesim_config_preset(preset, &cfg, err, sizeof(err)), 0);
	struct cachesim *cs;
	assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
	return cs;
}

static void write_buffers_flush_one_line_per_new_written_line(void **state)
{
	(void)state;
	/* 21064: four 32-byte write buffers; writes to 6 distinct lines, each written twice */
	struct cachesim *cs = new_sim("alpha21064");
	for (int rep = 0; rep < 2; rep++)
		for (uint64_t l = 0; l < 6; l++)
			cachesim_access(cs, 0, 'd', 0x1000 + l * 32, 8, SPENT_TRACE_REF_WRITE);
	/* first pass: lines 0-3 fill buffers, 4 and 5 flush 0 and 1; second pass: 0,1 are new
	 * again (flush 2,3), 2,3 new again (flush 4,5), 4,5 new (flush 0,1); finish flushes 4 */
	cachesim_finish(cs);
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DWRITE), 12 * 32);
	struct cache_stats s;
	cachesim_stats(cs, 1, &s);
	assert_int_equal(s.write_misses, 12);	/* no write-allocate: every write misses */
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DMISS), 0);
	cachesim_free(cs);
}

static void write_back_victims_carry_only_dirty_subblocks(void **state)
{
	(void)state;
	/* 21164: 96K 3-way, 512 sets of 64 B; four lines in one set evict the first */
	struct cachesim *cs = new_sim("alpha21164");
	uint64_t set_stride = 512 * 64;
	cachesim_access(cs, 0, 'd', 0x100000, 8, SPENT_TRACE_REF_READ);	/* dmiss 64 */
	cachesim_access(cs, 0, 'd', 0x100000 + 20, 4, SPENT_TRACE_REF_WRITE);	/* dirty subblock 1 */
	cachesim_access(cs, 0, 'd', 0x100000 + 1 * set_stride, 8, SPENT_TRACE_REF_READ);
	cachesim_access(cs, 0, 'd', 0x100000 + 2 * set_stride, 8, SPENT_TRACE_REF_READ);
	cachesim_access(cs, 0, 'd', 0x100000 + 3 * set_stride, 8, SPENT_TRACE_REF_READ);	/* evicts */
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DMISS), 4 * 64);
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DVICT), 16);
	cachesim_free(cs);
}

static void write_miss_fill_is_redundant_when_fully_overwritten(void **state)
{
	(void)state;
	struct cachesim *cs = new_sim("alpha21164");
	for (uint64_t off = 0; off < 64; off += 8)	/* overwrite all 64 bytes: redundant */
		cachesim_access(cs, 0, 'd', 0x200000 + off, 8, SPENT_TRACE_REF_WRITE);
	cachesim_access(cs, 0, 'd', 0x300000, 8, SPENT_TRACE_REF_WRITE);	/* then read back */
	cachesim_access(cs, 0, 'd', 0x300020, 8, SPENT_TRACE_REF_READ);	/* unwritten: useful */
	cachesim_finish(cs);
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DREAD_REDUNDANT), 64);
	assert_int_equal(cachesim_traffic(cs, TRAFFIC_DREAD_USEFUL), 64);
	cachesim_free(cs);
}

static void chunks_split_traffic_by_instruction_count(void **state)
{
	(void)state;
	struct cachesim_config cfg;
	char err[256];
	assert_int_equal(cachesim_config_preset("alpha21064", &cfg, err, sizeof(err)), 0);
	cfg.chunk = 1000;
	struct cachesim *cs;
	assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 5, .n_insns = 10500, .code_bytes = 64 << 10,
				   .data_bytes = 64 << 10, .array_bytes = 64 << 10, .data_pct = 40 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	run_trace(cs, t);
	assert_int_equal(cachesim_n_chunks(cs), 11);
	assert_int_equal(cachesim_chunk_instructions(cs, 10), 500);
	for (int k = 0; k < TRAFFIC_NKINDS; k++) {
		uint64_t sum = 0;
		for (size_t c = 0; c < cachesim_n_chunks(cs); c++)
			sum += cachesim_chunk_traffic(cs, c, (enum cache_traffic)k);
		assert_int_equal(sum, cachesim_traffic(cs, (enum cache_traffic)k));
	}
	assert_true(cachesim_traffic(cs, TRAFFIC_IMISS) > 0);
	memtrace_free(t);
	cachesim_free(cs);
}

/* A series that outgrows CACHESIM_MAX_CHUNKS merges its chunks pairwise, the chunk size
 * doubling: the totals stay, the series stays bounded. */
static void chunks_merge_when_the_series_is_full(void **state)
{
	(void)state;
	struct cachesim_config cfg;
	char err[256];
	assert_int_equal(cachesim_config_preset("alpha21064", &cfg, err, sizeof(err)), 0);
	cfg.chunk = 1;
	struct cachesim *cs;
	assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
	struct memtrace *t = memtrace_new();
	size_t n = 3 * CACHESIM_MAX_CHUNKS + 3;	/* merged at 1x and 2x MAX: chunks of 4 */
	struct memgen_config g = { .seed = 9, .n_insns = n, .code_bytes = 64 << 10,
				   .data_bytes = 64 << 10, .array_bytes = 64 << 10, .data_pct = 40 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	run_trace(cs, t);
	assert_int_equal(cachesim_config(cs)->chunk, 4);
	assert_int_equal(cachesim_n_chunks(cs), (n + 3) / 4);
	assert_true(cachesim_n_chunks(cs) <= CACHESIM_MAX_CHUNKS);
	uint64_t insns = 0;
	for (size_t c = 0; c < cachesim_n_chunks(cs); c++) {
		insns += cachesim_chunk_instructions(cs, c);
		if (c + 1 < cachesim_n_chunks(cs))
			assert_int_equal(cachesim_chunk_instructions(cs, c), 4);
	}
	assert_int_equal(insns, n);
	for (int k = 0; k < TRAFFIC_NKINDS; k++) {
		uint64_t sum = 0;
		for (size_t c = 0; c < cachesim_n_chunks(cs); c++)
			sum += cachesim_chunk_traffic(cs, c, (enum cache_traffic)k);
		assert_int_equal(sum, cachesim_traffic(cs, (enum cache_traffic)k));
	}
	memtrace_free(t);
	cachesim_free(cs);
}

/* two threads alternately incrementing counters at OFF_A and OFF_B */
static struct memtrace *counters_trace(uint64_t off_a, uint64_t off_b, int rounds)
{
	struct memtrace *t = memtrace_new();
	for (int r = 0; r < rounds; r++)
		for (int th = 0; th < 2; th++)
			for (int k = 0; k < 5; k++) {
				memtrace_insn(t, 10 + th, 0x401000 + k * 4, 4, 0);
				if (k == 2)
					memtrace_ref(t, 0x404040 + (th ? off_b : off_a), 8,
						     SPENT_TRACE_REF_MODIFY);
			}
	return t;
}

static size_t shared_lines(struct memtrace *t, struct cache_shared_line **v)
{
	struct cachesim_config cfg;
	char err[256];
	assert_int_equal(cachesim_config_preset("cachegrind", &cfg, err, sizeof(err)), 0);
	cfg.cores = 2;
	struct cachesim *cs;
	assert_int_equal(cachesim_new(&cfg, &cs, err, sizeof(err)), 0);
	run_trace(cs, t);
	size_t n;
	assert_int_equal(cachesim_shared_lines(cs, v, &n), 0);
	cachesim_free(cs);
	return n;
}

static void adjacent_counters_are_false_sharing_padded_are_not(void **state)
{
	(void)state;
	struct cache_shared_line *v;
	struct memtrace *t = counters_trace(0, 8, 50);
	size_t n = shared_lines(t, &v);
	assert_int_equal(n, 1);
	assert_true(v[0].false_sharing);
	assert_int_equal(v[0].line, 0x404040);
	assert_int_equal(v[0].writers, 2);
	assert_true(v[0].invalidations >= 99);
	free(v);
	memtrace_free(t);

	t = counters_trace(0, 64, 50);	/* padded to separate lines */
	n = shared_lines(t, &v);
	assert_int_equal(n, 0);
	free(v);
	memtrace_free(t);

	t = counters_trace(0, 0, 50);	/* one shared counter: true sharing */
	n = shared_lines(t, &v);
	assert_int_equal(n, 1);
	assert_false(v[0].false_sharing);
	free(v);
	memtrace_free(t);
}

static void config_text_errors_name_the_line(void **state)
{
	(void)state;
	struct cachesim_config cfg;
	char err[512];
	assert_int_equal(cachesim_config_parse("L1 size=32K line=64 assoc=8\nL2 size=1M line=48\n",
					       &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'L2'"));
	assert_int_equal(cachesim_config_parse("L1 size=32K bogus\n", &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "line 1"));
	assert_int_equal(cachesim_config_parse("I1 size=32K line=64 assoc=8 kind=insn\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_int_equal(cachesim_config_preset("nosuch", &cfg, err, sizeof(err)), -ENOENT);
	/* a key twice would take its last value silently; two caches of one name are ambiguous */
	assert_int_equal(cachesim_config_parse("U size=1K line=64 assoc=8 size=2K\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: cache 'U' has size= twice"));
	assert_int_equal(cachesim_config_parse("D1 size=1K line=64 assoc=2 kind=data\n"
					       "D1 size=2K line=64 assoc=2 kind=data\n"
					       "I1 size=1K line=64 assoc=2 kind=insn\n",
					       &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "two caches have this name"));
	/* levels 1..CACHESIM_MAX_LEVELS and a positive clock, each said as such */
	assert_int_equal(cachesim_config_parse("U size=1K line=64 assoc=8 level=0\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "level= takes 1 to 8, not 0"));
	assert_int_equal(cachesim_config_parse("U size=1K line=64 assoc=8 level=99999\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_int_equal(cachesim_config_parse("clock-mhz 0\nU size=1K line=64 assoc=8\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "clock-mhz takes a positive number, not '0'"));
}

/* the numbers of the rest of spent: "032K" is 32K (strtoull read it as octal 26K), G is a
 * size too, and a value too large for its field is refused rather than wrapped */
static void config_numbers_are_spent_numbers(void **state)
{
	(void)state;
	struct cachesim_config cfg;
	char err[512];
	assert_int_equal(cachesim_config_parse("U size=032K line=0x40 assoc=08\n", &cfg, err,
					       sizeof(err)), 0);
	assert_int_equal(cfg.levels[0].size, 32768);
	assert_int_equal(cfg.levels[0].line, 64);
	assert_int_equal(cfg.levels[0].assoc, 8);	/* octal to strtoull: refused */
	assert_int_equal(cachesim_config_parse("U size=1G line=64 assoc=8\n", &cfg, err,
					       sizeof(err)), 0);
	assert_int_equal(cfg.levels[0].size, 1ull << 30);
	assert_int_equal(cachesim_config_parse("U size=1T line=64 assoc=8\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: cache 'U': size= takes digits"));
	assert_non_null(strstr(err, "not '1T'"));
	assert_int_equal(cachesim_config_parse("U size=32K line=64 assoc=4294967304\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: cache 'U': assoc=4294967304 is too large "
			    "(at most 4294967295)");
	assert_int_equal(cachesim_config_parse("\nU size=32K line=64 level=4294967297\n", &cfg,
					       err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 2: cache 'U': level= takes 1 to 8, not 4294967297");
	assert_int_equal(cachesim_config_parse("U size=99999999999999999999 line=64\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "size=99999999999999999999 is too large"));
	/* --sweep values go through the same parser */
	assert_int_equal(cachesim_config_preset("cachegrind", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cachesim_config_set(&cfg, "D1", "size", "16G", err, sizeof(err)), 0);
	assert_int_equal(cfg.levels[1].size, 16ull << 30);
	assert_int_equal(cachesim_config_set(&cfg, "D1", "assoc", "4294967304", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "cache 'D1': assoc=4294967304 is too large (at most 4294967295)");
	assert_int_equal(cachesim_config_set(&cfg, "D1", "level", "0", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cache 'D1': level= takes 1 to 8, not 0");
	/* chunk is a count (strtod took 1e30, whose cast to u64 is undefined), clock a decimal */
	assert_int_equal(cachesim_config_parse("chunk 10K\nclock-mhz 2.5\nU size=32K line=64\n",
					       &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.chunk, 10000);
	assert_true(cfg.clock_mhz == 2.5);
	assert_int_equal(cachesim_config_parse("chunk 1e30\nU size=32K line=64\n", &cfg, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: chunk takes a positive whole number"));
	assert_int_equal(cachesim_config_parse("clock-mhz 0x1p3\n", &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "clock-mhz takes a positive number, not '0x1p3'"));
}

static void host_config_reads_sysfs_layout(void **state)
{
	(void)state;
	char dir[] = "/tmp/spent-cachesim-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *files[][2] = { { "type", "Data" }, { "level", "1" }, { "size", "48K" },
				   { "coherency_line_size", "64" }, { "ways_of_associativity", "12" } };
	char path[256];
	snprintf(path, sizeof(path), "%s/index0", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	for (size_t i = 0; i < 5; i++) {
		char f[300];
		snprintf(f, sizeof(f), "%s/%s", path, files[i][0]);
		FILE *fp = fopen(f, "w");
		fprintf(fp, "%s\n", files[i][1]);
		fclose(fp);
	}
	struct cachesim_config cfg;
	char err[256];
	/* data only: rejected (no cache for instructions) */
	assert_int_equal(cachesim_config_host(dir, &cfg, err, sizeof(err)), -EINVAL);
	assert_int_equal(cfg.n_levels, 1);
	assert_int_equal(cfg.levels[0].size, 48 * 1024);
	assert_int_equal(cfg.levels[0].assoc, 12);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Several configurations fed as a group (their shared I1 simulated once, by the first) count
 * exactly what each counts fed alone: every level's counters, the pin traffic and its chunks;
 * a group whose I1s differ too. */
static void group_feed_equals_separate_feeds(void **state)
{
	(void)state;
	static const char *const d1_sizes[] = { "1K", "2K", "4K", "1K" };
	static const char *const ll_sizes[] = { "64K", "64K", "128K", "16K" };
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 7, .n_insns = 300000, .threads = 1,
				   .code_bytes = 48 << 10, .data_bytes = 96 << 10,
				   .array_bytes = 40 << 10, .data_pct = 50 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	for (int variant = 0; variant < 2; variant++) {
		struct cachesim *group[4], *alone[4];
		char err[256];
		for (int k = 0; k < 4; k++) {
			struct cachesim_config cfg;
			assert_int_equal(cachesim_config_preset("cachegrind", &cfg, err, sizeof(err)), 0);
			cfg.chunk = 7000;
			assert_int_equal(cachesim_config_set(&cfg, "D1", "size", d1_sizes[k], err, sizeof(err)), 0);
			assert_int_equal(cachesim_config_set(&cfg, "LL", "size", ll_sizes[k], err, sizeof(err)), 0);
			/* variant 1: the last one's I1 differs, so nothing is shared */
			if (variant && k == 3)
				assert_int_equal(cachesim_config_set(&cfg, "I1", "size", "2K", err, sizeof(err)), 0);
			else
				assert_int_equal(cachesim_config_set(&cfg, "I1", "size", "4K", err, sizeof(err)), 0);
			assert_int_equal(cachesim_new(&cfg, &group[k], err, sizeof(err)), 0);
			assert_int_equal(cachesim_new(&cfg, &alone[k], err, sizeof(err)), 0);
			run_trace(alone[k], t);
		}
		struct spent_trace_source *src;
		assert_int_equal(memtrace_source_new(t, 1000, &src), 0);
		struct spent_trace_batch b;
		int rc;
		while ((rc = spent_trace_source_next(src, &b)) > 0)
			assert_int_equal(cachesim_feed_group(group, 4, &b), 0);
		assert_int_equal(rc, 0);
		spent_trace_source_free(src);
		for (int k = 0; k < 4; k++) {
			cachesim_finish(group[k]);
			for (uint32_t l = 0; l < 3; l++) {
				struct cache_stats a, z;
				cachesim_stats(group[k], l, &a);
				cachesim_stats(alone[k], l, &z);
				assert_memory_equal(&a, &z, sizeof(a));
				assert_true(a.misses > 50);	/* not trivial */
			}
			assert_int_equal(cachesim_n_chunks(group[k]), cachesim_n_chunks(alone[k]));
			for (int kind = 0; kind < TRAFFIC_NKINDS; kind++) {
				assert_int_equal(cachesim_traffic(group[k], (enum cache_traffic)kind),
						 cachesim_traffic(alone[k], (enum cache_traffic)kind));
				for (size_t c = 0; c < cachesim_n_chunks(alone[k]); c++)
					assert_int_equal(cachesim_chunk_traffic(group[k], c, (enum cache_traffic)kind),
							 cachesim_chunk_traffic(alone[k], c, (enum cache_traffic)kind));
			}
			cachesim_free(group[k]);
			cachesim_free(alone[k]);
		}
	}
	memtrace_free(t);
}

/* Lower levels whose dirty granule is the line keep one dirty bit per way in a word per set
 * (rotated with the LRU order, shifted on invalidation); with a smaller granule they keep the
 * per-way meta. Whether a victim is dirty does not depend on the granule, so both count the
 * same misses, write-backs (into the level below when it holds the line, else across the pins)
 * and invalidations at every level: LRU, FIFO and random replacement, one core and two. */
static void dirty_bit_words_count_as_subblock_meta(void **state)
{
	(void)state;
	static const char *const repl[] = { "lru", "fifo", "random" };
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 11, .n_insns = 300000, .threads = 2,
				   .code_bytes = 16 << 10, .data_bytes = 256 << 10,
				   .array_bytes = 64 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	for (int v = 0; v < 6; v++) {
		struct cachesim *cs[2];
		char err[256], text[400];
		for (int sub = 0; sub < 2; sub++) {
			snprintf(text, sizeof(text),
				 "I1 size=4K line=64 assoc=2 kind=insn level=1\n"
				 "D1 size=2K line=64 assoc=2 kind=data level=1\n"
				 "L2 size=16K line=64 assoc=4 repl=%s subblock=%d level=2\n"
				 "L3 size=64K line=64 assoc=8 repl=%s subblock=%d level=3\n",
				 repl[v % 3], sub ? 32 : 64, repl[v % 3], sub ? 32 : 64);
			struct cachesim_config cfg;
			assert_int_equal(cachesim_config_parse(text, &cfg, err, sizeof(err)), 0);
			cfg.cores = v < 3 ? 1 : 2;
			assert_int_equal(cachesim_new(&cfg, &cs[sub], err, sizeof(err)), 0);
			run_trace(cs[sub], t);
		}
		for (uint32_t l = 0; l < 4; l++) {
			struct cache_stats a, z;
			cachesim_stats(cs[0], l, &a);
			cachesim_stats(cs[1], l, &z);
			assert_int_equal(a.accesses, z.accesses);
			assert_int_equal(a.misses, z.misses);
			assert_int_equal(a.writebacks, z.writebacks);
			assert_int_equal(a.invalidations, z.invalidations);
			if (l >= 1 && l <= 2)
				assert_true(a.writebacks > 100);	/* not trivial */
			if (v >= 3 && l >= 2)
				assert_true(a.invalidations > 10);
		}
		assert_true(cachesim_traffic(cs[0], TRAFFIC_DVICT) > 0);
		cachesim_free(cs[0]);
		cachesim_free(cs[1]);
	}
	memtrace_free(t);
}

/* The batch feed's shortcuts (a hit in a set's front way, in another way of an LRU set, the
 * fetch memo, the pending-fill count, the short path of a first data cache's miss) change
 * nothing: the same trace walked reference by reference through the full path
 * (cachesim_access) counts the same at every level and the same pin traffic of every kind; LRU
 * split and unified, subblocks, write-through with buffers, write-miss fills (the 21164 and
 * 21064 models), lines of a second process. */
static void shortcuts_count_as_the_full_walk(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
		"I1 size=4K line=64 assoc=4 kind=insn level=1\n"
		"D1 size=2K line=64 assoc=4 kind=data subblock=16 level=1\n"
		"L2 size=16K line=64 assoc=8 level=2\n",
		"L1 size=8K line=64 assoc=4 kind=unified subblock=16\n"
		"L2 size=32K line=64 assoc=4 level=2\n",
		"alpha21164", "alpha21064",
		/* cachegrind's shape (whole-line dirt, an LL keeping dirty bits per set), small */
		"I1 size=4K line=64 assoc=8 kind=insn level=1\n"
		"D1 size=4K line=64 assoc=8 kind=data level=1\n"
		"LL size=32K line=64 assoc=16 level=2\n",
	};
	struct memtrace *t = memtrace_new();
	struct memgen_config g = { .seed = 5, .n_insns = 300000, .threads = 1,
				   .code_bytes = 24 << 10, .data_bytes = 160 << 10,
				   .array_bytes = 48 << 10, .data_pct = 60 };
	assert_int_equal(memgen_mixed(t, &g), 0);
	const size_t n_cfgs = sizeof(cfgs) / sizeof(cfgs[0]);
	/* the last round again with half the data lines in a second process's address space
	 * (tagged in bits 48-63, as cachesim_sink does): lines too large for a set key */
	for (size_t c = 0; c <= n_cfgs; c++) {
		if (c == n_cfgs)
			for (size_t k = 0; k < t->n_refs; k++)
				if (t->refs[k].addr >> 12 & 1)
					t->refs[k].addr |= 3ull << 48;
		struct cachesim_config cfg;
		char err[256];
		const char *text = cfgs[c < n_cfgs ? c : n_cfgs - 1];
		if (strchr(text, ' '))
			assert_int_equal(cachesim_config_parse(text, &cfg, err, sizeof(err)), 0);
		else
			assert_int_equal(cachesim_config_preset(text, &cfg, err, sizeof(err)), 0);
		cfg.chunk = 0;
		struct cachesim *fast, *full;
		assert_int_equal(cachesim_new(&cfg, &fast, err, sizeof(err)), 0);
		assert_int_equal(cachesim_new(&cfg, &full, err, sizeof(err)), 0);
		run_trace(fast, t);
		for (size_t i = 0; i < t->n_insns; i++) {
			const struct spent_trace_insn *in = &t->insns[i];
			cachesim_access(full, 0, 'i', in->pc, in->len, 0);
			for (uint32_t k = 0; k < in->nrefs; k++) {
				const struct spent_trace_ref *r = &t->refs[in->ref0 + k];
				cachesim_access(full, 0, 'd', r->addr, r->size, r->kind);
			}
		}
		cachesim_finish(full);
		for (uint32_t l = 0; l < cfg.n_levels; l++) {
			struct cache_stats a, z;
			cachesim_stats(fast, l, &a);
			cachesim_stats(full, l, &z);
			assert_int_equal(a.accesses, z.accesses);
			assert_int_equal(a.misses, z.misses);
			assert_int_equal(a.read_misses, z.read_misses);
			assert_int_equal(a.write_misses, z.write_misses);
			assert_int_equal(a.ifetch_misses, z.ifetch_misses);
			/* a read-modify-write hit counts as a read, as the full path's count() has it */
			assert_int_equal(a.reads, z.reads);
			assert_int_equal(a.writes, z.writes);
			assert_int_equal(a.writebacks, z.writebacks);
			assert_true(a.misses > 50);	/* not trivial */
		}
		uint64_t dirt = 0;
		for (int kind = 0; kind < TRAFFIC_NKINDS; kind++) {
			assert_int_equal(cachesim_traffic(fast, (enum cache_traffic)kind),
					 cachesim_traffic(full, (enum cache_traffic)kind));
			dirt += kind == TRAFFIC_DVICT || kind == TRAFFIC_DWRITE ?
				cachesim_traffic(full, (enum cache_traffic)kind) : 0;
		}
		assert_true(dirt > 0);
		cachesim_free(fast);
		cachesim_free(full);
	}
	memtrace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lru_hierarchy_matches_reference_model),
		cmocka_unit_test(fifo_hierarchy_matches_reference_model),
		cmocka_unit_test(unified_cache_matches_reference_model),
		cmocka_unit_test(write_buffers_flush_one_line_per_new_written_line),
		cmocka_unit_test(write_back_victims_carry_only_dirty_subblocks),
		cmocka_unit_test(write_miss_fill_is_redundant_when_fully_overwritten),
		cmocka_unit_test(chunks_split_traffic_by_instruction_count),
		cmocka_unit_test(chunks_merge_when_the_series_is_full),
		cmocka_unit_test(group_feed_equals_separate_feeds),
		cmocka_unit_test(dirty_bit_words_count_as_subblock_meta),
		cmocka_unit_test(shortcuts_count_as_the_full_walk),
		cmocka_unit_test(adjacent_counters_are_false_sharing_padded_are_not),
		cmocka_unit_test(config_text_errors_name_the_line),
		cmocka_unit_test(config_numbers_are_spent_numbers),
		cmocka_unit_test(host_config_reads_sysfs_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
