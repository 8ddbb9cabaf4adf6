/* analysis/cachesim.c - the cache simulator object: builds per-core hierarchies from a
 * configuration, feeds trace batches through them, keeps pin traffic per chunk of instructions,
 * and answers the statistics queries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cachesim_int.h"
#include "core/alloc.h"

const char *const cache_traffic_names[TRAFFIC_NKINDS] = {
	"imiss", "dmiss", "dwrite", "dvict", "dread_useful", "dread_redundant",
};

static uint32_t log2u(uint64_t v)
{
	uint32_t s = 0;
	while ((1ull << s) < v)
		s++;
	return s;
}

static int cache_init(struct cache *c, const struct cache_level_config *cfg)
{
	uint64_t lines = cfg->size / cfg->line;
	c->cfg = cfg;
	c->line_shift = log2u(cfg->line);
	c->assoc = cfg->assoc ? cfg->assoc : (uint32_t)lines;
	c->sets = (uint32_t)(lines / c->assoc);
	c->set_mask = (c->sets & (c->sets - 1)) == 0 ? c->sets - 1 : 0;
	if (c->sets == 1)
		c->set_mask = 0;
	size_t n = (size_t)c->sets * c->assoc;
	c->tags = malloc(n * sizeof(*c->tags));
	if (!c->tags)
		return -ENOMEM;
	memset(c->tags, 0xff, n * sizeof(*c->tags));
	if (c->set_mask || c->sets == 1) {	/* every way empty: TAG_EMPTY */
		if (!(c->front = malloc(c->sets * sizeof(*c->front))))
			return -ENOMEM;
		memset(c->front, 0xff, c->sets * sizeof(*c->front));
	}
	if (!cfg->write_through || cfg->write_allocate) {
		c->meta = calloc(n, sizeof(*c->meta));
		c->slot = malloc(n * sizeof(*c->slot));
		if (!c->meta || !c->slot)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			c->slot[i] = (uint32_t)(i % c->assoc);
	}
	if (cfg->repl == CACHE_FIFO && !(c->fifo_next = calloc(c->sets, sizeof(uint32_t))))
		return -ENOMEM;
	uint32_t sub = cfg->subblock && cfg->subblock < cfg->line ? cfg->subblock : cfg->line;
	c->sub_shift = log2u(sub);
	if (c->line_shift - c->sub_shift > 6)
		c->sub_shift = c->line_shift - 6;
	c->gran_shift = c->line_shift > 6 ? c->line_shift - 6 : 0;
	uint32_t ngran = 1u << (c->line_shift - c->gran_shift);
	c->full_wmask = ngran >= 64 ? ~0ull : (1ull << ngran) - 1;
	if (cfg->write_through && cfg->write_buffers &&
	    !(c->wbuf = calloc(cfg->write_buffers, sizeof(uint64_t))))
		return -ENOMEM;
	return 0;
}

static void cache_release(struct cache *c)
{
	free(c->tags);
	free(c->front);
	free(c->slot);
	free(c->meta);
	free(c->dbits);
	free(c->fifo_next);
	free(c->wbuf);
}

/* Link each cache to the next one its misses go to: the next level holding its stream. */
static void hierarchy_link(struct hierarchy *h, const struct cachesim_config *cfg)
{
	uint32_t n = cfg->n_levels;
	h->ipath = h->dpath = NULL;
	for (uint32_t i = 0; i < n; i++) {
		struct cache *c = &h->caches[i];
		c->next = NULL;
		for (uint32_t j = i + 1; j < n; j++) {
			const struct cache_level_config *o = &cfg->levels[j];
			if (o->level > cfg->levels[i].level &&
			    (o->kind == CACHE_UNIFIED || o->kind == cfg->levels[i].kind)) {
				c->next = &h->caches[j];
				break;
			}
		}
		c->last = c->next == NULL;
		if (!h->ipath && c->cfg->kind != CACHE_DATA)
			h->ipath = c;
		if (!h->dpath && c->cfg->kind != CACHE_INSN)
			h->dpath = c;
	}
	/* write-miss fills are watched only in the cache data references start at */
	h->dpath->pend = h->dpath->meta != NULL;
}

