/* shim/analysis.c - Shim's analyses over the observer's online results: tag histograms with
 * values mapped to symbols (merged per function or object), and rate summaries (min, median,
 * max) from the observer's reservoir of filtered rate samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void shim_rates_summarise(double *per_tick, size_t n, uint64_t tsc_hz, double *min,
			  double *median, double *max)
{
	*min = *median = *max = 0;
	if (!n)
		return;
	qsort(per_tick, n, sizeof(*per_tick), double_cmp);
	double hz = (double)tsc_hz;
	double mid = n % 2 ? per_tick[n / 2] : (per_tick[n / 2 - 1] + per_tick[n / 2]) / 2;
	*min = per_tick[0] * hz;
	*median = mid * hz;
	*max = per_tick[n - 1] * hz;
}

struct image_entry {
	uint64_t base;
	char *path;
	struct shim_elf *elf;	/* opened on first use */
	bool tried;
};

struct shim_image_syms {
	struct image_entry *img;
	size_t n;
};

struct shim_image_syms *shim_image_syms_new(const struct shim_image_map *maps, size_t n)
{
	struct shim_image_syms *is = calloc(1, sizeof(*is));
	if (!is)
		return NULL;
	is->img = calloc(n ? n : 1, sizeof(*is->img));
	if (!is->img) {
		free(is);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		is->img[i].base = maps[i].base;
		is->img[i].path = strndup(maps[i].path, sizeof(maps[i].path));
		if (!is->img[i].path) {
			is->n = i;
			shim_image_syms_free(is);
			return NULL;
		}
	}
	is->n = n;
	return is;
}

void shim_image_syms_free(struct shim_image_syms *is)
{
	if (!is)
		return;
	for (size_t i = 0; i < is->n; i++) {
		free(is->img[i].path);
		shim_elf_free(is->img[i].elf);
	}
	free(is->img);
	free(is);
}

/* Symbol containing run-time address V: name (owned by IS) and its run-time start. */
static const char *image_syms_lookup(struct shim_image_syms *is, uint64_t v, uint64_t *start)
{
	for (size_t i = 0; is && i < is->n; i++) {
		struct image_entry *im = &is->img[i];
		if (!im->tried) {
			im->tried = true;
			if (im->path[0] == '/')
				shim_elf_open(im->path, &im->elf);
		}
		if (!im->elf || v < im->base || !shim_elf_contains(im->elf, v - im->base))
			continue;
		uint64_t s;
		const char *name = shim_elf_lookup(im->elf, v - im->base, &s);
		if (name) {
			*start = s + im->base;
			return name;
		}
	}
	return NULL;
}

static int row_by_symbol(const void *a, const void *b)
{
	const struct shim_hist_row *x = a, *y = b;
	if (!x->symbol || !y->symbol)
		return x->symbol ? -1 : y->symbol ? 1 : (x->value > y->value) - (x->value < y->value);
	int c = strcmp(x->symbol, y->symbol);
	return c ? c : (x->value > y->value) - (x->value < y->value);
}

static int row_by_samples(const void *a, const void *b)
{
	const struct shim_hist_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

int shim_hist_build(const struct shim_hist_slot *slots, size_t nslots,
		    struct shim_image_syms *is, struct shim_hist_row **rows, size_t *nrows)
{
	struct shim_hist_row *r = NULL;
	size_t n = 0, m = 0;
	int err = 0;

	for (size_t i = 0; i < nslots; i++)
		n += slots[i].count != 0;
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++) {
		if (!slots[i].count)
			continue;
		uint64_t start = 0;
		const char *name = image_syms_lookup(is, slots[i].value, &start);
		r[m].value = name ? start : slots[i].value;
		r[m].samples = slots[i].count;
		if (name && !(r[m].symbol = strdup(name))) {
			err = -ENOMEM;
			goto out;
		}
		m++;
	}
	/* merge values that fall in the same symbol */
	qsort(r, m, sizeof(*r), row_by_symbol);
	n = 0;
	for (size_t i = 0; i < m; i++) {
		if (n && r[i].symbol && r[n - 1].symbol && strcmp(r[i].symbol, r[n - 1].symbol) == 0 &&
		    r[i].value == r[n - 1].value) {
			r[n - 1].samples += r[i].samples;
			free(r[i].symbol);
			continue;
		}
		r[n++] = r[i];
	}
	m = n;
	qsort(r, m, sizeof(*r), row_by_samples);
	*rows = r;
	*nrows = m;
	r = NULL;
out:
	if (r)
		shim_hist_rows_free(r, m);
	return err;
}

void shim_hist_rows_free(struct shim_hist_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].symbol);
	free(rows);
}

struct shim_result *shim_result_new(void)
{
	return calloc(1, sizeof(struct shim_result));
}

void shim_result_free(struct shim_result *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; r->signals && i < r->ncounters + r->ntags; i++) {
		struct shim_signal_result *s = &r->signals[i];
		free(s->symbol);
		free(s->image);
		shim_hist_rows_free(s->rows, s->nrows);
	}
	free(r->signals);
	free(r->log);
	free(r);
}

double shim_result_period_ns(const struct shim_result *r)
{
	if (r->samples < 2 || !r->tsc_hz || r->last_tsc <= r->first_tsc)
		return 0;
	return (double)(r->last_tsc - r->first_tsc) * 1e9 / (double)r->tsc_hz /
	       (double)(r->samples - 1);
}

double shim_hist_percent(const struct shim_signal_result *s, const struct shim_hist_row *row)
{
	uint64_t total = s->overflow;
	for (size_t i = 0; i < s->nrows; i++)
		total += s->rows[i].samples;
	return total ? 100.0 * (double)row->samples / (double)total : 0;
}
