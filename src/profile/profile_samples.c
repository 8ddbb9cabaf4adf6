/* profile/profile_samples.c - the samples file (kind 4, layout in profile_file.h): one
 * event's detail rows with local string, task, image, call-chain (a trie of frames,
 * samples_trie.c) and row tables, rows delta-coded so that a row of `spent record` costs two
 * or three bytes, the whole body zstd-compressed (versions 3 and 4) within bounds a reader
 * checks; the encoder and the validate-everything parser of versions 2 to 4. Whether the file
 * can carry the event's call stacks and counts too is samples_hold.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "profile/profile_file.h"
#include "profile/samples_int.h"

#define NONE SAMPLES_NONE

/* ---- encoding ---------------------------------------------------------------------------- */

/* A small open-addressing set for the encoder's local tables: entry + 1 per slot. */
struct lset {
	uint32_t *slot;
	size_t cap;
};

static int lset_init(struct lset *s, size_t n)
{
	s->cap = 16;
	while (s->cap < 2 * n + 2)
		s->cap *= 2;
	s->slot = calloc(s->cap, sizeof(*s->slot));
	return s->slot ? 0 : -ENOMEM;
}

struct enc_row {
	uint32_t task;		/* local task + 1, 0 = no task */
	uint32_t chain;		/* local chain */
	uint64_t tidx;		/* 0 = unknown time, else 1 + buckets since the origin */
	uint64_t count;
};

struct enc {
	const struct spent_profile *p;
	const struct profile_detail *d;
	uint32_t ev;
	uint64_t *chain_total;	/* per profile chain: its rows' counts in EV (0 = unused) */
	uint32_t *chain_local;	/* profile chain -> the file's chain (samples_trie_put) */
	uint32_t *chain_order;	/* the profile chains written, in the profile's order */
	uint32_t nchains;
	uint32_t *task_local;	/* profile task -> local task, NONE = unused */
	uint32_t ntasks;
	const char **strs;	/* local string table */
	uint32_t nstrs;
	uint32_t *task_comm, *task_cgroup;	/* local task -> string, cgroup + 1 */
	uint32_t *image_local;	/* profile image -> local image, NONE = unused */
	uint32_t *image_order;
	uint32_t nimages;
	struct enc_row *rows;
	size_t nrows;
};

static uint64_t str_hash(const char *s)
{
	return binio_fnv64(BINIO_FNV64_INIT, s, strlen(s));
}

static int intern_str(struct enc *e, struct lset *set, const char *s, uint32_t *idx)
{
	size_t mask = set->cap - 1, j = str_hash(s) & mask;
	for (; set->slot[j]; j = (j + 1) & mask)
		if (!strcmp(e->strs[set->slot[j] - 1], s)) {
			*idx = set->slot[j] - 1;
			return 0;
		}
	e->strs[e->nstrs] = s;
	set->slot[j] = ++e->nstrs;
	*idx = e->nstrs - 1;
	return 0;
}

/* Local tasks (in the profile's order) and the strings they name. */
static int enc_tasks(struct enc *e)
{
	const struct profile_detail *d = e->d;
	struct lset set;
	uint32_t n = 0;
	for (size_t i = 0; i < d->ntasks; i++)
		if (e->task_local[i] != NONE)
			e->task_local[i] = n++;
	e->ntasks = n;
	e->strs = malloc((2 * (size_t)n + 1) * sizeof(*e->strs));
	e->task_comm = malloc(((size_t)n + 1) * sizeof(uint32_t));
	e->task_cgroup = malloc(((size_t)n + 1) * sizeof(uint32_t));
	if (!e->strs || !e->task_comm || !e->task_cgroup || lset_init(&set, 2 * (size_t)n))
		return -ENOMEM;
	for (size_t i = 0; i < d->ntasks; i++) {
		uint32_t l = e->task_local[i];
		const struct spent_profile_task *t = &d->tasks[i].pub;
		if (l == NONE)
			continue;
		intern_str(e, &set, t->comm, &e->task_comm[l]);
		e->task_cgroup[l] = 0;
		if (t->cgroup) {
			intern_str(e, &set, t->cgroup, &e->task_cgroup[l]);
			e->task_cgroup[l]++;
		}
	}
	free(set.slot);
	return 0;
}

