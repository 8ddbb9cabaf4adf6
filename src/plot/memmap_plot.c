/* plot/memmap_plot.c - draws a memory map (analysis/memmap.c's bitmap) as a raster: dots per
 * instruction and data address, address-modulo axis with quarter ticks, instructions-executed
 * axis, title and legend. */
#include <stdio.h>
#include <string.h>

#include "plot/memmap_plot.h"

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
	const struct memmap_config *cfg = memmap_get_config(mm);
	uint32_t w = cfg->width, h = cfg->height;
	char lab[64];
	for (uint32_t x = x0 - 1; x <= x0 + w; x++)
		raster_set(r, x, y0 + h, 0x000000);
	for (uint32_t y = y0; y <= y0 + h; y++)
		raster_set(r, x0 - 1, y, 0x000000);
	for (int i = 0; i <= 4; i++) {	/* address ticks at quarters of the modulus */
		uint32_t y = y0 + h - (uint32_t)((uint64_t)h * (uint64_t)i / 4);
		for (uint32_t x = x0 - 6; x < x0 - 1; x++)
			raster_set(r, x, y, 0x000000);
		size_label(lab, sizeof(lab), cfg->mod * (uint64_t)i / 4);
		raster_text(r, x0 - 10 - 6 * (uint32_t)strlen(lab) * 2, y - 7, 2, 0x000000, lab);
	}
	uint64_t total = memmap_instructions(mm);	/* the used columns are stretched over the width */
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
		/* centred under its tick, but kept inside the picture (the last one at the edge) */
		uint32_t lw = 12 * (uint32_t)strlen(lab), lx = x - lw / 2;
		if (lx + lw + 4 > r->w)
			lx = r->w - lw - 4;
		raster_text(r, lx, y0 + h + 10, 2, 0x000000, lab);
	}
}

int plot_memmap(const struct memmap *mm, const char *title, struct raster *out)
{
	const struct memmap_config *cfg = memmap_get_config(mm);
	const uint32_t x0 = 110, y0 = 50, w = cfg->width, h = cfg->height;
	int err = raster_init(out, x0 + w + 30, y0 + h + 104, 0xffffff);
	if (err)
		return err;
	uint64_t used = (memmap_instructions(mm) + memmap_column_span(mm) - 1) / memmap_column_span(mm);
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
	raster_text(out, x0 + w / 2 > 126 ? x0 + w / 2 - 126 : 0, ly, 2, 0x000000,
		    "INSTRUCTIONS EXECUTED");
	/* the legend on its own line, right-aligned: inside the picture at any --width */
	uint32_t lx = out->w - 8 - 2 * (12 + 6 + 48) - 24;
	ly += 26;
	for (uint32_t k = 0; k < 12; k++)
		for (uint32_t j = 0; j < 12; j++) {
			raster_set(out, lx + k, ly + j, 0x1f4fd0);
			raster_set(out, lx + 90 + k, ly + j, 0xd02020);
		}
	raster_text(out, lx + 18, ly, 2, 0x000000, "INSN");
	raster_text(out, lx + 108, ly, 2, 0x000000, "DATA");
	return 0;
}
