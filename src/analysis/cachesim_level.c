/* analysis/cachesim_level.c - one cache level (lookup, replacement, dirty subblocks, write
 * buffers, pending write-miss fills) and the walk of a reference down a core's hierarchy. */
#include <string.h>

#include "analysis/cachesim_int.h"

struct level_result {
	int miss;		/* any line missed */
	int nfill;		/* lines installed (need a fill from below) */
	int around;		/* a write missed without allocating: goes below */
};

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static inline size_t set_base(const struct cache *c, uint64_t line)
{
	uint64_t set = c->set_mask ? (line & c->set_mask) : (c->sets == 1 ? 0 : line % c->sets);
	return (size_t)set * c->assoc;
}



/* granules of [addr, addr+size) inside line LINE, as a mask (clipped to the line) */
static uint64_t gran_mask(const struct cache *c, uint32_t shift, uint64_t line, uint64_t addr,
			  uint32_t size)
{
	uint64_t lo = line << c->line_shift, hi = lo + (1ull << c->line_shift);
	uint64_t a = addr < lo ? lo : addr, b = addr + size > hi ? hi : addr + size;
	if (b <= a)
		return 0;
	uint32_t g0 = (uint32_t)((a - lo) >> shift), g1 = (uint32_t)((b - 1 - lo) >> shift);
	uint32_t n = g1 - g0 + 1;
	return (n >= 64 ? ~0ull : ((1ull << n) - 1)) << g0;
}

/* Settle the pending fill of way M of cache C (nothing when none is pending). */
static void resolve(struct cachesim *cs, struct cache *c, struct way_meta *m, int redundant)
{
	if (!m->pin_bytes)
		return;
	cachesim_add_traffic(cs, redundant ? TRAFFIC_DREAD_REDUNDANT : TRAFFIC_DREAD_USEFUL,
			     m->pin_bytes, m->chunk);
	m->pin_bytes = 0;
	c->n_pend--;
	m->wmask = 0;
}

/* The position of LINE's way in set B of C, or -1; nothing changes. c->front answers for the
 * front way without reading the tags: a dirty victim of the level above was usually brought
 * into C when it filled that level, and C's set has rarely seen another line since. */
static inline long find_way(const struct cache *c, uint64_t line, size_t b)
{
	uint32_t w = 0;
	if (c->front) {
		if (c->front[line & c->set_mask] == line)
			return (long)b;
		w = 1;
	}
	for (; w < c->assoc; w++)
		if (c->tags[b + w] == line)
			return (long)(b + w);
	return -1;
}

/* A dirty line leaves C: mark it dirty below if present there, else pass it further down;
 * below the last level it crosses the pins. Never allocates (keeps lower LRU state intact). */
static void writeback(struct cachesim *cs, struct cache *c, uint64_t line, uint64_t dirty)
{
	c->st.writebacks++;
	uint64_t bytes = (uint64_t)__builtin_popcountll(dirty) << c->sub_shift;
	struct cache *n = c->next;
	uint64_t addr = line << c->line_shift;
	while (n) {
		uint64_t nl = addr >> n->line_shift;
		size_t b = set_base(n, nl);
		long w = find_way(n, nl, b);
		if (w >= 0) {
			if (n->meta)
				way_meta(n, b, (size_t)w)->dirty |=
					gran_mask(n, n->sub_shift, nl, addr, 1u << c->line_shift);
			else if (n->dbits && !n->cfg->write_through)
				*set_dbits(n, b) |= 1ull << ((size_t)w - b);
			return;
		}
		n = n->next;
	}
	cachesim_add_traffic(cs, TRAFFIC_DVICT, bytes, cs->cur_chunk);
}

/* The way at position POS of set B leaves C: settle its pending fill, write back its dirt. */
static void evict(struct cachesim *cs, struct cache *c, size_t b, size_t pos)
{
	if (c->tags[pos] == TAG_EMPTY)
		return;
	if (c->dbits) {
		uint64_t *d = set_dbits(c, b), bit = 1ull << (pos - b);
		if (*d & bit)
			writeback(cs, c, c->tags[pos], 1);
		*d &= ~bit;
		return;
	}
	if (!c->meta)
		return;
	struct way_meta *m = way_meta(c, b, pos);
	resolve(cs, c, m, 0);
	if (m->dirty)
		writeback(cs, c, c->tags[pos], m->dirty);
	m->dirty = 0;
}