/* A cache whose meta would only ever hold one dirty bit per way keeps them as a word per set
 * (struct cache.dbits). */
static int compact_dirty(struct cache *c)
{
	if (!c->meta || c->pend || c->sub_shift != c->line_shift || c->assoc > 64)
		return 0;
	if (!(c->dbits = calloc(c->sets, sizeof(*c->dbits))))
		return -ENOMEM;
	free(c->meta);
	free(c->slot);
	c->meta = NULL;
	c->slot = NULL;
	return 0;
}

int cachesim_new(const struct cachesim_config *cfg, struct cachesim **out, char *err,
		 size_t errlen)
{
	int rc = cachesim_config_check(cfg, err, errlen);
	if (rc)
		return rc;
	struct cachesim *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->cfg = *cfg;
	cs->n_cores = cfg->cores > 1 ? cfg->cores : 1;
	cs->rng = cfg->seed ? cfg->seed : 0x9E3779B97F4A7C15ull;
	cs->cores = calloc(cs->n_cores, sizeof(*cs->cores));
	if (!cs->cores) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t k = 0; k < cs->n_cores; k++) {
		for (uint32_t i = 0; i < cfg->n_levels; i++)
			if ((rc = cache_init(&cs->cores[k].caches[i], &cs->cfg.levels[i])))
				goto fail;
		hierarchy_link(&cs->cores[k], &cs->cfg);
		for (uint32_t i = 0; i < cfg->n_levels; i++)
			if ((rc = compact_dirty(&cs->cores[k].caches[i])))
				goto fail;
		hierarchy_pick_quick(&cs->cores[k], cs->n_cores);
	}
	cs->coh_shift = log2u(cfg->levels[cfg->n_levels - 1].line);
	for (struct cache *c = cs->cores[0].dpath; c; c = c->next)
		cs->data_reaches_i |= c == cs->cores[0].ipath;
	*out = cs;
	return 0;
fail:
	cachesim_free(cs);
	if (rc == -ENOMEM && err)
		snprintf(err, errlen, "out of memory allocating the caches");
	return rc;
}

/* Per superblock (spent_trace_exec.block), the instructions of its templates whose fetch
 * needs a look at the i-stream's first cache: the first, and each one not inside the line of
 * the previous one's last byte (or crossing into a second line). Every other one is a hit in
 * the line its predecessor's fetch just left at the front of its set, which changes nothing,
 * as long as no data reference can reach that cache (feed_execs_split). */
struct fetch_plan {
	uint32_t off;		/* its instructions to look up: fetch_plans.pts[off ..] */
	uint16_t n_insns;	/* instructions covered (0: no plan yet) */
	uint16_t n_pts;
};
/* an instruction to look up, with what the lookup needs: the walk reads no template (the
 * superblocks' descriptions are spread over the heap; the plans are packed) */
struct fetch_point {
	uint64_t pc;
	uint16_t k;		/* its number in the superblock */
	uint16_t len;
};
struct fetch_plans {
	struct fetch_plan *plan;	/* by block number */
	size_t n_plan;
	struct fetch_point *pts;
	size_t n_pts, cap_pts;
};
#define FETCH_PLAN_MAX_BLOCKS (1u << 24)	/* beyond: no plan (a source numbering sparsely) */

static void fetch_plans_free(struct fetch_plans *fp)
{
	if (!fp)
		return;
	free(fp->plan);
	free(fp->pts);
	free(fp);
}

/* The plan of execution X's superblock covering its instructions, made when missing or too
 * short; NULL when there is none (no block number, no memory: fetch one by one). */
