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

/* What a symbol is (symtable_hit.flags). */
enum {
	SYMTABLE_GLOBAL = 1,	/* global or weak binding */
	SYMTABLE_FUNC = 2,	/* STT_FUNC */
	SYMTABLE_TLS = 4,	/* STT_TLS: its value is a TLS offset, never an address's symbol */
	SYMTABLE_OBJECT = 8,	/* STT_OBJECT (data) */
	SYMTABLE_HIDDEN = 16,	/* a non-default version of its name (.gnu.version's hidden bit:
				 * glibc's compat pthread_cond_timedwait@GLIBC_2.2.5 beside the
				 * @@GLIBC_2.3.2 programs call); set by symtable_open only */
};

struct symtable_hit {
	const char *name;	/* owned by the table (or the module it was built from) */
	uint64_t start, size;
	unsigned flags;		/* SYMTABLE_* */
	uint32_t index;		/* its index in the image's ELF symbol table */
};

/* Build the table of MOD (names point into MOD's string tables: free the table first). */
int symtable_from_module(Dwfl_Module *mod, struct symtable **out);
/* The table of the ELF file PATH itself (its .symtab, else its .dynsym), at file addresses
 * (bias 0); the same symbols as symtable_from_module. 0, -errno of the open (a FIFO or
 * directory is refused), -ENOEXEC (not ELF), -ENOMEM. */
int symtable_open(const char *path, struct symtable **out);
/* Where separate debug files are found by build-id (Debian's -dbg and -dbgsym packages). */
#define SYMTABLE_DEBUG_DIR "/usr/lib/debug"
/* Into BUF (SIZE bytes): where the separate debug file of the file T was opened from lies
 * (SYMTABLE_DEBUG_DIR/.build-id/xx/rest.debug, by its build-id), whose .symtab has the local
 * symbols a stripped image lacks (glibc's _int_malloc, main_arena, __libc_setlocale_lock).
 * 0; -ENOENT when T has no build-id, was not read by symtable_open, or has a .symtab of its
 * own (its locals are in T already: adding the debug file's would name each twice);
 * -ENAMETOOLONG. Whether the file is there is the opener's to find out. */
int symtable_debug_path(const struct symtable *t, char *buf, size_t size);
/* Read a table written by symtable_save (names copied). 0, -ENOENT, -EINVAL (corrupt), -ENOMEM. */
int symtable_load(const char *path, struct symtable **out);
/* Write T to PATH atomically (mode 0600). 0 or -errno. */
int symtable_save(const struct symtable *t, const char *path);
void symtable_free(struct symtable *t);
size_t symtable_count(const struct symtable *t);

/* The symbol for OFFSET: 0 with *HIT filled, -ENOENT when none applies. */
int symtable_lookup(const struct symtable *t, uint64_t offset, struct symtable_hit *hit);
/* Symbol I (< symtable_count; globals first, each run by address): 0, or -ENOENT. */
int symtable_symbol(const struct symtable *t, size_t i, struct symtable_hit *hit);
/* The first symbol of any kind named exactly NAME (thread-local ones too: see hit->flags):
 * 0 or -ENOENT. */
int symtable_find_symbol(const struct symtable *t, const char *name, struct symtable_hit *hit);
/* The first function symbol called NAME (mangled or demangled): 0 or -ENOENT. */
int symtable_find(const struct symtable *t, const char *name, uint64_t *start, uint64_t *size);
/* A function's place in its image. */
struct symtable_range {
	uint64_t start, size;
};
/* Every function symbol that answers NAME best (C++ overloads answer a name without
 * parameters alike), in file order: *OUT (malloc'ed, N >= 1 entries). 0, -ENOENT, -ENOMEM. */
int symtable_find_all(const struct symtable *t, const char *name, struct symtable_range **out, size_t *n);

#endif
