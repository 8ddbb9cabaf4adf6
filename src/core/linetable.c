/* core/linetable.c - building (libdw line programs), searching (binary search), saving and
 * loading (a text file: "spent-lines 1 NFILES NROWS", the file names one a line, then one
 * "ADDR LINE FILE" hex row a line; LINE 0 ends a sequence) one image's line table. */
#include "core/alloc.h"
#include "core/linetable.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"
#include "core/search.h"

#define LINETABLE_MAGIC "spent-lines 1"

struct lrow {
	uint64_t addr;
	uint32_t line;		/* 0: the end of a sequence (no line from here) */
	uint32_t file;
	uint32_t seq;		/* order of appearance: the later row wins at one address */
};

struct linetable {
	char **files;
	size_t nfiles, capfiles;
	uint32_t *hash;		/* file index + 1 by name hash (building only) */
	size_t caphash;
	struct lrow *rows;
	size_t n, cap;
	char *data;		/* a loaded file: the names point into it */
};

void linetable_free(struct linetable *t)
{
	if (!t)
		return;
	if (!t->data)
		for (size_t i = 0; i < t->nfiles; i++)
			free(t->files[i]);
	free(t->files);
	free(t->hash);
	free(t->rows);
	free(t->data);
	free(t);
}

size_t linetable_rows(const struct linetable *t)
{
	return t ? t->n : 0;
}

static int add_row(struct linetable *t, uint64_t addr, uint32_t line, uint32_t file)
{
	if (ALLOC_GROW(t->rows, t->n + 1, t->cap))
		return -ENOMEM;
	t->rows[t->n] = (struct lrow){ addr, line, file, (uint32_t)t->n };
	t->n++;
	return 0;
}

static int add_file_slot(struct linetable *t, char *name)
{
	if (ALLOC_GROW(t->files, t->nfiles + 1, t->capfiles))
		return -ENOMEM;
	t->files[t->nfiles++] = name;
	return 0;
}

/* The index of the file DIR/NAME (NAME when absolute or no DIR), added when new; -ENOMEM. */
static int64_t file_index(struct linetable *t, const char *dir, const char *name)
{
	char *full;
	if (name[0] == '/' || !dir ? !(full = strdup(name)) : asprintf(&full, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	if (2 * (t->nfiles + 1) > t->caphash) {	/* rehash at half full */
		size_t cap = t->caphash ? 2 * t->caphash : 256;
		uint32_t *h = calloc(cap, sizeof(*h));
		if (!h) {
			free(full);
			return -ENOMEM;
		}
		for (size_t i = 0; i < t->nfiles; i++) {
			size_t j = binio_fnv64(BINIO_FNV64_INIT, t->files[i], strlen(t->files[i])) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i + 1;
		}
		free(t->hash);
		t->hash = h;
		t->caphash = cap;
	}
	size_t j = binio_fnv64(BINIO_FNV64_INIT, full, strlen(full)) & (t->caphash - 1);
	for (; t->hash[j]; j = (j + 1) & (t->caphash - 1))
		if (!strcmp(t->files[t->hash[j] - 1], full)) {
			free(full);
			return t->hash[j] - 1;
		}
	if (add_file_slot(t, full)) {
		free(full);
		return -ENOMEM;
	}
	t->hash[j] = (uint32_t)t->nfiles;
	return (int64_t)t->nfiles - 1;
}

static int row_cmp(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One CU's line program into T. */
static int add_cu(struct linetable *t, Dwarf_Die *cudie, Dwarf_Addr bias)
{
	Dwarf_Lines *lines;
	size_t nlines;
	Dwarf_Attribute attr;
	const char *dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	const char *last_src = NULL;
	int64_t last_file = -1;
	if (dwarf_getsrclines(cudie, &lines, &nlines) != 0)
		return 0;	/* no line program in this CU */
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		int lineno = 0;
		bool end = false;
		const char *src;
		if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineendsequence(l, &end))
			continue;
		if (end) {
			int err = add_row(t, addr + bias, 0, 0);
			if (err)
				return err;
			continue;
		}
		if (dwarf_lineno(l, &lineno) || lineno <= 0 || !(src = dwarf_linesrc(l, NULL, NULL)))
			continue;
		if (src != last_src) {	/* file names are one pointer per CU file entry */
			if ((last_file = file_index(t, dir, src)) < 0)
				return (int)last_file;
			last_src = src;
		}
		int err = add_row(t, addr + bias, (uint32_t)lineno, (uint32_t)last_file);
		if (err)
			return err;
	}
	return 0;
}

int linetable_from_module(Dwfl_Module *mod, struct linetable **out)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	*out = NULL;
	if (!dw)
		return -ENOENT;
	struct linetable *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err = 0;
	while (!err && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		if (dwarf_offdie(dw, off + hsize, &cudie))
			err = add_cu(t, &cudie, bias);
		off = next;
	}
	free(t->hash);
	t->hash = NULL;
	if (!err && !t->n)
		err = -ENOENT;
	if (err) {
		linetable_free(t);
		return err;
	}
	qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	*out = t;
	return 0;
}