/* Local images in the order the chains (in the profile's order) first name them. */
static int enc_chains(struct enc *e)
{
	const struct profile_detail *d = e->d;
	uint32_t n = 0;
	for (size_t c = 0; c < d->nchains; c++) {
		if (!e->chain_total[c])
			continue;
		e->chain_order[n++] = (uint32_t)c;
		for (size_t k = 0; k < d->chains[c].n; k++) {
			uint32_t img = d->frames[d->chains[c].off + k].image;
			if (img != SPENT_PROFILE_NO_IMAGE && e->image_local[img] == NONE) {
				e->image_order[e->nimages] = img;
				e->image_local[img] = e->nimages++;
			}
		}
	}
	e->nchains = n;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct enc_row *x = a, *y = b;
	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->tidx != y->tidx)
		return x->tidx < y->tidx ? -1 : 1;
	return x->chain < y->chain ? -1 : x->chain > y->chain;
}

/* The rows of EV in local terms, sorted by (task, time, chain), equal keys summed (rows of a
 * finer bucket than the profile's current one meet when rounded down to it). */
static int enc_rows(struct enc *e, uint64_t width, uint64_t origin)
{
	const struct profile_detail *d = e->d;
	size_t k = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		if (r->ev != e->ev)
			continue;
		uint64_t t = r->time - r->time % width;
		e->rows[k++] = (struct enc_row){
			.task = r->task == SPENT_PROFILE_NO_TASK ? 0 : e->task_local[r->task] + 1,
			.chain = e->chain_local[r->chain],
			.tidx = t ? 1 + (t - origin) / width : 0,
			.count = r->count,
		};
	}
	qsort(e->rows, k, sizeof(*e->rows), row_cmp);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && !row_cmp(&e->rows[m - 1], &e->rows[i]))
			e->rows[m - 1].count += e->rows[i].count;
		else
			e->rows[m++] = e->rows[i];
	}
	e->nrows = m;
	return 0;
}

static int put_tables(struct binbuf *b, const struct enc *e, struct samples_cuts *cuts)
{
	int err = binbuf_put_uvarint(b, e->nstrs);
	for (uint32_t i = 0; i < e->nstrs && !err; i++)
		err = binbuf_put_str(b, e->strs[i]);
	err = err ? err : binbuf_put_uvarint(b, e->ntasks);
	for (size_t i = 0; i < e->d->ntasks && !err; i++) {
		uint32_t l = e->task_local[i];
		if (l == NONE)
			continue;
		err = binbuf_put_uvarint(b, e->task_comm[l]);
		err = err ? err : binbuf_put_uvarint(b, e->d->tasks[i].pub.pid);
		err = err ? err : binbuf_put_uvarint(b, e->d->tasks[i].pub.tid);
		err = err ? err : binbuf_put_uvarint(b, e->task_cgroup[l]);
	}
	err = err ? err : binbuf_put_uvarint(b, e->nimages);
	for (uint32_t i = 0; i < e->nimages && !err; i++)
		err = profile_file_put_image(b, spent_profile_image_get(e->p, e->image_order[i]));
	struct samples_chains c = { .d = e->d, .used = e->chain_order, .nused = e->nchains,
				    .image_local = e->image_local, .chain_local = e->chain_local,
				    .cuts = cuts };
	return err ? err : samples_trie_put(b, &c);
}

