/* profile/folded.c - folded-stack export: one line per distinct stack, frames root first,
 * separated by ';', then the count (Brendan Gregg's flamegraph.pl input format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"
#include "profile/export.h"

struct fold_builder {
	struct folded *f;
	size_t cap;
	long *index;
	size_t capindex;
};

static int fold_add(struct fold_builder *b, char *line, uint64_t count)
{
	struct folded *f = b->f;
	if ((f->n + 1) * 2 > b->capindex) {
		size_t cap = b->capindex ? b->capindex * 2 : 1024;
		long *n = malloc(cap * sizeof(*n));
		if (!n)
			goto fail;
		for (size_t i = 0; i < cap; i++)
			n[i] = -1;
		for (size_t i = 0; i < f->n; i++) {
			size_t j = binio_fnv64(BINIO_FNV64_INIT, f->stacks[i], strlen(f->stacks[i])) & (cap - 1);
			while (n[j] >= 0)
				j = (j + 1) & (cap - 1);
			n[j] = (long)i;
		}
		free(b->index);
		b->index = n;
		b->capindex = cap;
	}
	size_t j = binio_fnv64(BINIO_FNV64_INIT, line, strlen(line)) & (b->capindex - 1);
	for (; b->index[j] >= 0; j = (j + 1) & (b->capindex - 1))
		if (!strcmp(f->stacks[b->index[j]], line)) {
			f->counts[b->index[j]] += count;
			f->total += count;
			free(line);
			return 0;
		}
	if (f->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		char **ns = realloc(f->stacks, cap * sizeof(*ns));
		if (!ns)
			goto fail;
		f->stacks = ns;
		uint64_t *nc = realloc(f->counts, cap * sizeof(*nc));
		if (!nc)
			goto fail;
		f->counts = nc;
		b->cap = cap;
	}
	f->stacks[f->n] = line;
	f->counts[f->n] = count;
	f->total += count;
	b->index[j] = (long)f->n++;
	return 0;
fail:
	free(line);
	return -ENOMEM;
}

/* frames leaf first -> "root;...;leaf" (';' in names replaced) */
static char *fold_line(const struct spent_profile *p, struct symbols *sym,
		       const struct spent_profile_frame *fr, size_t n, unsigned flags, const char *root)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap), name[512];
	if (!s)
		return NULL;
	s[0] = 0;
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
		if (len + l + 2 > cap) {
			while (len + l + 2 > cap)
				cap *= 2;
			char *ns = realloc(s, cap);
			if (!ns) {
				free(s);
				return NULL;
			}
			s = ns;
		}
		if (len)
			s[len++] = ';';
		memcpy(s + len, name, l + 1);
		len += l;
	}
	return s;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int folded_build(const struct spent_profile *p, struct symbols *sym, uint32_t ev, unsigned flags,
		 struct folded **out)
{
	struct fold_builder b = { 0 };
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
	if (!(b.f = calloc(1, sizeof(*b.f))))
		return -ENOMEM;
	const struct spent_profile_frame *frames;
	size_t nf;
	uint64_t cnt;
	for (size_t i = 0; !err && spent_profile_stack_next(p, ev, &i, &frames, &nf, &cnt);) {
		stacks = true;
		char *line = fold_line(p, sym, frames, nf, flags, root);
		err = line ? fold_add(&b, line, cnt) : -ENOMEM;
	}
	for (uint32_t img = 0; !stacks && !err && img < spent_profile_nimages(p); img++) {
		struct spent_profile_count *c = NULL;
		size_t n = 0;
		err = spent_profile_counts(p, img, ev, &c, &n);
		for (size_t i = 0; i < n && !err; i++) {
			struct spent_profile_frame fr = { img, c[i].offset };
			char *line = fold_line(p, sym, &fr, 1, flags, root);
			err = line ? fold_add(&b, line, c[i].count) : -ENOMEM;
		}
		free(c);
	}
	free(b.index);
	if (err) {
		folded_free(b.f);
		return err;
	}
	/* sort lines by name, counts along */
	struct folded *f = b.f;
	struct pair { char *s; uint64_t c; } *pairs = malloc((f->n + 1) * sizeof(*pairs));
	if (!pairs) {
		folded_free(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++)
		pairs[i] = (struct pair){ f->stacks[i], f->counts[i] };
	if (f->n > 1)
		qsort(pairs, f->n, sizeof(*pairs), str_cmp);
	for (size_t i = 0; i < f->n; i++) {
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
			return -EIO;
	return 0;
}

int export_write(const char *path, const void *data, size_t len)
{
	if (strcmp(path, "-"))
		return outfile_write(path, data, len, OUTFILE_MODE);
	if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
		return -EIO;
	return 0;
}