static const struct fetch_plan *fetch_plan_get(struct cachesim *cs, const struct spent_trace_exec *x,
					       uint32_t line_shift)
{
	struct fetch_plans *fp = cs->plans;
	if (!x->block || x->block >= FETCH_PLAN_MAX_BLOCKS || x->n_insns > UINT16_MAX)
		return NULL;
	if (fp && x->block < fp->n_plan && fp->plan[x->block].n_insns >= x->n_insns)
		return &fp->plan[x->block];
	if (!fp && !(fp = cs->plans = calloc(1, sizeof(*fp))))
		return NULL;
	if (x->block >= fp->n_plan) {
		size_t old = fp->n_plan;
		if (ALLOC_GROW(fp->plan, (size_t)x->block + 1, fp->n_plan))
			return NULL;
		memset(fp->plan + old, 0, (fp->n_plan - old) * sizeof(*fp->plan));
	}
	if (ALLOC_GROW(fp->pts, fp->n_pts + x->n_insns, fp->cap_pts))
		return NULL;
	struct fetch_plan *p = &fp->plan[x->block];
	const struct spent_trace_insn *tm = x->insns;
	p->off = (uint32_t)fp->n_pts;
	p->n_pts = 0;
	uint64_t prev_last = 0;
	for (uint32_t k = 0; k < x->n_insns; k++) {
		uint64_t first = tm[k].pc >> line_shift;
		uint64_t last = (tm[k].pc + (tm[k].len ? tm[k].len : 1) - 1) >> line_shift;
		if (k == 0 || first != prev_last || last != first)
			fp->pts[fp->n_pts + p->n_pts++] =
				(struct fetch_point){ tm[k].pc, (uint16_t)k, tm[k].len };
		prev_last = last;
	}
	fp->n_pts += p->n_pts;
	p->n_insns = (uint16_t)x->n_insns;
	return p;
}

void cachesim_free(struct cachesim *cs)
{
	if (!cs)
		return;
	if (cs->cores)
		for (uint32_t k = 0; k < cs->n_cores; k++)
			for (uint32_t i = 0; i < cs->cfg.n_levels; i++)
				cache_release(&cs->cores[k].caches[i]);
	coherence_free(cs);
	free(cs->cores);
	free(cs->chunks);
	free(cs->tids);
	free(cs->imiss);
	free(cs->xmiss);
	free(cs->spans);
	free(cs->xinsns);
	fetch_plans_free(cs->plans);
	free(cs);
}

static int chunk_reserve(struct cachesim *cs, size_t idx)
{
	if (idx < cs->n_chunks)
		return 0;
	if (ALLOC_GROW(cs->chunks, idx + 1, cs->cap_chunks))
		return -ENOMEM;
	memset(&cs->chunks[cs->n_chunks], 0, (idx + 1 - cs->n_chunks) * sizeof(*cs->chunks));
	cs->n_chunks = idx + 1;
	return 0;
}

void cachesim_add_traffic(struct cachesim *cs, enum cache_traffic kind, uint64_t bytes,
			  uint32_t chunk)
{
	cs->traffic[kind] += bytes;
	if (cs->cfg.chunk && chunk < cs->n_chunks)
		cs->chunks[chunk].bytes[kind] += bytes;
}

static uint32_t core_of(struct cachesim *cs, uint32_t tid)
{
	if (cs->n_cores == 1)
		return 0;
	for (size_t i = 0; i < cs->n_tids; i++)
		if (cs->tids[i] == tid)
			return (uint32_t)(i % cs->n_cores);
	if (ALLOC_GROW(cs->tids, cs->n_tids + 1, cs->cap_tids)) {
		cs->oom = 1;
		return 0;
	}
	cs->tids[cs->n_tids] = tid;
	return (uint32_t)(cs->n_tids++ % cs->n_cores);
}

