/* analysis/report.c - build report rows from a profile: symbolize each (image, offset) once,
 * group by the chosen key, count self hits per event and inclusive hits from stacks, and
 * (report -g) each row's call chains. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "core/alloc.h"
#include "core/demangle.h"
#include "core/strmap.h"
#include "profile/export.h"

struct memo_ent {
	uint32_t img;
	uint64_t off;
	long row;	/* -1 empty */
};

struct builder {
	const struct spent_profile *p;
	struct symbols *sym;
	struct report *r;
	size_t caprows;
	struct strmap keys;	/* row key -> row index */
	struct memo_ent *memo;	/* (img, off) -> row */
	size_t capmemo, nmemo;
};

/* Row with KEY (taking ownership of KEY and SYMBOL when a new row is made). */
static long row_get(struct builder *b, char *key, char *symbol, const char *image,
		    const char *file, int line, uint64_t offset)
{
	struct report *r = b->r;
	long found = strmap_find(&b->keys, key);
	size_t index;
	if (found >= 0) {
		free(key);
		free(symbol);
		return found;
	}
	if (ALLOC_GROW(r->rows, r->nrows + 1, b->caprows))
		goto fail;
	struct report_row *row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->self = calloc(r->cfg.nevents, sizeof(uint64_t));
	row->incl = calloc(r->cfg.nevents, sizeof(uint64_t));
	/* a new key's index is the next row's */
	if (!row->self || !row->incl || strmap_intern(&b->keys, key, &index) < 0) {
		free(row->self);
		free(row->incl);
		goto fail;
	}
	row->key = key;
	row->symbol = symbol;
	row->image = image;
	row->file = file;
	row->line = line;
	row->offset = offset;
	row->stamp = UINT64_MAX;
	return (long)r->nrows++;
fail:
	free(key);
	free(symbol);
	return -ENOMEM;
}

/* A function's name as shown (demangled, core/demangle.h), malloc'ed. */
static char *shown_name(const char *raw)
{
	char buf[1024];
	return strdup(demangle_name(raw, buf, sizeof(buf)));
}

/* IMG's name in rows and their keys: its label, else its path */
static const char *image_shown(const struct builder *b, uint32_t img)
{
	if (img < b->r->nlabels && b->r->labels[img])
		return b->r->labels[img];
	return spent_profile_image_get(b->p, img)->path;
}

static long make_row(struct builder *b, uint32_t img, uint64_t off)
{
	const struct spent_profile_image *im = spent_profile_image_get(b->p, img);
	const char *shown = image_shown(b, img);
	struct sym_info si;
	char *key = NULL, *symbol = NULL, name[512];
	struct spent_profile_frame f = { img, off };
	bool want_lines = b->r->cfg.by == REPORT_BY_LINE || b->r->cfg.by == REPORT_BY_INSTRUCTION;
	if (b->r->cfg.by == REPORT_BY_IMAGE) {	/* needs no symbols: never open the image */
		key = strdup(shown);
		symbol = strdup("");
		if (key && symbol)
			return row_get(b, key, symbol, shown, NULL, 0, off);
		free(key);
		free(symbol);
		return -ENOMEM;
	}
	if (want_lines)
		symbols_lookup(b->sym, im, off, &si);
	else
		symbols_lookup_name(b->sym, im, off, &si);
	profile_frame_name(b->p, b->sym, &f, name, sizeof(name));
	/* a stripped image's nearest symbol is not the function: keep the address */
	const char *fn = si.name && si.exact ? si.name : NULL;
	int n = -1;
	switch (b->r->cfg.by) {
	case REPORT_BY_IMAGE:	/* returned above */
		break;
	case REPORT_BY_FUNCTION:
		n = fn ? asprintf(&key, "%s|%s", shown, fn) : asprintf(&key, "%s|%s", shown, name);
		symbol = fn ? shown_name(fn) : strdup(name);
		break;
	case REPORT_BY_LINE:
		/* one row per line of each function: a line inlined into several functions is
		 * as many rows, each under the function its samples were in */
		if (si.file)
			n = asprintf(&key, "%s|%s|%s:%d", shown, fn ? fn : name, si.file, si.line);
		else
			n = asprintf(&key, "%s|%s", shown, name);
		if (si.inlined && fn && strcmp(si.inlined, fn)) {
			char a[1024], c[1024];
			if (asprintf(&symbol, "%s (inlined %s)", demangle_name(fn, a, sizeof(a)),
				     demangle_name(si.inlined, c, sizeof(c))) < 0)
				symbol = NULL;
		} else {
			symbol = fn ? shown_name(fn) : strdup(name);
		}
		break;
	case REPORT_BY_INSTRUCTION:
		n = asprintf(&key, "%s|%llx", shown, (unsigned long long)off);
		symbol = strdup(name);
		break;
	}
	if (n < 0 || !symbol) {
		if (n >= 0)
			free(key);
		free(symbol);
		return -ENOMEM;
	}
	uint64_t roff = b->r->cfg.by == REPORT_BY_FUNCTION && fn ? si.start : off;
	bool lines = b->r->cfg.by == REPORT_BY_LINE || b->r->cfg.by == REPORT_BY_INSTRUCTION;
	return row_get(b, key, symbol, shown, lines ? si.file : NULL, lines ? si.line : 0, roff);
}

