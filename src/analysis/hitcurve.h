/* analysis/hitcurve.h - incremental cache hit curves (PatchWrx paper, Figs. 12-13): hits for every
 * power-of-two cache size at once, for direct-mapped caches and for fully-associative LRU
 * caches (exact stack distances), split by i-stream and d-stream, from one pass over a trace. */
#ifndef SPENT_ANALYSIS_HITCURVE_H
#define SPENT_ANALYSIS_HITCURVE_H

#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

#define HITCURVE_MAX_SIZES 40

enum { HC_ISTREAM, HC_DSTREAM, HC_NSTREAMS };

struct hitcurve_config {
	uint32_t line;		/* bytes, power of two (64) */
	uint64_t min, max;	/* smallest and largest cache size, powers of two (1K, 16M) */
};

/* Results: cumulative hits of a cache of sizes[k] bytes (hits in smaller sizes included). */
struct hitcurve_result {
	size_t n_sizes;
	uint64_t sizes[HITCURVE_MAX_SIZES];
	uint64_t dm_hits[HC_NSTREAMS][HITCURVE_MAX_SIZES];	/* direct-mapped */
	uint64_t lru_hits[HC_NSTREAMS][HITCURVE_MAX_SIZES];	/* fully-associative LRU */
	uint64_t refs[HC_NSTREAMS];	/* references (one per fetch or data access) */
	uint64_t instructions;
};

struct hitcurve;

/* 0, -EINVAL (bad sizes), -ENOMEM. Free with hitcurve_free(). */
int hitcurve_new(const struct hitcurve_config *cfg, struct hitcurve **out);
void hitcurve_free(struct hitcurve *hc);
/* Every instruction fetch and data reference of BATCH; 0 or -ENOMEM. */
int hitcurve_feed(struct hitcurve *hc, const struct spent_trace_batch *batch);
/* One reference of STREAM (HC_ISTREAM/HC_DSTREAM); 0 or -ENOMEM. */
int hitcurve_access(struct hitcurve *hc, int stream, uint64_t addr, uint32_t size);
void hitcurve_result(const struct hitcurve *hc, struct hitcurve_result *out);

/* The paper's CPI estimate: 1 + sum over sizes of incremental hits per instruction times the
 * service time of the level that size falls in. LEVEL_SIZES ascending (bytes), LEVEL_CYCLES the
 * cycles a hit there costs; hits beyond the last level size and misses beyond the largest size
 * cost MEM_CYCLES. LRU selects the fully-associative curve. */
double hitcurve_cpi(const struct hitcurve_result *r, int lru, const uint64_t *level_sizes,
		    const double *level_cycles, size_t n_levels, double mem_cycles);

#endif