/* Row I's fields against the previous row of its group (none at a group's start). */
static void row_fields(const struct enc *e, size_t i, bool *new_time, uint64_t *dt, uint64_t *step,
		       uint64_t *code)
{
	const struct enc_row *r = &e->rows[i];
	bool first = !i || e->rows[i - 1].task != r->task;
	uint64_t prev_t = first ? 0 : e->rows[i - 1].tidx;
	uint64_t next_chain = first ? 0 : (uint64_t)e->rows[i - 1].chain + 1;
	*new_time = r->tidx != prev_t;
	*dt = r->tidx - prev_t - 1;
	*step = r->chain - (*new_time ? 0 : next_chain);
	*code = r->count <= 3 ? r->count - 1 : 3;
}

/* The rows: counts, group headers, then their fields in columns (each compresses better
 * alone): a key byte (a chain step's low 5 bits, count code, new time), the rest of the step,
 * time steps, counts above 3. Small steps (flat profiles) stay in the key byte; the large ones
 * of a -g profile's chains seen once get their near-random low bits apart from the rest. */
static int put_rows(struct binbuf *b, const struct enc *e, struct samples_cuts *cuts)
{
	size_t ngroups = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < e->nrows; i++) {
		ngroups += !i || e->rows[i].task != e->rows[i - 1].task;
		total += e->rows[i].count;
	}
	int err = binbuf_put_uvarint(b, ngroups);
	err = err ? err : binbuf_put_uvarint(b, e->nrows);
	err = err ? err : binbuf_put_uvarint(b, total);
	for (size_t i = 0; i < e->nrows && !err;) {
		size_t end = i;
		while (end < e->nrows && e->rows[end].task == e->rows[i].task)
			end++;
		err = binbuf_put_uvarint(b, e->rows[i].task);
		err = err ? err : binbuf_put_uvarint(b, end - i);
		i = end;
	}
	for (int col = 0; col < 4; col++) {
		samples_cut(cuts, b);
		for (size_t i = 0; i < e->nrows && !err; i++) {
			bool new_time;
			uint64_t dt, step, code;
			row_fields(e, i, &new_time, &dt, &step, &code);
			if (col == 0)
				err = binbuf_put_u8(b, (uint8_t)((step & 31) << 3 | code << 1 | new_time));
			else if (col == 1)
				err = binbuf_put_uvarint(b, step >> 5);
			else if (col == 2 && new_time)
				err = binbuf_put_uvarint(b, dt);
			else if (col == 3 && code == 3)
				err = binbuf_put_uvarint(b, e->rows[i].count - 4);
		}
	}
	return err;
}

/* The reader's bounds for a compressed body: at most SAMPLES_MAX_RATIO times its compressed
 * size (a writer stores a body that would compress better), and the frames its chains hold
 * at most samples_frame_budget() of the body's bytes in the file. A hostile file then costs
 * memory in proportion to its size, as a stored body always did. */
#define SAMPLES_MAX_RATIO 64
/* zstd -19 compresses ~0.3 MB/s here: a daemon rewriting a large samples file at each flush
 * takes a faster level (-9: ~6% larger on the g++ profile's body) */
#define SAMPLES_ZSTD_LEVEL(len) ((len) <= (1u << 20) ? 19 : 9)
enum { SAMPLES_STORED = 0, SAMPLES_ZSTD = 1 };

static uint64_t samples_frame_budget(uint64_t file_bytes)
{
	return SAMPLES_MAX_DEPTH * file_bytes + (1u << 20);
}

/* BODY in one zstd frame into Z (CAP bytes), a new block at each of CUTS: its size, or 0. */
static size_t compress_cut(uint8_t *z, size_t cap, const struct binbuf *body,
			   const struct samples_cuts *cuts)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_outBuffer out = { z, cap, 0 };
	size_t prev = 0, r = 0;
	bool ok = cc && !ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
							      SAMPLES_ZSTD_LEVEL(body->len))) &&
		  !ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cc, body->len));
	for (unsigned i = 0; ok && i <= cuts->n; i++) {
		bool last = i == cuts->n;
		size_t end = last ? body->len : cuts->at[i];
		ZSTD_inBuffer in = { body->data + prev, end - prev, 0 };
		do
			r = ZSTD_compressStream2(cc, &out, &in, last ? ZSTD_e_end : ZSTD_e_flush);
		while (!ZSTD_isError(r) && r && out.pos < out.size);
		ok = !ZSTD_isError(r) && !r;
		prev = end;
	}
	ZSTD_freeCCtx(cc);
	return ok ? out.pos : 0;
}

