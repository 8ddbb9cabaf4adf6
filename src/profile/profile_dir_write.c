/* profile/profile_dir_write.c - an epoch's atomic incremental merge-writes: each file of the
 * epoch directory (counts per image x event, unknown, stacks, samples, span) merged with what
 * is on disk and rewritten through temp + rename; a file that does not parse is set aside as
 * NAME.corrupt. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/binio.h"
#include "profile/profile_dir_int.h"
#include "profile/profile_file.h"
#include "profile/profile_int.h"

/* Read FILE into T when it exists and is valid; a corrupt one is renamed NAME.corrupt. */
static int load_existing(const char *file, struct spent_profile *t, spent_profile_warn_fn warn, void *ctx)
{
	uint8_t *data = NULL;
	size_t len;
	const char *why = NULL;
	int err = binio_read_file(file, PROFILE_FILE_MAXLEN, &data, &len);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = spent_profile_file_parse(data, len, t, &why);
	free(data);
	if (err == -ENOMEM)
		return err;
	if (err) {
		char bad[PATH_MAX + 16];
		snprintf(bad, sizeof(bad), "%s.corrupt", file);
		if (warn)
			warn(ctx, file, why ? why : strerror(-err));
		if (rename(file, bad) < 0)
			return -errno;
	}
	return 0;
}

enum write_kind { W_COUNTS, W_UNKNOWN, W_STACKS, W_SAMPLES };

struct write_ctx {
	const struct spent_profile *p;
	char dir[PATH_MAX];
	mode_t file_mode;
	bool keep_counts_files;
	spent_profile_warn_fn warn;
	void *ctx;
};

/* T gets P's detail rows of event EV as its event TE. */
static int add_detail_slice(struct spent_profile *t, const struct spent_profile *p, uint32_t ev, uint32_t te)
{
	size_t ni = spent_profile_nimages(p);
	uint32_t *imap = malloc((ni + 1) * sizeof(*imap));
	uint32_t *emap = calloc(spent_profile_nevents(p) + 1, sizeof(*emap));
	int err = imap && emap ? 0 : -ENOMEM;
	for (size_t i = 0; i < ni && !err; i++)
		err = spent_profile_image_intern(t, spent_profile_image_get(p, (uint32_t)i), &imap[i]);
	if (!err) {
		emap[ev] = te;
		err = profile_detail_merge(t, p, imap, emap, ev);
	}
	free(imap);
	free(emap);
	return err;
}

/* T gets P's call stacks of event EV as its event TE. */
static int add_stack_slice(struct spent_profile *t, const struct spent_profile *p, uint32_t ev, uint32_t te)
{
	const struct spent_profile_event *e = spent_profile_event_get(t, te);
	struct spent_profile *one = spent_profile_new();
	uint32_t oe;
	int err = one ? spent_profile_event_intern(one, e->name, e->period, e->flags, &oe) : -ENOMEM;
	/* copy P's stacks of EV via a merge of a filtered profile */
	for (size_t i = 0; i < spent_profile_nstacks(p) && !err; i++) {
		uint32_t sev;
		const struct spent_profile_frame *f;
		size_t nf;
		uint64_t cnt;
		spent_profile_stack_get(p, i, &sev, &f, &nf, &cnt);
		if (sev != ev)
			continue;
		struct spent_profile_frame fr[1024];
		for (size_t k = 0; k < nf && !err; k++) {
			fr[k] = f[k];
			if (f[k].image != SPENT_PROFILE_NO_IMAGE)
				err = spent_profile_image_intern(one, spent_profile_image_get(p, f[k].image),
							   &fr[k].image);
		}
		err = err ? err : spent_profile_add_stack(one, oe, fr, nf, cnt);
	}
	err = err ? err : spent_profile_merge(t, one);
	spent_profile_free(one);
	return err;
}

