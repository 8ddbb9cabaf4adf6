/* core/symbols.h - image offset -> function, file:line and inlined frames through libdwfl
 * (static and dynamic symbols, separate debuginfo by build-id or debuglink, debuginfod when
 * DEBUGINFOD_URLS is set, stripped binaries, the vDSO) and /proc/kallsyms for the kernel.
 * Each image is loaded once. */
#ifndef SPENT_CORE_SYMBOLS_H
#define SPENT_CORE_SYMBOLS_H

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
int symbols_lookup(struct symbols *s, const struct profile_image *img, uint64_t offset,
		   struct sym_info *out);

/* Find function NAME in IMG: its start and size. 0 or -ENOENT. */
int symbols_find_function(struct symbols *s, const struct profile_image *img, const char *name,
			  uint64_t *start, uint64_t *size);

/* Copy LEN bytes of IMG's code at OFFSET into BUF (from the file, or the vDSO). 0 or -errno. */
int symbols_read_code(struct symbols *s, const struct profile_image *img, uint64_t offset,
		      uint8_t *buf, size_t len);

/* Why IMG could not be opened ("no such file"), or NULL when it was. */
const char *symbols_image_error(struct symbols *s, const struct profile_image *img);

#endif
