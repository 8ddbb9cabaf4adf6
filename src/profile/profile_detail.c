/* profile/profile_detail.c - who and when in the in-memory profile: interned tasks (comm,
 * pid, tid, cgroup), interned call chains, detail rows (event, task, time bucket, chain) ->
 * count in a hash table (one spent_profile_add_detail per sample, so O(1) amortized), the time
 * bucket width, the wall-clock span, and their part of spent_profile_merge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "profile/profile_int.h"

#define MAX_DEPTH 1024

void profile_detail_release(struct profile_detail *d)
{
	for (size_t i = 0; i < d->ntasks; i++) {
		free(d->tasks[i].pub.comm);
		free(d->tasks[i].pub.cgroup);
	}
	free(d->tasks);
	free(d->task_index);
	free(d->frames);
	free(d->chains);
	free(d->chain_index);
	free(d->rows);
	free(d->row_index);
	memset(d, 0, sizeof(*d));
}

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* ---- open-addressing indexes: entry + 1 per slot, 0 = empty, load <= 1/2 --------------- */

typedef uint64_t (*entry_hash_fn)(const struct profile_detail *d, size_t i);

/* Make room in *INDEX for one more of N entries (rebuilt from HASH when it would pass 1/2). */
static int index_reserve(const struct profile_detail *d, uint32_t **index, size_t *cap, size_t n,
			 entry_hash_fn hash)
{
	if ((n + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 256;
	uint32_t *x = calloc(ncap, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j = hash(d, i) & (ncap - 1);
		while (x[j])
			j = (j + 1) & (ncap - 1);
		x[j] = (uint32_t)i + 1;
	}
	free(*index);
	*index = x;
	*cap = ncap;
	return 0;
}

/* ---- tasks ---------------------------------------------------------------------------- */

static uint64_t task_hash_of(const struct spent_profile_task *t, const char *cgroup)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, t->comm, strlen(t->comm) + 1);
	h = binio_fnv64(h, &t->pid, sizeof(t->pid));
	h = binio_fnv64(h, &t->tid, sizeof(t->tid));
	return cgroup ? binio_fnv64(h, cgroup, strlen(cgroup) + 1) : h;
}

static uint64_t task_entry_hash(const struct profile_detail *d, size_t i)
{
	return d->tasks[i].hash;
}