/* Install LINE in its set, clean; returns the position of its way (*BASE: the set's first). */
static size_t install(struct cachesim *cs, struct cache *c, uint64_t line, size_t *base)
{
	size_t b = set_base(c, line), idx;
	uint32_t a = c->assoc;
	switch (c->cfg->repl) {
	case CACHE_LRU:
		evict(cs, c, b, b + a - 1);
		move_front(c, b, a - 1);
		idx = b;
		break;
	case CACHE_FIFO: {
		uint32_t *f = &c->fifo_next[b / a];
		idx = b + *f;
		*f = (*f + 1) % a;
		evict(cs, c, b, idx);
		break;
	}
	default:
		idx = b + rng_next(&cs->rng) % a;
		for (uint32_t w = 0; w < a; w++)
			if (c->tags[b + w] == TAG_EMPTY) {
				idx = b + w;
				break;
			}
		evict(cs, c, b, idx);
		break;
	}
	c->tags[idx] = line;
	if (idx == b)
		front_changed(c, line & c->set_mask, b);
	if (c->meta)
		memset(way_meta(c, b, idx), 0, sizeof(struct way_meta));
	if (c->dbits)
		*set_dbits(c, b) &= ~(1ull << (idx - b));
	*base = b;
	return idx;
}

/* Look LINE up; on an LRU hit move it to the front. Returns the position of its way or -1;
 * *BASE is the set's first position. */
static inline long lookup(struct cache *c, uint64_t line, size_t *base)
{
	size_t b = set_base(c, line);
	long p = find_way(c, line, b);
	*base = b;
	if (p > (long)b && c->cfg->repl == CACHE_LRU) {
		move_front(c, b, (uint32_t)((size_t)p - b));
		front_changed(c, line & c->set_mask, b);
		return (long)b;
	}
	return p;
}

static void buffer_write(struct cachesim *cs, struct cache *c, uint64_t line)
{
	uint32_t n = c->cfg->write_buffers;
	for (uint32_t i = 0; i < c->wbuf_n; i++)
		if (c->wbuf[(c->wbuf_head + i) % n] == line)
			return;	/* merges into an open buffer */
	if (c->wbuf_n == n) {	/* flush the oldest */
		uint64_t old = c->wbuf[c->wbuf_head];
		c->wbuf_head = (c->wbuf_head + 1) % n;
		c->wbuf_n--;
		if (c->next)
			hierarchy_access(cs, 0xffffffffu, c->next, old << c->line_shift,
					 1u << c->line_shift, OP_WRITE);
		else
			cachesim_add_traffic(cs, TRAFFIC_DWRITE, 1ull << c->line_shift, cs->cur_chunk);
	}
	c->wbuf[(c->wbuf_head + c->wbuf_n) % n] = line;
	c->wbuf_n++;
}

void cache_flush_buffers(struct cachesim *cs, struct cache *c)
{
	while (c->wbuf_n) {
		uint64_t old = c->wbuf[c->wbuf_head];
		c->wbuf_head = (c->wbuf_head + 1) % c->cfg->write_buffers;
		c->wbuf_n--;
		if (c->next)
			hierarchy_access(cs, 0xffffffffu, c->next, old << c->line_shift,
					 1u << c->line_shift, OP_WRITE);
		else
			cachesim_add_traffic(cs, TRAFFIC_DWRITE, 1ull << c->line_shift, cs->cur_chunk);
	}
}

void cache_resolve_pending(struct cachesim *cs, struct cache *c)
{
	if (!c->meta)
		return;
	for (size_t i = 0; i < (size_t)c->sets * c->assoc; i++)
		resolve(cs, c, &c->meta[i], 0);
}

/* One line of a reference at one level. OP_WRITE from above with FILL set is a fill request
 * (allocates like a read, counts as a write). */