/* BODY after the method byte and its length: zstd when that is smaller and within the
 * reader's bounds, else as it is. */
static int put_body(struct binbuf *b, const struct binbuf *body, uint64_t nframes,
		    const struct samples_cuts *cuts)
{
	size_t cap = ZSTD_compressBound(body->len);
	uint8_t *z = malloc(cap + 1);
	if (!z)
		return -ENOMEM;
	size_t n = compress_cut(z, cap, body, cuts);
	bool zip = n && n < body->len && body->len <= SAMPLES_MAX_RATIO * n &&
		   nframes <= samples_frame_budget(n);
	int err = binbuf_put_u8(b, zip ? SAMPLES_ZSTD : SAMPLES_STORED);
	err = err ? err : binbuf_put_uvarint(b, body->len);
	err = err ? err : binbuf_put(b, zip ? z : body->data, zip ? n : body->len);
	free(z);
	return err;
}

int profile_file_encode_samples(const struct spent_profile *p, uint32_t ev, unsigned flags,
				struct binbuf *b, bool *empty)
{
	const struct profile_detail *d = &p->detail;
	struct enc e = { .p = p, .d = d, .ev = ev };
	struct binbuf body;
	struct samples_cuts cuts = { .n = 0 };
	uint64_t width = spent_profile_time_bucket(p), origin = 0, nframes = 0;
	size_t nrows = 0, start = b->len, ni = spent_profile_nimages(p);
	int err = -ENOMEM;
	binbuf_init(&body);
	e.chain_total = calloc(d->nchains + 1, sizeof(*e.chain_total));
	e.chain_local = malloc((d->nchains + 1) * sizeof(*e.chain_local));
	e.chain_order = malloc((d->nchains + 1) * sizeof(*e.chain_order));
	e.task_local = malloc((d->ntasks + 1) * sizeof(*e.task_local));
	e.image_local = malloc((ni + 1) * sizeof(*e.image_local));
	e.image_order = malloc((ni + 1) * sizeof(*e.image_order));
	if (!e.chain_total || !e.chain_local || !e.chain_order || !e.task_local || !e.image_local ||
	    !e.image_order)
		goto out;
	memset(e.task_local, 0xff, (d->ntasks + 1) * sizeof(*e.task_local));
	memset(e.image_local, 0xff, (ni + 1) * sizeof(*e.image_local));
	for (size_t i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		if (r->ev != ev)
			continue;
		nrows++;
		e.chain_total[r->chain] += r->count;
		if (r->task != SPENT_PROFILE_NO_TASK)
			e.task_local[r->task] = 0;
		uint64_t t = r->time - r->time % width;
		if (t && (!origin || t < origin))
			origin = t;
	}
	if (empty)
		*empty = nrows == 0;
	e.rows = malloc((nrows + 1) * sizeof(*e.rows));
	if (!e.rows || (err = enc_tasks(&e)) || (err = enc_chains(&e)))
		goto out;
	for (uint32_t l = 0; l < e.nchains; l++)
		nframes += d->chains[e.chain_order[l]].n;
	/* the tables number the chains, which the rows then use */
	if ((err = put_tables(&body, &e, &cuts)) || (err = enc_rows(&e, width, origin)) ||
	    (err = put_rows(&body, &e, &cuts)))
		goto out;
	err = profile_file_put_header(b, PROFILE_FILE_VERSION_SAMPLES, PROFILE_FILE_SAMPLES,
				      spent_profile_event_get(p, ev));
	err = err ? err : binbuf_put_uvarint(b, flags & (PROFILE_SAMPLES_STACKS | PROFILE_SAMPLES_COUNTS));
	err = err ? err : binbuf_put_uvarint(b, width);
	err = err ? err : binbuf_put_uvarint(b, origin);
	err = err ? err : put_body(b, &body, nframes, &cuts);
	err = err ? err : profile_file_put_crc(b, start);
out:
	binbuf_release(&body);
	free(e.chain_total);
	free(e.chain_local);
	free(e.chain_order);
	free(e.task_local);
	free(e.strs);
	free(e.task_comm);
	free(e.task_cgroup);
	free(e.image_local);
	free(e.image_order);
	free(e.rows);
	return err;
}