static bool str_eq_null(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

int spent_profile_task_intern(struct spent_profile *p, const struct spent_profile_task *t, uint32_t *idx)
{
	struct profile_detail *d = &p->detail;
	if (!t || !t->comm || strlen(t->comm) >= SPENT_PROFILE_COMM_MAX ||
	    (t->cgroup && strlen(t->cgroup) >= SPENT_PROFILE_PATH_MAX))
		return -EINVAL;
	/* "" and NULL both mean "no cgroup": one identity, and files need not tell them apart */
	const char *cg = t->cgroup && t->cgroup[0] ? t->cgroup : NULL;
	uint64_t h = task_hash_of(t, cg);
	if (index_reserve(d, &d->task_index, &d->cap_task_index, d->ntasks, task_entry_hash))
		return -ENOMEM;
	size_t mask = d->cap_task_index - 1, j = h & mask;
	for (; d->task_index[j]; j = (j + 1) & mask) {
		const struct task_slot *s = &d->tasks[d->task_index[j] - 1];
		if (s->hash == h && s->pub.pid == t->pid && s->pub.tid == t->tid &&
		    !strcmp(s->pub.comm, t->comm) && str_eq_null(s->pub.cgroup, cg)) {
			*idx = d->task_index[j] - 1;
			return 0;
		}
	}
	if (d->ntasks >= SPENT_PROFILE_NO_TASK - 1)
		return -ENOSPC;
	if (ALLOC_GROW(d->tasks, d->ntasks + 1, d->captasks))
		return -ENOMEM;
	struct task_slot *s = &d->tasks[d->ntasks];
	memset(s, 0, sizeof(*s));
	s->pub.pid = t->pid;
	s->pub.tid = t->tid;
	s->pub.comm = strdup(t->comm);
	s->pub.cgroup = cg ? strdup(cg) : NULL;
	if (!s->pub.comm || (cg && !s->pub.cgroup)) {
		free(s->pub.comm);
		free(s->pub.cgroup);
		return -ENOMEM;
	}
	s->hash = h;
	d->task_index[j] = (uint32_t)++d->ntasks;
	*idx = (uint32_t)d->ntasks - 1;
	return 0;
}

size_t spent_profile_ntasks(const struct spent_profile *p)
{
	return p->detail.ntasks;
}

const struct spent_profile_task *spent_profile_task_get(const struct spent_profile *p, uint32_t idx)
{
	return idx < p->detail.ntasks ? &p->detail.tasks[idx].pub : NULL;
}

/* ---- time buckets and spans ------------------------------------------------------------ */

int spent_profile_set_time_bucket(struct spent_profile *p, uint64_t bucket_ns)
{
	if (!bucket_ns)
		return -EINVAL;
	p->detail.bucket_ns = bucket_ns;
	return 0;
}

uint64_t spent_profile_time_bucket(const struct spent_profile *p)
{
	return p->detail.bucket_ns ? p->detail.bucket_ns : SPENT_PROFILE_TIME_BUCKET_NS;
}

static uint64_t bucket_floor(uint64_t t, uint64_t width)
{
	return t - t % width;
}

void spent_profile_extend_span(struct spent_profile *p, uint64_t start_ns, uint64_t end_ns)
{
	struct profile_detail *d = &p->detail;
	/* one known end stands for both; reversed ends are the same interval */
	if (!start_ns)
		start_ns = end_ns;
	if (!end_ns)
		end_ns = start_ns;
	if (!start_ns)
		return;
	if (start_ns > end_ns) {
		uint64_t t = start_ns;
		start_ns = end_ns;
		end_ns = t;
	}
	if (!d->span_start || start_ns < d->span_start)
		d->span_start = start_ns;
	if (end_ns > d->span_end)
		d->span_end = end_ns;
}

void spent_profile_span(const struct spent_profile *p, uint64_t *start_ns, uint64_t *end_ns)
{
	*start_ns = p->detail.span_start;
	*end_ns = p->detail.span_end;
}

/* ---- call chains ----------------------------------------------------------------------- */

static uint64_t chain_hash(const struct spent_profile_frame *f, size_t n)
{
	uint64_t h = n;
	for (size_t i = 0; i < n; i++)
		h = mix64(h ^ f[i].offset) + f[i].image;
	return mix64(h);
}

static uint64_t chain_entry_hash(const struct profile_detail *d, size_t i)
{
	return d->chains[i].hash;
}

int profile_detail_chain_intern(struct profile_detail *d, const struct spent_profile_frame *f, size_t n,
				uint32_t *idx)
{
	uint64_t h = chain_hash(f, n);
	if (index_reserve(d, &d->chain_index, &d->cap_chain_index, d->nchains, chain_entry_hash))
		return -ENOMEM;
	size_t mask = d->cap_chain_index - 1, j = h & mask;
	for (; d->chain_index[j]; j = (j + 1) & mask) {
		const struct detail_chain *c = &d->chains[d->chain_index[j] - 1];
		const struct spent_profile_frame *cf = d->frames + c->off;
		if (c->hash != h || c->n != n)
			continue;
		size_t k = 0;
		while (k < n && cf[k].image == f[k].image && cf[k].offset == f[k].offset)
			k++;
		if (k == n) {
			*idx = d->chain_index[j] - 1;
			return 0;
		}
	}
	if (d->nchains >= UINT32_MAX - 1)
		return -ENOSPC;
	if (ALLOC_GROW(d->chains, d->nchains + 1, d->capchains) ||
	    ALLOC_GROW(d->frames, d->nframes + n, d->capframes))
		return -ENOMEM;
	memcpy(d->frames + d->nframes, f, n * sizeof(*f));
	d->chains[d->nchains] = (struct detail_chain){ .hash = h, .off = d->nframes, .n = (uint32_t)n };
	d->nframes += n;
	d->chain_index[j] = (uint32_t)++d->nchains;
	*idx = (uint32_t)d->nchains - 1;
	return 0;
}

/* ---- rows ------------------------------------------------------------------------------ */

static uint64_t row_hash(uint32_t ev, uint32_t task, uint64_t time, uint32_t chain)
{
	return mix64(time ^ mix64(((uint64_t)task << 32 | chain) ^ ((uint64_t)ev << 48)));
}

/* Make room in the row index for one more row: rebuilt from the rows at load 1/2. */
static int row_index_reserve(struct profile_detail *d)
{
	if ((d->nrows + 1) * 2 <= d->cap_row_index)
		return 0;
	size_t ncap = d->cap_row_index ? d->cap_row_index * 2 : 1024, mask = ncap - 1;
	uint64_t *x = calloc(ncap, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		uint64_t h = row_hash(r->ev, r->task, r->time, r->chain);
		size_t j = h & mask;
		while (x[j])
			j = (j + 1) & mask;
		x[j] = (h >> 32 << 32) | (i + 1);
	}
	free(d->row_index);
	d->row_index = x;
	d->cap_row_index = ncap;
	return 0;
}

/* The index slot of the row (EV, TASK, TIME, CHAIN) of hash H, or of the empty slot where it
 * goes. */
static size_t row_slot(const struct profile_detail *d, uint64_t h, uint32_t ev, uint32_t task,
		       uint64_t time, uint32_t chain)
{
	size_t mask = d->cap_row_index - 1, j = h & mask;
	for (; d->row_index[j]; j = (j + 1) & mask) {
		uint64_t s = d->row_index[j];
		if (s >> 32 != h >> 32)
			continue;
		const struct detail_row *r = &d->rows[(uint32_t)s - 1];
		if (r->time == time && r->chain == chain && r->task == task && r->ev == ev)
			break;
	}
	return j;
}

int profile_detail_row_add(struct spent_profile *p, uint32_t ev, uint32_t task, uint64_t time,
			   uint32_t chain, uint64_t count)
{
	struct profile_detail *d = &p->detail;
	uint64_t *detailed = &p->events[ev].detailed;
	if (!profile_sum_fits(*detailed, count))
		return -EOVERFLOW;
	if (row_index_reserve(d))
		return -ENOMEM;
	uint64_t h = row_hash(ev, task, time, chain);
	size_t j = row_slot(d, h, ev, task, time, chain);
	if (d->row_index[j]) {
		d->rows[(uint32_t)d->row_index[j] - 1].count += count;
		*detailed += count;
		return 0;
	}
	if (d->nrows >= UINT32_MAX - 1)
		return -ENOSPC;
	if (ALLOC_GROW(d->rows, d->nrows + 1, d->caprows))
		return -ENOMEM;
	d->rows[d->nrows] = (struct detail_row){ .time = time, .count = count, .ev = ev,
						 .task = task, .chain = chain };
	d->row_index[j] = (h >> 32 << 32) | ++d->nrows;
	*detailed += count;
	return 0;
}

static int check_frames(const struct spent_profile *p, const struct spent_profile_frame *f, size_t n)
{
	if (!f || n == 0 || n > MAX_DEPTH)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (f[i].image != SPENT_PROFILE_NO_IMAGE && f[i].image >= p->nimages)
			return -EINVAL;
	return 0;
}

int spent_profile_add_detail(struct spent_profile *p, uint32_t ev, uint32_t task, uint64_t time_ns,
		       const struct spent_profile_frame *frames, size_t n, uint64_t count)
{
	struct profile_detail *d = &p->detail;
	uint32_t chain;
	if (ev >= p->nevents || (task != SPENT_PROFILE_NO_TASK && task >= d->ntasks) ||
	    check_frames(p, frames, n))
		return -EINVAL;
	if (!count)
		return 0;
	int err = profile_detail_chain_intern(d, frames, n, &chain);
	return err ? err : profile_detail_row_add(p, ev, task,
						  bucket_floor(time_ns, spent_profile_time_bucket(p)), chain, count);
}

size_t spent_profile_ndetail(const struct spent_profile *p)
{
	return p->detail.nrows;
}

int spent_profile_detail_get(const struct spent_profile *p, size_t i, struct spent_profile_detail_row *row)
{
	const struct profile_detail *d = &p->detail;
	if (i >= d->nrows)
		return -EINVAL;
	const struct detail_row *r = &d->rows[i];
	const struct detail_chain *c = &d->chains[r->chain];
	*row = (struct spent_profile_detail_row){ .event = r->ev, .task = r->task, .time_ns = r->time,
					    .frames = d->frames + c->off, .nframes = c->n,
					    .count = r->count };
	return 0;
}

/* Widen D's buckets to WIDTH: every row's time rounds down, rows that meet are summed. */
static int rebucket(struct profile_detail *d, uint64_t width)
{
	d->bucket_ns = width;
	memset(d->row_index, 0, d->cap_row_index * sizeof(*d->row_index));
	size_t k = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		struct detail_row r = d->rows[i];
		r.time = bucket_floor(r.time, width);
		uint64_t h = row_hash(r.ev, r.task, r.time, r.chain);
		size_t j = row_slot(d, h, r.ev, r.task, r.time, r.chain);
		if (d->row_index[j]) {
			d->rows[(uint32_t)d->row_index[j] - 1].count += r.count;
		} else {
			d->rows[k] = r;
			d->row_index[j] = (h >> 32 << 32) | ++k;
		}
	}
	d->nrows = k;
	return 0;
}