static void line_ref(struct cachesim *cs, struct cache *c, uint64_t line, uint64_t addr,
		     uint32_t size, enum cache_op op, int fill, struct level_result *r)
{
	size_t b;
	long w = lookup(c, line, &b);
	bool wr = (op == OP_WRITE || op == OP_MODIFY) && !fill;
	if (w >= 0) {
		/* a lower level's read hit leaves its meta alone (no pending fills there) */
		if ((c->pend && c->n_pend) || (wr && c->meta && !c->cfg->write_through)) {
			struct way_meta *m = way_meta(c, b, (size_t)w);
			if (m->pin_bytes && (op == OP_READ || op == OP_MODIFY) &&
			    (gran_mask(c, c->gran_shift, line, addr, size) & ~m->wmask))
				resolve(cs, c, m, 0);
			if (wr && !c->cfg->write_through)
				m->dirty |= gran_mask(c, c->sub_shift, line, addr, size);
			if (wr && m->pin_bytes) {
				m->wmask |= gran_mask(c, c->gran_shift, line, addr, size);
				if (m->wmask == c->full_wmask)
					resolve(cs, c, m, 1);
			}
		} else if (wr && c->dbits && !c->cfg->write_through) {
			*set_dbits(c, b) |= 1ull << ((size_t)w - b);
		}
		return;
	}
	r->miss = 1;
	if (wr && !c->cfg->write_allocate) {
		r->around = 1;
		return;
	}
	size_t idx = install(cs, c, line, &b);
	r->nfill++;
	if (wr && !c->cfg->write_through) {
		if (c->meta)
			way_meta(c, b, idx)->dirty = gran_mask(c, c->sub_shift, line, addr, size);
		else if (c->dbits)
			*set_dbits(c, b) |= 1ull << (idx - b);
	}
}

/* A read-modify-write counts as a read, as cachegrind counts it (its D1mr/DLmr include them):
 * the read comes first and is what misses; the write then hits the line just filled. It still
 * dirties the line (level_ref). */
static inline void count(struct cache *c, enum cache_op op, int miss)
{
	c->st.accesses++;
	c->st.misses += (uint64_t)miss;
	if (op == OP_IFETCH) {
		c->st.ifetches++;
		c->st.ifetch_misses += (uint64_t)miss;
	} else if (op == OP_READ || op == OP_MODIFY) {
		c->st.reads++;
		c->st.read_misses += (uint64_t)miss;
	} else {
		c->st.writes++;
		c->st.write_misses += (uint64_t)miss;
	}
}

static void level_ref(struct cachesim *cs, struct cache *c, uint64_t addr, uint32_t size,
		      enum cache_op op, int fill, struct level_result *r)
{
	uint64_t l1 = addr >> c->line_shift, l2 = (addr + (size ? size : 1) - 1) >> c->line_shift;
	memset(r, 0, sizeof(*r));
	line_ref(cs, c, l1, addr, size, op, fill, r);
	if (l2 != l1)
		line_ref(cs, c, l2, addr, size, op, fill, r);
	count(c, op, r->miss);
	if (c->cfg->write_through && (op == OP_WRITE || op == OP_MODIFY) && !fill &&
	    c->cfg->write_buffers) {
		buffer_write(cs, c, l1);
		if (l2 != l1)
			buffer_write(cs, c, l2);
	}
}

/* After a write-miss fill crossed the pins, the top cache watches whether the fetched bytes
 * were needed (read before being overwritten) or fully overwritten (redundant). */
static void mark_pending(struct cachesim *cs, struct cache *top, uint64_t addr, uint32_t size,
			 uint64_t bytes)
{
	uint64_t l1 = addr >> top->line_shift, l2 = (addr + size - 1) >> top->line_shift;
	if (!top->meta) {
		cachesim_add_traffic(cs, TRAFFIC_DREAD_USEFUL, bytes, cs->cur_chunk);
		return;
	}
	uint64_t share = bytes / (l2 - l1 + 1);
	for (uint64_t l = l1; l <= l2; l++) {
		size_t b = set_base(top, l);
		long w = -1;
		for (uint32_t i = 0; i < top->assoc; i++)
			if (top->tags[b + i] == l)
				w = (long)(b + i);
		if (w < 0) {
			cachesim_add_traffic(cs, TRAFFIC_DREAD_USEFUL, share, cs->cur_chunk);
			continue;
		}
		struct way_meta *m = way_meta(top, b, (size_t)w);
		top->n_pend += (m->pin_bytes == 0) - (share == 0);
		m->pin_bytes = (uint32_t)share;
		m->chunk = cs->cur_chunk;
		m->wmask = gran_mask(top, top->gran_shift, l, addr, size);
		if (m->wmask == top->full_wmask)
			resolve(cs, top, m, 1);
	}
}

