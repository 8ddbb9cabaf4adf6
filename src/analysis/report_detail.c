/* analysis/report_detail.c - detail rows of a profile selected (comm, pid, tid, image, time
 * window) and grouped by the --sort keys (analysis/report_detail.h). Function names come from
 * profile_frame_name, the name every other view shows, once per distinct leaf. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report_detail.h"
#include "core/alloc.h"
#include "core/path.h"
#include "core/strmap.h"
#include "profile/export.h"

static const struct {
	const char *name;
	enum detail_key key;
} key_names[] = {
	{ "comm", DETAIL_KEY_COMM }, { "pid", DETAIL_KEY_PID }, { "tid", DETAIL_KEY_TID },
	{ "image", DETAIL_KEY_IMAGE }, { "dso", DETAIL_KEY_IMAGE },
	{ "function", DETAIL_KEY_FUNCTION }, { "sym", DETAIL_KEY_FUNCTION },
	{ "symbol", DETAIL_KEY_FUNCTION },
};

const char *detail_key_name(enum detail_key k)
{
	static const char *const shown[DETAIL_KEY_NR] = { "comm", "pid", "tid", "image", "function" };
	return k < DETAIL_KEY_NR ? shown[k] : "?";
}

int detail_parse_keys(const char *spec, enum detail_key *keys, size_t *nkeys, char *badbuf,
		      size_t badlen)
{
	size_t n = 0;
	const char *p = spec;
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i = 0;
		while (i < sizeof(key_names) / sizeof(key_names[0]) &&
		       (strlen(key_names[i].name) != len || strncmp(key_names[i].name, p, len)))
			i++;
		bool repeated = false;
		for (size_t j = 0; i < sizeof(key_names) / sizeof(key_names[0]) && j < n; j++)
			repeated |= keys[j] == key_names[i].key;
		if (i == sizeof(key_names) / sizeof(key_names[0]) || repeated) {
			snprintf(badbuf, badlen, "%.*s", (int)len, p);
			return -EINVAL;
		}
		keys[n++] = key_names[i].key;
		if (!p[len])
			break;
		p += len + 1;
	}
	*nkeys = n;
	return 0;
}

bool detail_filter_active(const struct detail_filter *f)
{
	return f->ncomms || f->npids || f->ntids || f->nimages || f->nsymbols || f->start_ns ||
	       f->end_ns;
}

/* Seconds (non-negative, decimals allowed) into nanoseconds; "" is absent (*SET false). */
static int parse_seconds(const char *s, size_t len, bool *set, double *out)
{
	char buf[64], *end;
	*set = len > 0;
	if (!len)
		return 0;
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || *end || end == buf || !isfinite(v) || v < 0 || buf[0] == '+' || buf[0] == ' ')
		return -EINVAL;
	*out = v;
	return 0;
}

static uint64_t span_at(uint64_t start, uint64_t end, double frac)
{
	return start + (uint64_t)llround((double)(end - start) * frac);
}

int detail_parse_time(const char *spec, uint64_t span_start, uint64_t span_end,
		      struct detail_filter *f)
{
	const char *comma = strchr(spec, ','), *pct = strchr(spec, '%');
	double a = 0, b = 0;
	bool has_a, has_b;
	if (!span_start || span_end < span_start)
		return -ERANGE;
	if (!comma && pct) {
		const char *slash = strchr(spec, '/'), *dash = strchr(spec, '-');
		if (slash && slash == pct + 1) {	/* N%/K: the K-th slice of N percent */
			double k;
			if (parse_seconds(spec, (size_t)(pct - spec), &has_a, &a) ||
			    parse_seconds(slash + 1, strlen(slash + 1), &has_b, &k) || !has_a ||
			    !has_b || a <= 0 || a > 100 || k < 1 || k != floor(k) || (k - 1) * a >= 100)
				return -EINVAL;
			f->start_ns = span_at(span_start, span_end, (k - 1) * a / 100);
			f->end_ns = span_at(span_start, span_end, fmin(k * a, 100) / 100);
		} else if (dash && pct == dash - 1 && !strcmp(dash + strcspn(dash, "%"), "%") &&
			   dash[1]) {	/* A%-B% */
			if (parse_seconds(spec, (size_t)(pct - spec), &has_a, &a) ||
			    parse_seconds(dash + 1, strlen(dash + 1) - 1, &has_b, &b) || !has_a ||
			    !has_b || b > 100 || a >= b)
				return -EINVAL;
			f->start_ns = span_at(span_start, span_end, a / 100);
			f->end_ns = span_at(span_start, span_end, b / 100);
		} else {
			return -EINVAL;
		}
		/* the last slice includes the end of the span */
		if (f->end_ns == span_end)
			f->end_ns = 0;
		return 0;
	}
	if (!comma || strchr(comma + 1, ',') ||
	    parse_seconds(spec, (size_t)(comma - spec), &has_a, &a) ||
	    parse_seconds(comma + 1, strlen(comma + 1), &has_b, &b) || (has_a && has_b && a >= b) ||
	    a > 1e9 || b > 1e9)
		return -EINVAL;
	f->start_ns = has_a ? span_start + (uint64_t)llround(a * 1e9) : 0;
	f->end_ns = has_b ? span_start + (uint64_t)llround(b * 1e9) : 0;
	return 0;
}