/* ---- parsing: every table and row checked as it is read, into the scratch profile T ------- */

#define BAD(msg) do { *why = (msg); err = -EBADMSG; goto out; } while (0)

struct dec {
	char **strs;
	uint64_t nstrs;
	uint32_t *tasks;	/* local task -> T's */
	uint64_t ntasks;
	uint32_t *images;	/* local image -> T's */
	uint64_t nimages;
	struct samples_dec_chains c;	/* the file's chain -> T's */
	uint64_t *chain_sum;	/* local chain -> its rows' counts (PROFILE_SAMPLES_STACKS) */
};

static int dec_strings_tasks(struct binreader *r, struct spent_profile *t, struct dec *x,
			     const char **why)
{
	int err = 0;
	if (binreader_get_uvarint(r, &x->nstrs) || x->nstrs > binreader_left(r))
		BAD("bad string count");
	if (!(x->strs = calloc(x->nstrs + 1, sizeof(*x->strs))))
		return -ENOMEM;
	for (uint64_t i = 0; i < x->nstrs; i++)
		if (binreader_get_str(r, SPENT_PROFILE_PATH_MAX - 1, &x->strs[i]))
			BAD("bad string");
	if (binreader_get_uvarint(r, &x->ntasks) || x->ntasks > binreader_left(r) / 4)
		BAD("bad task count");
	if (!(x->tasks = malloc((x->ntasks + 1) * sizeof(*x->tasks))))
		return -ENOMEM;
	for (uint64_t i = 0; i < x->ntasks; i++) {
		uint64_t comm, pid, tid, cg;
		if (binreader_get_uvarint(r, &comm) || binreader_get_uvarint(r, &pid) ||
		    binreader_get_uvarint(r, &tid) || binreader_get_uvarint(r, &cg))
			BAD("truncated task");
		if (comm >= x->nstrs || cg > x->nstrs || pid > UINT32_MAX || tid > UINT32_MAX)
			BAD("bad task");
		struct spent_profile_task task = { .comm = x->strs[comm], .pid = (uint32_t)pid,
					     .tid = (uint32_t)tid,
					     .cgroup = cg ? x->strs[cg - 1] : NULL };
		err = spent_profile_task_intern(t, &task, &x->tasks[i]);
		if (err == -EINVAL)
			BAD("bad task name");
		if (err)
			goto out;
	}
out:
	return err;
}

static int dec_images(struct binreader *r, struct spent_profile *t, struct dec *x, const char **why)
{
	int err = 0;
	if (binreader_get_uvarint(r, &x->nimages) || x->nimages > binreader_left(r) / 3)
		BAD("bad image count");
	if (!(x->images = malloc((x->nimages + 1) * sizeof(*x->images))))
		return -ENOMEM;
	for (uint64_t i = 0; i < x->nimages; i++) {
		struct spent_profile_image img = { 0 };
		err = profile_file_get_image(r, &img, why);
		if (!err && spent_profile_image_intern(t, &img, &x->images[i])) {
			*why = "bad image";
			err = -EBADMSG;
		}
		free(img.path);
		if (err)
			goto out;
	}
out:
	return err;
}

