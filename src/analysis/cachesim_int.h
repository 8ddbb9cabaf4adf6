/* analysis/cachesim_int.h - internals shared by the cache simulator's files (levels, hierarchy
 * walk, coherence); not an API. */
#ifndef SPENT_ANALYSIS_CACHESIM_INT_H
#define SPENT_ANALYSIS_CACHESIM_INT_H

#include "analysis/cachesim.h"

#define TAG_EMPTY UINT64_MAX

enum cache_op { OP_IFETCH, OP_READ, OP_WRITE, OP_MODIFY };

/* Per-way state the hot path needs only in write-back or write-allocate caches. */
struct way_meta {
	uint64_t dirty;		/* dirty subblocks */
	uint64_t wmask;		/* granules written since a write-miss fill (pending only) */
	uint32_t pin_bytes;	/* bytes the fill moved across the pins (0: not pending) */
	uint32_t chunk;		/* chunk the fill happened in */
};

struct cache {
	const struct cache_level_config *cfg;
	uint32_t line_shift, sets, assoc;
	uint64_t set_mask;	/* sets-1 when a power of two, else 0 (use %) */
	uint64_t *tags;		/* sets*assoc line numbers; LRU: most recent first */
	struct way_meta *meta;	/* NULL when the cache needs none */
	uint32_t *fifo_next;	/* FIFO: next victim per set */
	uint32_t sub_shift;	/* log2 dirty granule */
	uint32_t gran_shift;	/* log2 write-mask granule */
	uint64_t full_wmask;
	uint64_t *wbuf;		/* write buffers (line numbers), FIFO from wbuf_head */
	uint32_t wbuf_n, wbuf_head;
	struct cache *next;
	bool last;
	struct cache_stats st;
};

struct hierarchy {
	struct cache caches[CACHESIM_MAX_LEVELS];
	struct cache *ipath, *dpath;	/* first cache of each stream */
};

struct chunk_rec {
	uint64_t insns;
	uint64_t bytes[TRAFFIC_NKINDS];
};

struct coh_line;

struct cachesim {
	struct cachesim_config cfg;
	struct hierarchy *cores;
	uint32_t n_cores;
	uint64_t rng;
	uint64_t insns;
	uint64_t traffic[TRAFFIC_NKINDS];
	struct chunk_rec *chunks;
	size_t n_chunks, cap_chunks;
	uint32_t cur_chunk;
	/* thread -> core */
	uint32_t *tids;
	size_t n_tids, cap_tids;
	/* coherence records: open-addressed by line number */
	struct coh_line **coh;
	size_t coh_cap, coh_n;
	uint32_t coh_shift;	/* coherence line = last level's line */
	int oom;
};

/* The common case without a call: a fetch, read or (write-back) write within one line that is
 * the most recent way of its set (LRU) or way 0. Counts it and returns 1; 0 sends it down the
 * full path. OP is enum cache_op. */
static inline int cache_fast_hit(struct cache *c, uint64_t addr, uint32_t size, int op)
{
	uint64_t l = addr >> c->line_shift;
	if (!size)
		size = 1;
	if (((addr + size - 1) >> c->line_shift) != l || (!c->set_mask && c->sets != 1))
		return 0;
	size_t b = (size_t)(l & c->set_mask) * c->assoc;
	if (c->tags[b] != l || (c->meta && c->meta[b].pin_bytes))
		return 0;
	if (op == OP_WRITE || op == OP_MODIFY) {
		if (c->cfg->write_through || !c->meta)
			return 0;
		uint32_t off = (uint32_t)(addr & ((1ull << c->line_shift) - 1));
		uint32_t g0 = off >> c->sub_shift, n = ((off + size - 1) >> c->sub_shift) - g0 + 1;
		c->meta[b].dirty |= (n >= 64 ? ~0ull : (1ull << n) - 1) << g0;
		c->st.writes++;
	} else if (op == OP_IFETCH) {
		c->st.ifetches++;
	} else {
		c->st.reads++;
	}
	c->st.accesses++;
	return 1;
}

void cachesim_add_traffic(struct cachesim *cs, enum cache_traffic kind, uint64_t bytes,
			  uint32_t chunk);
/* Walk core CORE's hierarchy for one reference. */
void hierarchy_access(struct cachesim *cs, uint32_t core, struct cache *first, uint64_t addr,
		      uint32_t size, enum cache_op op);
/* Drop lines of [addr, addr+size) from every cache of CORE; number of copies dropped. */
uint32_t hierarchy_invalidate(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size);
void cache_flush_buffers(struct cachesim *cs, struct cache *c);
void cache_resolve_pending(struct cachesim *cs, struct cache *c);

/* Coherence (cachesim_coherence.c). */
void coherence_write(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size);
void coherence_miss(struct cachesim *cs, uint32_t core, uint64_t addr);
void coherence_free(struct cachesim *cs);

#endif
