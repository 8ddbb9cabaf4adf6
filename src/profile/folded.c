/* profile/folded.c - folded-stack export: one line per distinct stack, frames root first,
 * separated by ';', then the count (Brendan Gregg's flamegraph.pl input format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/outfile.h"
#include "core/strmap.h"
#include "profile/export.h"

/* Distinct stacks counted as they come: each line's index in the map is its slot in counts. */
struct fold_builder {
	struct strmap lines;
	uint64_t *counts;
	size_t capcounts;
	uint64_t total;
	char *line;		/* the line being built, reused for every stack */
	size_t capline;
};

static int fold_add(struct fold_builder *b, uint64_t count)
{
	size_t i;
	int isnew = strmap_intern(&b->lines, b->line, &i);
	if (isnew < 0)
		return isnew;
	if (isnew) {
		/* the map holds a new line only once counts has its slot */
		if (ALLOC_GROW(b->counts, i + 1, b->capcounts))
			return -ENOMEM;
		b->counts[i] = 0;
	}
	b->counts[i] += count;
	b->total += count;
	return 0;
}

/* frames leaf first -> "root;...;leaf" (';' in names replaced) into B->line */
static int fold_line(struct fold_builder *b, const struct spent_profile *p, struct symbols *sym,
		     const struct spent_profile_frame *fr, size_t n, unsigned flags,
		     const char *root)
{
	size_t len = 0;
	char name[512];
	if (ALLOC_GROW(b->line, 256, b->capline))
		return -ENOMEM;
	b->line[0] = 0;
	for (size_t k = n + (root != NULL); k-- > 0;) {
		if (k == n) {
			snprintf(name, sizeof(name), "%s", root);
		} else {
			profile_frame_name(p, sym, &fr[k], name, sizeof(name));
			if ((flags & FOLDED_KERNEL_MARKS) && fr[k].image != SPENT_PROFILE_NO_IMAGE &&
			    profile_image_is_kernel(spent_profile_image_get(p, fr[k].image)))
				strncat(name, "_[k]", sizeof(name) - strlen(name) - 1);
		}
		for (char *c = name; *c; c++)
			if (*c == ';' || *c == '\n')
				*c = '_';
		size_t l = strlen(name);
		if (ALLOC_GROW(b->line, len + l + 2, b->capline))
			return -ENOMEM;
		if (len)
			b->line[len++] = ';';
		memcpy(b->line + len, name, l + 1);
		len += l;
	}
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The detail rows of EV, each rooted at its task's name (the process a sample was taken in,
 * as stackcollapse-perf.pl roots at the comm), when they count every sample the stacks (or
 * histograms) do: TOTAL. 1 built, 0 not applicable, -ENOMEM. */
static int fold_detail_rows(struct fold_builder *b, const struct spent_profile *p,
			    struct symbols *sym, uint32_t ev, unsigned flags, const char *dflt,
			    uint64_t total)
{
	struct spent_profile_detail_row row;
	uint64_t sum = 0;
	bool named = false;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++)
		if (!spent_profile_detail_get(p, i, &row) && row.event == ev) {
			sum += row.count;
			named |= row.task != SPENT_PROFILE_NO_TASK;
		}
	if (!named || sum != total)
		return 0;
	strmap_release(&b->lines);
	b->lines = (struct strmap)STRMAP_INIT;
	b->total = 0;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		if (spent_profile_detail_get(p, i, &row) || row.event != ev)
			continue;
		const struct spent_profile_task *t = row.task != SPENT_PROFILE_NO_TASK ?
			spent_profile_task_get(p, row.task) : NULL;
		const char *root = t && t->comm[0] ? t->comm : dflt ? dflt : "[unknown]";
		int err = fold_line(b, p, sym, row.frames, row.nframes, flags, root);
		if (!err)
			err = fold_add(b, row.count);
		if (err)
			return err;
	}
	return 1;
}

int folded_build(const struct spent_profile *p, struct symbols *sym, uint32_t ev, unsigned flags,
		 struct folded **out)
{
	struct fold_builder b = { .lines = STRMAP_INIT };
	bool stacks = false;
	int err = 0;
	const char *root = NULL;
	if (flags & FOLDED_ROOT) {
		long main_img = profile_main_image(p, &ev, 1);
		if (main_img >= 0) {
			const char *path = spent_profile_image_get(p, (uint32_t)main_img)->path;
			const char *slash = strrchr(path, '/');
			root = slash && slash[1] ? slash + 1 : path;
		}
	}
	const struct spent_profile_frame *frames;
	size_t nf;
	uint64_t cnt;
	for (size_t i = 0; !err && spent_profile_stack_next(p, ev, &i, &frames, &nf, &cnt);) {
		stacks = true;
		err = fold_line(&b, p, sym, frames, nf, flags, root);
		if (!err)
			err = fold_add(&b, cnt);
	}
	for (uint32_t img = 0; !stacks && !err && img < spent_profile_nimages(p); img++) {
		struct spent_profile_count *c = NULL;
		size_t n = 0;
		err = spent_profile_counts(p, img, ev, &c, &n);
		for (size_t i = 0; i < n && !err; i++) {
			struct spent_profile_frame fr = { img, c[i].offset };
			err = fold_line(&b, p, sym, &fr, 1, flags, root);
			if (!err)
				err = fold_add(&b, c[i].count);
		}
		free(c);
	}
	/* the program's name roots every stack unless the samples say whose they are */
	if (!err && (flags & FOLDED_ROOT)) {
		int d = fold_detail_rows(&b, p, sym, ev, flags, root, b.total);
		err = d < 0 ? d : 0;
	}
	free(b.line);
	/* sort lines by name, counts along */
	size_t n = strmap_count(&b.lines);
	struct pair { char *s; uint64_t c; } *pairs = NULL;
	struct folded *f = NULL;
	char **keys = NULL;
	if (err || !(pairs = malloc((n + 1) * sizeof(*pairs))) ||
	    !(f = calloc(1, sizeof(*f))) || !(f->counts = malloc((n + 1) * sizeof(*f->counts))) ||
	    !(keys = strmap_steal_keys(&b.lines))) {
		strmap_release(&b.lines);
		free(b.counts);
		free(pairs);
		folded_free(f);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		pairs[i] = (struct pair){ keys[i], b.counts[i] };
	free(b.counts);
	if (n > 1)
		qsort(pairs, n, sizeof(*pairs), str_cmp);
	f->stacks = keys;	/* reused: the same pointers, in sorted order */
	f->n = n;
	f->total = b.total;
	for (size_t i = 0; i < n; i++) {
		f->stacks[i] = pairs[i].s;
		f->counts[i] = pairs[i].c;
	}
	free(pairs);
	*out = f;
	return 0;
}

void folded_free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->stacks[i]);
	free(f->stacks);
	free(f->counts);
	free(f);
}

int folded_write(const struct folded *f, FILE *out)
{
	for (size_t i = 0; i < f->n; i++)
		if (fprintf(out, "%s %llu\n", f->stacks[i], (unsigned long long)f->counts[i]) < 0)
			return errno ? -errno : -EIO;
	return 0;
}

int export_write(const char *path, const void *data, size_t len)
{
	if (strcmp(path, "-"))
		return outfile_write(path, data, len, OUTFILE_MODE);
	/* the write's own reason (a full disk: ENOSPC); EIO only when stdio kept none */
	errno = 0;
	if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
		return errno ? -errno : -EIO;
	return 0;
}