void cachesim_access(struct cachesim *cs, uint32_t core, char stream, uint64_t addr,
		     uint32_t size, uint32_t kind)
{
	struct hierarchy *h = &cs->cores[core % cs->n_cores];
	cs->imemo_len = 0;
	if (stream == 'i') {
		hierarchy_access(cs, core, h->ipath, addr, size, OP_IFETCH);
		return;
	}
	enum cache_op op = cache_ref_op(kind);
	hierarchy_access(cs, core, h->dpath, addr, size, op);
	if (cs->n_cores > 1 && op != OP_READ)
		coherence_write(cs, core, addr, size);
}

static void record_imiss(struct cachesim *cs, size_t index)
{
	if (ALLOC_GROW(cs->imiss, cs->n_imiss + 1, cs->cap_imiss)) {
		cs->oom = 1;
		return;
	}
	cs->imiss[cs->n_imiss++] = (uint32_t)index;
}

/* A one-core walk's fetch memo: a line known to be the most recent way of its set in the
 * i-stream's first cache (first byte, size; size 0: none), and the fetches counted as hits in
 * it without a lookup. Kept in registers by the walks; cs->imemo_* between batches. */
struct fetch_memo {
	uint64_t at, len, line, hits;
};

static inline struct fetch_memo memo_begin(const struct cachesim *cs, const struct cache *ic)
{
	return (struct fetch_memo){ cs->imemo_at, cs->imemo_len, 1ull << ic->line_shift, 0 };
}

static inline void memo_end(struct cachesim *cs, struct cache *ic, const struct fetch_memo *m)
{
	ic->st.accesses += m->hits;
	ic->st.ifetches += m->hits;
	cs->imemo_at = m->at;
	cs->imemo_len = m->len;
}

/* The fetch of [PC, PC+LEN) when it hits: in the memo's line, or inline in the cache (the
 * memo then moves to the line of its last byte, now the front of its set). false: it must go
 * down the hierarchy (the caller's walk does that and clears the memo). */
static inline bool fetch_hit(struct cache *ic, struct fetch_memo *m, uint64_t pc, uint32_t len)
{
	uint64_t d = pc - m->at;
	if (d < m->len && d + len <= m->len) {
		m->hits++;
		return true;
	}
	if (cache_fast_hit(ic, pc, len, OP_IFETCH) || cache_fetch_below_front(ic, pc, len)) {
		m->at = (pc + (len ? len : 1) - 1) & ~(m->line - 1);
		m->len = m->line;
		return true;
	}
	return false;
}

/* Instructions [I, I+N) of B on one core. A fetch within the line of the previous fetch is a
 * hit in the most recent way of its set (the memo), unless a miss elsewhere may have reached
 * that cache since: it is counted without a lookup, which spares most fetches (several
 * instructions share a line) any work beyond a compare. */
static void feed_one_core(struct cachesim *cs, const struct spent_trace_batch *b, size_t i, size_t n)
{
	struct hierarchy *h = &cs->cores[0];
	struct cache *ic = h->ipath, *dc = h->dpath;
	struct fetch_memo m = memo_begin(cs, ic);
	for (const struct spent_trace_insn *in = &b->insns[i], *end = in + n; in < end; in++) {
		if (!fetch_hit(ic, &m, in->pc, in->len)) {
			uint64_t misses = ic->st.misses;
			hierarchy_access(cs, 0, ic, in->pc, in->len, OP_IFETCH);
			m.len = 0;
			if (cs->rec_imiss && ic->st.misses != misses)
				record_imiss(cs, (size_t)(in - b->insns));
		}
		if (!in->nrefs)
			continue;
		for (const struct spent_trace_ref *r = &b->refs[in->ref0], *e = r + in->nrefs; r < e; r++) {
			enum cache_op op = cache_ref_op(r->kind);
			if (!cache_fast_hit(dc, r->addr, r->size, op)) {
				cache_data_below_front(cs, dc, r->addr, r->size, op);
				if (cs->data_reaches_i)
					m.len = 0;
			}
		}
	}
	memo_end(cs, ic, &m);
}