static int file_path(const struct write_ctx *w, enum write_kind kind, uint32_t img, uint32_t ev,
		     char *file, size_t len)
{
	char name[320];
	int err = kind == W_COUNTS ? profile_file_name_counts(w->p, img, ev, name, sizeof(name))
		: kind == W_UNKNOWN ? profile_file_name_unknown(w->p, ev, name, sizeof(name))
		: kind == W_STACKS ? profile_file_name_stacks(w->p, ev, name, sizeof(name))
				   : profile_file_name_samples(w->p, ev, name, sizeof(name));
	if (!err && snprintf(file, len, "%s/%s", w->dir, name) >= (int)len)
		err = -ENAMETOOLONG;
	return err;
}

/* Merge P's counts of (IMG, EV) or unknown samples of EV with what is on disk and rewrite. */
static int write_one(struct write_ctx *w, enum write_kind kind, uint32_t img, uint32_t ev)
{
	char file[PATH_MAX];
	struct spent_profile *t = spent_profile_new();
	struct binbuf b;
	bool empty = false;
	uint32_t ti = 0, te = 0;
	int err;
	binbuf_init(&b);
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = file_path(w, kind, img, ev, file, sizeof(file))))
		goto out;
	if ((err = load_existing(file, t, w->warn, w->ctx)))
		goto out;
	/* keep only the one event (and image) this file is about: merge P's slice into T */
	const struct spent_profile_event *e = spent_profile_event_get(w->p, ev);
	if ((err = spent_profile_event_intern(t, e->name, e->period, e->flags, &te)))
		goto out;
	if (kind == W_COUNTS) {
		struct spent_profile_count *c = NULL;
		size_t n = 0;
		err = spent_profile_image_intern(t, spent_profile_image_get(w->p, img), &ti);
		err = err ? err : spent_profile_counts(w->p, img, ev, &c, &n);
		for (size_t i = 0; i < n && !err; i++)
			err = spent_profile_add(t, ti, c[i].offset, te, c[i].count);
		free(c);
		err = err ? err : profile_file_encode_counts(t, ti, te, &b);
	} else {
		for (int r = 0; r < SPENT_PROFILE_UNK_NR && !err; r++)
			err = spent_profile_add_unknown(t, r, te, spent_profile_unknown_count(w->p, ev, r));
		err = err ? err : profile_file_encode_unknown(t, te, &b, &empty);
	}
	if (!err && !empty)
		err = binio_write_file_atomic(file, b.data, b.len, w->file_mode);
out:
	binbuf_release(&b);
	spent_profile_free(t);
	return err;
}

/* The path of T's counts file of (IMG, EV) in W's epoch into FILE (LEN bytes). */
static int counts_path(const struct write_ctx *w, const struct spent_profile *t, uint32_t img,
		       uint32_t ev, char *file, size_t len)
{
	char name[320];
	int err = profile_file_name_counts(t, img, ev, name, sizeof(name));
	if (!err && snprintf(file, len, "%s/%s", w->dir, name) >= (int)len)
		err = -ENAMETOOLONG;
	return err;
}

/* *LEAF (T's *NLEAF images, new; the caller frees it) marks each image a leaf frame of T's
 * rows of TE names; their counts files of TE on disk are read into T. */
static int load_leaf_counts(struct write_ctx *w, struct spent_profile *t, uint32_t te, bool **leaf,
			    size_t *nleaf)
{
	const struct profile_detail *d = &t->detail;
	size_t ni = spent_profile_nimages(t);
	char file[PATH_MAX];
	int err = 0;
	if (!(*leaf = calloc(ni + 1, sizeof(**leaf))))
		return -ENOMEM;
	*nleaf = ni;
	for (size_t i = 0; i < d->nrows; i++) {
		uint32_t img = d->frames[d->chains[d->rows[i].chain].off].image;
		if (d->rows[i].ev == te && img != SPENT_PROFILE_NO_IMAGE)
			(*leaf)[img] = true;
	}
	for (uint32_t i = 0; i < ni && !err; i++)
		if ((*leaf)[i] && !(err = counts_path(w, t, i, te, file, sizeof(file))))
			err = load_existing(file, t, w->warn, w->ctx);
	return err;
}

/* T's counts of TE per image LEAF marks (of the first NLEAF): each image's file removed
 * (GONE), else rewritten. */