static bool image_selected(const struct spent_profile *p, const struct detail_filter *f, uint32_t img)
{
	const char *path = img == SPENT_PROFILE_NO_IMAGE ? "[unknown]" : spent_profile_image_get(p, img)->path;
	for (size_t i = 0; i < f->nimages; i++)
		if (!strcmp(f->images[i], path) || !strcmp(f->images[i], path_base_name(path)))
			return true;
	return false;
}

static bool u32_in(const uint32_t *a, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return true;
	return false;
}

bool detail_row_selected(const struct spent_profile *p, const struct detail_filter *f,
			 const struct spent_profile_detail_row *r)
{
	if (f->start_ns || f->end_ns) {
		/* both ends rounded down to the profile's buckets: a window starting inside a
		 * bucket takes all of it, and adjacent windows share no row and lose none */
		uint64_t b = spent_profile_time_bucket(p) ? spent_profile_time_bucket(p) : 1;
		if (!r->time_ns || r->time_ns < f->start_ns / b * b ||
		    (f->end_ns && r->time_ns >= f->end_ns / b * b))
			return false;
	}
	if (f->nimages && !image_selected(p, f, r->frames[0].image))
		return false;
	if (f->nsymbols) {
		char name[1024];
		bool hit = false;
		profile_frame_name(p, f->sym, &r->frames[0], name, sizeof(name));
		for (size_t i = 0; i < f->nsymbols && !hit; i++)
			hit = !strcmp(f->symbols[i], name);
		if (!hit)
			return false;
	}
	if (!f->ncomms && !f->npids && !f->ntids)
		return true;
	const struct spent_profile_task *t = r->task == SPENT_PROFILE_NO_TASK ? NULL : spent_profile_task_get(p, r->task);
	if (f->npids && (!t || !u32_in(f->pids, f->npids, t->pid)))
		return false;
	if (f->ntids && (!t || !u32_in(f->tids, f->ntids, t->tid)))
		return false;
	if (f->ncomms) {
		bool hit = false;
		for (size_t i = 0; t && i < f->ncomms && !hit; i++)
			hit = !strcmp(f->comms[i], t->comm);
		if (!hit)
			return false;
	}
	return true;
}

/* ---- grouping ------------------------------------------------------------------------------ */

struct leaf_name {
	uint32_t img;
	uint64_t off;
	char *name;	/* NULL: empty slot */
};

struct grouper {
	const struct spent_profile *p;
	struct symbols *sym;
	struct detail_report *r;
	size_t capgroups;
	struct strmap keys;	/* the identity of each group -> its index in the report */
	struct leaf_name *names;	/* (image, offset) -> function name */
	size_t capnames, nnames;
	char **labels;		/* profile_kernel_labels: several kernels' names, or NULL */
};

static size_t leaf_slot(uint32_t img, uint64_t off, size_t cap)
{
	return (size_t)((off * 0x9e3779b97f4a7c15ULL) ^ img) & (cap - 1);
}

