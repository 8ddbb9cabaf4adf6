/* analysis/symtab.c - symbol tables of the images a trace loaded (each image's symbols read by
 * core/symtable), kept in one array sorted by runtime address for lookups by address and by
 * name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symtab.h"
#include "core/alloc.h"
#include "core/search.h"
#include "core/symtable.h"

struct symtab {
	struct symtab_sym *syms;
	size_t n, cap;
	bool sorted;
	char **paths;	/* images already read */
	size_t n_paths, paths_cap;
	/* images whose separate debug files are read at the first lookup by address: only names
	 * need their local symbols, and a tree's every process reads libc (a 79-process python
	 * tree's locks took 10-30% longer reading them all up front); only stripped images
	 * have one (symtable_debug_path) */
	struct { uint64_t base; char *path; } *debug;
	size_t n_debug, debug_cap;
};

struct symtab *symtab_new(void)
{
	struct symtab *st = calloc(1, sizeof(*st));
	if (st)
		st->sorted = true;
	return st;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->syms[i].name);
	for (size_t i = 0; i < st->n_paths; i++)
		free(st->paths[i]);
	free(st->paths);
	for (size_t i = 0; i < st->n_debug; i++)
		free(st->debug[i].path);
	free(st->debug);
	free(st->syms);
	free(st);
}

size_t symtab_count(const struct symtab *st)
{
	return st->n;
}

int symtab_add(struct symtab *st, const char *name, uint64_t addr, uint64_t size, bool is_func)
{
	if (ALLOC_GROW(st->syms, st->n + 1, st->cap))
		return -ENOMEM;
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	st->syms[st->n++] = (struct symtab_sym){ addr, size, copy, is_func, false };
	st->sorted = false;
	return 0;
}

static int by_elf_index(const void *a, const void *b)
{
	const struct symtable_hit *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

/* T's function and data object symbols (LOCALS: only those of local binding) at BASE, in the
 * file's order (for determinism). */
static int add_table(struct symtab *st, const struct symtable *t, uint64_t base, bool locals)
{
	int err = 0;
	size_t n = 0, cap = 0;
	struct symtable_hit hit, *hits = NULL;
	for (size_t i = 0; !err && symtable_symbol(t, i, &hit) == 0; i++)
		if ((hit.flags & (SYMTABLE_FUNC | SYMTABLE_OBJECT)) &&
		    !(locals && (hit.flags & SYMTABLE_GLOBAL))) {
			if (!(err = ALLOC_GROW(hits, n + 1, cap)))
				hits[n++] = hit;
		}
	if (n)
		qsort(hits, n, sizeof(*hits), by_elf_index);
	for (size_t i = 0; !err && i < n; i++)
		if (!(err = symtab_add(st, hits[i].name, base + hits[i].start, hits[i].size,
				       hits[i].flags & SYMTABLE_FUNC)))
			st->syms[st->n - 1].hidden = hits[i].flags & SYMTABLE_HIDDEN;
	free(hits);
	return err;
}

int symtab_add_image(struct symtab *st, const char *path, uint64_t base)
{
	for (size_t i = 0; i < st->n_paths; i++)
		if (!strcmp(st->paths[i], path))
			return 0;
	struct symtable *t;
	int err = symtable_open(path, &t);	/* core/symtable: the one ELF symbol reader */
	if (err)
		return err;
	/* functions and data objects: what a trace's addresses can name */
	err = add_table(st, t, base, false);
	if (!err && (ALLOC_GROW(st->paths, st->n_paths + 1, st->paths_cap) ||
		     !(st->paths[st->n_paths] = strdup(path))))
		err = -ENOMEM;
	if (!err)
		st->n_paths++;
	char dbg[sizeof(SYMTABLE_DEBUG_DIR) + 160];	/* 64 bytes of build-id at most */
	if (!err && symtable_debug_path(t, dbg, sizeof(dbg)) == 0) {
		char *copy = NULL;
		if (ALLOC_GROW(st->debug, st->n_debug + 1, st->debug_cap) || !(copy = strdup(dbg)))
			err = -ENOMEM;
		else
			st->debug[st->n_debug++] = (typeof(st->debug[0])){ base, copy };
	}
	symtable_free(t);
	return err;
}

/* A stripped image's static functions and variables are in its separate debug file (a lock in
 * libc's .bss was "0x4a4ea80" where perf and Valgrind say __libc_setlocale_lock); its globals
 * are the image's own, with their versions, so only the debug file's locals are added. */
static void add_debug_symbols(struct symtab *st)
{
	for (size_t i = 0; i < st->n_debug; i++) {
		struct symtable *dbg;
		if (symtable_open(st->debug[i].path, &dbg) == 0) {	/* not there: nothing to add */
			(void)add_table(st, dbg, st->debug[i].base, true);	/* ENOMEM: unnamed */
			symtable_free(dbg);
		}
		free(st->debug[i].path);
	}
	st->n_debug = 0;
}

void symtab_add_batch_images(struct symtab *st, const struct spent_trace_batch *batch)
{
	for (size_t i = 0; i < batch->n_events; i++) {
		const struct spent_trace_event *ev = &batch->events[i];
		if (ev->kind == SPENT_TRACE_EV_IMAGE_LOAD && ev->u.image.path)
			(void)symtab_add_image(st, ev->u.image.path, ev->u.image.base);
	}
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* sized before unsized at one address, then by name for determinism */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void ensure_sorted(struct symtab *st)
{
	if (st->sorted)
		return;
	qsort(st->syms, st->n, sizeof(*st->syms), sym_cmp);
	st->sorted = true;
}

const struct symtab_sym *symtab_lookup(struct symtab *st, uint64_t addr)
{
	if (st->n_debug)
		add_debug_symbols(st);
	ensure_sorted(st);
	size_t lo = SEARCH_UPPER_BOUND(st->syms, st->n, .addr, addr);	/* first with addr > ADDR */
	/* walk back over a few candidates: the nearest start may be an unsized label */
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct symtab_sym *s = &st->syms[lo - 1];
		if (s->addr == addr || (s->size && addr < s->addr + s->size))
			return s;
	}
	return NULL;
}

size_t symtab_find_funcs(struct symtab *st, const char *name, uint64_t *addrs, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < st->n && n < max; i++) {
		if (!st->syms[i].is_func || strcmp(st->syms[i].name, name))
			continue;
		size_t k = 0;
		while (k < n && addrs[k] != st->syms[i].addr)
			k++;
		if (k == n)
			addrs[n++] = st->syms[i].addr;
	}
	return n;
}

int symtab_find_func(struct symtab *st, const char *name, uint64_t *addr)
{
	int rc = -ENOENT;
	for (size_t i = 0; i < st->n; i++)
		if (st->syms[i].is_func && !strcmp(st->syms[i].name, name)) {
			*addr = st->syms[i].addr;
			rc = 0;
			if (!st->syms[i].hidden)
				break;
		}
	return rc;
}

const char *symtab_name_addr(struct symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct symtab_sym *s = st ? symtab_lookup(st, addr) : NULL;
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (s->addr == addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+%llu", s->name, (unsigned long long)(addr - s->addr));
	return buf;
}
