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

/* Ways of a set are positions b..b+assoc-1 (b = set * assoc). tags[] is in position order (LRU:
 * most recent first, so a hit moves a tag to the front); the per-way state in meta[] does not
 * move: slot[pos] says which of the set's meta entries belongs to the way at pos. Moving a tag
 * and a 4-byte slot instead of a 24-byte meta keeps a lower level's lookups within its tag and
 * slot arrays (the 8 MB LL's meta alone is 3 MB). */
struct cache {
	const struct cache_level_config *cfg;
	uint32_t line_shift, sets, assoc;
	uint64_t set_mask;	/* sets-1 when a power of two, else 0 (use %) */
	uint64_t *tags;		/* sets*assoc line numbers in position order */
	/* power-of-two sets: per set, the line in its first way (tags[set * assoc]; LRU: the most
	 * recent), side by side. Most hits are in that way, and 8 bytes a set stay in the host's
	 * caches while the streamed trace evicts the tags, a set apart. (These were 4-byte keys,
	 * the line without its set bits, until session 22: a D1's key of any stack or heap line
	 * was too large for 4 bytes, so a D1 never used them.) */
	uint64_t *front;
	uint32_t *slot;		/* with meta: position -> meta entry within the set */
	struct way_meta *meta;	/* NULL when the cache needs none */
	/* instead of meta, in a write-back cache below the top whose dirty granule is the line
	 * (a lower level: pending fills are watched only at the top): per set, bit p = the way
	 * at position p is dirty, rotated with the tags. 8 bytes a set stay in the host's
	 * caches where the LL's 24-byte meta (3 MB for 8 MB) missed on every write-back. */
	uint64_t *dbits;
	uint32_t *fifo_next;	/* FIFO: next victim per set */
	uint32_t sub_shift;	/* log2 dirty granule */
	uint32_t gran_shift;	/* log2 write-mask granule */
	uint64_t full_wmask;
	uint64_t *wbuf;		/* write buffers (line numbers), FIFO from wbuf_head */
	uint32_t wbuf_n, wbuf_head;
	struct cache *next;
	bool last;
	bool pend;		/* may hold pending write-miss fills: the data stream's first cache */
	/* ways whose pin_bytes is not 0: while none, a hit needs no look at the meta (its
	 * slot and meta entry are two more loads per reference, and fills from the pins are
	 * rare) */
	uint32_t n_pend;
	/* the usual first data cache and the level below it (hierarchy_pick_quick): a data miss
	 * the inline paths found takes hierarchy_data_miss's short path */
	bool quick_miss;
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
	/* one core only: a line known to be the most recent way of its set in the i-stream's
	 * first cache (first byte, line size; size 0 when none), so the next fetches within it
	 * count as hits without a lookup; cleared after anything that may change that cache */
	uint64_t imemo_at, imemo_len;
	bool data_reaches_i;	/* data references can reach the i-stream's first cache */
	/* cachesim_feed_group's leader: the batch indices of the instructions whose fetch
	 * missed in the first i-cache (recorded while rec_imiss is set) */
	uint32_t *imiss;
	size_t n_imiss, cap_imiss;
	bool rec_imiss;
	/* the same for a batch of executions: each missed fetch by the data reference it
	 * precedes, and the leader's spans (instructions, end reference, misses so far), so the
	 * others need neither the instructions nor the executions */
	struct group_miss { size_t ref; uint64_t pc; uint32_t len; } *xmiss;
	size_t n_xmiss, cap_xmiss;
	struct group_span { size_t insns, ref_end, miss_end; } *spans;
	size_t n_spans, cap_spans;
	/* a group leader made only to walk the fetches (cachesim_parallel): the split walk skips
	 * its data references, which followers simulate (its own data caches' results are
	 * never read) */
	bool fetch_only;
	/* a batch of superblock executions as instructions, for the feeds that need them
	 * (several cores, cachesim_feed_group) */
	struct spent_trace_insn *xinsns;
	size_t cap_xinsns;
	struct fetch_plans *plans;	/* per superblock: its fetches that need a lookup */
};

/* The cache operation of a trace reference's kind (SPENT_TRACE_REF_*: a modify is a read and
 * a write of one location). */
static inline enum cache_op cache_ref_op(uint32_t kind)
{
	static const enum cache_op op[4] = { OP_READ, OP_READ, OP_WRITE, OP_MODIFY };
	return op[kind & 3];
}

/* The meta entry of the way at position POS of the set starting at B. */
static inline struct way_meta *way_meta(const struct cache *c, size_t b, size_t pos)
{
	return &c->meta[b + c->slot[pos]];
}

/* Mask of positions 0..P of a set (P < 64). */
static inline uint64_t upto_mask(uint32_t p)
{
	return p >= 63 ? ~0ull : (2ull << p) - 1;
}

/* The dirty-bit word of the set starting at position B (c->dbits). */
static inline uint64_t *set_dbits(const struct cache *c, size_t b)
{
	return &c->dbits[b / c->assoc];
}

