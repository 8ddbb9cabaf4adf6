/* tests/fuzz/fuzz_trace_sinks.c - libFuzzer target for the trace-study sinks fed from a
 * source: a trace log in its raw form (fuzz_util.h; blocked, compressed and checksummed
 * here) is reconstructed and every batch goes to the cache simulator, the hit curves, the
 * memory map and the lock finder, then each computes its results as its command does. Bytes
 * 16-17 of the log header (its creation time; the header's CRC is recomputed) pick the cache
 * configuration (shrunk to 32 KB per cache) and the number of cores; with bit 7 of byte 17
 * the log is read as batches of superblock executions through the tagging process selection
 * (what `spent cachesim` reads) and only the cache simulator takes them. Never crash, leak or
 * hang. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/cachesim.h"
#include "analysis/hitcurve.h"
#include "analysis/locks.h"
#include "plot/memmap_plot.h"
#include "analysis/symtab.h"
#include "fuzz_util.h"
#include "plot/plot.h"
#include "spent/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sinks {
	struct cachesim *cs;
	struct hitcurve *hc;
	struct memmap *mm;
	struct locks *lk;
	struct symtab *syms;
};

static int sinks_new(struct sinks *s, const uint8_t *hdr)
{
	static const char *const presets[] = { "alpha21064", "alpha21164", "cachegrind" };
	struct cachesim_config cfg;
	struct hitcurve_config hcfg = { 64, 1024, 1 << 20 };
	struct memmap_config mcfg = { 1 << 20, 96, 64 };
	char err[256];
	if (cachesim_config_preset(presets[hdr[16] % 3], &cfg, err, sizeof(err)))
		return -1;
	cfg.cores = 1 + hdr[17] % 4;
	cfg.chunk = 4096;
	/* the same code on smaller arrays: an 8 MB cache per core per input is slow to allocate */
	for (uint32_t i = 0; i < cfg.n_levels; i++) {
		struct cache_level_config *l = &cfg.levels[i];
		uint64_t set = (uint64_t)l->line * (l->assoc ? l->assoc : 1);
		while (l->size > (32u << 10) && (l->size / 2) % set == 0)
			l->size /= 2;
	}
	s->syms = symtab_new();
	if (!s->syms || cachesim_new(&cfg, &s->cs, err, sizeof(err)) || hitcurve_new(&hcfg, &s->hc) ||
	    memmap_new(&mcfg, &s->mm) || locks_new(s->syms, &s->lk))
		return -1;
	return 0;
}

static void sinks_free(struct sinks *s)
{
	cachesim_free(s->cs);
	hitcurve_free(s->hc);
	memmap_free(s->mm);
	locks_free(s->lk);
	symtab_free(s->syms);
}

/* What each command computes once the stream ended. */
static void sinks_results(struct sinks *s)
{
	struct cache_shared_line *lines = NULL;
	struct hitcurve_result hr;
	struct raster r = { 0 };
	const uint64_t sizes[2] = { 8192, 1 << 20 };
	const double cycles[2] = { 2, 10 };
	size_t n;

	cachesim_finish(s->cs);
	for (uint32_t l = 0; l < cachesim_config(s->cs)->n_levels; l++) {
		struct cache_stats st;
		cachesim_stats(s->cs, l, &st);
	}
	for (size_t c = 0; c < cachesim_n_chunks(s->cs); c++)
		(void)cachesim_chunk_traffic(s->cs, c, TRAFFIC_DVICT);
	if (cachesim_shared_lines(s->cs, &lines, &n) == 0) {
		for (size_t i = 0; i < n && i < 16; i++)
			(void)symtab_lookup(s->syms, lines[i].first_write[0]);
		free(lines);
	}
	hitcurve_result(s->hc, &hr);
	(void)hitcurve_cpi(&hr, 0, sizes, cycles, 2, 60);
	(void)hitcurve_cpi(&hr, 1, sizes, cycles, 2, 60);
	if (plot_memmap(s->mm, "MEMORY MAP", &r) == 0)
		raster_release(&r);
	locks_finish(s->lk);
	const struct lock_summary *t = locks_table(s->lk, &n);
	for (size_t i = 0; i < n; i++)
		(void)symtab_lookup(s->syms, t[i].addr);
	(void)locks_intervals(s->lk, &n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sinks s = { 0 };
	struct spent_trace_source *src = NULL;
	struct spent_trace_batch b;
	struct binbuf log;
	char err[256];
	uint64_t n = 0;

	if (size < LOG_HEADER_SIZE)
		return 0;
	binbuf_init(&log);
	if (fuzz_trace_log_encode(data, size, &log) == 0 && sinks_new(&s, data) == 0 &&
	    trace_log_open_mem(log.data, log.len, &src, err, sizeof(err)) == 0) {
		int execs = data[17] & 0x80;
		if (execs && (spent_trace_source_select(src, 0, NULL, SPENT_TRACE_SELECT_TAG, &src) ||
			      spent_trace_source_want_execs(src)))
			goto out;
		while (n < 1000000 && spent_trace_source_next(src, &b) > 0) {
			symtab_add_batch_images(s.syms, &b);
			cachesim_feed(s.cs, &b);
			if (!execs) {	/* the other sinks read instruction batches */
				hitcurve_feed(s.hc, &b);
				memmap_feed(s.mm, &b);
				locks_feed(s.lk, &b);
			}
			n += b.n_insns + b.n_events;
		}
		sinks_results(&s);
	}
out:
	spent_trace_source_free(src);
	sinks_free(&s);
	binbuf_release(&log);
	return 0;
}
