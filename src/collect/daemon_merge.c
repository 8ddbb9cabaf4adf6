/* collect/daemon_merge.c - attribute drained samples to (image, offset, event) in a pending
 * profile, with a detail row per (process, pc, event) and drain (who and when), then merge it
 * into the database a bounded slice of files per tick. */
#include "core/alloc.h"
#include "collect/daemon_merge.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/aggregate.h"
#include "collect/daemon_buildid.h"
#include "collect/daemon_jit.h"
#include "profile/profile_file.h"

struct wpair {
	uint32_t img, ev;
};

struct dmerge {
	struct spent_profile_dir *d;
	struct dmaps *maps;
	struct dmerge_event evs[AGG_MAX_EVENTS];
	size_t nev;
	char **per;
	size_t nper;
	int8_t *per_match;	/* per dimage id: -1 not looked at, 0 no, 1 per-process image */
	size_t per_match_cap;
	uint64_t bucket_ns;	/* time bucket of the detail rows */
	uint64_t row_time;	/* wall-clock ns of the drain that handed over the entries now */
	uint32_t epoch;
	/* samples since the last merge started */
	struct spent_profile *pending;
	uint32_t pev[AGG_MAX_EVENTS];
	uint32_t *pimg;		/* dimage id -> pending image index + 1 (0: not interned yet) */
	size_t pimg_cap;
	/* per dimage id since start: samples and aggregated entries (the reduction by image) */
	struct dmerge_image_stats *istat;
	size_t istat_cap;
	/* the merge being written */
	struct spent_profile *writing;
	struct wpair *pairs;
	size_t npairs, cap_pairs, next;
	int rest_done;		/* after the pairs: 1 unknown, 2 detail rows, 3 span written */
	struct dbuildid *bid;	/* images written get their symbols saved in the build-id cache */
	void (*log)(void *arg, const char *msg);	/* dmerge_set_log, or NULL */
	void *log_arg;
	bool finishing;		/* in dmerge_finish: a flush waits for it, symbols wait for ticks */
	struct dmerge_stats st;
};

static int profile_with_events(const struct dmerge *g, struct spent_profile **out, uint32_t *ev)
{
	struct spent_profile *p = spent_profile_new();
	int err = p ? spent_profile_set_time_bucket(p, g->bucket_ns) : -ENOMEM;

	for (size_t e = 0; e < g->nev && !err; e++)
		err = spent_profile_event_intern(p, g->evs[e].name, g->evs[e].period,
					   g->evs[e].freq ? SPENT_PROFILE_EV_FREQ : 0, &ev[e]);
	if (err) {
		spent_profile_free(p);
		p = NULL;
	}
	*out = p;
	return err;
}

int dmerge_new(struct spent_profile_dir *d, struct dmaps *maps, const struct dmerge_event *evs,
	       size_t nev, const char *const *per_process, size_t nper, uint64_t bucket_ns,
	       struct dmerge **out)
{
	struct dmerge *g = calloc(1, sizeof(*g));
	int err = -ENOMEM;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	if (nev == 0 || nev > AGG_MAX_EVENTS) {
		err = -EINVAL;
		goto out;
	}
	g->d = d;
	g->maps = maps;
	g->nev = nev;
	g->bucket_ns = bucket_ns ? bucket_ns : SPENT_PROFILE_TIME_BUCKET_NS;
	for (size_t e = 0; e < nev; e++) {
		g->evs[e] = evs[e];
		if (!(g->evs[e].name = strdup(evs[e].name)))
			goto out;
	}
	g->per = calloc(nper + 1, sizeof(*g->per));
	if (!g->per)
		goto out;
	for (size_t i = 0; i < nper; i++, g->nper++)
		if (!(g->per[i] = strdup(per_process[i])))
			goto out;
	if ((err = spent_profile_dir_current_epoch(d, &g->epoch)))
		goto out;
	if ((err = profile_with_events(g, &g->pending, g->pev)))
		goto out;
	if ((err = dbuildid_new(&g->bid)))
		goto out;
	*out = g;
	g = NULL;
out:
	dmerge_free(g);
	return err;
}

