/* analysis/hitcurve.c - one-pass hit curves. Direct-mapped: one tag array per size, checked
 * smallest first (power-of-two direct-mapped caches are inclusive, so the first hit ends the
 * walk). Fully-associative LRU: exact stack distances; the top few lines of the stack are an
 * explicit most-recent-first list, the rest carry a demotion time in a Fenwick tree, so a
 * line's distance is the list length plus the lines demoted after it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hitcurve.h"
#include "core/hashtab.h"

#define TOPK 8
#define NO_TIME UINT64_MAX

struct hc_slot {
	uint64_t line;		/* line number + 1: the key (core/hashtab.h) */
	uint64_t time;		/* Fenwick slot, or NO_TIME while in the top list */
};

struct hitcurve {
	struct hitcurve_config cfg;
	uint32_t line_shift;
	size_t n_sizes;
	uint64_t *dm[HITCURVE_MAX_SIZES];	/* tag arrays (line+1, 0 empty) */
	uint64_t dm_mask[HITCURVE_MAX_SIZES];
	uint64_t dm_hits[HC_NSTREAMS][HITCURVE_MAX_SIZES + 1];
	uint64_t lru_hist[HC_NSTREAMS][HITCURVE_MAX_SIZES + 1];	/* by smallest size that hits */
	uint64_t refs[HC_NSTREAMS];
	uint64_t insns;
	uint64_t last_line;	/* most recent line + 1: hits everywhere */
	/* LRU */
	uint64_t top[TOPK];	/* line+1, most recent first */
	size_t n_top;
	struct hashtab map;	/* line + 1 -> struct hc_slot: every line seen */
	uint32_t *fen;		/* Fenwick tree over demotion times, 1-based */
	size_t fen_cap;		/* slots */
	uint64_t now;		/* next demotion time */
	uint64_t fen_count;	/* lines in the tree */
	uint32_t min_shift;	/* log2(min lines) */
};

static uint32_t log2u(uint64_t v)
{
	uint32_t s = 0;
	while ((1ull << s) < v)
		s++;
	return s;
}

int hitcurve_new(const struct hitcurve_config *cfg, struct hitcurve **out)
{
	const struct hitcurve_config c = *cfg;
	if (!c.line || (c.line & (c.line - 1)) || !c.min || (c.min & (c.min - 1)) || !c.max ||
	    (c.max & (c.max - 1)) || c.min > c.max || c.min < c.line || c.max > (1ull << 34))
		return -EINVAL;
	struct hitcurve *hc = calloc(1, sizeof(*hc));
	if (!hc)
		return -ENOMEM;
	hc->cfg = c;
	hc->line_shift = log2u(c.line);
	hc->n_sizes = log2u(c.max) - log2u(c.min) + 1;
	if (hc->n_sizes > HITCURVE_MAX_SIZES)
		goto inval;
	hc->min_shift = log2u(c.min) - hc->line_shift;
	for (size_t k = 0; k < hc->n_sizes; k++) {
		uint64_t lines = (c.min << k) >> hc->line_shift;
		hc->dm[k] = calloc(lines, sizeof(uint64_t));
		if (!hc->dm[k])
			goto nomem;
		hc->dm_mask[k] = lines - 1;
	}
	hc->map = (struct hashtab)HASHTAB_INIT(struct hc_slot);
	hc->fen_cap = 1 << 16;
	hc->fen = calloc(hc->fen_cap + 1, sizeof(*hc->fen));
	if (!hc->fen)
		goto nomem;
	*out = hc;
	return 0;
inval:
	hitcurve_free(hc);
	return -EINVAL;
nomem:
	hitcurve_free(hc);
	return -ENOMEM;
}

void hitcurve_free(struct hitcurve *hc)
{
	if (!hc)
		return;
	for (size_t k = 0; k < HITCURVE_MAX_SIZES; k++)
		free(hc->dm[k]);
	hashtab_release(&hc->map);
	free(hc->fen);
	free(hc);
}