void hierarchy_access(struct cachesim *cs, uint32_t core, struct cache *first, uint64_t addr,
		      uint32_t size, enum cache_op op)
{
	struct cache *c = first;
	int fill = 0;
	struct level_result r;
	if (!size)
		size = 1;
	while (c) {
		level_ref(cs, c, addr, size, op, fill, &r);
		if (!r.miss)
			return;
		if (c == first && core != 0xffffffffu && cs->n_cores > 1)
			coherence_miss(cs, core, addr);
		if (r.around && !r.nfill) {
			if (c->cfg->write_through)
				return;	/* the write buffer carries it */
			if (!c->next) {
				cachesim_add_traffic(cs, TRAFFIC_DWRITE, size, cs->cur_chunk);
				return;
			}
			c = c->next;
			continue;
		}
		if (!c->next)
			break;
		if (op == OP_WRITE || op == OP_MODIFY)
			fill = 1;
		c = c->next;
	}
	if (!c)
		return;
	uint64_t bytes = (uint64_t)r.nfill << c->line_shift;
	if (op == OP_IFETCH)
		cachesim_add_traffic(cs, TRAFFIC_IMISS, bytes, cs->cur_chunk);
	else if (op == OP_READ || op == OP_MODIFY)
		cachesim_add_traffic(cs, TRAFFIC_DMISS, bytes, cs->cur_chunk);
	else if (core == 0xffffffffu)
		cachesim_add_traffic(cs, TRAFFIC_DREAD_USEFUL, bytes, cs->cur_chunk);
	else
		mark_pending(cs, first, addr, size, bytes);
}

/* The short miss path (hierarchy_data_miss) fits a first data cache C of one core that is LRU
 * with a power-of-two number of sets (or one set), write-back and write-allocate, with its
 * per-way meta (it watches pending fills), above a last level that is LRU with a power-of-two
 * number of sets, write-back, its dirty bits in a word per set, and lines no smaller (a line
 * of C is inside one of its lines). */
void hierarchy_pick_quick(struct hierarchy *h, uint32_t n_cores)
{
	struct cache *c = h->dpath, *n = c->next;
	c->quick_miss = n_cores == 1 && c->cfg->repl == CACHE_LRU && (c->set_mask || c->sets == 1) &&
			c->front && !c->cfg->write_through && c->cfg->write_allocate && c->meta &&
			c->pend && n && n->last && n->cfg->repl == CACHE_LRU &&
			(n->set_mask || n->sets == 1) && n->front && n->dbits &&
			!n->cfg->write_through && n->line_shift >= c->line_shift;
}

/* hierarchy_data_miss's fill of C's line of ADDR from N, the last level: as level_ref there
 * (a fill never dirties: a write's fill request counts as a write), then the pin traffic. */
static void quick_fill(struct cachesim *cs, struct cache *c, struct cache *n, uint64_t addr,
		       uint32_t size, enum cache_op op)
{
	uint64_t line = addr >> n->line_shift, set = line & n->set_mask;
	size_t b = (size_t)set * n->assoc;
	long p = find_way(n, line, b);
	if (p >= 0) {
		if (p > (long)b) {
			move_front(n, b, (uint32_t)((size_t)p - b));
			n->front[set] = line;
		}
		count(n, op, 0);
		return;
	}
	install(cs, n, line, &b);
	count(n, op, 1);
	uint64_t bytes = 1ull << n->line_shift;
	if (op == OP_WRITE)
		mark_pending(cs, c, addr, size, bytes);
	else
		cachesim_add_traffic(cs, TRAFFIC_DMISS, bytes, cs->cur_chunk);
}

/* The usual D1 miss (c->quick_miss, one line, no pending fill: the inline paths then looked
 * at every way, so the line is not in C) without the general level code, which repeats that
 * search and goes through install, evict, writeback and level_ref's general cases: the last
 * way's line leaves (its dirt written back below: the line is marked dirty there, or crosses
 * the pins), the others move down one, the line comes in at the front with its meta entry,
 * then the fill from below. The same state changes, counts and traffic as hierarchy_access;
 * C changes before the write-back marks the level below, which touches no state of C. */