/* (img, off) -> row, memoized */
static long row_for(struct builder *b, uint32_t img, uint64_t off)
{
	if ((b->nmemo + 1) * 2 > b->capmemo) {
		size_t cap = b->capmemo ? b->capmemo * 2 : 4096;
		struct memo_ent *n = malloc(cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < cap; i++)
			n[i].row = -1;
		for (size_t i = 0; i < b->capmemo; i++) {
			if (b->memo[i].row < 0)
				continue;
			size_t j = (b->memo[i].off * 0x9e3779b97f4a7c15ULL ^ b->memo[i].img) & (cap - 1);
			while (n[j].row >= 0)
				j = (j + 1) & (cap - 1);
			n[j] = b->memo[i];
		}
		free(b->memo);
		b->memo = n;
		b->capmemo = cap;
	}
	size_t j = (off * 0x9e3779b97f4a7c15ULL ^ img) & (b->capmemo - 1);
	for (; b->memo[j].row >= 0; j = (j + 1) & (b->capmemo - 1))
		if (b->memo[j].img == img && b->memo[j].off == off)
			return b->memo[j].row;
	long row = make_row(b, img, off);
	if (row >= 0) {
		b->memo[j] = (struct memo_ent){ img, off, row };
		b->nmemo++;
	}
	return row;
}

static long unknown_row(struct builder *b, const char *what)
{
	char *key = NULL, *sym = NULL;
	if (asprintf(&key, "[unknown]|%s", what) < 0)
		return -ENOMEM;
	if (asprintf(&sym, "[%s]", what) < 0) {
		free(key);
		return -ENOMEM;
	}
	return row_get(b, key, sym, "[unknown]", NULL, 0, 0);
}

static int add_self(struct builder *b)
{
	const struct report_config *c = &b->r->cfg;
	for (size_t e = 0; e < c->nevents; e++) {
		uint32_t ev = c->events[e];
		for (uint32_t img = 0; img < spent_profile_nimages(b->p); img++) {
			struct spent_profile_count *cnt = NULL;
			size_t n = 0;
			int err = spent_profile_counts(b->p, img, ev, &cnt, &n);
			for (size_t i = 0; i < n && !err; i++) {
				long row = row_for(b, img, cnt[i].offset);
				if (row < 0)
					err = (int)row;
				else
					b->r->rows[row].self[e] += cnt[i].count;
			}
			free(cnt);
			if (err)
				return err;
		}
		for (int why = 0; why < SPENT_PROFILE_UNK_NR; why++) {
			uint64_t u = spent_profile_unknown_count(b->p, ev, why);
			if (!u || why == SPENT_PROFILE_UNK_LOST || why == SPENT_PROFILE_UNK_THROTTLED)
				continue;
			long row = unknown_row(b, spent_profile_unknown_reason_name(why));
			if (row < 0)
				return (int)row;
			b->r->rows[row].self[e] += u;
		}
		b->r->totals[e] = spent_profile_event_total(b->p, ev);
	}
	return 0;
}

