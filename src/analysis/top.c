/* analysis/top.c - `spent top`'s sliding window: keys (comm, pid, image, function) with a ring
 * of per-interval counts, the strings they name interned once, keys that left the window
 * dropped at each tick, and the views (rows grouped by function, image, comm or process). */
#include "core/alloc.h"
#include "core/strmap.h"
#include "analysis/top.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define UNKNOWN "[unknown]"

struct top_key {
	const char *comm, *image, *function;	/* interned: equal names, equal pointers */
	pid_t pid;
	uint64_t window;	/* sum of the closed slots */
	uint64_t *slot;		/* [nslots]: the open one is t->cur */
};

struct top {
	struct symbols *sym;
	unsigned nslots;	/* closed intervals kept + the open one */
	unsigned cur;		/* the open slot */
	unsigned filled;
	uint64_t window, last;
	struct top_key *keys;
	size_t nkeys, capkeys;
	uint32_t *index;	/* open addressing: key index + 1, 0 empty */
	size_t capindex;
	struct strmap strs;	/* interned strings */
	size_t images_seen;	/* distinct image paths interned */
};

static const char *const view_names[TOP_NVIEWS] = { "functions", "images", "comms", "processes" };

const char *top_view_name(enum top_view v)
{
	return v < TOP_NVIEWS ? view_names[v] : "?";
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

/* S interned: kept until top_free (names repeat from interval to interval). NULL: no memory. */
static const char *intern(struct top *t, const char *s)
{
	size_t i;
	return strmap_intern(&t->strs, s, &i) < 0 ? NULL : strmap_key(&t->strs, i);
}

static uint64_t key_hash(const char *comm, pid_t pid, const char *image, const char *function)
{
	uint64_t h = mix(0, (uintptr_t)comm);

	h = mix(h, (uint64_t)(uint32_t)pid);
	h = mix(h, (uintptr_t)image);
	return mix(h, (uintptr_t)function);
}

/* Fill index NI (CAP slots, zeroed) with every key. */
static void index_fill(const struct top *t, uint32_t *ni, size_t cap)
{
	for (size_t k = 0; k < t->nkeys; k++) {
		const struct top_key *e = &t->keys[k];
		size_t j = key_hash(e->comm, e->pid, e->image, e->function) & (cap - 1);
		while (ni[j])
			j = (j + 1) & (cap - 1);
		ni[j] = (uint32_t)k + 1;
	}
}

static int index_rebuild(struct top *t, size_t cap)
{
	uint32_t *ni = calloc(cap, sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	index_fill(t, ni, cap);
	free(t->index);
	t->index = ni;
	t->capindex = cap;
	return 0;
}

int top_new(unsigned slots, struct symbols *sym, struct top **out)
{
	struct top *t;

	*out = NULL;
	if (slots < 1 || slots > 3600)
		return -EINVAL;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	t->sym = sym;
	t->nslots = slots + 1;
	if (index_rebuild(t, 1024)) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void top_free(struct top *t)
{
	if (!t)
		return;
	for (size_t k = 0; k < t->nkeys; k++)
		free(t->keys[k].slot);
	free(t->keys);
	free(t->index);
	strmap_release(&t->strs);
	free(t);
}

/* The key (COMM, PID, IMAGE, FUNCTION) of interned strings, created when new; NULL: no memory. */
static struct top_key *key_get(struct top *t, const char *comm, pid_t pid, const char *image,
			       const char *function)
{
	size_t j = key_hash(comm, pid, image, function) & (t->capindex - 1);

	for (; t->index[j]; j = (j + 1) & (t->capindex - 1)) {
		struct top_key *e = &t->keys[t->index[j] - 1];
		if (e->comm == comm && e->pid == pid && e->image == image && e->function == function)
			return e;
	}
	if (ALLOC_GROW(t->keys, t->nkeys + 1, t->capkeys))
		return NULL;
	struct top_key *e = &t->keys[t->nkeys];
	*e = (struct top_key){ .comm = comm, .pid = pid, .image = image, .function = function };
	if (!(e->slot = calloc(t->nslots, sizeof(*e->slot))))
		return NULL;
	t->index[j] = (uint32_t)++t->nkeys;
	if (t->nkeys * 2 > t->capindex && index_rebuild(t, t->capindex * 2))
		return NULL;	/* the key is in the old index still: nothing lost */
	return &t->keys[t->nkeys - 1];
}

int top_add(struct top *t, const char *comm, pid_t pid, const struct spent_profile_image *img,
	    uint64_t offset, uint64_t count)
{
	const char *c = comm ? intern(t, comm) : NULL;
	size_t strs_before = strmap_count(&t->strs);
	const char *image = intern(t, img ? img->path : UNKNOWN);
	const char *function = NULL;
	struct sym_info si = { 0 };

	if ((comm && !c) || !image)
		return -ENOMEM;
	if (img && strmap_count(&t->strs) > strs_before)
		t->images_seen++;
	if (img && symbols_lookup_name(t->sym, img, offset, &si) == 0 && si.name)
		function = intern(t, si.name);
	else
		function = intern(t, UNKNOWN);
	if (!function)
		return -ENOMEM;
	struct top_key *e = key_get(t, c, comm ? pid : -1, image, function);
	if (!e)
		return -ENOMEM;
	e->slot[t->cur] += count;
	return 0;
}

void top_tick(struct top *t)
{
	unsigned next = (t->cur + 1) % t->nslots;	/* the oldest closed slot: reused */
	size_t kept = 0;

	t->last = 0;
	for (size_t k = 0; k < t->nkeys; k++) {
		struct top_key *e = &t->keys[k];
		e->window += e->slot[t->cur];
		e->window -= e->slot[next];
		t->last += e->slot[t->cur];
		e->slot[next] = 0;
		if (e->window == 0) {	/* left the window: forgotten */
			free(e->slot);
			continue;
		}
		t->keys[kept++] = *e;
	}
	t->nkeys = kept;
	t->window = 0;
	for (size_t k = 0; k < t->nkeys; k++)
		t->window += t->keys[k].window;
	t->cur = next;
	if (t->filled < t->nslots - 1)
		t->filled++;
	/* keys moved: the same index refilled in place (no allocation that could fail) */
	memset(t->index, 0, t->capindex * sizeof(*t->index));
	index_fill(t, t->index, t->capindex);
}

size_t top_images_seen(const struct top *t)
{
	return t->images_seen;
}

void top_set_symbols(struct top *t, struct symbols *sym)
{
	t->sym = sym;
}

void top_get_stats(const struct top *t, struct top_stats *st)
{
	st->window = t->window;
	st->last = t->last;
	st->filled = t->filled;
	st->keys = t->nkeys;
}

static bool same_group(enum top_view v, const struct top_row *r, const struct top_key *e)
{
	switch (v) {
	case TOP_BY_FUNCTION:
		return r->function == e->function && r->image == e->image;
	case TOP_BY_IMAGE:
		return r->image == e->image;
	case TOP_BY_COMM:
		return r->comm == e->comm;
	default:
		return r->comm == e->comm && r->pid == e->pid;
	}
}

static uint64_t group_hash(enum top_view v, const struct top_key *e)
{
	switch (v) {
	case TOP_BY_FUNCTION:
		return mix(mix(0, (uintptr_t)e->function), (uintptr_t)e->image);
	case TOP_BY_IMAGE:
		return mix(0, (uintptr_t)e->image);
	case TOP_BY_COMM:
		return mix(0, (uintptr_t)e->comm);
	default:
		return mix(mix(0, (uintptr_t)e->comm), (uint64_t)(uint32_t)e->pid);
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	const char *nx, *ny;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	nx = x->function ? x->function : x->image ? x->image : x->comm ? x->comm : "";
	ny = y->function ? y->function : y->image ? y->image : y->comm ? y->comm : "";
	int c = strcmp(nx, ny);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

int top_rows(const struct top *t, enum top_view v, struct top_row **rows, size_t *n)
{
	size_t cap = 16, nrows = 0;
	struct top_row *r;
	uint32_t *idx;

	while (cap < t->nkeys * 2)
		cap *= 2;
	*rows = NULL;
	*n = 0;
	r = calloc(t->nkeys ? t->nkeys : 1, sizeof(*r));
	idx = calloc(cap, sizeof(*idx));
	if (!r || !idx) {
		free(r);
		free(idx);
		return -ENOMEM;
	}
	for (size_t k = 0; k < t->nkeys; k++) {
		const struct top_key *e = &t->keys[k];
		if (e->window == 0)
			continue;	/* only in the open interval so far */
		size_t j = group_hash(v, e) & (cap - 1);
		struct top_row *row = NULL;
		for (; idx[j]; j = (j + 1) & (cap - 1))
			if (same_group(v, &r[idx[j] - 1], e)) {
				row = &r[idx[j] - 1];
				break;
			}
		if (!row) {
			row = &r[nrows];
			idx[j] = (uint32_t)++nrows;
			*row = (struct top_row){
				.function = v == TOP_BY_FUNCTION ? e->function : NULL,
				.image = v <= TOP_BY_IMAGE ? e->image : NULL,
				.comm = e->comm, .pid = v == TOP_BY_PROCESS ? e->pid : -1,
			};
		} else if (v <= TOP_BY_IMAGE && row->comm != e->comm) {
			row->comm = NULL;	/* several processes' names */
		}
		row->count += e->window;
		row->last += e->slot[(t->cur + t->nslots - 1) % t->nslots];
	}
	free(idx);
	qsort(r, nrows, sizeof(*r), row_cmp);
	*rows = r;
	*n = nrows;
	return 0;
}
