/* core/symbols.h - image offset -> function, file:line and inlined frames through libdwfl
 * (static and dynamic symbols, separate debuginfo by build-id or debuglink, debuginfod when
 * DEBUGINFOD_URLS is set, stripped binaries, the vDSO) and /proc/kallsyms for the kernel.
 * Each image is loaded once. */
#ifndef SPENT_CORE_SYMBOLS_H
#define SPENT_CORE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

struct symbols;

/* Strings in a sym_info are owned by the symbols object and live until symbols_free. */
struct sym_info {
	const char *name;	/* function (symbol) name, NULL when none covers the offset */
	uint64_t start;		/* symbol start, image offset space */
	uint64_t size;
	const char *file;	/* source file, NULL when no line info */
	int line;
	const char *inlined;	/* innermost inlined function at the offset, or NULL */
	int exact;		/* 1: the symbol covers the offset; 0: nearest preceding symbol */
};

int symbols_new(struct symbols **out);
void symbols_free(struct symbols *s);

/*
 * Look up OFFSET in IMG. 0 with *OUT filled (name may be NULL); -ENOENT when the image cannot
 * be opened (out->name NULL). Never fails for a missing symbol: stripped images give the
 * nearest preceding exported symbol (exact 0).
 */
int symbols_lookup(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
		   struct sym_info *out);

/* Same without file:line and inlines (no DWARF is read: cheap for stripped+debuginfo). */
int symbols_lookup_name(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
			struct sym_info *out);

/* Find function NAME in IMG: its start and size (the first in the file of those that answer
 * NAME best). 0, -ENOENT or -ENOMEM. */
int symbols_find_function(struct symbols *s, const struct spent_profile_image *img, const char *name,
			  uint64_t *start, uint64_t *size);
/* Every function that answers NAME best in IMG (C++ overloads named without parameters answer
 * alike), in file order: *OUT malloc'ed, N >= 1 (core/symtable.h's struct). 0, -ENOENT or
 * -ENOMEM. */
struct symtable_range;
int symbols_find_functions(struct symbols *s, const struct spent_profile_image *img, const char *name,
			   struct symtable_range **out, size_t *n);

/* Copy LEN bytes of IMG's code at OFFSET into BUF (from the file, or the vDSO). 0 or -errno. */
int symbols_read_code(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
		      uint8_t *buf, size_t len);

/* Use PATH (a saved subset in /proc/kallsyms format, plain or zstd: core/kallsyms_file.h) for
 * kernel symbols instead of /proc/kallsyms when it exists. 0 or -ENOMEM. */
int symbols_set_kallsyms(struct symbols *s, const char *path);
/* Name each kernel image from DIR/kallsyms-HEX, the copy of its own identity's symbols
 * (core/kernel_id.h), when DIR has one; else as above. 0 or -ENOMEM. */
int symbols_set_kallsyms_dir(struct symbols *s, const char *dir);
/* Save the kernel symbols P's kernel counts and stack frames fall in to PATH (atomically,
 * /proc/kallsyms format as one zstd frame: kallsyms_file_write_zst). 0 (nothing written when P
 * has no kernel samples) or -errno. */
int symbols_save_kernel(struct symbols *s, const struct spent_profile *p, const char *path);

/* Why IMG could not be opened ("no such file"), or NULL when it was. */
const char *symbols_image_error(struct symbols *s, const struct spent_profile_image *img);

/* Why IMG's function names are missing from a report: NULL when it has some (its file, or
 * the build-id cache's copy of its symbols), else the file's problem ("image file not found")
 * with the cache's into *CACHE_WHY ("" when the cache is not the way for IMG). */
const char *symbols_names_missing(struct symbols *s, const struct spent_profile_image *img,
				  const char **cache_why);
/* Save IMG's symbol table in the build-id cache unless it is there already; *SAVED says
 * whether it was written. 0 (also for images without a key or a file of their identity),
 * -ECANCELED when the cache is off, or -errno (the directory cannot be made, a write). */
int symbols_cache_image(struct symbols *s, const struct spent_profile_image *img, bool *saved);
/* Save the symbol tables of P's images in the build-id cache (core/buildid_cache.h), those
 * not already there. 0, or the first -errno (the rest are still tried). */
int symbols_cache_images(struct symbols *s, const struct spent_profile *p);

#endif