static inline void fen_add(struct hitcurve *hc, uint64_t t, int d)
{
	for (size_t i = (size_t)t + 1; i <= hc->fen_cap; i += i & -i)
		hc->fen[i] += (uint32_t)d;
}

static inline uint64_t fen_prefix(const struct hitcurve *hc, uint64_t t)	/* slots 0..t */
{
	uint64_t s = 0;
	for (size_t i = (size_t)t + 1; i; i -= i & -i)
		s += hc->fen[i];
	return s;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct hc_slot *x = *(struct hc_slot *const *)a, *y = *(struct hc_slot *const *)b;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* Times ran out: renumber the demoted lines 0..n-1 in order, growing the tree if needed. */
static int fen_compact(struct hitcurve *hc)
{
	int err = 0;
	struct hc_slot **v = malloc((hc->fen_count + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	struct hc_slot *s;
	for (size_t pos = 0; (s = hashtab_next(&hc->map, &pos));)
		if (s->time != NO_TIME)
			v[n++] = s;
	qsort(v, n, sizeof(*v), slot_cmp);
	size_t cap = hc->fen_cap;
	while (n * 2 > cap)
		cap *= 2;
	if (cap != hc->fen_cap) {
		uint32_t *f = realloc(hc->fen, (cap + 1) * sizeof(*f));
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
		hc->fen = f;
		hc->fen_cap = cap;
	}
	memset(hc->fen, 0, (hc->fen_cap + 1) * sizeof(*hc->fen));
	for (size_t i = 0; i < n; i++) {
		v[i]->time = i;
		hc->fen[i + 1] = 1;
	}
	for (size_t i = 1; i <= hc->fen_cap; i++) {	/* linear-time build */
		size_t j = i + (i & -i);
		if (j <= hc->fen_cap)
			hc->fen[j] += hc->fen[i];
	}
	hc->now = n;
out:
	free(v);
	return err;
}

/* smallest size index k with dist < lines(k) = 2^(min_shift+k); n_sizes when none */
static inline size_t lru_index(const struct hitcurve *hc, uint64_t dist)
{
	uint32_t k = 0;
	if (dist >= (1ull << hc->min_shift))
		k = (64 - (uint32_t)__builtin_clzll(dist)) - hc->min_shift;
	return k < hc->n_sizes ? k : hc->n_sizes;
}

/* The line that fell off the top list is demoted into the tree at time now. */
static int demote(struct hitcurve *hc, uint64_t out)
{
	if (hc->now >= hc->fen_cap) {
		int err = fen_compact(hc);
		if (err)
			return err;
	}
	struct hc_slot *s = hashtab_find(&hc->map, out);	/* in the map since first touched */
	s->time = hc->now++;
	fen_add(hc, s->time, 1);
	hc->fen_count++;
	return 0;
}

/* Access KEY; *K gets the smallest size index holding it (n_sizes: none). */
static int lru_access(struct hitcurve *hc, uint64_t key, size_t *k)
{
	/* one pass puts KEY in front and shifts the list down by one until KEY's old place: no
	 * separate search and move (and no library call for a few words) */
	uint64_t cur = key;
	for (size_t p = 0; p < hc->n_top; p++) {
		uint64_t t = hc->top[p];
		hc->top[p] = cur;
		if (t == key) {
			*k = lru_index(hc, p);
			return 0;
		}
		cur = t;
	}
	/* not in the list: CUR is its old last line, which falls off when the list is full */
	if (hc->n_top < TOPK) {
		hc->top[hc->n_top++] = cur;
		cur = 0;
	}
	struct hc_slot *s;
	int isnew = hashtab_insert(&hc->map, key, (void **)&s);
	if (isnew < 0)
		return isnew;
	if (isnew) {	/* first touch: a miss at every size */
		s->time = NO_TIME;
		*k = hc->n_sizes;
	} else {
		uint64_t newer = hc->fen_count - fen_prefix(hc, s->time);
		*k = lru_index(hc, TOPK + newer);
		fen_add(hc, s->time, -1);
		hc->fen_count--;
		s->time = NO_TIME;
	}
	return cur ? demote(hc, cur) : 0;
}

/* smallest size index whose direct-mapped cache holds KEY (n_sizes: none) */
static inline size_t dm_access(struct hitcurve *hc, uint64_t key)
{
	for (size_t k = 0; k < hc->n_sizes; k++) {
		uint64_t *t = &hc->dm[k][(key - 1) & hc->dm_mask[k]];
		if (*t == key)	/* inclusion: hits in every larger size too */
			return k;
		*t = key;
	}
	return hc->n_sizes;
}

static inline int line_access(struct hitcurve *hc, uint64_t line, size_t *kdm, size_t *klru)
{
	uint64_t key = line + 1;
	if (key == hc->last_line) {
		*kdm = *klru = 0;
		return 0;
	}
	hc->last_line = key;
	*kdm = dm_access(hc, key);
	return lru_access(hc, key, klru);
}

/* A reference straddling two lines is one access that hits in a size only when both lines
 * do (cachegrind's rule), so per-instruction hits never exceed one. */
static inline int access_one(struct hitcurve *hc, int stream, uint64_t addr, uint32_t size)
{
	uint64_t l1 = addr >> hc->line_shift, l2 = (addr + (size ? size : 1) - 1) >> hc->line_shift;
	size_t d1, r1, d2, r2;
	int err = line_access(hc, l1, &d1, &r1);
	if (!err && l2 != l1) {
		err = line_access(hc, l2, &d2, &r2);
		d1 = d2 > d1 ? d2 : d1;
		r1 = r2 > r1 ? r2 : r1;
	}
	if (err)
		return err;
	hc->refs[stream]++;
	hc->dm_hits[stream][d1]++;
	hc->lru_hist[stream][r1]++;
	return 0;
}

int hitcurve_access(struct hitcurve *hc, int stream, uint64_t addr, uint32_t size)
{
	return access_one(hc, stream, addr, size);
}

int hitcurve_feed(struct hitcurve *hc, const struct spent_trace_batch *b)
{
	for (size_t i = 0; i < b->n_insns; i++) {
		const struct spent_trace_insn *in = &b->insns[i];
		hc->insns++;
		int err = access_one(hc, HC_ISTREAM, in->pc, in->len);
		for (uint32_t k = 0; !err && k < in->nrefs; k++) {
			const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
			err = access_one(hc, HC_DSTREAM, r->addr, r->size);
		}
		if (err)
			return err;
	}
	return 0;
}

void hitcurve_result(const struct hitcurve *hc, struct hitcurve_result *out)
{
	memset(out, 0, sizeof(*out));
	out->n_sizes = hc->n_sizes;
	out->instructions = hc->insns;
	for (int s = 0; s < HC_NSTREAMS; s++) {
		uint64_t dm = 0, lru = 0;
		out->refs[s] = hc->refs[s];
		for (size_t k = 0; k < hc->n_sizes; k++) {
			dm += hc->dm_hits[s][k];
			lru += hc->lru_hist[s][k];
			out->dm_hits[s][k] = dm;
			out->lru_hits[s][k] = lru;
			out->sizes[k] = hc->cfg.min << k;
		}
	}
}

double hitcurve_cpi(const struct hitcurve_result *r, int lru, const uint64_t *level_sizes,
		    const double *level_cycles, size_t n_levels, double mem_cycles)
{
	if (!r->instructions)
		return 0;
	double cycles = (double)r->instructions;
	for (int s = 0; s < HC_NSTREAMS; s++) {
		const uint64_t *h = lru ? r->lru_hits[s] : r->dm_hits[s];
		uint64_t prev = 0;
		for (size_t k = 0; k < r->n_sizes; k++) {
			double t = mem_cycles;
			for (size_t l = 0; l < n_levels; l++)
				if (r->sizes[k] <= level_sizes[l]) {
					t = level_cycles[l];
					break;
				}
			cycles += (double)(h[k] - prev) * t;
			prev = h[k];
		}
		cycles += (double)(r->refs[s] - prev) * mem_cycles;
	}
	return cycles / (double)r->instructions;
}