/* Position B (the front of set SET) changed: keep c->front in step. */
static inline void front_changed(struct cache *c, uint64_t set, size_t b)
{
	if (c->front)
		c->front[set] = c->tags[b];
}

/* LRU: the way at position B+W becomes the most recent (front) of set B (the caller updates
 * c->front). Each element is carried one place down in one pass: a plain shift loop
 * becomes a memmove call, which costs more than moving the few ways of a set. */
static inline void move_front(struct cache *c, size_t b, uint32_t w)
{
	uint64_t *t = &c->tags[b], tag = t[w];
	for (uint32_t k = 0; k <= w; k++) {
		uint64_t x = t[k];
		t[k] = tag;
		tag = x;
	}
	if (c->slot) {
		uint32_t *sl = &c->slot[b], s = sl[w];
		for (uint32_t k = 0; k <= w; k++) {
			uint32_t x = sl[k];
			sl[k] = s;
			s = x;
		}
	}
	if (c->dbits) {
		uint64_t *d = set_dbits(c, b), m = upto_mask(w);
		*d = (*d & ~m) | ((*d << 1) & m) | ((*d >> w) & 1);
	}
}

/* The subblocks of C's line that a write of [ADDR, ADDR+SIZE) within it dirties (SIZE >= 1). */
static inline uint64_t write_dirty_mask(const struct cache *c, uint64_t addr, uint32_t size)
{
	uint32_t off = (uint32_t)(addr & ((1ull << c->line_shift) - 1));
	uint32_t g0 = off >> c->sub_shift, n = ((off + size - 1) >> c->sub_shift) - g0 + 1;
	return (n >= 64 ? ~0ull : (1ull << n) - 1) << g0;
}

/* The common case without a call: a fetch, read or (write-back) write within one line that is
 * the most recent way of its set (LRU) or way 0, or a fetch across two lines that both are.
 * Such a hit changes no replacement state. Counts it and returns 1; 0 sends it down the full
 * path. OP is enum cache_op. */
static inline int cache_fast_hit(struct cache *c, uint64_t addr, uint32_t size, int op)
{
	uint64_t l = addr >> c->line_shift;
	if (!size)
		size = 1;
	uint64_t last = (addr + size - 1) >> c->line_shift;
	if (!c->set_mask && c->sets != 1)
		return 0;
	/* power-of-two sets: c->front is there */
	size_t b = (size_t)(l & c->set_mask) * c->assoc;
	/* a pending write-miss fill watches reads and writes of its line (fetches never touch it) */
	if (c->front[l & c->set_mask] != l || (op != OP_IFETCH && c->n_pend && way_meta(c, b, b)->pin_bytes))
		return 0;
	/* one in sixteen instructions crosses a 64-byte line: one access, both lines must hit */
	if (last != l && (op != OP_IFETCH || c->front[last & c->set_mask] != last))
		return 0;
	if (op == OP_WRITE || op == OP_MODIFY) {
		if (c->cfg->write_through || !c->meta)
			return 0;
		way_meta(c, b, b)->dirty |= write_dirty_mask(c, addr, size);
		/* as count(): a read-modify-write is a read */
		if (op == OP_WRITE)
			c->st.writes++;
		else
			c->st.reads++;
	} else if (op == OP_IFETCH) {
		c->st.ifetches++;
	} else {
		c->st.reads++;
	}
	c->st.accesses++;
	return 1;
}

/* The next most common case, still without a call: a fetch, read or write-back write within
 * one line that hits another way of its LRU set, moved to the front and counted as the full
 * path (line_ref, count) would. Returns 1; 0 sends it down the full path (a miss, a line
 * crossing, a pending fill, a write-through write, FIFO or random replacement). */
static inline int cache_lru_hit(struct cache *c, uint64_t addr, uint32_t size, int op)
{
	bool wr = op == OP_WRITE || op == OP_MODIFY;
	if (c->cfg->repl != CACHE_LRU || (!c->set_mask && c->sets != 1) || c->n_pend ||
	    (wr && c->cfg->write_through))
		return 0;
	if (!size)
		size = 1;
	uint64_t l = addr >> c->line_shift, set = l & c->set_mask;
	if ((addr + size - 1) >> c->line_shift != l)
		return 0;
	size_t b = (size_t)set * c->assoc;
	const uint64_t *t = &c->tags[b];
	uint32_t w = 1;
	while (w < c->assoc && t[w] != l)
		w++;
	if (w >= c->assoc)
		return 0;
	move_front(c, b, w);
	front_changed(c, set, b);
	if (wr) {
		if (c->meta)
			way_meta(c, b, b)->dirty |= write_dirty_mask(c, addr, size);
		else if (c->dbits)
			*set_dbits(c, b) |= 1;
	}
	/* as count(): a read-modify-write is a read */
	if (op == OP_IFETCH)
		c->st.ifetches++;
	else if (op == OP_WRITE)
		c->st.writes++;
	else
		c->st.reads++;
	c->st.accesses++;
	return 1;
}

