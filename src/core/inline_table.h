/* core/inline_table.h - the innermost inlined function at an address, from one table per
 * compilation unit built at its first use (every DW_TAG_inlined_subroutine range sorted by
 * address): dwarf_getscopes walks the CU's whole DIE tree at every address, which made a
 * line report of 100k offsets take seconds. */
#ifndef SPENT_CORE_INLINE_TABLE_H
#define SPENT_CORE_INLINE_TABLE_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct inline_tables;

void inline_tables_free(struct inline_tables *t);
/* The name of the innermost inlined subroutine of CU covering ADDR (CU-relative to the
 * module's bias, as dwarf_getscopes takes it), or NULL. *T is made on first use. */
const char *inline_tables_lookup(struct inline_tables **t, Dwarf_Die *cu, uint64_t addr);

#endif
