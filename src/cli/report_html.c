/* cli/report_html.c - `spent report --html`'s part of the command line: checks the page's
 * output path and reads the --html-plot files up front, then writes the page (the page itself
 * is plot/html_report.c). Kept out of cmd_report.c so that file only names the options. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report_html.h"
#include "core/outfile.h"

int report_html_prepare(struct report_html *h, const char *input)
{
	if (!h->path) {
		if (!h->plot_paths.n)
			return 0;
		cli_error("--html-plot adds a plot to the page of --html FILE: give --html too");
		return -EINVAL;
	}
	if (!strcmp(h->path, "-")) {
		cli_error("--html needs a file name (the page is not written to standard output)");
		return -EINVAL;
	}
	int err = cli_check_output_from(h->path, input);
	if (err)
		return err;
	if (h->plot_paths.n && !(h->plots = calloc((size_t)h->plot_paths.n, sizeof(*h->plots))))
		return -ENOMEM;
	for (int i = 0; i < h->plot_paths.n; i++) {
		const char *path = h->plot_paths.items[i];
		/* the page would replace the plot it embeds */
		if ((err = cli_check_output_from(h->path, path)))
			return err;
		if ((err = html_plot_read(path, &h->plots[i]))) {
			cli_error("cannot embed plot '%s': %s", path,
				  err == -EINVAL ? "it is neither an SVG nor a PNG file" :
				  err == -EFBIG ? "it is larger than 32 MiB" : strerror(-err));
			return err;
		}
		h->nplots++;
	}
	return 0;
}

int report_html_write(const struct report_html *h, const struct spent_profile *p, struct symbols *sym,
		      const uint32_t *evs, size_t nev, const char *title)
{
	struct html_report_config cfg = { .events = evs, .nevents = nev, .title = title,
					  .plots = h->plots, .nplots = h->nplots };
	int err = html_report_write(p, sym, &cfg, h->path);
	if (err)
		cli_error("cannot write the HTML report '%s': %s", h->path, outfile_strerror(err));
	else
		fprintf(stderr, "spent: wrote HTML report '%s'\n", h->path);
	return err;
}

void report_html_release(struct report_html *h)
{
	for (size_t i = 0; i < h->nplots; i++)
		html_plot_release(&h->plots[i]);
	free(h->plots);
	opt_string_list_release(&h->plot_paths);
}
