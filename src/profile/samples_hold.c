/* profile/samples_hold.c - whether an event's samples file can carry what `spent record` also
 * adds apart from the detail rows: the event's call stacks (each chain one stack,
 * PROFILE_SAMPLES_STACKS) and its per-image counts (each chain's leaf frame,
 * PROFILE_SAMPLES_COUNTS), so neither is written twice. */
#include <errno.h>
#include <stdlib.h>

#include "profile/profile_file.h"
#include "profile/samples_int.h"

bool profile_samples_hold_stacks(const struct spent_profile *p, uint32_t ev)
{
	/* Q gets every detail chain of EV as a stack (same image indices as P), then P's stacks
	 * of EV: they are equal when no stack is new and every count exactly doubles */
	const struct profile_detail *d = &p->detail;
	const struct spent_profile_event *e = spent_profile_event_get(p, ev);
	struct spent_profile *q = spent_profile_new();
	uint64_t *once = NULL;
	size_t nq = 0, np = 0;
	uint32_t qe, qi;
	bool same = false;
	/* cheap test first: the daemon writes rows without stacks at every flush */
	uint64_t rows_total = 0, stacks_total = 0, cnt;
	const struct spent_profile_frame *f;
	size_t nf;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].ev == ev)
			rows_total += d->rows[i].count;
	for (size_t i = 0; spent_profile_stack_next(p, ev, &i, &f, &nf, &cnt);)
		stacks_total += cnt;
	if (!rows_total || rows_total != stacks_total)
		goto out;
	int err = q ? spent_profile_event_intern(q, e->name, e->period, e->flags, &qe) : -ENOMEM;
	for (size_t i = 0; i < spent_profile_nimages(p) && !err; i++)
		err = spent_profile_image_intern(q, spent_profile_image_get(p, (uint32_t)i), &qi);
	for (size_t i = 0; i < d->nrows && !err; i++) {
		const struct detail_row *r = &d->rows[i];
		if (r->ev == ev)
			err = spent_profile_add_stack(q, qe, d->frames + d->chains[r->chain].off,
						d->chains[r->chain].n, r->count);
	}
	nq = err ? 0 : spent_profile_nstacks(q);
	once = nq ? malloc(nq * sizeof(*once)) : NULL;
	if (!once)
		goto out;
	uint32_t sev;
	for (size_t i = 0; i < nq; i++)
		spent_profile_stack_get(q, i, &sev, &f, &nf, &once[i]);
	for (size_t i = 0; !err && spent_profile_stack_next(p, ev, &i, &f, &nf, &cnt);) {
		np++;
		err = spent_profile_add_stack(q, qe, f, nf, cnt);
	}
	same = !err && np == nq && spent_profile_nstacks(q) == nq;
	for (size_t i = 0; i < nq && same; i++) {
		spent_profile_stack_get(q, i, &sev, &f, &nf, &cnt);
		same = cnt == 2 * once[i];
	}
out:
	free(once);
	spent_profile_free(q);
	return same;
}

/* (image, offset) -> count, compared as sorted arrays */
struct leaf_count {
	uint32_t img;
	uint64_t off, count;
};

static int leaf_cmp(const void *a, const void *b)
{
	const struct leaf_count *x = a, *y = b;
	if (x->img != y->img)
		return x->img < y->img ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* A sorted, each (image, offset) once with its counts summed: the new length. */
static size_t leaf_sum(struct leaf_count *a, size_t n)
{
	size_t k = 0;
	qsort(a, n, sizeof(*a), leaf_cmp);
	for (size_t i = 0; i < n; i++)
		if (k && !leaf_cmp(&a[k - 1], &a[i]))
			a[k - 1].count += a[i].count;
		else
			a[k++] = a[i];
	return k;
}

int profile_samples_hold_counts(const struct spent_profile *p, uint32_t ev)
{
	const struct profile_detail *d = &p->detail;
	size_t nl = 0, nc = 0;
	struct leaf_count *leaves = malloc((d->nrows + 1) * sizeof(*leaves));
	struct leaf_count *cells = malloc((p->ncells + 1) * sizeof(*cells));
	int same = -ENOMEM;
	if (!leaves || !cells)
		goto out;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct detail_row *r = &d->rows[i];
		const struct spent_profile_frame *leaf = &d->frames[d->chains[r->chain].off];
		if (r->ev == ev && leaf->image != SPENT_PROFILE_NO_IMAGE)
			leaves[nl++] = (struct leaf_count){ leaf->image, leaf->offset, r->count };
	}
	for (size_t i = 0; i < p->capcells; i++) {
		const struct cell *c = &p->cells[i];
		if (c->count && c->ev == ev)
			cells[nc++] = (struct leaf_count){ c->img, c->off, c->count };
	}
	nl = leaf_sum(leaves, nl);
	nc = leaf_sum(cells, nc);
	same = nl && nl == nc;
	for (size_t i = 0; i < nl && same; i++)
		same = !leaf_cmp(&leaves[i], &cells[i]) && leaves[i].count == cells[i].count;
out:
	free(leaves);
	free(cells);
	return same;
}
