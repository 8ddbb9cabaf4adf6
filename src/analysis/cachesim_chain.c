/* analysis/cachesim_chain.c - a group's followers walking the data references together
 * (cachesim_follow_chain).
 *
 * Alone, each follower walks every data reference through its own first data cache, and most
 * references hit that cache's front (most recent) way: a sweep of 8 D1 configurations on a gzip
 * log made 8 front checks per reference, each with its own counting (and, for a write, its
 * front line's dirt), 2 to 4 ns apiece. In a chain each reference goes to every follower
 * before the next one does, the followers ordered by their number of sets, and the check
 * stops at the first follower whose front way holds the line:
 *  - LRU with bit-selected sets keeps at the front of a set the line referenced last among those
 *    mapping to it. With S' >= S sets (powers of two) each set of the S'-set cache takes a
 *    subset of the lines of one set of the S-set cache, so the line at the front of the S-set
 *    cache is at the front of the S'-set cache too, whatever either's associativity (Hill and
 *    Smith's set refinement). This holds when both see every reference of one stream and each
 *    reference installs its line or moves it to the front: data caches fed the same data
 *    references (followers of one leader), LRU, allocating on writes.
 *  - A read within one line at the front of follower k is then a front hit in every follower
 *    after k: it is counted for all of them at once, at the end of the walk. A write there
 *    only marks each one's front line dirty (write-back caches).
 *  - The followers before k missed their front way: each walks below it as it would alone.
 * Anything else (a line crossing, a pending fill, a write in a write-through cache, followers
 * for which the fronts do not nest) takes each follower's own path, reference by reference. Every follower therefore
 * sees what it sees alone, in the same order: only the order between followers changes
 * (tests/unit/test_cachesim_execs.c compares every counter with each configuration alone). */
#include <errno.h>

#include "analysis/cachesim_int.h"

static struct cache *first_data(const struct cachesim *cs)
{
	return cs->cores[0].dpath;
}

void cachesim_chain_sort(struct cachesim **sims, size_t n)
{
	for (size_t i = 1; i < n; i++) {	/* insertion sort: stable, and n is small */
		struct cachesim *x = sims[i];
		size_t j = i;
		for (; j > 0 && first_data(sims[j - 1])->sets > first_data(x)->sets; j--)
			sims[j] = sims[j - 1];
		sims[j] = x;
	}
}

/* Whether the chain's front check (the set's first way, by bit selection) is cache_fast_hit's
 * for every follower. */
static bool chain_walkable(struct cachesim *const *chain, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct cache *c = first_data(chain[k]);
		if (chain[k]->n_cores != 1 || (!c->set_mask && c->sets != 1))
			return false;
	}
	return true;
}

/* Whether a line at the front of follower k's first data cache is at the front of every later
 * follower's (the top of this file). */
static bool fronts_nest(struct cachesim *const *chain, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct cache *c = first_data(chain[k]);
		const struct cache_level_config *cfg = c->cfg;
		if (cfg->kind != CACHE_DATA || cfg->repl != CACHE_LRU || !cfg->write_allocate ||
		    c->line_shift != first_data(chain[0])->line_shift ||
		    (k && c->sets < first_data(chain[k - 1])->sets))
			return false;
	}
	return true;
}

/* Reference P (operation OP) missed the front way of follower K's first data cache C: its walk
 * below the front, as alone; returns PEND with K's bit (a fill pending in C) brought up to date. */
static uint64_t walk_below_front(struct cachesim *cs, struct cache *c, const struct spent_trace_ref *p,
				 enum cache_op op, uint64_t pend, size_t k)
{
	cache_data_below_front(cs, c, p->addr, p->size, op);
	return (pend & ~(1ull << k)) | (uint64_t)(c->n_pend != 0) << k;
}

/* Data references [R, E) of B through the N followers CHAIN (DC: their first data caches);
 * NEST: fronts_nest. */