void dmerge_free(struct dmerge *g)
{
	if (!g)
		return;
	for (size_t e = 0; e < g->nev; e++)
		free((char *)g->evs[e].name);
	for (size_t i = 0; i < g->nper; i++)
		free(g->per[i]);
	free(g->per);
	free(g->per_match);
	spent_profile_free(g->pending);
	spent_profile_free(g->writing);
	free(g->pimg);
	free(g->istat);
	free(g->pairs);
	dbuildid_free(g->bid);
	free(g);
}

static void image_of(const struct dimage *im, struct spent_profile_image *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->path = im->path;
	pi->id_kind = im->id_kind;
	pi->id_len = im->id_len;
	memcpy(pi->id, im->ident, im->id_len);
}

/* The pending profile's index for dimage ID; -errno. */
static int pending_image(struct dmerge *g, uint32_t id, uint32_t *idx)
{
	struct spent_profile_image pi;
	int err;

	size_t old = g->pimg_cap;
	if (ALLOC_GROW(g->pimg, (size_t)id + 1, g->pimg_cap))
		return -ENOMEM;
	memset(g->pimg + old, 0, (g->pimg_cap - old) * sizeof(*g->pimg));
	if (g->pimg[id]) {
		*idx = g->pimg[id] - 1;
		return 0;
	}
	image_of(dmaps_image(g->maps, id), &pi);
	if ((err = spent_profile_image_intern(g->pending, &pi, idx)))
		return err;
	g->pimg[id] = *idx + 1;
	return 0;
}

/* Does image ID get detail rows? Every image unless --per-process named some. */
static bool detail_image(struct dmerge *g, uint32_t id)
{
	if (!g->nper)
		return true;
	size_t old = g->per_match_cap;
	if (ALLOC_GROW(g->per_match, (size_t)id + 1, g->per_match_cap))
		return false;
	memset(g->per_match + old, -1, g->per_match_cap - old);	/* -1: not matched yet */
	if (g->per_match[id] < 0) {
		const char *path = dmaps_image(g->maps, id)->path;
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		g->per_match[id] = 0;
		for (size_t i = 0; i < g->nper; i++)
			if (!strcmp(g->per[i], path) || !strcmp(g->per[i], base))
				g->per_match[id] = 1;
	}
	return g->per_match[id] == 1;
}

void dmerge_set_interval(struct dmerge *g, uint64_t start_ns, uint64_t end_ns)
{
	/* the drain's time, not the interval's start: no sample is ever dated before it
	 * happened, so `--until T` never takes samples of a program started after T */
	g->row_time = end_ns;
	spent_profile_extend_span(g->pending, start_ns, end_ns);
}

/* The detail row of COUNT samples of PID at PC (FRAME) (best effort: a task or row that cannot
 * be kept for want of memory loses the who and when, never the histogram's count). */
static void detail_add(struct dmerge *g, pid_t pid, uint64_t pc, struct spent_profile_frame frame,
		       uint32_t event, uint64_t count)
{
	const char *comm, *cgroup;
	uint32_t task;

	dmaps_task_at(g->maps, pid, pc, &comm, &cgroup);
	struct spent_profile_task t = { .comm = (char *)comm, .pid = (uint32_t)pid, .cgroup = (char *)cgroup };
	if (spent_profile_task_intern(g->pending, &t, &task) == 0)
		spent_profile_add_detail(g->pending, g->pev[event], task, g->row_time, &frame, 1, count);
}

/* One aggregated entry of COUNT samples reached image ID (best effort: no memory, no stat). */
static void image_stat_add(struct dmerge *g, uint32_t id, uint64_t count)
{
	size_t old = g->istat_cap;
	if (ALLOC_GROW(g->istat, (size_t)id + 1, g->istat_cap))
		return;
	memset(g->istat + old, 0, (g->istat_cap - old) * sizeof(*g->istat));
	g->istat[id].samples += count;
	g->istat[id].entries++;
}

size_t dmerge_top_images(const struct dmerge *g, struct dmerge_image_stats *top, size_t n)
{
	size_t k = 0;

	for (size_t id = 0; id < g->istat_cap; id++) {
		const struct dmerge_image_stats *s = &g->istat[id];
		size_t i;
		if (!s->entries)
			continue;
		/* insertion into the sorted top N (N is small) */
		for (i = k; i > 0 && top[i - 1].samples < s->samples; i--)
			if (i < n)
				top[i] = top[i - 1];
		if (i < n) {
			top[i] = *s;
			top[i].image = (uint32_t)id;	/* the index is the image: not kept per add */
			if (k < n)
				k++;
		}
	}
	return k;
}

