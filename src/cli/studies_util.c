/* cli/studies_util.c - the batch loop every trace-study command runs, with a progress line on
 * stderr (percentage of the log read) when it is a terminal. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/studies_util.h"

struct studies_filter studies_filter;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void studies_progress_begin(struct studies_progress *p, const char *cmd, const char *path,
			    int force)
{
	*p = (struct studies_progress){ cmd, path, force || isatty(2), 0, 0 };
}

void studies_progress_update(struct studies_progress *p, struct spent_trace_source *src)
{
	uint64_t done, total;
	if (!p->on)
		return;
	double t = now_s();
	/* the first batch draws it (a short read still shows it once), then twice a second */
	if (p->shown && t - p->last < 0.5)
		return;
	if (spent_trace_source_progress(src, &done, &total) || !total)
		return;
	p->last = t;
	p->shown = 1;
	fprintf(stderr, "\rspent: %s: %.0f%% of '%s' read", p->cmd, 100.0 * (double)done / (double)total,
		p->path);
	fflush(stderr);
}

void studies_progress_end(struct studies_progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = 0;
}

void studies_selection_text(char *buf, size_t len, long pid, const char *comm)
{
	if (comm)
		snprintf(buf, len, "--comm %s", comm);
	else
		snprintf(buf, len, "--pid %ld", pid);
}

int studies_run(const char *cmd, const char *path, studies_sink_fn fn, void *ctx, char *cut,
		size_t cut_len)
{
	cut[0] = 0;
	char err[512] = "";
	struct spent_trace_source *src = NULL;
	int rc = spent_trace_source_open(path, &src, err, sizeof(err));
	if (rc) {	/* ERR names PATH: the line trace dump and trace stats print too */
		cli_error("%s: %s", cmd, err);
		return 1;
	}
	const struct studies_filter *f = &studies_filter;
	if ((f->pid || f->comm || f->tag) &&
	    (rc = spent_trace_source_select(src, (uint32_t)f->pid, f->comm, f->tag ? SPENT_TRACE_SELECT_TAG : 0,
				      &src))) {
		cli_error("%s: cannot read trace '%s': %s", cmd, path, strerror(-rc));
		return 1;
	}
	/* a --no-data log gives empty data-side results that look like numbers (locks counted
	 * 4 acquisitions of 180, D1 0 misses): refuse where the study is about data, else say so */
	if (spent_trace_source_data_addresses(src) == 0) {
		if (f->need_data) {
			cli_error("%s: '%s' was traced with --no-data: this study needs its data "
				  "addresses (trace it again without --no-data)", cmd, path);
			spent_trace_source_free(src);
			return 1;
		}
		cli_warn("%s: '%s' was traced with --no-data: only its instruction fetches are "
			 "studied (every data figure reads 0)", cmd, path);
	}
	if (f->execs)	/* -ENOTSUP: the source keeps instruction batches, which the sink reads too */
		(void)spent_trace_source_want_execs(src);
	struct studies_progress prog;
	studies_progress_begin(&prog, cmd, path, f->progress);
	uint64_t insns = 0;
	struct spent_trace_batch b;
	int ret = 0;
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		insns += b.n_insns;
		if ((rc = fn(ctx, &b))) {
			studies_progress_end(&prog);
			cli_error("%s: simulating '%s' failed: %s", cmd, path, strerror(-rc));
			ret = 1;
			goto out;
		}
		studies_progress_update(&prog, src);
	}
	if (rc == 0 && !insns && (f->pid || f->comm)) {
		/* an empty study is the right answer (a script sweeping programs gets its zeros),
		 * but a typo'd selection read as one with nothing said */
		char sel[160];
		studies_selection_text(sel, sizeof(sel), f->pid, f->comm);
		cli_warn("%s: no process of '%s' matches %s (its processes: spent trace stats %s)",
			 cmd, path, sel, path);
	}
	if (rc < 0)	/* the caller reports on what was read, then says why it stopped */
		snprintf(cut, cut_len, "%s: reading trace '%s' failed after %llu instructions: %s",
			 cmd, path, (unsigned long long)insns,
			 spent_trace_source_error(src)[0] ? spent_trace_source_error(src) : strerror(-rc));
out:
	studies_progress_end(&prog);
	spent_trace_source_free(src);
	return ret;
}

int studies_parse(int argc, char **argv, const struct option *opts, const struct parse_usage *u,
		  const char **trace)
{
	int n = parse_options(argc, argv, opts, u, 0);
	if (n < 0)
		return n;
	if (n != 1)
		return parse_options_error(u, "expected one trace argument: %s", u->usage[0]);
	*trace = argv[0];
	return 0;
}

int studies_done(const char *cut)
{
	if (!cut[0])
		return 0;
	fflush(stdout);
	cli_error("%s", cut);
	return 1;
}

void studies_size(char *buf, size_t len, uint64_t v)
{
	if (v && v % (1ull << 30) == 0)
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v && v % (1ull << 20) == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}