/* Rows being added: where the previous row of the group left the time and the chain. */
struct rows_in {
	struct spent_profile *t;
	uint32_t ev;
	struct dec *x;
	uint64_t width, origin;
	uint64_t max_m1;	/* the last time index - 1 whose bucket start fits in 64 bits */
	uint64_t nrows, seen, sum, prev_task;
	uint64_t task, prev_t, next_chain;
};

static int rows_in_start(struct rows_in *s, struct binreader *r, uint64_t *ngroups, uint64_t *total,
			 const char **why)
{
	int err = 0;
	s->max_m1 = (UINT64_MAX - s->origin) / s->width;
	if (s->max_m1 == UINT64_MAX)
		s->max_m1--;
	if (binreader_get_uvarint(r, ngroups) || binreader_get_uvarint(r, &s->nrows) ||
	    binreader_get_uvarint(r, total) || *ngroups > s->nrows || s->nrows > binreader_left(r))
		BAD("bad row counts");
out:
	return err;
}

/* Group G of task TASK + 1 (0 = none) with N rows. */
static int group_start(struct rows_in *s, uint64_t g, uint64_t task, uint64_t n, const char **why)
{
	int err = 0;
	if (task > s->x->ntasks || (g && task <= s->prev_task) || n == 0 || n > s->nrows - s->seen)
		BAD("bad row group");
	s->prev_task = s->task = task;
	s->seen += n;
	s->prev_t = s->next_chain = 0;
out:
	return err;
}

static int row_add(struct rows_in *s, bool new_time, uint64_t dt, uint64_t code, uint64_t extra,
		   uint64_t step, const char **why)
{
	struct dec *x = s->x;
	int err = 0;
	if (new_time) {
		if (s->prev_t > s->max_m1 || dt > s->max_m1 - s->prev_t)
			BAD("row time out of range");
		s->prev_t += dt + 1;
		s->next_chain = 0;
	}
	if (step >= x->c.nchains || s->next_chain + step >= x->c.nchains)
		BAD("row chain out of range");
	uint64_t chain = s->next_chain + step;
	uint64_t count = code < 3 ? code + 1 : extra + 4;
	if (count < extra || s->sum + count < s->sum)
		BAD("row count overflows");
	s->sum += count;
	x->chain_sum[chain] += count;	/* <= sum: cannot overflow */
	s->next_chain = chain + 1;
	uint64_t time = s->prev_t ? s->origin + (s->prev_t - 1) * s->width : 0;
	err = profile_detail_row_add(s->t, s->ev,
				     s->task ? x->tasks[s->task - 1] : SPENT_PROFILE_NO_TASK, time,
				     x->c.chains[chain], count);
out:
	return err;
}

/* Version 2: each group's header, then its rows, each row's fields together. */
static int dec_rows_v2(struct binreader *r, struct rows_in *s, const char **why)
{
	uint64_t ngroups, total;
	int err = rows_in_start(s, r, &ngroups, &total, why);
	for (uint64_t g = 0; g < ngroups && !err; g++) {
		uint64_t task, n;
		if (binreader_get_uvarint(r, &task) || binreader_get_uvarint(r, &n))
			BAD("truncated row group");
		err = group_start(s, g, task, n, why);
		for (uint64_t i = 0; i < n && !err; i++) {
			uint64_t key, dt = 0, extra = 0;
			if (binreader_get_uvarint(r, &key))
				BAD("truncated row");
			bool new_time = key & 1;
			uint64_t code = key >> 1 & 3;
			if ((new_time && binreader_get_uvarint(r, &dt)) ||
			    (code == 3 && binreader_get_uvarint(r, &extra)))
				BAD("truncated row");
			err = row_add(s, new_time, dt, code, extra, key >> 3, why);
		}
	}
	if (!err && (s->seen != s->nrows || s->sum != total))
		BAD("rows do not add up to the header counts");
out:
	return err;
}