/* Generated code its process named in a perf JIT map: filed under the map, offset = the
 * address (views name it from the map). 0, or -ENOENT when no trusted map covers PC. */
static int jit_add(struct dmerge *g, pid_t pid, uint64_t pc, uint32_t event, uint64_t count)
{
	char path[64];
	uint32_t idx;
	int err = djit_lookup(pid, pc, path, sizeof(path));
	struct spent_profile_image pi = { .path = path };

	if (!err && !(err = spent_profile_image_intern(g->pending, &pi, &idx)) &&
	    !(err = spent_profile_add(g->pending, idx, pc, g->pev[event], count))) {
		g->st.placed += count;
		if (!g->nper)	/* no --per-process: every placed sample has its detail row */
			detail_add(g, pid, pc, (struct spent_profile_frame){ idx, pc }, event, count);
	}
	return err;
}

void dmerge_add(struct dmerge *g, pid_t pid, uint64_t pc, uint32_t event, uint64_t count)
{
	uint32_t id, idx;
	uint64_t off;
	int r;

	if (event >= g->nev)
		return;
	r = dmaps_resolve(g->maps, pid, pc, &id, &off);
	if (r == 0 && strcmp(dmaps_image(g->maps, id)->path, "[anon]") == 0)
		r = -EFAULT;
	if (r == -EFAULT && jit_add(g, pid, pc, event, count) == 0)
		return;
	if (r) {
		enum spent_profile_unknown_reason why = r == -ESRCH ? SPENT_PROFILE_UNK_PROCESS_GONE :
			r == -EFAULT ? SPENT_PROFILE_UNK_ANON : SPENT_PROFILE_UNK_NO_MAPPING;
		if (spent_profile_add_unknown(g->pending, why, g->pev[event], count) == 0) {
			if (why == SPENT_PROFILE_UNK_ANON)
				g->st.anon += count;
			else
				g->st.unknown += count;
		}
		/* the process is still known when only its image is not: its share counts them */
		if (!g->nper)
			detail_add(g, pid, pc, (struct spent_profile_frame){ SPENT_PROFILE_NO_IMAGE, pc },
				   event, count);
		return;
	}
	image_stat_add(g, id, count);
	if (pending_image(g, id, &idx) == 0 && spent_profile_add(g->pending, idx, off, g->pev[event], count) == 0) {
		g->st.placed += count;
		if (detail_image(g, id))
			detail_add(g, pid, pc, (struct spent_profile_frame){ idx, off }, event, count);
	}
}

void dmerge_add_lost(struct dmerge *g, uint32_t event, uint64_t count)
{
	if (event < g->nev && spent_profile_add_unknown(g->pending, SPENT_PROFILE_UNK_LOST, g->pev[event], count) == 0)
		g->st.lost += count;
}

static int collect_pair(void *ctx, uint32_t img, uint32_t ev)
{
	struct dmerge *g = ctx;
	if (ALLOC_GROW(g->pairs, g->npairs + 1, g->cap_pairs))
		return -ENOMEM;
	g->pairs[g->npairs++] = (struct wpair){ img, ev };
	return 0;
}

void dmerge_set_log(struct dmerge *g, void (*log)(void *arg, const char *msg), void *arg)
{
	g->log = log;
	g->log_arg = arg;
}

/* A corrupt file was set aside as NAME.corrupt: its counts leave the epoch's history, which
 * the log says (it was counted as a write error only) */
static void on_corrupt(void *ctx, const char *path, const char *why)
{
	struct dmerge *g = ctx;
	char msg[PATH_MAX + 300];

	g->st.write_errors++;
	if (g->log) {
		snprintf(msg, sizeof(msg), "set aside '%s' as '%s.corrupt' (%s): the counts it held are "
			 "not in the epoch", path, path, why);
		g->log(g->log_arg, msg);
	}
}

