/* analysis/report.h - dcpiprof-style views of a profile: rows by image, function, source line
 * or instruction, one column per event (sorted by the first), self and inclusive (stacks). */
#ifndef SPENT_ANALYSIS_REPORT_H
#define SPENT_ANALYSIS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/symbols.h"
#include "spent/profile.h"

enum report_by {
	REPORT_BY_IMAGE,
	REPORT_BY_FUNCTION,
	REPORT_BY_LINE,
	REPORT_BY_INSTRUCTION,
};

struct report_config {
	enum report_by by;
	const uint32_t *events;	/* profile event indices, first = sort key */
	size_t nevents;
	bool children;		/* inclusive counts from stacks */
	bool chains;		/* the call chains of each row's samples (first event, stacks) */
};

struct report_row {
	char *key;		/* unique: image path + what the row is */
	const char *image;	/* the image path ("[unknown]" for unplaced samples), or its
				 * label (struct report) */
	char *symbol;		/* function, or image+0xOFFSET when no symbol covers it */
	const char *file;	/* source file (line and instruction views), may be NULL */
	int line;
	uint64_t offset;	/* instruction view: the offset; function view: symbol start */
	uint64_t *self;		/* [nevents] */
	uint64_t *incl;		/* [nevents], zero without children */
	uint64_t stamp;		/* internal: last stack counted */
	size_t chain0, nchains;	/* its chains: report.chains[chain0 .. chain0 + nchains) */
};

/* One call chain of a row (spent report -g): the rows of a stack's frames, leaf first (the
 * leaf is the row it belongs to), and the first event's samples that had it. Stacks whose
 * frames fall in the same rows are one chain. */
struct report_chain {
	uint32_t *rows;
	uint32_t n;
	uint64_t count;
};

struct report {
	struct report_config cfg;
	uint32_t *events;
	uint64_t *totals;	/* [nevents]: placed + unknown samples of each event */
	struct report_row *rows;
	size_t nrows;
	bool have_stacks;	/* the profile had stacks for the first event */
	struct report_chain *chains;	/* cfg.chains: by row, the largest first in each */
	size_t nchains;
	char **labels;		/* [nlabels] or NULL: the name shown for an image instead of its
				 * path (NULL entry: the path); set for kernels when the profile
				 * has several, so their symbols never share a row */
	size_t nlabels;
};

/* Build the rows of P (symbolized with SYM). *OUT freed with report_free. 0 or -errno. */
int report_build(const struct spent_profile *p, struct symbols *sym, const struct report_config *cfg,
		 struct report **out);
void report_free(struct report *r);
/* Index of the row with KEY, or -1. */
long report_find(const struct report *r, const char *key);


#endif
