/* plot/locks_plot.h - the lock timeline's picture (analysis/locks.h has the data). */
#ifndef SPENT_PLOT_LOCKS_PLOT_H
#define SPENT_PLOT_LOCKS_PLOT_H

#include <stdint.h>

#include "analysis/locks.h"

/* Write LK's timeline in GROUPS bands as an SVG file at PATH; 0 or -errno. */
int plot_locks_svg(struct locks *lk, uint64_t groups, const char *path);

#endif