static inline void hierarchy_data_miss(struct cachesim *cs, struct cache *c, uint64_t addr,
				       uint32_t size, enum cache_op op)
{
	if (!size)
		size = 1;
	uint64_t line = addr >> c->line_shift;
	if (!c->quick_miss || c->n_pend || (addr + size - 1) >> c->line_shift != line) {
		hierarchy_access(cs, 0, c, addr, size, op);
		return;
	}
	struct cache *n = c->next;
	uint64_t set = line & c->set_mask;
	uint32_t a = c->assoc;
	size_t b = (size_t)set * a, last = b + a - 1;
	uint64_t victim = c->tags[last];
	/* no fill is pending (n_pend 0), so the victim has none to settle */
	struct way_meta *m = way_meta(c, b, last);
	uint64_t dirty = m->dirty;
	move_front(c, b, a - 1);	/* the victim's tag and meta entry come to the front */
	c->tags[b] = line;
	c->front[set] = line;
	bool wr = op == OP_WRITE || op == OP_MODIFY;
	*m = (struct way_meta){ .dirty = wr ? gran_mask(c, c->sub_shift, line, addr, size) : 0 };
	count(c, op, 1);
	if (victim != TAG_EMPTY && dirty) {
		c->st.writebacks++;
		uint64_t vl = (victim << c->line_shift) >> n->line_shift, vset = vl & n->set_mask;
		size_t vb = (size_t)vset * n->assoc;
		long w = find_way(n, vl, vb);
		if (w >= 0)
			n->dbits[vset] |= 1ull << ((size_t)w - vb);
		else
			cachesim_add_traffic(cs, TRAFFIC_DVICT,
					     (uint64_t)__builtin_popcountll(dirty) << c->sub_shift,
					     cs->cur_chunk);
	}
	quick_fill(cs, c, n, addr, size, op);
}

/* One call for a data reference that missed the front way: a hit below it, or the miss (the
 * miss path reuses no state of cache_lru_hit, but a second call per miss cost more). */
void cache_data_below_front(struct cachesim *cs, struct cache *c, uint64_t addr, uint32_t size,
			    enum cache_op op)
{
	if (!cache_lru_hit(c, addr, size, op))
		hierarchy_data_miss(cs, c, addr, size, op);
}

/* Out of line, as cache_lru_hit was before the data walks called cache_data_below_front: gcc
 * then keeps fetch_hit inlined in the fetch walks (it did not with cache_lru_hit inline). */
int cache_fetch_below_front(struct cache *c, uint64_t addr, uint32_t size)
{
	return cache_lru_hit(c, addr, size, OP_IFETCH);
}

uint32_t hierarchy_invalidate(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size)
{
	uint32_t dropped = 0;
	struct hierarchy *h = &cs->cores[core];
	for (uint32_t i = 0; i < cs->cfg.n_levels; i++) {
		struct cache *c = &h->caches[i];
		uint64_t l1 = addr >> c->line_shift, l2 = (addr + size - 1) >> c->line_shift;
		for (uint64_t l = l1; l <= l2; l++) {
			size_t b = set_base(c, l);
			for (uint32_t w = 0; w < c->assoc; w++) {
				if (c->tags[b + w] != l)
					continue;
				/* the writer's copy wins: no write-back; the empty way goes last */
				uint32_t rest = c->assoc - 1 - w;
				memmove(&c->tags[b + w], &c->tags[b + w + 1], rest * sizeof(*c->tags));
				c->tags[b + c->assoc - 1] = TAG_EMPTY;
				if (w == 0)
					front_changed(c, l & c->set_mask, b);
				if (c->meta) {
					uint32_t s = c->slot[b + w];
					resolve(cs, c, &c->meta[b + s], 0);
					memset(&c->meta[b + s], 0, sizeof(*c->meta));
					memmove(&c->slot[b + w], &c->slot[b + w + 1],
						rest * sizeof(*c->slot));
					c->slot[b + c->assoc - 1] = s;
				}
				if (c->dbits) {	/* positions above w move down one */
					uint64_t *d = set_dbits(c, b), below = (1ull << w) - 1;
					*d = (*d & below) | ((*d >> 1) & ~below);
				}
				c->st.invalidations++;
				dropped++;
			}
		}
	}
	return dropped;
}