int dmerge_start(struct dmerge *g)
{
	struct spent_profile *fresh;
	uint32_t ev[AGG_MAX_EVENTS];
	uint64_t span_lo, span_hi;
	bool any = spent_profile_ncells(g->pending) > 0 || spent_profile_ndetail(g->pending) > 0;
	int err;

	if (g->writing)
		return 0;
	for (size_t e = 0; e < g->nev && !any; e++)
		for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
			any = any || spent_profile_unknown_count(g->pending, g->pev[e], r) > 0;
	spent_profile_span(g->pending, &span_lo, &span_hi);
	if (!any && !span_hi)
		return 0;
	if ((err = profile_with_events(g, &fresh, ev)))
		return err;
	g->writing = g->pending;
	g->pending = fresh;
	memcpy(g->pev, ev, sizeof(ev));
	if (g->pimg)
		memset(g->pimg, 0, g->pimg_cap * sizeof(*g->pimg));
	g->npairs = g->next = 0;
	g->rest_done = 0;
	return spent_profile_foreach_pair(g->writing, collect_pair, g);
}

/* Inode of the counts file for (IMG, EV) of SUB in the current epoch, 0 when absent. */
static uint64_t counts_file_ino(struct dmerge *g, const struct spent_profile *sub)
{
	char name[320], path[PATH_MAX];
	struct stat st;

	if (profile_file_name_counts(sub, 0, 0, name, sizeof(name)))
		return 0;
	snprintf(path, sizeof(path), "%s/epoch-%04u/%s", spent_profile_dir_path(g->d), g->epoch, name);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Write one (image, event) pair of the running merge; 0 once its counts are on disk. */
static int write_pair(struct dmerge *g, const struct wpair *w)
{
	struct spent_profile *sub = spent_profile_new();
	struct spent_profile_count *c = NULL;
	uint32_t si, se;
	size_t n = 0;
	const struct spent_profile_event *e = spent_profile_event_get(g->writing, w->ev);
	int err = sub ? 0 : -ENOMEM;

	err = err ? err : spent_profile_event_intern(sub, e->name, e->period, e->flags, &se);
	err = err ? err : spent_profile_image_intern(sub, spent_profile_image_get(g->writing, w->img), &si);
	err = err ? err : spent_profile_counts(g->writing, w->img, w->ev, &c, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = spent_profile_add(sub, si, c[i].offset, se, c[i].count);
	free(c);
	if (!err) {
		uint64_t before = counts_file_ino(g, sub);
		err = spent_profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
		/* the counts file landed and only a +0 rewrite after it failed: it is done,
		 * and writing it again would count it twice */
		if (err && counts_file_ino(g, sub) != before)
			err = 0;
	}
	if (!err)	/* its counts are in the database: its names must outlive its file */
		dbuildid_note(g->bid, spent_profile_image_get(g->writing, w->img));
	spent_profile_free(sub);
	return err;
}

/* A new profile with the running merge's events, at the same indices. */
static int sub_with_events(struct dmerge *g, struct spent_profile **out)
{
	struct spent_profile *sub = spent_profile_new();
	int err = sub ? spent_profile_set_time_bucket(sub, spent_profile_time_bucket(g->writing)) : -ENOMEM;

	for (uint32_t ev = 0; ev < spent_profile_nevents(g->writing) && !err; ev++) {
		const struct spent_profile_event *e = spent_profile_event_get(g->writing, ev);
		uint32_t se;
		err = spent_profile_event_intern(sub, e->name, e->period, e->flags, &se);
	}
	if (err) {
		spent_profile_free(sub);
		sub = NULL;
	}
	*out = sub;
	return err;
}

static int write_unknown(struct dmerge *g)
{
	struct spent_profile *sub;
	int err = sub_with_events(g, &sub);
	bool any = false;

	for (uint32_t ev = 0; !err && ev < spent_profile_nevents(g->writing); ev++) {
		uint32_t se = ev;
		for (int r = 0; r < SPENT_PROFILE_UNK_NR && !err; r++) {
			uint64_t n = spent_profile_unknown_count(g->writing, ev, r);
			if (n) {
				any = true;
				err = spent_profile_add_unknown(sub, r, se, n);
			}
		}
	}
	if (!err && any)
		err = spent_profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
	spent_profile_free(sub);
	return err;
}

/* Copy detail row ROW of the running merge into SUB (its images and task interned there;
 * IMG maps the merge's image indices to SUB's, + 1, 0 when not interned yet). */
static int copy_detail(struct dmerge *g, struct spent_profile *sub, uint32_t *img,
		       const struct spent_profile_detail_row *row)
{
	struct spent_profile_frame f[1];
	uint32_t task = SPENT_PROFILE_NO_TASK;
	int err = 0;

	if (row->nframes != 1)
		return -EINVAL;	/* the daemon keeps one frame per row */
	f[0] = row->frames[0];
	if (f[0].image != SPENT_PROFILE_NO_IMAGE) {
		if (!img[f[0].image]) {
			uint32_t si = 0;
			err = spent_profile_image_intern(sub, spent_profile_image_get(g->writing, f[0].image), &si);
			img[f[0].image] = si + 1;
		}
		f[0].image = img[f[0].image] - 1;
	}
	if (!err && row->task != SPENT_PROFILE_NO_TASK)
		err = spent_profile_task_intern(sub, spent_profile_task_get(g->writing, row->task), &task);
	return err ? err : spent_profile_add_detail(sub, row->event, task, row->time_ns, f, 1, row->count);
}

/* The detail rows go to the epoch's samples files in one write: they are small next to the
 * counts (one row per process, pc and event per drain). */
static int write_detail(struct dmerge *g)
{
	struct spent_profile *sub = NULL;
	size_t n = spent_profile_ndetail(g->writing);
	uint32_t *img = calloc(spent_profile_nimages(g->writing) + 1, sizeof(*img));
	int err = img ? 0 : -ENOMEM;

	if (!err && n)
		err = sub_with_events(g, &sub);
	for (size_t i = 0; i < n && !err; i++) {
		struct spent_profile_detail_row row;
		err = spent_profile_detail_get(g->writing, i, &row);
		err = err ? err : copy_detail(g, sub, img, &row);
	}
	if (!err && n)
		err = spent_profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
	spent_profile_free(sub);
	free(img);
	return err;
}

/* The span last: writing it twice (a retry) changes nothing. */
static int write_span(struct dmerge *g)
{
	struct spent_profile *sub;
	uint64_t lo, hi;
	int err;

	spent_profile_span(g->writing, &lo, &hi);
	if (!hi)
		return 0;
	if ((err = sub_with_events(g, &sub)))
		return err;
	spent_profile_extend_span(sub, lo, hi);
	err = spent_profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
	spent_profile_free(sub);
	return err;
}

int dmerge_step(struct dmerge *g, size_t max_files)
{
	size_t done = 0;
	int err;

	if (!g->finishing)
		dbuildid_step(g->bid, 1);	/* one image's symbols per tick, merging or not */
	if (!g->writing)
		return 1;
	while (done < max_files && g->next < g->npairs) {
		if ((err = write_pair(g, &g->pairs[g->next])) != 0)
			goto fail;
		g->next++;
		done++;
		g->st.files_written++;
	}
	if (g->next < g->npairs)
		return 0;
	static int (*const rest[])(struct dmerge *) = { write_unknown, write_detail, write_span };
	for (; g->rest_done < 3; g->rest_done++)
		if ((err = rest[g->rest_done](g)) != 0)
			goto fail;
	spent_profile_free(g->writing);
	g->writing = NULL;
	free(g->pairs);
	g->pairs = NULL;
	g->npairs = g->cap_pairs = g->next = 0;
	g->st.merges++;
	g->st.last_error = 0;
	return 1;
fail:
	g->st.write_errors++;
	g->st.last_error = err;
	return err;
}

int dmerge_finish(struct dmerge *g)
{
	int err;

	/* a merge already running finishes first, then everything that came since */
	g->finishing = true;
	for (int round = 0; round < 2; round++) {
		if ((err = dmerge_start(g)) != 0)
			break;
		while ((err = dmerge_step(g, 64)) == 0)
			;
		if (err < 0)
			break;
	}
	g->finishing = false;
	return err < 0 ? err : 0;
}

void dmerge_set_epoch(struct dmerge *g, uint32_t epoch)
{
	g->epoch = epoch;
}

uint32_t dmerge_epoch(const struct dmerge *g)
{
	return g->epoch;
}

void dmerge_get_stats(const struct dmerge *g, struct dmerge_stats *st)
{
	*st = g->st;
	st->pending_cells = spent_profile_ncells(g->pending) + (g->writing ? spent_profile_ncells(g->writing) : 0);
}

void dmerge_get_buildid_stats(const struct dmerge *g, struct dbuildid_stats *st)
{
	dbuildid_get_stats(g->bid, st);
}
