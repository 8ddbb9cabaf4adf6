/* analysis/memmap.c - the memory-map bitmap (instruction and data dots per column of
 * instructions, columns merged pairwise when the trace outgrows them) and its PNG rendering. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/memmap.h"

struct memmap {
	struct memmap_config cfg;
	uint32_t words;		/* 64-bit words per column per stream */
	uint64_t *bits;		/* width columns x 2 streams x words */
	uint64_t span;		/* instructions per column */
	uint64_t insns;
};

int memmap_new(const struct memmap_config *cfg, struct memmap **out)
{
	if (!cfg->mod || !cfg->width || !cfg->height || cfg->width > 16384 || cfg->height > 16384)
		return -EINVAL;
	struct memmap *mm = calloc(1, sizeof(*mm));
	if (!mm)
		return -ENOMEM;
	mm->cfg = *cfg;
	mm->words = (cfg->height + 63) / 64;
	mm->bits = calloc((size_t)cfg->width * 2 * mm->words, sizeof(uint64_t));
	if (!mm->bits) {
		free(mm);
		return -ENOMEM;
	}
	mm->span = 1;
	*out = mm;
	return 0;
}

void memmap_free(struct memmap *mm)
{
	if (!mm)
		return;
	free(mm->bits);
	free(mm);
}

static inline uint64_t *column(const struct memmap *mm, uint64_t x, int stream)
{
	return &mm->bits[(x * 2 + (uint64_t)stream) * mm->words];
}

/* halve the time resolution: column i becomes columns 2i and 2i+1 together */
static void merge_columns(struct memmap *mm)
{
	uint32_t w = mm->cfg.width;
	for (uint32_t i = 0; i < w; i++)
		for (int s = 0; s < 2; s++) {
			uint64_t *dst = column(mm, i, s);
			if (2 * i + 1 < w) {
				const uint64_t *a = column(mm, 2 * i, s), *b = column(mm, 2 * i + 1, s);
				for (uint32_t k = 0; k < mm->words; k++)
					dst[k] = a[k] | b[k];
			} else {
				memset(dst, 0, mm->words * sizeof(uint64_t));
			}
		}
	mm->span *= 2;
}

static inline void dot(struct memmap *mm, uint64_t x, int stream, uint64_t addr)
{
	uint64_t y = (addr % mm->cfg.mod) * mm->cfg.height / mm->cfg.mod;
	column(mm, x, stream)[y / 64] |= 1ull << (y % 64);
}

void memmap_insn(struct memmap *mm, uint64_t pc, const uint64_t *data, uint32_t n)
{
	if (mm->insns / mm->span >= mm->cfg.width)
		merge_columns(mm);
	uint64_t x = mm->insns / mm->span;
	dot(mm, x, 0, pc);
	for (uint32_t i = 0; i < n; i++)
		dot(mm, x, 1, data[i]);
	mm->insns++;
}

void memmap_feed(struct memmap *mm, const struct spent_trace_batch *b)
{
	for (size_t i = 0; i < b->n_insns; i++) {
		const struct spent_trace_insn *in = &b->insns[i];
		if (mm->insns / mm->span >= mm->cfg.width)
			merge_columns(mm);
		uint64_t x = mm->insns / mm->span;
		dot(mm, x, 0, in->pc);
		for (uint32_t k = 0; k < in->nrefs; k++)
			dot(mm, x, 1, b->refs[in->ref0 + k].addr);
		mm->insns++;
	}
}

uint64_t memmap_instructions(const struct memmap *mm)
{
	return mm->insns;
}

uint64_t memmap_column_span(const struct memmap *mm)
{
	return mm->span;
}

unsigned memmap_dot(const struct memmap *mm, uint32_t x, uint32_t y)
{
	if (x >= mm->cfg.width || y >= mm->cfg.height)
		return 0;
	unsigned r = 0;
	for (int s = 0; s < 2; s++)
		if (column(mm, x, s)[y / 64] & (1ull << (y % 64)))
			r |= 1u << s;
	return r;
}

const struct memmap_config *memmap_get_config(const struct memmap *mm)
{
	return &mm->cfg;
}