/* Instructions [I, I+N) of B with private hierarchies per core and coherence. */
static void feed_cores(struct cachesim *cs, const struct spent_trace_batch *b, size_t i, size_t n)
{
	uint32_t last_tid = UINT32_MAX, core = 0;
	for (size_t e = i + n; i < e; i++) {
		const struct spent_trace_insn *in = &b->insns[i];
		if (in->tid != last_tid) {
			core = core_of(cs, in->tid);
			last_tid = in->tid;
		}
		struct hierarchy *h = &cs->cores[core];
		if (!cache_fast_hit(h->ipath, in->pc, in->len, OP_IFETCH))
			hierarchy_access(cs, core, h->ipath, in->pc, in->len, OP_IFETCH);
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
			enum cache_op op = cache_ref_op(r->kind);
			if (!cache_fast_hit(h->dpath, r->addr, r->size, op))
				hierarchy_access(cs, core, h->dpath, r->addr, r->size, op);
			if (op != OP_READ)
				coherence_write(cs, core, r->addr, r->size);
		}
	}
}

/* Data references [R, E) of B on one core. */
static void feed_data(struct cachesim *cs, const struct spent_trace_batch *b, size_t r, size_t e)
{
	struct cache *dc = cs->cores[0].dpath;
	for (const struct spent_trace_ref *p = &b->refs[r], *end = &b->refs[e]; p < end; p++) {
		enum cache_op op = cache_ref_op(p->kind);
		if (!cache_fast_hit(dc, p->addr, p->size, op))
			cache_data_below_front(cs, dc, p->addr, p->size, op);
	}
}

void cachesim_feed_data(struct cachesim *cs, const struct spent_trace_batch *b, size_t r, size_t e)
{
	feed_data(cs, b, r, e);
}

/* A full series merges its chunks pairwise and doubles the chunk size, as memmap's columns
 * do: the picture keeps its shape and --chunk 1 on a long trace stays CACHESIM_MAX_CHUNKS
 * points (it was a record per instruction, 1.7 GB on 16 M instructions). */
static void chunks_merge_pairs(struct cachesim *cs)
{
	size_t n = cs->n_chunks / 2;
	for (size_t i = 0; i < n; i++) {
		struct chunk_rec *a = &cs->chunks[2 * i], *b = &cs->chunks[2 * i + 1];
		a->insns += b->insns;
		for (int k = 0; k < TRAFFIC_NKINDS; k++)
			a->bytes[k] += b->bytes[k];
		cs->chunks[i] = *a;
	}
	cs->n_chunks = n;
	cs->cfg.chunk *= 2;
}

/* The instructions left in the current chunk (a new one started when the last is full), or
 * SIZE_MAX without a time series; 0 on ENOMEM. */
size_t cachesim_chunk_room(struct cachesim *cs)
{
	uint64_t chunk = cs->cfg.chunk;
	if (!chunk)
		return SIZE_MAX;
	uint64_t into = cs->insns % chunk;
	if (into == 0 && cs->insns / chunk >= CACHESIM_MAX_CHUNKS) {
		chunks_merge_pairs(cs);	/* at a boundary of the doubled chunk too */
		chunk = cs->cfg.chunk;
	}
	if (into == 0) {
		cs->cur_chunk = (uint32_t)(cs->insns / chunk);
		if (chunk_reserve(cs, cs->cur_chunk))
			return 0;
	}
	return (size_t)(chunk - into);
}

/* The batch in spans that end at chunk boundaries, so the time series costs nothing per
 * instruction. LEAD: feed as cachesim_feed_group's follower of LEAD. */
int cachesim_feed_spans(struct cachesim *cs, const struct spent_trace_batch *b, const struct cachesim *lead)
{
	size_t k = 0;
	for (size_t i = 0, n; i < b->n_insns; i += n) {
		size_t room = cachesim_chunk_room(cs);
		if (!room)
			return -ENOMEM;
		n = b->n_insns - i < room ? b->n_insns - i : room;
		if (cs->cfg.chunk)
			cs->chunks[cs->cur_chunk].insns += n;
		if (lead)
			cachesim_feed_follower(cs, b, i, n, lead, &k);
		else if (cs->n_cores == 1)
			feed_one_core(cs, b, i, n);
		else
			feed_cores(cs, b, i, n);
		cs->insns += n;
	}
	return cs->oom ? -ENOMEM : 0;
}