static int put_leaf_counts(struct write_ctx *w, const struct spent_profile *t, uint32_t te,
			   const bool *leaf, size_t nleaf, bool gone)
{
	char file[PATH_MAX];
	struct binbuf b;
	int err = 0;
	binbuf_init(&b);
	for (uint32_t i = 0; i < nleaf && !err; i++) {
		if (!leaf[i] || (err = counts_path(w, t, i, te, file, sizeof(file))))
			continue;
		if (gone) {
			if (unlink(file) < 0 && errno != ENOENT)
				err = -errno;
		} else if (spent_profile_image_total(t, i, te)) {
			b.len = 0;
			err = profile_file_encode_counts(t, i, te, &b);
			err = err ? err : binio_write_file_atomic(file, b.data, b.len, w->file_mode);
		}
	}
	binbuf_release(&b);
	return err;
}

/* Merge P's call stacks and detail rows of EV with the epoch's stacks@ and samples@ files
 * and rewrite them. `spent record` adds every sample both as a stack and as a detail row,
 * so when the merged stacks are exactly the sum of the merged rows' chains the samples file
 * says so (PROFILE_SAMPLES_STACKS) and the stacks file goes: that halves a -g profile. It
 * also adds each sample to its leaf frame's image counts, so when the counts of the images
 * the leaf frames name (their files, P's already in them, and what an earlier samples file
 * carried) are exactly the rows' sums by leaf frame, the samples file carries those too
 * (PROFILE_SAMPLES_COUNTS) and their counts files go. A file that goes is removed after the
 * samples file is written, and counts the samples file stops carrying are written back
 * before it is: a crash in between counts samples twice, never loses them. */
static int write_stacks_samples(struct write_ctx *w, uint32_t ev)
{
	char sfile[PATH_MAX], dfile[PATH_MAX];
	struct spent_profile *t = spent_profile_new();
	struct binbuf b;
	bool empty = true, hold = false, *leaf = NULL;
	size_t nleaf = 0;
	uint32_t te;
	int err = t ? 0 : -ENOMEM, counts = 0;
	binbuf_init(&b);
	err = err ? err : file_path(w, W_STACKS, 0, ev, sfile, sizeof(sfile));
	err = err ? err : file_path(w, W_SAMPLES, 0, ev, dfile, sizeof(dfile));
	err = err ? err : load_existing(dfile, t, w->warn, w->ctx);
	bool carried = !err && spent_profile_ncells(t);	/* its file held counts */
	err = err ? err : load_existing(sfile, t, w->warn, w->ctx);
	const struct spent_profile_event *e = spent_profile_event_get(w->p, ev);
	err = err ? err : spent_profile_event_intern(t, e->name, e->period, e->flags, &te);
	err = err ? err : add_detail_slice(t, w->p, ev, te);
	err = err ? err : add_stack_slice(t, w->p, ev, te);
	/* a database's writes only undo what a recorded profile merged in there carried */
	if (!err && (!w->keep_counts_files || carried))
		err = load_leaf_counts(w, t, te, &leaf, &nleaf);
	if (!err && !w->keep_counts_files && (counts = profile_samples_hold_counts(t, te)) < 0)
		err = counts;
	if (!err && !counts && carried)
		err = put_leaf_counts(w, t, te, leaf, nleaf, false);
	hold = !err && profile_samples_hold_stacks(t, te);
	unsigned flags = (hold ? PROFILE_SAMPLES_STACKS : 0) | (counts > 0 ? PROFILE_SAMPLES_COUNTS : 0);
	err = err ? err : profile_file_encode_samples(t, te, flags, &b, &empty);
	if (!err && !empty)
		err = binio_write_file_atomic(dfile, b.data, b.len, w->file_mode);
	if (!err && counts > 0 && !empty)
		err = put_leaf_counts(w, t, te, leaf, nleaf, true);
	binbuf_release(&b);
	binbuf_init(&b);
	if (!err && hold && !empty) {
		if (unlink(sfile) < 0 && errno != ENOENT)
			err = -errno;
	} else if (!err) {
		err = profile_file_encode_stacks(t, te, &b, &empty);
		if (!err && !empty)
			err = binio_write_file_atomic(sfile, b.data, b.len, w->file_mode);
	}
	binbuf_release(&b);
	free(leaf);
	spent_profile_free(t);
	return err;
}