/* Version 3: the group headers, then the rows' fields in columns (put_rows). */
static int dec_rows_v3(struct binreader *r, struct rows_in *s, const char **why)
{
	uint64_t ngroups, total, *gh = NULL, *f = NULL;
	int err = rows_in_start(s, r, &ngroups, &total, why);
	if (err)
		return err;
	/* a group header is at least 2 bytes, a row 2 (its key and the rest of its step): the
	 * counts are checked before they size anything */
	if (ngroups > binreader_left(r) / 2 || s->nrows > binreader_left(r) / 2)
		BAD("bad row counts");
	gh = malloc((2 * ngroups + 1) * sizeof(*gh));
	f = malloc((4 * s->nrows + 1) * sizeof(*f));	/* key, step, time step, extra count */
	if (!gh || !f)
		err = -ENOMEM;
	for (uint64_t g = 0; g < ngroups && !err; g++)
		if (binreader_get_uvarint(r, &gh[2 * g]) || binreader_get_uvarint(r, &gh[2 * g + 1]))
			BAD("truncated row group");
	/* per row: key byte, step, time step, count - 4 */
	for (int col = 0; col < 4 && !err; col++)
		for (uint64_t i = 0; i < s->nrows && !err; i++) {
			uint64_t *row = f + 4 * i, v = 0;
			uint8_t key = 0;
			if (col == 0 ? binreader_get_u8(r, &key) :
			    (col == 1 || (col == 2 && row[0] & 1) || (col == 3 && (row[0] >> 1 & 3) == 3)) &&
			    binreader_get_uvarint(r, &v))
				BAD("truncated row");
			if (col == 0)
				row[0] = key, row[1] = key >> 3, row[2] = row[3] = 0;
			else if (col == 1 && v > (UINT64_MAX >> 5))
				BAD("row chain out of range");
			else if (col == 1)
				row[1] |= v << 5;
			else if (v)
				row[col] = v;
		}
	for (uint64_t g = 0, i = 0; g < ngroups && !err; g++) {
		err = group_start(s, g, gh[2 * g], gh[2 * g + 1], why);
		for (uint64_t end = i + gh[2 * g + 1]; i < end && !err; i++)
			err = row_add(s, f[4 * i] & 1, f[4 * i + 2], f[4 * i] >> 1 & 3, f[4 * i + 3],
				      f[4 * i + 1], why);
	}
	if (!err && (s->seen != s->nrows || s->sum != total))
		BAD("rows do not add up to the header counts");
out:
	free(gh);
	free(f);
	return err;
}

/* The tables, the chains and the rows, from R (the whole body) into T. */
static int dec_body(struct binreader *r, struct spent_profile *t, uint32_t ev, uint32_t version,
		    uint64_t frame_budget, uint64_t width, uint64_t origin, struct dec *x,
		    const char **why)
{
	int err = 0;
	if ((err = dec_strings_tasks(r, t, x, why)) || (err = dec_images(r, t, x, why)))
		goto out;
	if (version >= PROFILE_FILE_VERSION_SAMPLES_V3)
		err = samples_trie_get(r, &t->detail, x->images, x->nimages, frame_budget, &x->c, why);
	else
		err = samples_trie_get_v2(r, &t->detail, x->images, x->nimages, &x->c, why);
	if (err)
		goto out;
	x->chain_sum = calloc(x->c.nchains + 1, sizeof(*x->chain_sum));
	if (!x->chain_sum)
		return -ENOMEM;
	struct rows_in in = { .t = t, .ev = ev, .x = x, .width = width, .origin = origin };
	err = version >= PROFILE_FILE_VERSION_SAMPLES_V3 ? dec_rows_v3(r, &in, why) : dec_rows_v2(r, &in, why);
	if (err)
		goto out;
	if (binreader_left(r))
		BAD("trailing bytes after the rows");
out:
	return err;
}

