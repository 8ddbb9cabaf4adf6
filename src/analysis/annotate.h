/* analysis/annotate.h - dcpilist: one function's instructions (decoded with Zydis) with the
 * samples of each event at each instruction and the source line each belongs to. */
#ifndef SPENT_ANALYSIS_ANNOTATE_H
#define SPENT_ANALYSIS_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/symbols.h"
#include "spent/profile.h"

struct annotate_insn {
	uint64_t offset;
	uint8_t len;
	char text[128];		/* Intel syntax */
	const char *file;	/* owned by the symbols object */
	int line;
	uint64_t *counts;	/* [nevents] */
};

struct annotate {
	uint32_t image;
	uint64_t start, size;
	size_t nevents;
	uint64_t *fn_totals;	/* [nevents] samples inside the function */
	struct annotate_insn *insns;
	size_t ninsns;
	uint64_t unattributed;	/* samples at offsets that are not instruction starts */
	bool region;		/* no symbol: the sampled code around IMAGE+0xOFF */
};

/*
 * Annotate function NAME: looked up in every image of P (the one with the most samples in
 * it wins); a name IMAGE+0xOFF the report gives code no symbol covers is the run of sampled
 * instructions around OFF (samples less than 64 bytes apart; a->region). 0; -ENOENT (no image that could be read has NAME: *WHY is then why the first
 * image with samples that could not be read could not, and *UNREADABLE its index, or NULL and
 * -1 when every image was read); -ENODATA (*WHY: the function's image cannot be read, e.g.
 * "image file not found"); -EFBIG (*WHY says so: the function is larger than the 64 MiB of
 * code annotate decodes). *OUT freed with annotate_free.
 */
int annotate_function(const struct spent_profile *p, struct symbols *sym, const char *name,
		      const uint32_t *evs, size_t nev, struct annotate **out, const char **why,
		      long *unreadable);
void annotate_free(struct annotate *a);

#endif
