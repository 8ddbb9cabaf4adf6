/* core/inline_table.c - per-CU tables of inlined-subroutine ranges (see inline_table.h):
 * sorted by start with the running maximum of ends, searched like core/symtable. */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/inline_table.h"
#include "core/search.h"

struct inl {
	uint64_t lo, hi, maxhi;
	unsigned depth;
	Dwarf_Die die;
};

struct cu_table {
	Dwarf_Off cu;		/* the CU's DIE offset: the key */
	struct inl *v;
	size_t n, cap;
};

struct inline_tables {
	struct cu_table *cus;	/* sorted by cu */
	size_t n, cap;
};

void inline_tables_free(struct inline_tables *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->cus[i].v);
	free(t->cus);
	free(t);
}

static int add_ranges(struct cu_table *c, Dwarf_Die *die, unsigned depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (ALLOC_GROW(c->v, c->n + 1, c->cap))
			return -ENOMEM;
		c->v[c->n++] = (struct inl){ .lo = lo, .hi = hi, .depth = depth, .die = *die };
	}
	return 0;
}

/* Every inlined subroutine below PARENT, with its nesting depth. */
static int collect(struct cu_table *c, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), err = 0;
		if (tag == DW_TAG_inlined_subroutine)
			err = add_ranges(c, &child, depth);
		if (!err && dwarf_haschildren(&child))
			err = collect(c, &child, depth + 1);
		if (err)
			return err;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* start ascending, then the deeper (more inner) last: a lookup walks backwards */
static int inl_cmp(const void *a, const void *b)
{
	const struct inl *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static struct cu_table *cu_get(struct inline_tables *t, Dwarf_Die *cu)
{
	Dwarf_Off key = dwarf_dieoffset(cu);
	size_t lo = SEARCH_LOWER_BOUND(t->cus, t->n, .cu, key);
	if (lo < t->n && t->cus[lo].cu == key)
		return &t->cus[lo];
	if (ALLOC_GROW(t->cus, t->n + 1, t->cap))
		return NULL;
	struct cu_table c = { .cu = key };
	if (collect(&c, cu, 0)) {
		free(c.v);
		return NULL;
	}
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), inl_cmp);
	uint64_t m = 0;
	for (size_t i = 0; i < c.n; i++) {
		if (c.v[i].hi > m)
			m = c.v[i].hi;
		c.v[i].maxhi = m;
	}
	memmove(&t->cus[lo + 1], &t->cus[lo], (t->n - lo) * sizeof(*t->cus));
	t->cus[lo] = c;
	t->n++;
	return &t->cus[lo];
}

const char *inline_tables_lookup(struct inline_tables **tp, Dwarf_Die *cu, uint64_t addr)
{
	if (!*tp && !(*tp = calloc(1, sizeof(**tp))))
		return NULL;
	struct cu_table *c = cu_get(*tp, cu);
	if (!c)
		return NULL;
	size_t lo = SEARCH_UPPER_BOUND(c->v, c->n, .lo, addr);
	const struct inl *best = NULL;
	for (size_t j = lo; j-- > 0 && c->v[j].maxhi > addr;)
		if (addr < c->v[j].hi && (!best || c->v[j].depth > best->depth))
			best = &c->v[j];
	return best ? dwarf_diename((Dwarf_Die *)&best->die) : NULL;
}
