/* profile/profile.c - the in-memory profile: interned images and events, a hash table of
 * (image, event, offset) -> hits, unknown samples by reason, and deduplicated call stacks
 * (tasks, detail rows and spans are profile_detail.c's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "profile/profile_int.h"

static const char *const unknown_names[SPENT_PROFILE_UNK_NR] = {
	"no-mapping", "process-gone", "jit", "kernel", "lost", "throttled",
};

const char *spent_profile_unknown_reason_name(enum spent_profile_unknown_reason r)
{
	return (unsigned)r < SPENT_PROFILE_UNK_NR ? unknown_names[r] : "invalid";
}

struct spent_profile *spent_profile_new(void)
{
	return calloc(1, sizeof(struct spent_profile));
}

void spent_profile_free(struct spent_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nimages; i++)
		free(p->images[i].pub.path);
	for (size_t i = 0; i < p->nevents; i++)
		free(p->events[i].pub.name);
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->images);
	free(p->events);
	free(p->cells);
	free(p->stacks);
	free(p->stack_index);
	profile_detail_release(&p->detail);
	free(p);
}

static uint64_t image_hash(const struct spent_profile_image *img)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, &img->id_kind, 1);
	h = binio_fnv64(h, img->id, img->id_len);
	return binio_fnv64(h, img->path, strlen(img->path));
}

int spent_profile_image_intern(struct spent_profile *p, const struct spent_profile_image *img, uint32_t *idx)
{
	if (!img->path || !img->path[0] || strlen(img->path) >= SPENT_PROFILE_PATH_MAX ||
	    img->id_len > SPENT_PROFILE_ID_MAX || img->id_kind > SPENT_PROFILE_ID_HASH)
		return -EINVAL;
	uint64_t h = image_hash(img);
	for (size_t i = 0; i < p->nimages; i++) {
		const struct image_slot *s = &p->images[i];
		if (s->hash == h && s->pub.id_kind == img->id_kind &&
		    s->pub.id_len == img->id_len && !memcmp(s->pub.id, img->id, img->id_len) &&
		    !strcmp(s->pub.path, img->path)) {
			*idx = (uint32_t)i;
			return 0;
		}
	}
	if (p->nimages >= SPENT_PROFILE_NO_IMAGE - 1)
		return -ENOSPC;
	if (ALLOC_GROW(p->images, p->nimages + 1, p->capimages))
		return -ENOMEM;
	struct image_slot *s = &p->images[p->nimages];
	memset(s, 0, sizeof(*s));
	s->pub = *img;
	s->pub.path = strdup(img->path);
	if (!s->pub.path)
		return -ENOMEM;
	s->hash = h;
	*idx = (uint32_t)p->nimages++;
	return 0;
}

int spent_profile_event_intern(struct spent_profile *p, const char *name, uint64_t period, uint32_t flags,
			 uint32_t *idx)
{
	if (!name || !name[0] || strlen(name) >= SPENT_PROFILE_EVENT_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < p->nevents; i++) {
		const struct spent_profile_event *e = &p->events[i].pub;
		if (e->period == period && e->flags == flags && !strcmp(e->name, name)) {
			*idx = (uint32_t)i;
			return 0;
		}
	}
	if (p->nevents >= 65535)
		return -ENOSPC;
	if (ALLOC_GROW(p->events, p->nevents + 1, p->capevents))
		return -ENOMEM;
	struct event_slot *s = &p->events[p->nevents];
	memset(s, 0, sizeof(*s));
	s->pub.name = strdup(name);
	if (!s->pub.name)
		return -ENOMEM;
	s->pub.period = period;
	s->pub.flags = flags;
	*idx = (uint32_t)p->nevents++;
	return 0;
}

size_t spent_profile_nimages(const struct spent_profile *p) { return p->nimages; }
size_t spent_profile_nevents(const struct spent_profile *p) { return p->nevents; }
size_t spent_profile_ncells(const struct spent_profile *p) { return p->ncells; }
size_t spent_profile_nstacks(const struct spent_profile *p) { return p->nstacks; }

const struct spent_profile_image *spent_profile_image_get(const struct spent_profile *p, uint32_t idx)
{
	return idx < p->nimages ? &p->images[idx].pub : NULL;
}

const struct spent_profile_event *spent_profile_event_get(const struct spent_profile *p, uint32_t idx)
{
	return idx < p->nevents ? &p->events[idx].pub : NULL;
}

int spent_profile_event_find(const struct spent_profile *p, const char *name)
{
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < p->nevents; i++)
		if (!strcmp(p->events[i].pub.name, name))
			return (int)i;
	return -ENOENT;
}

static uint64_t cell_hash(uint32_t img, uint32_t ev, uint64_t off)
{
	uint64_t h = off * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)img << 16 | ev) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

static struct cell *cell_slot(struct cell *cells, size_t cap, uint32_t img, uint32_t ev,
			      uint64_t off)
{
	size_t mask = cap - 1, i = cell_hash(img, ev, off) & mask;
	while (cells[i].count && !(cells[i].img == img && cells[i].ev == ev && cells[i].off == off))
		i = (i + 1) & mask;
	return &cells[i];
}

static int cells_rehash(struct spent_profile *p)
{
	size_t ncap = p->capcells ? p->capcells * 2 : 1024;
	struct cell *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < p->capcells; i++) {
		const struct cell *c = &p->cells[i];
		if (c->count)
			*cell_slot(n, ncap, c->img, c->ev, c->off) = *c;
	}
	free(p->cells);
	p->cells = n;
	p->capcells = ncap;
	return 0;
}

int spent_profile_add(struct spent_profile *p, uint32_t img, uint64_t offset, uint32_t ev, uint64_t count)
{
	if (img >= p->nimages || ev >= p->nevents)
		return -EINVAL;
	if (!count)
		return 0;
	if (!profile_sum_fits(p->events[ev].counted, count))
		return -EOVERFLOW;
	if ((p->ncells + 1) * 4 > p->capcells * 3 && cells_rehash(p))
		return -ENOMEM;
	struct cell *c = cell_slot(p->cells, p->capcells, img, ev, offset);
	if (!c->count) {
		c->img = img;
		c->ev = ev;
		c->off = offset;
		p->ncells++;
	}
	c->count += count;
	p->events[ev].counted += count;
	return 0;
}

int spent_profile_add_unknown(struct spent_profile *p, enum spent_profile_unknown_reason why, uint32_t ev,
			uint64_t count)
{
	if (ev >= p->nevents || (unsigned)why >= SPENT_PROFILE_UNK_NR)
		return -EINVAL;
	if (!profile_sum_fits(p->events[ev].counted, count))
		return -EOVERFLOW;
	p->events[ev].unknown[why] += count;
	p->events[ev].counted += count;
	return 0;
}

static uint64_t stack_hash(uint32_t ev, const struct spent_profile_frame *f, size_t n)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, &ev, sizeof(ev));
	for (size_t i = 0; i < n; i++) {
		h = binio_fnv64(h, &f[i].image, sizeof(f[i].image));
		h = binio_fnv64(h, &f[i].offset, sizeof(f[i].offset));
	}
	return h;
}

static bool stack_equal(const struct stack *s, uint32_t ev, const struct spent_profile_frame *f,
			size_t n)
{
	if (s->ev != ev || s->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->frames[i].image != f[i].image || s->frames[i].offset != f[i].offset)
			return false;
	return true;
}

static int stack_index_rebuild(struct spent_profile *p)
{
	size_t ncap = p->capindex ? p->capindex * 2 : 256;
	uint32_t *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		size_t j = p->stacks[i].hash & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = (uint32_t)i + 1;
	}
	free(p->stack_index);
	p->stack_index = n;
	p->capindex = ncap;
	return 0;
}

int spent_profile_add_stack(struct spent_profile *p, uint32_t ev, const struct spent_profile_frame *frames,
		      size_t n, uint64_t count)
{
	if (ev >= p->nevents || n == 0 || n > 1024)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (frames[i].image != SPENT_PROFILE_NO_IMAGE && frames[i].image >= p->nimages)
			return -EINVAL;
	if (!count)
		return 0;
	if (!profile_sum_fits(p->events[ev].stacked, count))
		return -EOVERFLOW;
	if ((p->nstacks + 1) * 2 > p->capindex && stack_index_rebuild(p))
		return -ENOMEM;
	uint64_t h = stack_hash(ev, frames, n);
	size_t mask = p->capindex - 1, j = h & mask;
	for (; p->stack_index[j]; j = (j + 1) & mask) {
		struct stack *s = &p->stacks[p->stack_index[j] - 1];
		if (s->hash == h && stack_equal(s, ev, frames, n)) {
			s->count += count;
			p->events[ev].stacked += count;
			return 0;
		}
	}
	if (p->nstacks >= UINT32_MAX - 1)
		return -ENOSPC;
	if (ALLOC_GROW(p->stacks, p->nstacks + 1, p->capstacks))
		return -ENOMEM;
	struct stack *s = &p->stacks[p->nstacks];
	s->frames = malloc(n * sizeof(*frames));
	if (!s->frames)
		return -ENOMEM;
	memcpy(s->frames, frames, n * sizeof(*frames));
	s->ev = ev;
	s->n = (uint32_t)n;
	s->count = count;
	s->hash = h;
	p->stack_index[j] = (uint32_t)++p->nstacks;
	p->events[ev].stacked += count;
	return 0;
}

int spent_profile_stack_get(const struct spent_profile *p, size_t i, uint32_t *ev,
		      const struct spent_profile_frame **frames, size_t *nframes, uint64_t *count)
{
	if (i >= p->nstacks)
		return -EINVAL;
	const struct stack *s = &p->stacks[i];
	*ev = s->ev;
	*frames = s->frames;
	*nframes = s->n;
	*count = s->count;
	return 0;
}

int spent_profile_stack_next(const struct spent_profile *p, uint32_t ev, size_t *i,
		       const struct spent_profile_frame **frames, size_t *nframes, uint64_t *count)
{
	for (; *i < p->nstacks; (*i)++) {
		const struct stack *s = &p->stacks[*i];
		if (s->ev != ev)
			continue;
		*frames = s->frames;
		*nframes = s->n;
		*count = s->count;
		(*i)++;
		return 1;
	}
	return 0;
}

/* Map every image and event of SRC to DST's indices (new arrays the caller frees). */
static int merge_maps(struct spent_profile *dst, const struct spent_profile *src, uint32_t **imap,
		      uint32_t **emap)
{
	*imap = calloc(src->nimages + 1, sizeof(uint32_t));
	*emap = calloc(src->nevents + 1, sizeof(uint32_t));
	if (!*imap || !*emap)
		return -ENOMEM;
	for (size_t i = 0; i < src->nimages; i++) {
		int err = spent_profile_image_intern(dst, &src->images[i].pub, &(*imap)[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < src->nevents; i++) {
		const struct spent_profile_event *e = &src->events[i].pub;
		int err = spent_profile_event_intern(dst, e->name, e->period, e->flags, &(*emap)[i]);
		if (err)
			return err;
	}
	return 0;
}

/* Whether every sum of DST's events (struct event_slot) still fits with SRC's added: checked
 * before the merge touches DST, so that a merge that would wrap one leaves DST as it was. */
static bool merge_fits(const struct spent_profile *dst, const struct spent_profile *src)
{
	for (size_t i = 0; i < src->nevents; i++) {
		const struct event_slot *s = &src->events[i];
		for (size_t j = 0; j < dst->nevents; j++) {
			const struct event_slot *d = &dst->events[j];
			if (d->pub.period != s->pub.period || d->pub.flags != s->pub.flags ||
			    strcmp(d->pub.name, s->pub.name))
				continue;
			if (!profile_sum_fits(d->counted, s->counted) || !profile_sum_fits(d->stacked, s->stacked) ||
			    !profile_sum_fits(d->detailed, s->detailed))
				return false;
			break;	/* events are interned: there is no second match */
		}
	}
	return true;
}

int spent_profile_merge(struct spent_profile *dst, const struct spent_profile *src)
{
	uint32_t *imap = NULL, *emap = NULL;
	struct spent_profile_frame *fr = NULL;
	if (!merge_fits(dst, src))
		return -EOVERFLOW;
	int err = merge_maps(dst, src, &imap, &emap);
	if (err)
		goto out;
	for (size_t i = 0; i < src->capcells; i++) {
		const struct cell *c = &src->cells[i];
		if (c->count && (err = spent_profile_add(dst, imap[c->img], c->off, emap[c->ev], c->count)))
			goto out;
	}
	for (size_t e = 0; e < src->nevents; e++)
		for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
			if ((err = spent_profile_add_unknown(dst, r, emap[e], src->events[e].unknown[r])))
				goto out;
	fr = malloc(1024 * sizeof(*fr));
	if (!fr) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < src->nstacks; i++) {
		const struct stack *s = &src->stacks[i];
		for (size_t k = 0; k < s->n; k++) {
			fr[k].image = s->frames[k].image == SPENT_PROFILE_NO_IMAGE ? SPENT_PROFILE_NO_IMAGE
									     : imap[s->frames[k].image];
			fr[k].offset = s->frames[k].offset;
		}
		if ((err = spent_profile_add_stack(dst, emap[s->ev], fr, s->n, s->count)))
			goto out;
	}
	err = profile_detail_merge(dst, src, imap, emap, UINT32_MAX);
out:
	free(fr);
	free(imap);
	free(emap);
	return err;
}

static int count_cmp(const void *a, const void *b)
{
	const struct spent_profile_count *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int spent_profile_counts(const struct spent_profile *p, uint32_t img, uint32_t ev,
		   struct spent_profile_count **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (img >= p->nimages || ev >= p->nevents)
		return -EINVAL;
	size_t k = 0;
	for (size_t i = 0; i < p->capcells; i++)
		if (p->cells[i].count && p->cells[i].img == img && p->cells[i].ev == ev)
			k++;
	if (!k)
		return 0;
	struct spent_profile_count *a = malloc(k * sizeof(*a));
	if (!a)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < p->capcells; i++) {
		const struct cell *c = &p->cells[i];
		if (c->count && c->img == img && c->ev == ev) {
			a[k].offset = c->off;
			a[k].count = c->count;
			k++;
		}
	}
	qsort(a, k, sizeof(*a), count_cmp);
	*out = a;
	*n = k;
	return 0;
}

uint64_t spent_profile_image_total(const struct spent_profile *p, uint32_t img, uint32_t ev)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->capcells; i++)
		if (p->cells[i].count && p->cells[i].img == img && p->cells[i].ev == ev)
			t += p->cells[i].count;
	return t;
}

