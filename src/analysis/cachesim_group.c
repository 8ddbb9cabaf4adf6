/* analysis/cachesim_group.c - several cache configurations fed one trace in one pass
 * (cachesim_feed_group): when they share their first instruction cache, the first simulates it
 * and records which fetches missed; the others walk only the data references, with those
 * fetches sent below in their place in the stream. */
#include <errno.h>
#include <string.h>

#include "analysis/cachesim_int.h"

/* A follower of cachesim_feed_group: instructions [I, I+N) of B whose first i-cache the leader
 * simulated (its misses are LEAD's imiss[*K..]): only the data references and, in their place
 * in the stream, the missed fetches from the level below that cache. */
void cachesim_feed_follower(struct cachesim *cs, const struct spent_trace_batch *b, size_t i, size_t n,
			    const struct cachesim *lead, size_t *k)
{
	struct cache *below = cs->cores[0].ipath->next;
	const struct spent_trace_insn *last = &b->insns[i + n - 1];
	size_t r = b->insns[i].ref0, end = last->ref0 + last->nrefs;
	for (; *k < lead->n_imiss && lead->imiss[*k] < i + n; ++*k) {
		const struct spent_trace_insn *in = &b->insns[lead->imiss[*k]];
		cachesim_feed_data(cs, b, r, in->ref0);
		r = in->ref0;
		hierarchy_access(cs, 0, below, in->pc, in->len, OP_IFETCH);
	}
	cachesim_feed_data(cs, b, r, end);
}

/* CS's first i-cache behaves as LEAD's: the same configuration, on one core, reached by
 * nothing but the instruction fetches (split from the data, which never reach it), its
 * replacement using no random numbers, a level below it taking its misses. */
static bool same_icache(const struct cachesim *cs, const struct cachesim *lead)
{
	const struct cache *c = cs->cores[0].ipath;
	const struct cache_level_config *a = c->cfg, *l = lead->cores[0].ipath->cfg;
	return cs->n_cores == 1 && !cs->data_reaches_i && a->kind == CACHE_INSN && c->next &&
	       a->repl != CACHE_RANDOM && a->level == l->level && a->kind == l->kind &&
	       a->size == l->size && a->line == l->line && a->assoc == l->assoc &&
	       a->repl == l->repl && a->write_through == l->write_through &&
	       a->write_allocate == l->write_allocate && a->write_buffers == l->write_buffers &&
	       a->subblock == l->subblock;
}

/* Whether the data references of B are in instruction order, each instruction's right after
 * the previous one's (what a follower's walk over the references needs). */
static bool refs_in_order(const struct spent_trace_batch *b)
{
	size_t next = b->n_insns ? b->insns[0].ref0 : 0;
	bool ok = true;
	for (size_t i = 0; i < b->n_insns; i++) {
		ok &= b->insns[i].ref0 == next;
		next += b->insns[i].nrefs;
	}
	return ok && next <= b->n_refs;
}

/* Whether SIMS[1..N) can follow SIMS[0] through its first i-cache (cachesim_feed_group). On
 * executions the followers take the leader's spans, so their time series must cut alike. */
bool cachesim_group_shares_icache(struct cachesim *const *sims, size_t n, bool execs)
{
	bool share = n > 1 && same_icache(sims[0], sims[0]);
	for (size_t k = 1; share && k < n; k++)
		share = same_icache(sims[k], sims[0]) && (!execs || sims[k]->cfg.chunk == sims[0]->cfg.chunk);
	return share;
}

int cachesim_span_begin(struct cachesim *cs, uint64_t insns)
{
	if (!cachesim_chunk_room(cs))
		return -ENOMEM;
	if (cs->cfg.chunk)
		cs->chunks[cs->cur_chunk].insns += insns;
	return 0;
}

/* A follower on a batch of executions: the data references of B from R on, and the fetches
 * the leader's i-cache missed (XMISS) in their place, in the leader's SPANS (its time-series
 * cuts). Reference indices in SPANS and XMISS are B's; miss_end indexes XMISS. */
