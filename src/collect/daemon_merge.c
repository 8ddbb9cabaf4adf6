/* collect/daemon_merge.c - attribute drained samples to (image, offset, event) in a pending
 * profile, then merge it into the database a bounded slice of files per tick. */
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

struct pidprof {
	pid_t pid;
	struct profile *p;
	uint32_t ev[AGG_MAX_EVENTS];
};

struct dmerge {
	struct profile_dir *d;
	struct dmaps *maps;
	struct dmerge_event evs[AGG_MAX_EVENTS];
	size_t nev;
	char **per;
	size_t nper;
	int8_t *per_match;	/* per dimage id: -1 not looked at, 0 no, 1 per-process image */
	size_t per_match_cap;
	uint32_t epoch;
	/* samples since the last merge started */
	struct profile *pending;
	uint32_t pev[AGG_MAX_EVENTS];
	uint32_t *pimg;		/* dimage id -> pending image index + 1 (0: not interned yet) */
	size_t pimg_cap;
	struct pidprof *pp;
	size_t npp;
	/* per dimage id since start: samples and aggregated entries (the reduction by image) */
	struct dmerge_image_stats *istat;
	size_t istat_cap;
	/* the merge being written */
	struct profile *writing;
	struct wpair *pairs;
	size_t npairs, next;
	bool unknown_done;
	struct dbuildid *bid;	/* images written get their symbols saved in the build-id cache */
	bool finishing;		/* in dmerge_finish: a flush waits for it, symbols wait for ticks */
	struct dmerge_stats st;
};

static int profile_with_events(const struct dmerge *g, struct profile **out, uint32_t *ev)
{
	struct profile *p = profile_new();
	int err = p ? 0 : -ENOMEM;

	for (size_t e = 0; e < g->nev && !err; e++)
		err = profile_event_intern(p, g->evs[e].name, g->evs[e].period,
					   g->evs[e].freq ? PROFILE_EV_FREQ : 0, &ev[e]);
	if (err) {
		profile_free(p);
		p = NULL;
	}
	*out = p;
	return err;
}

int dmerge_new(struct profile_dir *d, struct dmaps *maps, const struct dmerge_event *evs,
	       size_t nev, const char *const *per_process, size_t nper, struct dmerge **out)
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
	if ((err = profile_dir_current_epoch(d, &g->epoch)))
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

static void pidprofs_free(struct pidprof *pp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		profile_free(pp[i].p);
	free(pp);
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
	profile_free(g->pending);
	profile_free(g->writing);
	free(g->pimg);
	free(g->istat);
	free(g->pairs);
	pidprofs_free(g->pp, g->npp);
	dbuildid_free(g->bid);
	free(g);
}

static void image_of(const struct dimage *im, struct profile_image *pi)
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
	struct profile_image pi;
	int err;

	if (id >= g->pimg_cap) {
		size_t cap = g->pimg_cap ? g->pimg_cap : 64;
		while (cap <= id)
			cap *= 2;
		uint32_t *v = realloc(g->pimg, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + g->pimg_cap, 0, (cap - g->pimg_cap) * sizeof(*v));
		g->pimg = v;
		g->pimg_cap = cap;
	}
	if (g->pimg[id]) {
		*idx = g->pimg[id] - 1;
		return 0;
	}
	image_of(dmaps_image(g->maps, id), &pi);
	if ((err = profile_image_intern(g->pending, &pi, idx)))
		return err;
	g->pimg[id] = *idx + 1;
	return 0;
}

