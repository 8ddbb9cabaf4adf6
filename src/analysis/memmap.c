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

void memmap_feed(struct memmap *mm, const struct trace_batch *b)
{
	for (size_t i = 0; i < b->n_insns; i++) {
		const struct trace_insn *in = &b->insns[i];
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

static void size_label(char *buf, size_t len, uint64_t v)
{
	if (v && v % (1 << 20) == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void draw_axes(const struct memmap *mm, struct raster *r, uint32_t x0, uint32_t y0)
{
	uint32_t w = mm->cfg.width, h = mm->cfg.height;
	char lab[64];
	for (uint32_t x = x0 - 1; x <= x0 + w; x++)
		raster_set(r, x, y0 + h, 0x000000);
	for (uint32_t y = y0; y <= y0 + h; y++)
		raster_set(r, x0 - 1, y, 0x000000);
	for (int i = 0; i <= 4; i++) {	/* address ticks at quarters of the modulus */
		uint32_t y = y0 + h - (uint32_t)((uint64_t)h * (uint64_t)i / 4);
		for (uint32_t x = x0 - 6; x < x0 - 1; x++)
			raster_set(r, x, y, 0x000000);
		size_label(lab, sizeof(lab), mm->cfg.mod * (uint64_t)i / 4);
		raster_text(r, x0 - 10 - 6 * (uint32_t)strlen(lab) * 2, y - 7, 2, 0x000000, lab);
	}
	uint64_t total = mm->insns;	/* the used columns are stretched over the width */
	for (int i = 0; i <= 4; i++) {
		uint32_t x = x0 + (uint32_t)((uint64_t)w * (uint64_t)i / 4);
		for (uint32_t y = y0 + h; y < y0 + h + 6; y++)
			raster_set(r, x, y, 0x000000);
		double v = (double)total * i / 4;
		if (total >= 4000000)
			snprintf(lab, sizeof(lab), "%.1fM", v / 1e6);
		else if (total >= 4000)
			snprintf(lab, sizeof(lab), "%.0fK", v / 1e3);
		else
			snprintf(lab, sizeof(lab), "%.0f", v);
		raster_text(r, x - 6 * (uint32_t)strlen(lab), y0 + h + 10, 2, 0x000000, lab);
	}
}

int memmap_render(const struct memmap *mm, const char *title, struct raster *out)
{
	const uint32_t x0 = 110, y0 = 50, w = mm->cfg.width, h = mm->cfg.height;
	int err = raster_init(out, x0 + w + 30, y0 + h + 80, 0xffffff);
	if (err)
		return err;
	uint64_t used = (mm->insns + mm->span - 1) / mm->span;
	if (!used)
		used = 1;
	for (uint32_t x = 0; x < w; x++)
		for (uint32_t y = 0; y < h; y++) {
			unsigned d = memmap_dot(mm, (uint32_t)((uint64_t)x * used / w), y);
			if (d)	/* row 0 (address 0) at the bottom */
				raster_set(out, x0 + x, y0 + h - 1 - y,
					   d == 1 ? 0x1f4fd0 : d == 2 ? 0xd02020 : 0x8020a0);
		}
	draw_axes(mm, out, x0, y0);
	char lab[160];
	snprintf(lab, sizeof(lab), "%s", title ? title : "");
	raster_text(out, x0, 12, 2, 0x000000, lab);
	uint32_t ly = y0 + h + 42;
	raster_text(out, x0 + w / 2 - 200, ly, 2, 0x000000, "INSTRUCTIONS EXECUTED");
	for (uint32_t k = 0; k < 12; k++)
		for (uint32_t j = 0; j < 12; j++) {
			raster_set(out, x0 + w / 2 + 120 + k, ly + j, 0x1f4fd0);
			raster_set(out, x0 + w / 2 + 260 + k, ly + j, 0xd02020);
		}
	raster_text(out, x0 + w / 2 + 138, ly, 2, 0x000000, "INSN");
	raster_text(out, x0 + w / 2 + 278, ly, 2, 0x000000, "DATA");
	return 0;
}