int cachesim_follow_spans(struct cachesim *cs, const struct spent_trace_batch *b, size_t r,
			  const struct group_span *spans, size_t n_spans, const struct group_miss *xmiss)
{
	struct cache *below = cs->cores[0].ipath->next;
	size_t k = 0;
	for (size_t s = 0; s < n_spans; s++) {
		const struct group_span *sp = &spans[s];
		if (cachesim_span_begin(cs, sp->insns))
			return -ENOMEM;
		for (; k < sp->miss_end; k++) {
			const struct group_miss *m = &xmiss[k];
			cachesim_feed_data(cs, b, r, m->ref);
			r = m->ref;
			hierarchy_access(cs, 0, below, m->pc, m->len, OP_IFETCH);
		}
		cachesim_feed_data(cs, b, r, sp->ref_end);
		r = sp->ref_end;
		cs->insns += sp->insns;
	}
	return cs->oom ? -ENOMEM : 0;
}

/* cachesim_feed_group on a batch of executions whose references are in stream order: the
 * leader walks the fetches by its fetch plans (as alone) and records its misses. */
static int feed_group_execs(struct cachesim *const *sims, size_t n, const struct spent_trace_batch *b)
{
	struct cachesim *lead = sims[0];
	lead->n_xmiss = lead->n_spans = 0;
	lead->rec_imiss = true;
	int rc = cachesim_feed_execs_spans(lead, b, true);	/* checked by the caller */
	lead->rec_imiss = false;
	/* the followers in chains (cachesim_chain.c) */
	for (size_t k = 1; !rc && k < n; k += CACHESIM_CHAIN_MAX) {
		struct cachesim *chain[CACHESIM_CHAIN_MAX];
		size_t m = n - k < CACHESIM_CHAIN_MAX ? n - k : CACHESIM_CHAIN_MAX;
		memcpy(chain, sims + k, m * sizeof(*chain));
		cachesim_chain_sort(chain, m);
		rc = cachesim_follow_chain(chain, m, b, cachesim_exec_ref(&b->execs[0], 0), lead->spans,
					   lead->n_spans, lead->xmiss);
	}
	for (size_t k = 1; !rc && k < n; k++)
		sims[k]->cores[0].ipath->st = lead->cores[0].ipath->st;
	return rc;
}

int cachesim_feed_group(struct cachesim *const *sims, size_t n, const struct spent_trace_batch *b)
{
	struct spent_trace_batch ib;
	if (b->execs && b->n_execs && cachesim_group_shares_icache(sims, n, true) && cachesim_exec_refs_in_order(b))
		return feed_group_execs(sims, n, b);
	if (b->execs && n > 1) {	/* the shared i-cache walk indexes instructions */
		int rc = cachesim_expand_execs(sims[0], b, &ib);
		if (rc)
			return rc;
		b = &ib;
	}
	if (!(b->n_insns && cachesim_group_shares_icache(sims, n, false) && refs_in_order(b))) {
		for (size_t k = 0; k < n; k++) {
			int rc = cachesim_feed(sims[k], b);
			if (rc)
				return rc;
		}
		return 0;
	}
	struct cachesim *lead = sims[0];
	lead->n_imiss = 0;
	lead->rec_imiss = true;
	int rc = cachesim_feed_spans(lead, b, NULL);
	lead->rec_imiss = false;
	for (size_t k = 1; !rc && k < n; k++) {
		rc = cachesim_feed_spans(sims[k], b, lead);
		/* the shared cache's counters are the leader's */
		sims[k]->cores[0].ipath->st = lead->cores[0].ipath->st;
	}
	return rc;
}

bool cachesim_group_reads_execs(struct cachesim *const *sims, size_t n)
{
	return (n == 1 && sims[0]->n_cores == 1) || cachesim_group_shares_icache(sims, n, true);
}