static bool per_process_image(struct dmerge *g, uint32_t id)
{
	if (!g->nper)
		return false;
	if (id >= g->per_match_cap) {
		size_t cap = g->per_match_cap ? g->per_match_cap : 64;
		while (cap <= id)
			cap *= 2;
		int8_t *v = realloc(g->per_match, cap);
		if (!v)
			return false;
		memset(v + g->per_match_cap, -1, cap - g->per_match_cap);
		g->per_match = v;
		g->per_match_cap = cap;
	}
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

static void per_process_add(struct dmerge *g, pid_t pid, uint32_t id, uint64_t off,
			    uint32_t event, uint64_t count)
{
	struct pidprof *pp = NULL;
	struct profile_image pi;
	uint32_t idx;

	for (size_t i = 0; i < g->npp; i++)
		if (g->pp[i].pid == pid)
			pp = &g->pp[i];
	if (!pp) {
		struct pidprof *v = realloc(g->pp, (g->npp + 1) * sizeof(*v));
		if (!v)
			return;
		g->pp = v;
		pp = &g->pp[g->npp];
		pp->pid = pid;
		if (profile_with_events(g, &pp->p, pp->ev))
			return;
		g->npp++;
	}
	image_of(dmaps_image(g->maps, id), &pi);
	if (profile_image_intern(pp->p, &pi, &idx) == 0)
		profile_add(pp->p, idx, off, pp->ev[event], count);
}

/* One aggregated entry of COUNT samples reached image ID (best effort: no memory, no stat). */
static void image_stat_add(struct dmerge *g, uint32_t id, uint64_t count)
{
	if (id >= g->istat_cap) {
		size_t cap = g->istat_cap ? g->istat_cap : 64;
		while (cap <= id)
			cap *= 2;
		struct dmerge_image_stats *v = realloc(g->istat, cap * sizeof(*v));
		if (!v)
			return;
		memset(v + g->istat_cap, 0, (cap - g->istat_cap) * sizeof(*v));
		g->istat = v;
		g->istat_cap = cap;
	}
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
	struct profile_image pi = { .path = path };

	if (!err && !(err = profile_image_intern(g->pending, &pi, &idx)) &&
	    !(err = profile_add(g->pending, idx, pc, g->pev[event], count)))
		g->st.placed += count;
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
		enum profile_unknown_reason why = r == -ESRCH ? PROFILE_UNK_PROCESS_GONE :
			r == -EFAULT ? PROFILE_UNK_ANON : PROFILE_UNK_NO_MAPPING;
		if (profile_add_unknown(g->pending, why, g->pev[event], count) == 0) {
			if (why == PROFILE_UNK_ANON)
				g->st.anon += count;
			else
				g->st.unknown += count;
		}
		return;
	}
	image_stat_add(g, id, count);
	if (pending_image(g, id, &idx) == 0 && profile_add(g->pending, idx, off, g->pev[event], count) == 0)
		g->st.placed += count;
	if (per_process_image(g, id))
		per_process_add(g, pid, id, off, event, count);
}

void dmerge_add_lost(struct dmerge *g, uint32_t event, uint64_t count)
{
	if (event < g->nev && profile_add_unknown(g->pending, PROFILE_UNK_LOST, g->pev[event], count) == 0)
		g->st.lost += count;
}

