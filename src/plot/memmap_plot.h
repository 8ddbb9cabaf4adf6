/* plot/memmap_plot.h - the memory map's picture (analysis/memmap.h has the data). */
#ifndef SPENT_PLOT_MEMMAP_PLOT_H
#define SPENT_PLOT_MEMMAP_PLOT_H

#include "analysis/memmap.h"
#include "plot/plot.h"

/* Render MM with axes, labels and legend into OUT (raster_release() it); 0 or -ENOMEM. */
int plot_memmap(const struct memmap *mm, const char *title, struct raster *out);

#endif