/* One core, a batch of superblock executions: instructions from execution *XI's instruction
 * *K on, at most BUDGET of them (up to the next chunk boundary); advances *XI and *K and
 * returns how many were fed. As feed_one_core, with the instructions read from the
 * superblocks' templates (host-cache resident) instead of a record per instruction. */
static size_t feed_execs_one_core(struct cachesim *cs, const struct spent_trace_batch *b, size_t *xi,
				  uint32_t *k, size_t budget)
{
	struct hierarchy *h = &cs->cores[0];
	struct cache *ic = h->ipath, *dc = h->dpath;
	struct fetch_memo m = memo_begin(cs, ic);
	const bool data_reaches_i = cs->data_reaches_i;
	size_t fed = 0, i = *xi;
	uint32_t k0 = *k;
	for (; i < b->n_execs && fed < budget; i++, k0 = 0) {
		const struct spent_trace_exec *x = &b->execs[i];
		const struct spent_trace_insn *tm = x->insns;
		const struct spent_trace_ref *refs = b->refs + x->ref0;
		uint64_t tag = x->pc_tag;
		uint32_t n = x->n_insns, kend = n;
		if (kend - k0 > budget - fed) {
			kend = k0 + (uint32_t)(budget - fed);
		}
		fed += kend - k0;
		for (uint32_t j = k0; j < kend; j++) {
			if (!fetch_hit(ic, &m, tm[j].pc | tag, tm[j].len)) {
				hierarchy_access(cs, 0, ic, tm[j].pc | tag, tm[j].len, OP_IFETCH);
				m.len = 0;
			}
			uint32_t nrefs = j == n - 1 ? x->last_nrefs : tm[j].nrefs;
			for (const struct spent_trace_ref *r = refs + tm[j].ref0, *e = r + nrefs; r < e; r++) {
				enum cache_op op = cache_ref_op(r->kind);
				if (!cache_fast_hit(dc, r->addr, r->size, op)) {
					cache_data_below_front(cs, dc, r->addr, r->size, op);
					if (data_reaches_i)
						m.len = 0;
				}
			}
		}
		if (kend < n) {	/* the budget ends inside this execution */
			*xi = i;
			*k = kend;
			goto out;
		}
	}
	*xi = i;
	*k = 0;
out:
	memo_end(cs, ic, &m);
	return fed;
}

/* The first reference of instruction K of execution X (K = n_insns: after its last). */
size_t cachesim_exec_ref(const struct spent_trace_exec *x, uint32_t k)
{
	return x->ref0 + (k < x->n_insns ? x->insns[k].ref0 : x->n_refs);
}

/* feed_execs_split: the fetch of instruction J of execution X goes down the hierarchy, after
 * the data references before it (from *RDONE on). */
static void split_miss(struct cachesim *cs, const struct spent_trace_batch *b,
		       const struct spent_trace_exec *x, uint32_t j, size_t *rdone, uint64_t tag,
		       struct fetch_memo *m)
{
	size_t r = cachesim_exec_ref(x, j);
	struct cache *ic = cs->cores[0].ipath;
	if (!cs->fetch_only)
		feed_data(cs, b, *rdone, r);
	*rdone = r;
	uint64_t misses = ic->st.misses;
	hierarchy_access(cs, 0, ic, x->insns[j].pc | tag, x->insns[j].len, OP_IFETCH);
	m->len = 0;
	if (cs->rec_imiss && ic->st.misses != misses) {
		if (ALLOC_GROW(cs->xmiss, cs->n_xmiss + 1, cs->cap_xmiss)) {
			cs->oom = 1;
			return;
		}
		cs->xmiss[cs->n_xmiss++] = (struct group_miss){ r, x->insns[j].pc | tag, x->insns[j].len };
	}
}

