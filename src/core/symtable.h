/* core/symtable.h - one image's symbols as a table sorted by address, built once (from a
 * libdwfl module, or from a saved copy in the build-id cache) and searched by binary search:
 * libdwfl's own address lookup scans every symbol per call, which made a report of a big
 * stripped binary (31k dynamic symbols) take seconds. The choice of symbol for an address is
 * libdwfl's: the closest preceding symbol whose size covers it (globals first, then locals,
 * the stronger binding on a tie), else the closest sizeless label of the same section that no
 * sized symbol's end passes. */
#ifndef SPENT_CORE_SYMTABLE_H
#define SPENT_CORE_SYMTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct symtable;

struct symtable_hit {
	const char *name;	/* owned by the table (or the module it was built from) */
	uint64_t start, size;
};

/* Build the table of MOD (names point into MOD's string tables: free the table first). */
int symtable_from_module(Dwfl_Module *mod, struct symtable **out);
/* Read a table written by symtable_save (names copied). 0, -ENOENT, -EINVAL (corrupt), -ENOMEM. */
int symtable_load(const char *path, struct symtable **out);
/* Write T to PATH atomically (mode 0600). 0 or -errno. */
int symtable_save(const struct symtable *t, const char *path);
void symtable_free(struct symtable *t);
size_t symtable_count(const struct symtable *t);

/* The symbol for OFFSET: 0 with *HIT filled, -ENOENT when none applies. */
int symtable_lookup(const struct symtable *t, uint64_t offset, struct symtable_hit *hit);
/* The first function symbol called NAME: 0 or -ENOENT. */
int symtable_find(const struct symtable *t, const char *name, uint64_t *start, uint64_t *size);

#endif
