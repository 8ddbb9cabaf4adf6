/* cli/studies_util.c - the batch loop every trace-study command runs, with a progress line on
 * stderr when it is a terminal. */
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

int studies_run(const char *cmd, const char *path, studies_sink_fn fn, void *ctx, char *cut,
		size_t cut_len)
{
	cut[0] = 0;
	char err[512] = "";
	struct trace_source *src = NULL;
	int rc = trace_source_open(path, &src, err, sizeof(err));
	if (rc) {
		cli_error("%s: cannot read trace '%s': %s", cmd, path, err[0] ? err : strerror(-rc));
		return 1;
	}
	const struct studies_filter *f = &studies_filter;
	if ((f->pid || f->comm || f->tag) &&
	    (rc = trace_source_select(src, (uint32_t)f->pid, f->comm, f->tag ? TRACE_SELECT_TAG : 0,
				      &src))) {
		cli_error("%s: cannot read trace '%s': %s", cmd, path, strerror(-rc));
		return 1;
	}
	int tty = isatty(2);
	double last = now_s();
	uint64_t insns = 0, batches = 0;
	struct trace_batch b;
	int ret = 0;
	while ((rc = trace_source_next(src, &b)) > 0) {
		insns += b.n_insns;
		if ((rc = fn(ctx, &b))) {
			cli_error("%s: simulating '%s' failed: %s", cmd, path, strerror(-rc));
			ret = 1;
			goto out;
		}
		if (tty && (++batches & 63) == 0 && now_s() - last > 0.5) {
			last = now_s();
			fprintf(stderr, "\rspent: %s: %llu instructions...", cmd,
				(unsigned long long)insns);
		}
	}
	if (rc < 0)	/* the caller reports on what was read, then says why it stopped */
		snprintf(cut, cut_len, "%s: reading trace '%s' failed after %llu instructions: %s",
			 cmd, path, (unsigned long long)insns,
			 trace_source_error(src)[0] ? trace_source_error(src) : strerror(-rc));
out:
	if (tty && batches >= 64)
		fprintf(stderr, "\r\033[K");
	trace_source_free(src);
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