/* feed_execs_one_core when no data reference can reach the i-stream's first cache: that
 * cache's hits depend on the fetches alone, so the fetches are walked first, each execution's
 * in one tight loop, and the data references after them in one flat pass (feed_data); only a
 * fetch that misses (goes below, where data misses go too) is taken in its place in the
 * stream, after the data references before it. */
static size_t feed_execs_split(struct cachesim *cs, const struct spent_trace_batch *b, size_t *xi,
			       uint32_t *k, size_t budget)
{
	struct cache *ic = cs->cores[0].ipath;
	struct fetch_memo m = memo_begin(cs, ic);
	size_t fed = 0, i = *xi, rdone = cachesim_exec_ref(&b->execs[i], *k);
	uint32_t k0 = *k, kend = 0;
	bool inside = false;
	for (; i < b->n_execs && fed < budget; i++, k0 = 0) {
		const struct spent_trace_exec *x = &b->execs[i];
		const struct spent_trace_insn *tm = x->insns;
		uint64_t tag = x->pc_tag;
		kend = x->n_insns;
		if (kend - k0 > budget - fed)
			kend = k0 + (uint32_t)(budget - fed);
		fed += kend - k0;
		const struct fetch_plan *plan = fetch_plan_get(cs, x, ic->line_shift);
		if (plan) {
			const struct fetch_point *pt = cs->plans->pts + plan->off, *pt_end = pt + plan->n_pts;
			while (pt < pt_end && pt->k < k0)
				pt++;
			/* the instructions between the looked-up ones hit (the looked-up ones count
			 * themselves) */
			m.hits += kend - k0;
			for (; pt < pt_end && pt->k < kend; pt++) {
				m.hits--;
				if (!fetch_hit(ic, &m, pt->pc | tag, pt->len))
					split_miss(cs, b, x, pt->k, &rdone, tag, &m);
			}
		} else {
			for (uint32_t j = k0; j < kend; j++)
				if (!fetch_hit(ic, &m, tm[j].pc | tag, tm[j].len))
					split_miss(cs, b, x, j, &rdone, tag, &m);
		}
		if ((inside = kend < x->n_insns))	/* the budget ends inside this execution */
			break;
	}
	*xi = i;
	*k = inside ? kend : 0;
	/* the data references up to where the fetches stopped */
	size_t rend = *xi < b->n_execs ? cachesim_exec_ref(&b->execs[*xi], *k) : cachesim_exec_ref(&b->execs[i - 1], b->execs[i - 1].n_insns);
	if (!cs->fetch_only)
		feed_data(cs, b, rdone, rend);
	memo_end(cs, ic, &m);
	if (cs->rec_imiss) {
		if (ALLOC_GROW(cs->spans, cs->n_spans + 1, cs->cap_spans))
			cs->oom = 1;
		else
			cs->spans[cs->n_spans++] = (struct group_span){ fed, rend, cs->n_xmiss };
	}
	return fed;
}

/* Whether B's executions have their references in stream order, each execution's right after
 * the previous one's (what feed_execs_split's flat pass needs). */
bool cachesim_exec_refs_in_order(const struct spent_trace_batch *b)
{
	size_t next = b->n_execs ? b->execs[0].ref0 : 0;
	bool ok = true;
	for (size_t i = 0; i < b->n_execs; i++) {
		const struct spent_trace_exec *x = &b->execs[i];
		ok &= x->n_insns > 0 && x->ref0 == next;
		next += x->n_refs;
	}
	return ok && next <= b->n_refs;
}