/* Version 3's body, stored or decompressed into *OWNED (bounded: see SAMPLES_MAX_RATIO), as
 * BODY; R is left at the end of the file's part. */
static int get_body(struct binreader *r, struct binreader *body, uint8_t **owned, uint64_t *file_bytes,
		    const char **why)
{
	uint8_t method;
	uint64_t len;
	int err = 0;
	if (binreader_get_u8(r, &method) || binreader_get_uvarint(r, &len))
		BAD("truncated samples body header");
	size_t n = binreader_left(r);
	const uint8_t *src = r->p;
	*file_bytes = n;
	binreader_skip(r, n);
	if (method == SAMPLES_STORED) {
		if (len != n)
			BAD("bad samples body length");
		binreader_init(body, src, n);
	} else if (method == SAMPLES_ZSTD) {
		if (len > PROFILE_FILE_MAXLEN || len > (uint64_t)SAMPLES_MAX_RATIO * n)
			BAD("compressed samples body too large");
		if (!(*owned = malloc(len + 1)))
			return -ENOMEM;
		size_t got = ZSTD_decompress(*owned, len, src, n);
		if (ZSTD_isError(got) || got != len)
			BAD("bad compressed samples body");
		binreader_init(body, *owned, len);
	} else {
		BAD("unknown samples body method");
	}
out:
	return err;
}

int profile_file_parse_samples(struct binreader *r, struct spent_profile *t, uint32_t ev,
			       uint32_t version, const char **why)
{
	struct dec x = { 0 };
	struct binreader body = *r;
	uint8_t *owned = NULL;
	uint64_t flags, width, origin, file_bytes = 0;
	int err = 0;
	if (binreader_get_uvarint(r, &flags) || binreader_get_uvarint(r, &width) ||
	    binreader_get_uvarint(r, &origin))
		BAD("truncated samples header");
	uint64_t known = PROFILE_SAMPLES_STACKS |
			 (version >= PROFILE_FILE_VERSION_SAMPLES ? PROFILE_SAMPLES_COUNTS : 0);
	if (flags & ~known)
		BAD("unknown samples flags");
	if (width == 0 || origin % width)
		BAD("bad time bucket or origin");
	spent_profile_set_time_bucket(t, width);
	body = *r;
	if (version >= PROFILE_FILE_VERSION_SAMPLES_V3 && (err = get_body(r, &body, &owned, &file_bytes, why)))
		goto out;
	if ((err = dec_body(&body, t, ev, version, samples_frame_budget(file_bytes), width, origin, &x, why)))
		goto out;
	if (version < PROFILE_FILE_VERSION_SAMPLES_V3)
		*r = body;
	/* the event's call stacks were not written twice: each chain is one, with its rows' sum */
	for (uint64_t i = 0; !err && flags & PROFILE_SAMPLES_STACKS && i < x.c.nchains; i++) {
		const struct detail_chain *c = &t->detail.chains[x.c.chains[i]];
		if (x.chain_sum[i])
			err = spent_profile_add_stack(t, ev, t->detail.frames + c->off, c->n, x.chain_sum[i]);
	}
	/* nor its per-image counts: each leaf frame with an image is counted there */
	for (uint64_t i = 0; !err && flags & PROFILE_SAMPLES_COUNTS && i < x.c.nchains; i++) {
		const struct spent_profile_frame *leaf = &t->detail.frames[t->detail.chains[x.c.chains[i]].off];
		if (x.chain_sum[i] && leaf->image != SPENT_PROFILE_NO_IMAGE)
			err = spent_profile_add(t, leaf->image, leaf->offset, ev, x.chain_sum[i]);
	}
out:
	for (uint64_t i = 0; x.strs && i < x.nstrs; i++)
		free(x.strs[i]);
	free(x.strs);
	free(x.tasks);
	free(x.images);
	free(x.c.chains);
	free(x.chain_sum);
	free(owned);
	return err;
}
