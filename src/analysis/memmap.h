/* analysis/memmap.h - memory maps (PatchWrx paper, Figures 7-11): a dot per instruction address and
 * per data address, address modulo a board-cache size against instructions executed, kept as
 * a fixed-size bitmap whose columns double their span as the trace grows (one pass). */
#ifndef SPENT_ANALYSIS_MEMMAP_H
#define SPENT_ANALYSIS_MEMMAP_H

#include <stdint.h>

#include "spent/trace.h"

struct memmap_config {
	uint64_t mod;		/* bytes (4M) */
	uint32_t width, height;	/* plot area in pixels */
};

struct memmap;

/* 0, -EINVAL (zero sizes), -ENOMEM; free with memmap_free(). */
int memmap_new(const struct memmap_config *cfg, struct memmap **out);
void memmap_free(struct memmap *mm);
void memmap_feed(struct memmap *mm, const struct spent_trace_batch *batch);
/* One instruction (pc) and its data addresses; for tests. */
void memmap_insn(struct memmap *mm, uint64_t pc, const uint64_t *data, uint32_t n_data);
uint64_t memmap_instructions(const struct memmap *mm);
/* Dots in column X (0..width-1) at row Y (0 = address 0): bit 0 instruction, bit 1 data. */
unsigned memmap_dot(const struct memmap *mm, uint32_t x, uint32_t y);
/* Instructions per column after the last merge. */
uint64_t memmap_column_span(const struct memmap *mm);
const struct memmap_config *memmap_get_config(const struct memmap *mm);

#endif