/* A batch of executions on one core, in spans that end at chunk boundaries. */
int cachesim_feed_execs_spans(struct cachesim *cs, const struct spent_trace_batch *b, bool refs_in_order)
{
	size_t xi = 0;
	uint32_t k = 0;
	bool split = !cs->data_reaches_i && refs_in_order;
	while (xi < b->n_execs) {
		size_t budget = cachesim_chunk_room(cs);
		if (!budget)
			return -ENOMEM;
		size_t n = split ? feed_execs_split(cs, b, &xi, &k, budget) :
				   feed_execs_one_core(cs, b, &xi, &k, budget);
		if (cs->cfg.chunk)
			cs->chunks[cs->cur_chunk].insns += n;
		cs->insns += n;
	}
	return cs->oom ? -ENOMEM : 0;
}

/* B's executions as a batch of instructions in CS's scratch array (OUT shares B's refs). */
int cachesim_expand_execs(struct cachesim *cs, const struct spent_trace_batch *b, struct spent_trace_batch *out)
{
	if (ALLOC_GROW(cs->xinsns, b->n_insns, cs->cap_xinsns))
		return -ENOMEM;
	struct spent_trace_insn *o = cs->xinsns;
	for (size_t i = 0; i < b->n_execs; i++) {
		const struct spent_trace_exec *x = &b->execs[i];
		for (uint32_t k = 0; k < x->n_insns; k++, o++) {
			*o = x->insns[k];
			o->pc |= x->pc_tag;
			o->tid = x->tid;
			o->pid = x->pid;
			o->ref0 += x->ref0;
		}
		o[-1].nrefs = (uint8_t)x->last_nrefs;
	}
	*out = *b;
	out->insns = cs->xinsns;
	out->execs = NULL;
	out->n_execs = 0;
	return 0;
}

int cachesim_feed(struct cachesim *cs, const struct spent_trace_batch *b)
{
	if (!b->execs)
		return cachesim_feed_spans(cs, b, NULL);
	if (cs->n_cores == 1)
		return cachesim_feed_execs_spans(cs, b, cachesim_exec_refs_in_order(b));
	struct spent_trace_batch ib;
	int rc = cachesim_expand_execs(cs, b, &ib);
	return rc ? rc : cachesim_feed_spans(cs, &ib, NULL);
}

void cachesim_finish(struct cachesim *cs)
{
	cs->imemo_len = 0;	/* flushed write buffers may reach the i-stream's cache */
	for (uint32_t k = 0; k < cs->n_cores; k++)
		for (uint32_t i = 0; i < cs->cfg.n_levels; i++) {
			struct cache *c = &cs->cores[k].caches[i];
			if (c->wbuf)
				cache_flush_buffers(cs, c);
			cache_resolve_pending(cs, c);
		}
}

const struct cachesim_config *cachesim_config(const struct cachesim *cs)
{
	return &cs->cfg;
}

uint64_t cachesim_instructions(const struct cachesim *cs)
{
	return cs->insns;
}

void cachesim_stats(const struct cachesim *cs, uint32_t li, struct cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (li >= cs->cfg.n_levels)
		return;
	for (uint32_t k = 0; k < cs->n_cores; k++) {
		const struct cache_stats *s = &cs->cores[k].caches[li].st;
		out->accesses += s->accesses;
		out->misses += s->misses;
		out->reads += s->reads;
		out->read_misses += s->read_misses;
		out->writes += s->writes;
		out->write_misses += s->write_misses;
		out->ifetches += s->ifetches;
		out->ifetch_misses += s->ifetch_misses;
		out->writebacks += s->writebacks;
		out->invalidations += s->invalidations;
	}
}

uint64_t cachesim_traffic(const struct cachesim *cs, enum cache_traffic kind)
{
	return cs->traffic[kind];
}

size_t cachesim_n_chunks(const struct cachesim *cs)
{
	return cs->n_chunks;
}

uint64_t cachesim_chunk_traffic(const struct cachesim *cs, size_t chunk, enum cache_traffic kind)
{
	return chunk < cs->n_chunks ? cs->chunks[chunk].bytes[kind] : 0;
}

uint64_t cachesim_chunk_instructions(const struct cachesim *cs, size_t chunk)
{
	return chunk < cs->n_chunks ? cs->chunks[chunk].insns : 0;
}
