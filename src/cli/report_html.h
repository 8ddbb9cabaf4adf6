/* cli/report_html.h - `spent report --html FILE [--html-plot PLOT]...`: the page's output
 * check and plots, read before the profile so bad input costs nothing (plot/html_report.h). */
#ifndef SPENT_CLI_REPORT_HTML_H
#define SPENT_CLI_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "cli/parse_options.h"
#include "core/symbols.h"
#include "plot/html_report.h"

struct report_html {
	const char *path;		/* --html FILE, or NULL */
	struct opt_string_list plot_paths;	/* every --html-plot */
	struct html_plot *plots;
	size_t nplots;
};

/* Before the profile INPUT is read: the output can be written, is not INPUT or inside it, and
 * every plot is an SVG or PNG file. 0, or prints one "spent: ..." line and returns -errno. */
int report_html_prepare(struct report_html *h, const char *input);
/* Write the page of events EVS of P. 0, or prints why and returns -errno. */
int report_html_write(const struct report_html *h, const struct spent_profile *p, struct symbols *sym,
		      const uint32_t *evs, size_t nev, const char *title);
void report_html_release(struct report_html *h);

#endif
