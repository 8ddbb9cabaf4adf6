/* plot/flamegraph.h - a self-contained SVG flame graph (inline JavaScript for click-to-zoom
 * and search) from folded stacks. */
#ifndef SPENT_PLOT_FLAMEGRAPH_H
#define SPENT_PLOT_FLAMEGRAPH_H

#include "profile/export.h"

/* Write F as an SVG flame graph titled TITLE to PATH (atomically). 0 or -errno. */
int flamegraph_write(const struct folded *f, const char *title, const char *path);

#endif