/* Does SRC have a row to merge (of ONLY_EV, unless that is UINT32_MAX)? */
static bool has_rows(const struct profile_detail *s, uint32_t only_ev)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (only_ev == UINT32_MAX || s->rows[i].ev == only_ev)
			return true;
	return false;
}

int profile_detail_merge(struct spent_profile *dst, const struct spent_profile *src, const uint32_t *imap,
			 const uint32_t *emap, uint32_t only_ev)
{
	struct profile_detail *d = &dst->detail;
	const struct profile_detail *s = &src->detail;
	uint32_t *tmap = NULL, *cmap = NULL;
	struct spent_profile_frame *fr = NULL;
	int err = 0;
	spent_profile_extend_span(dst, s->span_start, s->span_end);
	if (!has_rows(s, only_ev))
		return 0;
	/* one bucket width: an empty destination takes the source's; otherwise the coarser */
	uint64_t sw = spent_profile_time_bucket(src), dw = spent_profile_time_bucket(dst);
	if (!d->nrows)
		d->bucket_ns = sw;
	else if (sw > dw)
		rebucket(d, sw);
	uint64_t width = spent_profile_time_bucket(dst);
	tmap = malloc((s->ntasks + 1) * sizeof(*tmap));
	cmap = malloc((s->nchains + 1) * sizeof(*cmap));
	fr = malloc(MAX_DEPTH * sizeof(*fr));
	if (!tmap || !cmap || !fr) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->ntasks && !err; i++)
		err = spent_profile_task_intern(dst, &s->tasks[i].pub, &tmap[i]);
	/* chains are mapped when first met: only the ones the merged rows use are copied */
	memset(cmap, 0xff, (s->nchains + 1) * sizeof(*cmap));
	for (size_t i = 0; i < s->nrows && !err; i++) {
		const struct detail_row *r = &s->rows[i];
		if (only_ev != UINT32_MAX && r->ev != only_ev)
			continue;
		if (cmap[r->chain] == UINT32_MAX) {
			const struct detail_chain *c = &s->chains[r->chain];
			for (size_t k = 0; k < c->n; k++) {
				const struct spent_profile_frame *f = &s->frames[c->off + k];
				fr[k].image = f->image == SPENT_PROFILE_NO_IMAGE ? SPENT_PROFILE_NO_IMAGE : imap[f->image];
				fr[k].offset = f->offset;
			}
			if ((err = profile_detail_chain_intern(d, fr, c->n, &cmap[r->chain])))
				break;
		}
		err = profile_detail_row_add(dst, emap[r->ev],
					     r->task == SPENT_PROFILE_NO_TASK ? SPENT_PROFILE_NO_TASK : tmap[r->task],
					     bucket_floor(r->time, width), cmap[r->chain], r->count);
	}
out:
	free(tmap);
	free(cmap);
	free(fr);
	return err;
}