static int collect_pair(void *ctx, uint32_t img, uint32_t ev)
{
	struct dmerge *g = ctx;
	struct wpair *v = realloc(g->pairs, (g->npairs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	g->pairs = v;
	g->pairs[g->npairs++] = (struct wpair){ img, ev };
	return 0;
}

static void on_corrupt(void *ctx, const char *path, const char *why)
{
	struct dmerge *g = ctx;

	g->st.write_errors++;	/* a corrupt file was set aside as NAME.corrupt */
}

/* Per-process profiles go whole into DB/pid-PID (small: only the chosen images). */
static void per_process_write(struct dmerge *g)
{
	char dir[PATH_MAX];

	for (size_t i = 0; i < g->npp; i++) {
		struct profile_dir *pd = NULL;
		uint32_t ep;
		int err;
		snprintf(dir, sizeof(dir), "%s/pid-%d", profile_dir_path(g->d), (int)g->pp[i].pid);
		err = profile_dir_open_or_create(dir, &pd);
		if (!err) {
			profile_dir_set_modes(pd, 0750, 0640);
			chmod(dir, 0750);
			err = profile_dir_current_epoch(pd, &ep);
		}
		if (!err)
			err = profile_dir_write_epoch(pd, ep, g->pp[i].p, on_corrupt, g);
		if (err) {
			g->st.write_errors++;
			g->st.last_error = err;
		}
		profile_dir_close(pd);
	}
	pidprofs_free(g->pp, g->npp);
	g->pp = NULL;
	g->npp = 0;
}

int dmerge_start(struct dmerge *g)
{
	struct profile *fresh;
	uint32_t ev[AGG_MAX_EVENTS];
	bool any = profile_ncells(g->pending) > 0;
	int err;

	if (g->writing)
		return 0;
	for (size_t e = 0; e < g->nev && !any; e++)
		for (int r = 0; r < PROFILE_UNK_NR; r++)
			any = any || profile_unknown_count(g->pending, g->pev[e], r) > 0;
	if (g->npp)
		per_process_write(g);
	if (!any)
		return 0;
	if ((err = profile_with_events(g, &fresh, ev)))
		return err;
	g->writing = g->pending;
	g->pending = fresh;
	memcpy(g->pev, ev, sizeof(ev));
	if (g->pimg)
		memset(g->pimg, 0, g->pimg_cap * sizeof(*g->pimg));
	g->npairs = g->next = 0;
	g->unknown_done = false;
	return profile_foreach_pair(g->writing, collect_pair, g);
}

/* Inode of the counts file for (IMG, EV) of SUB in the current epoch, 0 when absent. */
static uint64_t counts_file_ino(struct dmerge *g, const struct profile *sub)
{
	char name[320], path[PATH_MAX];
	struct stat st;

	if (profile_file_name_counts(sub, 0, 0, name, sizeof(name)))
		return 0;
	snprintf(path, sizeof(path), "%s/epoch-%04u/%s", profile_dir_path(g->d), g->epoch, name);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Write one (image, event) pair of the running merge; 0 once its counts are on disk. */
static int write_pair(struct dmerge *g, const struct wpair *w)
{
	struct profile *sub = profile_new();
	struct profile_count *c = NULL;
	uint32_t si, se;
	size_t n = 0;
	const struct profile_event *e = profile_event_get(g->writing, w->ev);
	int err = sub ? 0 : -ENOMEM;

	err = err ? err : profile_event_intern(sub, e->name, e->period, e->flags, &se);
	err = err ? err : profile_image_intern(sub, profile_image_get(g->writing, w->img), &si);
	err = err ? err : profile_counts(g->writing, w->img, w->ev, &c, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = profile_add(sub, si, c[i].offset, se, c[i].count);
	free(c);
	if (!err) {
		uint64_t before = counts_file_ino(g, sub);
		err = profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
		/* the counts file landed and only a +0 rewrite after it failed: it is done,
		 * and writing it again would count it twice */
		if (err && counts_file_ino(g, sub) != before)
			err = 0;
	}
	if (!err)	/* its counts are in the database: its names must outlive its file */
		dbuildid_note(g->bid, profile_image_get(g->writing, w->img));
	profile_free(sub);
	return err;
}

static int write_unknown(struct dmerge *g)
{
	struct profile *sub = profile_new();
	int err = sub ? 0 : -ENOMEM;
	bool any = false;

	for (uint32_t ev = 0; ev < profile_nevents(g->writing) && !err; ev++) {
		const struct profile_event *e = profile_event_get(g->writing, ev);
		uint32_t se;
		err = profile_event_intern(sub, e->name, e->period, e->flags, &se);
		for (int r = 0; r < PROFILE_UNK_NR && !err; r++) {
			uint64_t n = profile_unknown_count(g->writing, ev, r);
			if (n) {
				any = true;
				err = profile_add_unknown(sub, r, se, n);
			}
		}
	}
	if (!err && any)
		err = profile_dir_write_epoch(g->d, g->epoch, sub, on_corrupt, g);
	profile_free(sub);
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
	if (!g->unknown_done) {
		if ((err = write_unknown(g)) != 0)
			goto fail;
		g->unknown_done = true;
	}
	profile_free(g->writing);
	g->writing = NULL;
	free(g->pairs);
	g->pairs = NULL;
	g->npairs = g->next = 0;
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
	st->pending_cells = profile_ncells(g->pending) + (g->writing ? profile_ncells(g->writing) : 0);
}