int linetable_lookup(const struct linetable *t, uint64_t offset, const char **file, int *line)
{
	/* rows at or below OFFSET: the last of them applies */
	size_t lo = SEARCH_UPPER_BOUND(t->rows, t->n, .addr, offset);
	if (!lo || !t->rows[lo - 1].line)
		return -ENOENT;
	*file = t->files[t->rows[lo - 1].file];
	*line = (int)t->rows[lo - 1].line;
	return 0;
}

int linetable_save(const struct linetable *t, const char *path)
{
	struct binbuf b;
	char row[80];
	binbuf_init(&b);
	int l = snprintf(row, sizeof(row), "%s %zu %zu\n", LINETABLE_MAGIC, t->nfiles, t->n);
	int err = binbuf_put(&b, row, (size_t)l);
	for (size_t i = 0; i < t->nfiles && !err; i++) {
		err = binbuf_put(&b, t->files[i], strlen(t->files[i]));
		err = err ? err : binbuf_put(&b, "\n", 1);
	}
	for (size_t i = 0; i < t->n && !err; i++) {
		l = snprintf(row, sizeof(row), "%llx %x %x\n", (unsigned long long)t->rows[i].addr,
			     t->rows[i].line, t->rows[i].file);
		err = binbuf_put(&b, row, (size_t)l);
	}
	err = err ? err : outfile_write(path, b.data, b.len, OUTFILE_MODE);
	binbuf_release(&b);
	return err;
}

/* The next line of [*P, END) NUL-terminated in place; NULL at the end or without a newline. */
static char *next_line(char **p, char *end)
{
	char *s = *p, *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
	if (!nl)
		return NULL;
	*nl = 0;
	*p = nl + 1;
	return s;
}

static int parse_saved(struct linetable *t, char *data, size_t len)
{
	char *p = data, *end = data + len, *s = next_line(&p, end);
	size_t nfiles, nrows;
	if (!s || sscanf(s, LINETABLE_MAGIC " %zu %zu", &nfiles, &nrows) != 2 ||
	    nfiles > len / 2 || nrows > len / 6)
		return -EINVAL;	/* every name takes 2 bytes at least, every row 6 */
	if ((nfiles && !(t->files = calloc(nfiles, sizeof(*t->files)))) ||
	    (nrows && !(t->rows = calloc(nrows, sizeof(*t->rows)))))
		return -ENOMEM;
	for (; t->nfiles < nfiles; t->nfiles++)
		if (!(t->files[t->nfiles] = next_line(&p, end)))
			return -EINVAL;
	for (; t->n < nrows; t->n++) {
		unsigned long long addr;
		unsigned line, file;
		int used = 0;
		if (!(s = next_line(&p, end)) || sscanf(s, "%llx %x %x%n", &addr, &line, &file, &used) != 3 ||
		    s[used] || file >= nfiles || (t->n && addr < t->rows[t->n - 1].addr))
			return -EINVAL;	/* rows must be sorted: lookups binary-search them */
		t->rows[t->n] = (struct lrow){ addr, line, file, (uint32_t)t->n };
	}
	return 0;
}

int linetable_load(const char *path, struct linetable **out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int err = binio_read_file(path, 1u << 30, &data, &len);
	*out = NULL;
	if (err)
		return err;
	struct linetable *t = calloc(1, sizeof(*t));
	if (!t) {
		free(data);
		return -ENOMEM;
	}
	t->data = (char *)data;
	if ((err = parse_saved(t, t->data, len))) {
		linetable_free(t);
		return err;
	}
	*out = t;
	return 0;
}