uint64_t spent_profile_unknown_count(const struct spent_profile *p, uint32_t ev,
			       enum spent_profile_unknown_reason why)
{
	if (ev >= p->nevents || (unsigned)why >= SPENT_PROFILE_UNK_NR)
		return 0;
	return p->events[ev].unknown[why];
}

uint64_t spent_profile_event_total(const struct spent_profile *p, uint32_t ev)
{
	if (ev >= p->nevents)
		return 0;
	uint64_t t = 0;
	for (size_t i = 0; i < p->capcells; i++)
		if (p->cells[i].count && p->cells[i].ev == ev)
			t += p->cells[i].count;
	for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
		if (r != SPENT_PROFILE_UNK_LOST && r != SPENT_PROFILE_UNK_THROTTLED)
			t += p->events[ev].unknown[r];
	return t;
}

int spent_profile_foreach_pair(const struct spent_profile *p, spent_profile_pair_fn fn, void *ctx)
{
	size_t np = p->nimages * p->nevents;
	if (!np)
		return 0;
	uint8_t *seen = calloc(np, 1);
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < p->capcells; i++)
		if (p->cells[i].count)
			seen[(size_t)p->cells[i].img * p->nevents + p->cells[i].ev] = 1;
	int err = 0;
	for (size_t k = 0; k < np && !err; k++)
		if (seen[k])
			err = fn(ctx, (uint32_t)(k / p->nevents), (uint32_t)(k % p->nevents));
	free(seen);
	return err;
}