void cachesim_add_traffic(struct cachesim *cs, enum cache_traffic kind, uint64_t bytes,
			  uint32_t chunk);

/* The walks cachesim.c and cachesim_group.c share (one core unless said). */
/* Data references [R, E) of B. */
void cachesim_feed_data(struct cachesim *cs, const struct spent_trace_batch *b, size_t r, size_t e);
/* The instructions left in the current chunk (a new one started when the last is full), or
 * SIZE_MAX without a time series; 0 on ENOMEM. */
size_t cachesim_chunk_room(struct cachesim *cs);
/* A batch of instructions in spans ending at chunk boundaries; LEAD: as its group follower. */
int cachesim_feed_spans(struct cachesim *cs, const struct spent_trace_batch *b, const struct cachesim *lead);
/* Instructions [I, I+N) of B as a group follower of LEAD (*K: LEAD's next missed fetch). */
void cachesim_feed_follower(struct cachesim *cs, const struct spent_trace_batch *b, size_t i, size_t n,
			    const struct cachesim *lead, size_t *k);
/* Whether SIMS[1..N) can follow SIMS[0] through its first i-cache (cachesim_feed_group); EXECS:
 * on batches of executions (the followers then take the leader's spans). */
bool cachesim_group_shares_icache(struct cachesim *const *sims, size_t n, bool execs);
/* A leader's span of INSNS instructions starts in follower CS (a chunk's room, its instruction
 * count); 0 or -ENOMEM. */
int cachesim_span_begin(struct cachesim *cs, uint64_t insns);
/* A follower of a group fed executions: B's data references from R on, with the leader's SPANS
 * and missed fetches XMISS (reference indices are B's); 0 or -ENOMEM. */
int cachesim_follow_spans(struct cachesim *cs, const struct spent_trace_batch *b, size_t r,
			  const struct group_span *spans, size_t n_spans, const struct group_miss *xmiss);
/* Followers in one chain at most (a bit each in a mask). */
#define CACHESIM_CHAIN_MAX 64
/* Followers SIMS[0..N) of one group in the order a chain walks them (cachesim_chain.c). */
void cachesim_chain_sort(struct cachesim **sims, size_t n);
/* cachesim_follow_spans for the N (<= CACHESIM_CHAIN_MAX) followers CHAIN together: each
 * reference is taken to every follower before the next, which lets a hit in the front way of
 * one follower's data cache stand for the others' (same results as each alone); 0, -ENOMEM,
 * or -EINVAL for a longer chain. */
int cachesim_follow_chain(struct cachesim *const *chain, size_t n, const struct spent_trace_batch *b,
			  size_t r, const struct group_span *spans, size_t n_spans,
			  const struct group_miss *xmiss);
/* A batch of executions in spans ending at chunk boundaries (the leader records its spans and
 * missed fetches while rec_imiss is set); REFS_IN_ORDER: cachesim_exec_refs_in_order(B). */
int cachesim_feed_execs_spans(struct cachesim *cs, const struct spent_trace_batch *b, bool refs_in_order);
/* The first reference of instruction K of execution X (K = n_insns: after its last). */
size_t cachesim_exec_ref(const struct spent_trace_exec *x, uint32_t k);
/* Whether B's executions have their references in stream order. */
bool cachesim_exec_refs_in_order(const struct spent_trace_batch *b);
/* B's executions as a batch of instructions in CS's scratch array (OUT shares B's refs). */
int cachesim_expand_execs(struct cachesim *cs, const struct spent_trace_batch *b, struct spent_trace_batch *out);
/* Walk core CORE's hierarchy for one reference. */
void hierarchy_access(struct cachesim *cs, uint32_t core, struct cache *first, uint64_t addr,
		      uint32_t size, enum cache_op op);
/* A data reference of one core that cache_fast_hit did not count in C, the first data cache:
 * cache_lru_hit, else down the hierarchy (a short path for the usual configurations). */
void cache_data_below_front(struct cachesim *cs, struct cache *c, uint64_t addr, uint32_t size,
			    enum cache_op op);
/* cache_lru_hit for a fetch, out of line (the fetch walks stay small enough to be inlined). */
int cache_fetch_below_front(struct cache *c, uint64_t addr, uint32_t size);
/* Set quick_miss on H's first data cache when hierarchy_data_miss's short path fits. */
void hierarchy_pick_quick(struct hierarchy *h, uint32_t n_cores);
/* Drop lines of [addr, addr+size) from every cache of CORE; number of copies dropped. */
uint32_t hierarchy_invalidate(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size);
void cache_flush_buffers(struct cachesim *cs, struct cache *c);
void cache_resolve_pending(struct cachesim *cs, struct cache *c);

/* Coherence (cachesim_coherence.c). */
void coherence_write(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size);
void coherence_miss(struct cachesim *cs, uint32_t core, uint64_t addr);
void coherence_free(struct cachesim *cs);

#endif