static int add_children(struct builder *b)
{
	const struct report_config *c = &b->r->cfg;
	for (size_t i = 0; i < spent_profile_nstacks(b->p); i++) {
		uint32_t ev;
		const struct spent_profile_frame *f;
		size_t nf;
		uint64_t cnt;
		spent_profile_stack_get(b->p, i, &ev, &f, &nf, &cnt);
		size_t e = 0;
		while (e < c->nevents && c->events[e] != ev)
			e++;
		if (e == c->nevents)
			continue;
		if (e == 0)
			b->r->have_stacks = true;
		for (size_t k = 0; k < nf; k++) {
			long row = f[k].image == SPENT_PROFILE_NO_IMAGE ? unknown_row(b, "no-mapping")
								  : row_for(b, f[k].image, f[k].offset);
			if (row < 0)
				return (int)row;
			struct report_row *r = &b->r->rows[row];
			uint64_t stamp = (uint64_t)i * 64 + e;
			if (r->stamp == stamp)
				continue;	/* recursion: count a function once per stack */
			r->stamp = stamp;
			r->incl[e] += cnt;
		}
	}
	return 0;
}

/* The chains of the first event's stacks, their frames as (pre-sort) rows; merged by a key
 * of their row numbers. */
static int add_chains(struct builder *b, struct strmap *seen, size_t *cap)
{
	struct report *r = b->r;
	uint32_t *rows = NULL;
	size_t caprows = 0, capkey = 0;
	char *key = NULL;
	int err = 0;
	for (size_t i = 0; !err && i < spent_profile_nstacks(b->p); i++) {
		uint32_t ev;
		const struct spent_profile_frame *f;
		size_t nf, len = 0, idx;
		uint64_t cnt;
		spent_profile_stack_get(b->p, i, &ev, &f, &nf, &cnt);
		if (ev != r->cfg.events[0] || !nf)
			continue;
		if (ALLOC_GROW(rows, nf, caprows) || ALLOC_GROW(key, nf * 11 + 1, capkey)) {
			err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < nf && !err; k++) {
			long row = f[k].image == SPENT_PROFILE_NO_IMAGE ? unknown_row(b, "no-mapping")
								  : row_for(b, f[k].image, f[k].offset);
			if (row < 0)
				err = (int)row;
			rows[k] = (uint32_t)row;
			len += (size_t)sprintf(key + len, "%u,", rows[k]);
		}
		int isnew = err ? err : strmap_intern(seen, key, &idx);
		if (isnew < 0) {
			err = isnew;
		} else if (isnew) {
			struct report_chain *c;
			if (ALLOC_GROW(r->chains, idx + 1, *cap) ||
			    !((c = &r->chains[idx])->rows = malloc(nf * sizeof(*rows)))) {
				err = -ENOMEM;
				break;
			}
			memcpy(c->rows, rows, nf * sizeof(*rows));
			c->n = (uint32_t)nf;
			c->count = 0;
			r->nchains = idx + 1;
		}
		if (!err)
			r->chains[idx].count += cnt;
	}
	free(rows);
	free(key);
	return err;
}

static int chain_cmp(const void *a, const void *b)
{
	const struct report_chain *x = a, *y = b;
	if (x->rows[0] != y->rows[0])
		return x->rows[0] < y->rows[0] ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	for (uint32_t k = 0; k < x->n && k < y->n; k++)
		if (x->rows[k] != y->rows[k])
			return x->rows[k] < y->rows[k] ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* After the rows' sort (each row's stamp holding its index before it): the chains' rows
 * renumbered, the chains grouped by their leaf's row, each row told where its are. */