/* The function name of leaf frame F (owned by the grouper), or NULL when out of memory. */
static const char *function_of(struct grouper *g, const struct spent_profile_frame *f)
{
	if ((g->nnames + 1) * 2 > g->capnames) {
		size_t cap = g->capnames ? g->capnames * 2 : 1024;
		struct leaf_name *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < g->capnames; i++) {
			if (!g->names[i].name)
				continue;
			size_t j = leaf_slot(g->names[i].img, g->names[i].off, cap);
			while (n[j].name)
				j = (j + 1) & (cap - 1);
			n[j] = g->names[i];
		}
		free(g->names);
		g->names = n;
		g->capnames = cap;
	}
	size_t j = leaf_slot(f->image, f->offset, g->capnames);
	for (; g->names[j].name; j = (j + 1) & (g->capnames - 1))
		if (g->names[j].img == f->image && g->names[j].off == f->offset)
			return g->names[j].name;
	char buf[1024];
	profile_frame_name(g->p, g->sym, f, buf, sizeof(buf));
	char *name = strdup(buf);
	if (!name)
		return NULL;
	g->names[j] = (struct leaf_name){ f->image, f->offset, name };
	g->nnames++;
	return name;
}

/* The group with identity KEY and shown columns COLS (copied when it is new). */
static long group_get(struct grouper *g, const char *key, char *const *cols)
{
	struct detail_report *r = g->r;
	/* room for a new group first, so the map never names a group that is not there */
	if (ALLOC_GROW(r->groups, r->ngroups + 1, g->capgroups))
		return -ENOMEM;
	size_t gi;
	int isnew = strmap_intern(&g->keys, key, &gi);
	if (isnew <= 0)
		return isnew < 0 ? isnew : (long)gi;
	struct detail_group *grp = &r->groups[r->ngroups];
	memset(grp, 0, sizeof(*grp));
	bool ok = true;
	for (size_t k = 0; k < r->nkeys && ok; k++)
		ok = (grp->cols[k] = strdup(cols[k])) != NULL;
	r->ngroups++;	/* counted even when incomplete: detail_report_free frees what is there */
	return ok ? (long)gi : -ENOMEM;
}

/* The shown value of each key for row R into COLS (pointing into BUFS), and the group's
 * identity (the function key also names its image, so equal names in two images stay
 * apart) into KEY. 0 or -ENOMEM. */
static int row_columns(struct grouper *g, const struct spent_profile_detail_row *row, char *cols[],
		       char bufs[][32], char *key, size_t keylen)
{
	const struct spent_profile_task *t = row->task == SPENT_PROFILE_NO_TASK ? NULL :
				       spent_profile_task_get(g->p, row->task);
	const struct spent_profile_frame *leaf = &row->frames[0];
	const char *img = leaf->image == SPENT_PROFILE_NO_IMAGE ? "[unknown]" :
			  g->labels && g->labels[leaf->image] ? g->labels[leaf->image] :
			  spent_profile_image_get(g->p, leaf->image)->path;
	size_t used = 0;
	key[0] = 0;
	for (size_t k = 0; k < g->r->nkeys; k++) {
		const char *v = bufs[k], *extra = "";
		switch (g->r->keys[k]) {
		case DETAIL_KEY_COMM:
			v = t ? t->comm : "[unknown]";
			break;
		case DETAIL_KEY_PID:
			snprintf(bufs[k], 32, "%u", t ? t->pid : 0);
			break;
		case DETAIL_KEY_TID:
			snprintf(bufs[k], 32, "%u", t ? t->tid : 0);
			break;
		case DETAIL_KEY_IMAGE:
			v = img;
			break;
		case DETAIL_KEY_FUNCTION:
			if (!(v = function_of(g, leaf)))
				return -ENOMEM;
			extra = img;
			break;
		case DETAIL_KEY_NR:
			break;
		}
		cols[k] = (char *)v;
		int n = snprintf(key + used, keylen - used, "%s\x1f%s\x1e", v, extra);
		if (n < 0 || (size_t)n >= keylen - used)
			return -ENOMEM;	/* longer than any comm, path and name together */
		used += (size_t)n;
	}
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct detail_group *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	for (size_t k = 0; k < DETAIL_KEY_NR && x->cols[k] && y->cols[k]; k++) {
		int c = strcmp(x->cols[k], y->cols[k]);
		if (c)
			return c;
	}
	return 0;
}

