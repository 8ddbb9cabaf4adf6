/* core/linetable.h - one image's line table (address -> source file:line) as a sorted array:
 * built from the image's DWARF at record time (libdw's per-CU line programs) and saved in the
 * build-id cache next to its symbol table, so `spent report --by line` keeps its lines after
 * the binary was rebuilt or removed. Inlined frames are not kept. */
#ifndef SPENT_CORE_LINETABLE_H
#define SPENT_CORE_LINETABLE_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct linetable;

/* The line table of MOD (addresses in MOD's address space, as dwfl_module_getsrc takes them).
 * 0, -ENOENT (no line information), -ENOMEM. */
int linetable_from_module(Dwfl_Module *mod, struct linetable **out);
/* Read a table written by linetable_save. 0, -ENOENT, -EINVAL (corrupt), -ENOMEM. */
int linetable_load(const char *path, struct linetable **out);
/* Write T to PATH atomically (mode 0600). 0 or -errno. */
int linetable_save(const struct linetable *t, const char *path);
void linetable_free(struct linetable *t);
size_t linetable_rows(const struct linetable *t);

/* The source line of OFFSET: 0 with *FILE (owned by T) and *LINE, -ENOENT when no row
 * covers it (before the first, or in a gap after an end of sequence). */
int linetable_lookup(const struct linetable *t, uint64_t offset, const char **file, int *line);

#endif