static int place_chains(struct report *r)
{
	uint32_t *now = malloc((r->nrows + 1) * sizeof(*now));
	if (!now)
		return -ENOMEM;
	for (size_t i = 0; i < r->nrows; i++)
		now[r->rows[i].stamp] = (uint32_t)i;
	for (size_t c = 0; c < r->nchains; c++)
		for (uint32_t k = 0; k < r->chains[c].n; k++)
			r->chains[c].rows[k] = now[r->chains[c].rows[k]];
	free(now);
	if (r->nchains > 1)
		qsort(r->chains, r->nchains, sizeof(*r->chains), chain_cmp);
	for (size_t c = 0; c < r->nchains; c++) {
		struct report_row *row = &r->rows[r->chains[c].rows[0]];
		if (!row->nchains++)
			row->chain0 = c;
	}
	return 0;
}

static const struct report *sort_report;

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	const struct report *r = sort_report;
	for (size_t e = 0; e < r->cfg.nevents; e++) {
		uint64_t vx = r->cfg.children ? x->incl[e] : x->self[e];
		uint64_t vy = r->cfg.children ? y->incl[e] : y->self[e];
		if (vx != vy)
			return vx > vy ? -1 : 1;
		if (r->cfg.children && x->self[e] != y->self[e])
			return x->self[e] > y->self[e] ? -1 : 1;
	}
	return strcmp(x->key, y->key);
}

int report_build(const struct spent_profile *p, struct symbols *sym, const struct report_config *cfg,
		 struct report **out)
{
	struct builder b = { .p = p, .sym = sym };
	int err = -ENOMEM;
	b.r = calloc(1, sizeof(*b.r));
	if (!b.r || !cfg->nevents)
		goto fail;
	b.r->cfg = *cfg;
	b.r->events = malloc(cfg->nevents * sizeof(uint32_t));
	b.r->totals = calloc(cfg->nevents, sizeof(uint64_t));
	if (!b.r->events || !b.r->totals)
		goto fail;
	memcpy(b.r->events, cfg->events, cfg->nevents * sizeof(uint32_t));
	b.r->cfg.events = b.r->events;
	if ((err = profile_kernel_labels(p, &b.r->labels)))
		goto fail;
	b.r->nlabels = b.r->labels ? spent_profile_nimages(p) : 0;
	struct strmap seen = STRMAP_INIT;
	size_t capchains = 0;
	if ((err = add_self(&b)) || (cfg->children && (err = add_children(&b))) ||
	    (cfg->chains && (err = add_chains(&b, &seen, &capchains)))) {
		strmap_release(&seen);
		goto fail;
	}
	strmap_release(&seen);
	for (size_t i = 0; i < b.r->nrows; i++)
		b.r->rows[i].stamp = i;	/* where each row was, for the chains */
	sort_report = b.r;
	if (b.r->nrows > 1)
		qsort(b.r->rows, b.r->nrows, sizeof(*b.r->rows), row_cmp);
	if (cfg->chains && (err = place_chains(b.r)))
		goto fail;
	strmap_release(&b.keys);
	free(b.memo);
	*out = b.r;
	return 0;
fail:
	strmap_release(&b.keys);
	free(b.memo);
	report_free(b.r);
	return err;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].key);
		free(r->rows[i].symbol);
		free(r->rows[i].self);
		free(r->rows[i].incl);
	}
	free(r->rows);
	for (size_t i = 0; i < r->nchains; i++)
		free(r->chains[i].rows);
	free(r->chains);
	profile_kernel_labels_free(r->labels, r->nlabels);
	free(r->events);
	free(r->totals);
	free(r);
}

long report_find(const struct report *r, const char *key)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].key, key))
			return (long)i;
	return -1;
}