int detail_report_build(const struct spent_profile *p, struct symbols *sym, uint32_t ev,
			const enum detail_key *keys, size_t nkeys, const struct detail_filter *filter,
			struct detail_report **out)
{
	struct grouper g = { .p = p, .sym = sym };
	int err = -ENOMEM;
	if (nkeys > DETAIL_KEY_NR)
		return -EINVAL;
	if (!(g.r = calloc(1, sizeof(*g.r))))
		return -ENOMEM;
	memcpy(g.r->keys, keys, nkeys * sizeof(*keys));
	g.r->nkeys = nkeys;
	g.r->event = ev;
	char *key = malloc(3 * SPENT_PROFILE_PATH_MAX + 2048);
	if (!key || profile_kernel_labels(p, &g.labels))
		goto out;
	err = 0;
	for (size_t i = 0; i < spent_profile_ndetail(p) && !err; i++) {
		struct spent_profile_detail_row row;
		char *cols[DETAIL_KEY_NR], bufs[DETAIL_KEY_NR][32];
		if (spent_profile_detail_get(p, i, &row) || row.event != ev || !row.nframes ||
		    !detail_row_selected(p, filter, &row))
			continue;
		g.r->total += row.count;
		if ((err = row_columns(&g, &row, cols, bufs, key, 3 * SPENT_PROFILE_PATH_MAX + 2048)))
			break;
		long gi = group_get(&g, key, cols);
		if (gi < 0)
			err = (int)gi;
		else
			g.r->groups[gi].samples += row.count;
	}
	if (!err && g.r->ngroups > 1)
		qsort(g.r->groups, g.r->ngroups, sizeof(*g.r->groups), group_cmp);
out:
	free(key);
	profile_kernel_labels_free(g.labels, g.labels ? spent_profile_nimages(p) : 0);
	strmap_release(&g.keys);
	for (size_t i = 0; i < g.capnames; i++)
		free(g.names[i].name);
	free(g.names);
	if (err) {
		detail_report_free(g.r);
		return err;
	}
	*out = g.r;
	return 0;
}

void detail_report_free(struct detail_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngroups; i++)
		for (size_t k = 0; k < DETAIL_KEY_NR; k++)
			free(r->groups[i].cols[k]);
	free(r->groups);
	free(r);
}

/* ---- a filtered profile for every other view ---------------------------------------------- */

/* Intern P's images, events and tasks into Q in P's order, so every index means the same. */
static int copy_tables(const struct spent_profile *p, struct spent_profile *q)
{
	uint32_t idx;
	int err = 0;
	for (uint32_t i = 0; i < spent_profile_nimages(p) && !err; i++)
		err = spent_profile_image_intern(q, spent_profile_image_get(p, i), &idx);
	for (uint32_t i = 0; i < spent_profile_nevents(p) && !err; i++) {
		const struct spent_profile_event *e = spent_profile_event_get(p, i);
		err = spent_profile_event_intern(q, e->name, e->period, e->flags, &idx);
	}
	for (uint32_t i = 0; i < spent_profile_ntasks(p) && !err; i++)
		err = spent_profile_task_intern(q, spent_profile_task_get(p, i), &idx);
	return err;
}

int detail_filter_profile(const struct spent_profile *p, const struct detail_filter *filter,
			  struct spent_profile **out)
{
	struct spent_profile *q = spent_profile_new();
	bool stacks = spent_profile_nstacks(p) > 0;
	int err = q ? copy_tables(p, q) : -ENOMEM;
	if (!err && spent_profile_time_bucket(p))
		err = spent_profile_set_time_bucket(q, spent_profile_time_bucket(p));
	for (size_t i = 0; i < spent_profile_ndetail(p) && !err; i++) {
		struct spent_profile_detail_row r;
		if (spent_profile_detail_get(p, i, &r) || !r.nframes || !detail_row_selected(p, filter, &r))
			continue;
		const struct spent_profile_frame *leaf = &r.frames[0];
		if (leaf->image == SPENT_PROFILE_NO_IMAGE)
			err = spent_profile_add_unknown(q, SPENT_PROFILE_UNK_NO_MAPPING, r.event, r.count);
		else
			err = spent_profile_add(q, leaf->image, leaf->offset, r.event, r.count);
		if (!err && stacks)
			err = spent_profile_add_stack(q, r.event, r.frames, r.nframes, r.count);
		if (!err)
			err = spent_profile_add_detail(q, r.event, r.task, r.time_ns, r.frames, r.nframes,
						 r.count);
	}
	if (err) {
		spent_profile_free(q);
		return err;
	}
	uint64_t s, e;
	spent_profile_span(p, &s, &e);
	if (s || e)
		spent_profile_extend_span(q, s, e);
	*out = q;
	return 0;
}