static void chain_feed_data(struct cachesim *const *chain, struct cache *const *dc, size_t n, bool nest,
			    const struct spent_trace_batch *b, size_t r, size_t e)
{
	/* reads (a modify counts as one) and writes first at the front of k */
	uint64_t front_reads[CACHESIM_CHAIN_MAX] = { 0 }, front_writes[CACHESIM_CHAIN_MAX] = { 0 };
	uint64_t pend = 0;	/* bit k: follower k's data cache waits on a fill */
	uint64_t slow_writes = 0;	/* bit k: cache_fast_hit takes no write in k's */
	for (size_t k = 0; k < n; k++) {
		pend |= (uint64_t)(dc[k]->n_pend != 0) << k;
		slow_writes |= (uint64_t)(dc[k]->cfg->write_through || !dc[k]->meta) << k;
	}
	for (const struct spent_trace_ref *p = &b->refs[r], *end = &b->refs[e]; p < end; p++) {
		enum cache_op op = cache_ref_op(p->kind);
		uint64_t last = p->addr + (p->size ? p->size : 1) - 1;
		size_t k = 0;
		for (; k < n; k++) {
			struct cache *c = dc[k];
			uint64_t l = p->addr >> c->line_shift;
			if (c->front[l & c->set_mask] == l && last >> c->line_shift == l)
				break;
			/* not at the front: cache_fast_hit would not count it */
			pend = walk_below_front(chain[k], c, p, op, pend, k);
		}
		if (k < n && nest && !(pend >> k)) {
			if (op == OP_READ) {
				front_reads[k]++;
				continue;
			}
			if (!(slow_writes >> k)) {	/* as cache_fast_hit: the front line's dirt */
				uint32_t size = p->size ? p->size : 1;
				for (size_t j = k; j < n; j++) {
					struct cache *c = dc[j];
					size_t f = (size_t)((p->addr >> c->line_shift) & c->set_mask) * c->assoc;
					way_meta(c, f, f)->dirty |= write_dirty_mask(c, p->addr, size);
				}
				(op == OP_WRITE ? front_writes : front_reads)[k]++;
				continue;
			}
		}
		for (; k < n; k++)
			if (!cache_fast_hit(dc[k], p->addr, p->size, op))
				pend = walk_below_front(chain[k], dc[k], p, op, pend, k);
	}
	uint64_t reads = 0, writes = 0;	/* as cache_fast_hit counts them */
	for (size_t k = 0; k < n; k++) {
		reads += front_reads[k];
		writes += front_writes[k];
		dc[k]->st.reads += reads;
		dc[k]->st.writes += writes;
		dc[k]->st.accesses += reads + writes;
	}
}

int cachesim_follow_chain(struct cachesim *const *chain, size_t n, const struct spent_trace_batch *b,
			  size_t r, const struct group_span *spans, size_t n_spans,
			  const struct group_miss *xmiss)
{
	if (n > CACHESIM_CHAIN_MAX)	/* the caller cuts longer groups (a bit each in a mask) */
		return -EINVAL;
	if (n < 2 || !chain_walkable(chain, n)) {
		for (size_t k = 0; k < n; k++) {
			int rc = cachesim_follow_spans(chain[k], b, r, spans, n_spans, xmiss);
			if (rc)
				return rc;
		}
		return 0;
	}
	struct cache *dc[CACHESIM_CHAIN_MAX];
	for (size_t k = 0; k < n; k++)
		dc[k] = first_data(chain[k]);
	bool nest = fronts_nest(chain, n);
	size_t x = 0;
	/* each follower's steps are cachesim_follow_spans's, in its order */
	for (size_t s = 0; s < n_spans; s++) {
		const struct group_span *sp = &spans[s];
		for (size_t k = 0; k < n; k++)
			if (cachesim_span_begin(chain[k], sp->insns))
				return -ENOMEM;
		for (; x < sp->miss_end; x++) {
			const struct group_miss *m = &xmiss[x];
			chain_feed_data(chain, dc, n, nest, b, r, m->ref);
			r = m->ref;
			for (size_t k = 0; k < n; k++)
				hierarchy_access(chain[k], 0, chain[k]->cores[0].ipath->next, m->pc, m->len,
						 OP_IFETCH);
		}
		chain_feed_data(chain, dc, n, nest, b, r, sp->ref_end);
		r = sp->ref_end;
		for (size_t k = 0; k < n; k++)
			chain[k]->insns += sp->insns;
	}
	for (size_t k = 0; k < n; k++)
		if (chain[k]->oom)
			return -ENOMEM;
	return 0;
}
