/* analysis/cachesim_coherence.c - private caches per core kept coherent by a pure invalidation
 * protocol (a write invalidates every other core's copy, as on Perl & Sites's AlphaServer 2100);
 * per line: invalidations, misses on lost copies, and which bytes each core wrote, from which
 * false sharing (different cores writing disjoint bytes of one line) is found. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cachesim_int.h"

struct coh_line {
	uint64_t line;
	uint64_t invalidations, coherence_misses;
	uint64_t lost;		/* cores whose copy was invalidated and not yet re-fetched */
	uint64_t writers;	/* cores that wrote it since tracking began */
	uint64_t *mask;		/* per core: written bytes (granules when lines exceed 64 B) */
	uint64_t *waddr;	/* per core: one written address */
};

static size_t coh_hash(uint64_t line, size_t cap)
{
	return (size_t)((line * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static struct coh_line *coh_find(struct cachesim *cs, uint64_t line)
{
	if (!cs->coh_cap)
		return NULL;
	for (size_t i = coh_hash(line, cs->coh_cap);; i = (i + 1) & (cs->coh_cap - 1)) {
		struct coh_line *l = cs->coh[i];
		if (!l || l->line == line)
			return l;
	}
}

static int coh_grow(struct cachesim *cs)
{
	size_t cap = cs->coh_cap ? cs->coh_cap * 2 : 256;
	struct coh_line **t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < cs->coh_cap; i++) {
		struct coh_line *l = cs->coh[i];
		if (!l)
			continue;
		size_t j = coh_hash(l->line, cap);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = l;
	}
	free(cs->coh);
	cs->coh = t;
	cs->coh_cap = cap;
	return 0;
}

static struct coh_line *coh_get(struct cachesim *cs, uint64_t line)
{
	struct coh_line *l = coh_find(cs, line);
	if (l)
		return l;
	if ((cs->coh_n + 1) * 2 > cs->coh_cap && coh_grow(cs))
		return NULL;
	l = calloc(1, sizeof(*l) + 2 * cs->n_cores * sizeof(uint64_t));
	if (!l)
		return NULL;
	l->line = line;
	l->mask = (uint64_t *)(l + 1);
	l->waddr = l->mask + cs->n_cores;
	size_t j = coh_hash(line, cs->coh_cap);
	while (cs->coh[j])
		j = (j + 1) & (cs->coh_cap - 1);
	cs->coh[j] = l;
	cs->coh_n++;
	return l;
}

static uint64_t byte_mask(uint32_t line_shift, uint64_t line, uint64_t addr, uint32_t size)
{
	uint32_t g = line_shift > 6 ? line_shift - 6 : 0;
	uint64_t lo = line << line_shift, hi = lo + (1ull << line_shift);
	uint64_t a = addr < lo ? lo : addr, b = addr + size > hi ? hi : addr + size;
	if (b <= a)
		return 0;
	uint32_t g0 = (uint32_t)((a - lo) >> g), g1 = (uint32_t)((b - 1 - lo) >> g);
	uint32_t n = g1 - g0 + 1;
	return (n >= 64 ? ~0ull : (1ull << n) - 1) << g0;
}

void coherence_write(struct cachesim *cs, uint32_t core, uint64_t addr, uint32_t size)
{
	if (!size)
		size = 1;
	uint64_t l1 = addr >> cs->coh_shift, l2 = (addr + size - 1) >> cs->coh_shift;
	for (uint64_t line = l1; line <= l2; line++) {
		uint64_t la = line << cs->coh_shift;
		uint32_t dropped = 0;
		uint64_t lost = 0;
		for (uint32_t k = 0; k < cs->n_cores; k++) {
			if (k == core)
				continue;
			uint32_t d = hierarchy_invalidate(cs, k, la, 1u << cs->coh_shift);
			if (d) {
				dropped += d;
				lost |= 1ull << (k & 63);
			}
		}
		struct coh_line *l = dropped ? coh_get(cs, line) : coh_find(cs, line);
		if (!l) {
			if (dropped)
				cs->oom = 1;
			continue;
		}
		l->invalidations += __builtin_popcountll(lost);
		l->lost |= lost;
		l->lost &= ~(1ull << (core & 63));
		if (!l->mask[core])
			l->waddr[core] = addr > la ? addr : la;
		l->mask[core] |= byte_mask(cs->coh_shift, line, addr, size);
		l->writers |= 1ull << (core & 63);
	}
}

void coherence_miss(struct cachesim *cs, uint32_t core, uint64_t addr)
{
	struct coh_line *l = coh_find(cs, addr >> cs->coh_shift);
	if (l && (l->lost & (1ull << (core & 63)))) {
		l->coherence_misses++;
		l->lost &= ~(1ull << (core & 63));
	}
}

void coherence_free(struct cachesim *cs)
{
	for (size_t i = 0; i < cs->coh_cap; i++)
		free(cs->coh[i]);
	free(cs->coh);
	cs->coh = NULL;
	cs->coh_cap = cs->coh_n = 0;
}

static int shared_cmp(const void *a, const void *b)
{
	const struct cache_shared_line *x = a, *y = b;
	if (x->invalidations != y->invalidations)
		return x->invalidations > y->invalidations ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Written by at least two cores, and some two writers never wrote a common byte. */
static void classify(const struct cachesim *cs, const struct coh_line *l,
		     struct cache_shared_line *o)
{
	uint32_t first = UINT32_MAX;
	for (uint32_t a = 0; a < cs->n_cores; a++) {
		if (!l->mask[a])
			continue;
		o->writers++;
		if (first == UINT32_MAX)
			first = a;
		for (uint32_t b = a + 1; b < cs->n_cores; b++)
			if (l->mask[b] && !(l->mask[a] & l->mask[b]) && !o->false_sharing) {
				o->false_sharing = true;
				o->first_write[0] = l->waddr[a];
				o->first_write[1] = l->waddr[b];
			}
	}
	if (!o->false_sharing && first != UINT32_MAX)
		o->first_write[0] = o->first_write[1] = l->waddr[first];
}

int cachesim_shared_lines(const struct cachesim *cs, struct cache_shared_line **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!cs->coh_n)
		return 0;
	struct cache_shared_line *v = calloc(cs->coh_n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < cs->coh_cap; i++) {
		const struct coh_line *l = cs->coh[i];
		if (!l || !l->invalidations)
			continue;
		struct cache_shared_line *o = &v[k++];
		o->line = l->line << cs->coh_shift;
		o->invalidations = l->invalidations;
		o->coherence_misses = l->coherence_misses;
		classify(cs, l, o);
	}
	qsort(v, k, sizeof(*v), shared_cmp);
	*out = v;
	*n = k;
	return 0;
}