/* The epoch's span becomes the union of what is there and P's (nothing when P has none); a
 * span file that does not parse is set aside as span.corrupt, as profile files are. */
static int write_span(struct write_ctx *w)
{
	char file[PATH_MAX], text[PROFILE_SPAN_TEXT_MAX];
	uint64_t s, e, os, oe;
	spent_profile_span(w->p, &s, &e);
	if (!s)
		return 0;
	if (snprintf(file, sizeof(file), "%s/" SPAN_NAME, w->dir) >= (int)sizeof(file))
		return -ENAMETOOLONG;
	int err = profile_dir_read_span(w->dir, &os, &oe);
	if (err == -ENOMEM)
		return err;
	if (err) {
		char bad[PATH_MAX + 16];
		snprintf(bad, sizeof(bad), "%s.corrupt", file);
		if (w->warn)
			w->warn(w->ctx, file, err == -EBADMSG ? "bad span file" : strerror(-err));
		if (rename(file, bad) < 0)
			return -errno;
	}
	if (!err && os && os <= s && oe >= e)
		return 0;	/* already covered: nothing to rewrite */
	if (os && os < s)
		s = os;
	if (oe > e)
		e = oe;
	size_t n = profile_span_encode(s, e, text);
	return binio_write_file_atomic(file, text, n, w->file_mode);
}

static int write_pair(void *ctx, uint32_t img, uint32_t ev)
{
	return write_one(ctx, W_COUNTS, img, ev);
}

static bool has_unknown(const struct spent_profile *p, uint32_t ev)
{
	for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
		if (spent_profile_unknown_count(p, ev, r))
			return true;
	return false;
}

static bool has_stacks(const struct spent_profile *p, uint32_t ev)
{
	size_t i = 0, n;
	const struct spent_profile_frame *f;
	uint64_t count;
	return spent_profile_stack_next(p, ev, &i, &f, &n, &count) == 1;
}

static bool has_detail(const struct spent_profile *p, uint32_t ev)
{
	struct spent_profile_detail_row row;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++)
		if (!spent_profile_detail_get(p, i, &row) && row.event == ev)
			return true;
	return false;
}

int spent_profile_dir_write_epoch(struct spent_profile_dir *d, uint32_t epoch, const struct spent_profile *p,
			    spent_profile_warn_fn warn, void *ctx)
{
	char dir[PATH_MAX];
	int err = profile_dir_epoch_path(d, epoch, dir, sizeof(dir));
	return err ? err : profile_dir_write_epoch_at(d, dir, p, warn, ctx);
}

int profile_dir_write_epoch_at(struct spent_profile_dir *d, const char *dir, const struct spent_profile *p,
			       spent_profile_warn_fn warn, void *ctx)
{
	struct write_ctx w = { .p = p, .warn = warn, .ctx = ctx, .file_mode = d->file_mode,
			       .keep_counts_files = d->keep_counts_files };
	int err = 0;
	if (strlen(dir) >= sizeof(w.dir))
		return -ENAMETOOLONG;
	strcpy(w.dir, dir);
	if (mkdir(w.dir, d->dir_mode) < 0) {
		if (errno != EEXIST)
			return -errno;
	} else if (chmod(w.dir, d->dir_mode) < 0) {
		return -errno;
	}
	if ((err = spent_profile_foreach_pair(p, write_pair, &w)))
		return err;
	/* a kind P holds nothing of is not rewritten: the daemon writes one (image, event) pair
	 * at a time, and re-reading and rewriting the epoch's whole samples file with each of
	 * them took most of a CPU on a busy machine */
	for (uint32_t ev = 0; ev < spent_profile_nevents(p) && !err; ev++) {
		if (has_unknown(p, ev))
			err = write_one(&w, W_UNKNOWN, 0, ev);
		if (!err && (has_stacks(p, ev) || has_detail(p, ev)))
			err = write_stacks_samples(&w, ev);
	}
	return err ? err : write_span(&w);
}
