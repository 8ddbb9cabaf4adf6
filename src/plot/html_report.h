/* plot/html_report.h - `spent report --html`: one self-contained HTML page (no network fetch)
 * holding a profile's tables (functions, images, comms and threads), an interactive flame
 * graph, a FlameScope-style time heat map whose selected ranges redraw the flame graph, and
 * plots (SVG or PNG files the studies wrote) embedded as data: URIs. The page's JavaScript and
 * CSS are src/plot/html/report.{html,css,js}, compiled in as strings (docs/outputs.md). */
#ifndef SPENT_PLOT_HTML_REPORT_H
#define SPENT_PLOT_HTML_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/symbols.h"
#include "spent/profile.h"

/* Largest plot file a page embeds (base64 makes it a third bigger in the page). */
#define HTML_PLOT_MAX (32u << 20)

/* A plot to embed: read and checked by html_plot_read, freed with html_plot_release. */
struct html_plot {
	char *title;		/* the file's base name */
	const char *mime;	/* "image/svg+xml" or "image/png" */
	uint8_t *data;
	size_t len;
};

/* Read PATH as a plot: 0, -EINVAL when it is neither an SVG nor a PNG file, -EFBIG when
 * larger than HTML_PLOT_MAX, -ENOMEM or the read's -errno. */
int html_plot_read(const char *path, struct html_plot *out);
void html_plot_release(struct html_plot *pl);

struct html_report_config {
	const uint32_t *events;	/* profile event indices; the first is the one drawn */
	size_t nevents;
	const char *title;	/* shown at the top (e.g. the profile directory) */
	size_t limit;		/* rows of the functions table (0: 200) */
	const struct html_plot *plots;
	size_t nplots;
};

/* Write the page for P (symbolized with SYM) to PATH atomically (core/outfile.h). 0 or -errno
 * (-EINVAL: no events given). */
int html_report_write(const struct spent_profile *p, struct symbols *sym,
		      const struct html_report_config *cfg, const char *path);

#endif
