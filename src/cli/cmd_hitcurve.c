/* cli/cmd_hitcurve.c - `spent hitcurve`: incremental hits per 1000 instructions for every
 * power-of-two cache size, i- and d-stream, direct-mapped and fully-associative LRU, and the
 * PatchWrx paper's CPI estimate from service times per level. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hitcurve.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/outfile.h"
#include "cli/studies_util.h"
#include "core/json.h"
#include "core/number.h"
#include "plot/plot.h"

#define MAX_LEVELS 8

struct hitcurve_opts {
	const char *trace, *svg;
	uint64_t line, min, max;
	uint64_t level_sizes[MAX_LEVELS];
	double level_cycles[MAX_LEVELS];
	size_t n_levels;
	double mem_cycles;
	int json;
};

static int feed(void *ctx, const struct spent_trace_batch *b)
{
	return hitcurve_feed(ctx, b);
}

/* "96K=0,4M=10,mem=60" */
static int parse_service(const char *s, struct hitcurve_opts *o)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	o->n_levels = 0;
	o->mem_cycles = -1;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		double cyc;
		if (!eq)
			return -EINVAL;
		*eq = 0;
		/* mem= ends the list: a level after it, or a second mem=, was taken silently */
		if (num_parse_double(eq + 1, &cyc) || cyc < 0 || o->mem_cycles >= 0)
			return -EINVAL;
		if (!strcmp(tok, "mem")) {
			o->mem_cycles = cyc;
			continue;
		}
		uint64_t size;
		if (cli_parse_size(tok, &size) || o->n_levels == MAX_LEVELS ||
		    (o->n_levels && size <= o->level_sizes[o->n_levels - 1]))
			return -EINVAL;
		o->level_sizes[o->n_levels] = size;
		o->level_cycles[o->n_levels++] = cyc;
	}
	return o->mem_cycles < 0 ? -EINVAL : 0;
}

static struct hitcurve_opts *service_target;

static int on_service(const struct option *opt, const char *arg, int unset)
{
	if (unset || !parse_service(arg, service_target))
		return 0;
	fprintf(stderr, "spent hitcurve: invalid --service '%s': expected ascending SIZE=CYCLES,... "
		"ending with mem=CYCLES, e.g. 96K=0,4M=10,mem=60\n", arg);
	return -1;
}

static const char *const hitcurve_usage[] = { "spent hitcurve TRACE [OPTIONS]", NULL };
static const struct parse_usage hitcurve_u = {
	"hitcurve", hitcurve_usage, "incremental cache hit curves for every power-of-two size",
	"For every power-of-two cache size from --min to --max, the hits per 1000 instructions "
	"that size adds over the next smaller one, for the i- and d-stream, direct-mapped and "
	"fully-associative LRU, in one pass over a `spent trace` log; and the PatchWrx paper's "
	"CPI estimate from the service time of each level (--service).",
};

static int parse_opts(int argc, char **argv, struct hitcurve_opts *o)
{
	struct option opts[] = {
		{ .type = OPTION_U64, .long_name = "line", .value = &o->line, .argh = "BYTES",
		  .help = "line size (a power of two, at most 1M)", .defval = "64" },
		{ .type = OPTION_U64, .long_name = "min", .value = &o->min, .argh = "BYTES",
		  .help = "smallest cache size", .defval = "1K" },
		{ .type = OPTION_U64, .long_name = "max", .value = &o->max, .argh = "BYTES",
		  .help = "largest cache size (at most 16G)", .defval = "16M" },
		{ .type = OPTION_CALLBACK, .long_name = "service", .argh = "SIZE=CYC,...,mem=CYC",
		  .help = "service time in cycles of each level, for the CPI estimate",
		  .defval = "8K=0,96K=2,4M=10,mem=60", .flags = PARSE_OPT_NONEG,
		  .callback = on_service },
		OPT_STRING(0, "svg", &o->svg, "FILE", "write the hit curves"),
		OPT_BOOL(0, "json", &o->json, "one JSON object per line"),
		STUDIES_FILTER_OPTIONS,
		OPT_END(),
	};
	service_target = o;
	return studies_parse(argc, argv, opts, &hitcurve_u, &o->trace);
}

static double per_k(uint64_t v, uint64_t insns)
{
	return insns ? 1000.0 * (double)v / (double)insns : 0;
}

static void print_result(const struct hitcurve_result *r, const struct hitcurve_opts *o)
{
	static const char *sn[2] = { "i", "d" };
	struct json_writer w;
	json_init(&w, stdout);
	if (!o->json)
		printf("incremental hits per 1000 instructions ('%s', %llu instructions, %llu-byte "
		       "lines)\n%-8s %12s %12s %12s %12s\n", o->trace,
		       (unsigned long long)r->instructions, (unsigned long long)o->line, "size",
		       "i direct", "i lru", "d direct", "d lru");
	for (size_t k = 0; k <= r->n_sizes; k++) {
		char size[32];
		double v[2][2];
		for (int s = 0; s < 2; s++) {
			uint64_t pd = k ? r->dm_hits[s][k - 1] : 0, pl = k ? r->lru_hits[s][k - 1] : 0;
			uint64_t d = k < r->n_sizes ? r->dm_hits[s][k] : r->refs[s];
			uint64_t l = k < r->n_sizes ? r->lru_hits[s][k] : r->refs[s];
			v[s][0] = per_k(d - pd, r->instructions);
			v[s][1] = per_k(l - pl, r->instructions);
		}
		if (k < r->n_sizes)
			studies_size(size, sizeof(size), r->sizes[k]);
		else
			snprintf(size, sizeof(size), "memory");
		if (o->json) {
			for (int s = 0; s < 2; s++) {
				json_object_begin(&w);
				json_kstr(&w, "stream", sn[s]);
				json_ku64(&w, "size", k < r->n_sizes ? r->sizes[k] : 0);
				json_kdouble(&w, "direct_mapped", v[s][0], 4);
				json_kdouble(&w, "lru", v[s][1], 4);
				json_ku64(&w, "dm_hits", k < r->n_sizes ? r->dm_hits[s][k] : r->refs[s]);
				json_ku64(&w, "lru_hits", k < r->n_sizes ? r->lru_hits[s][k] : r->refs[s]);
				json_ku64(&w, "refs", r->refs[s]);
				json_object_end(&w);
				json_newline(&w);
			}
		} else {
			printf("%-8s %12.3f %12.3f %12.3f %12.3f\n", size, v[0][0], v[0][1], v[1][0],
			       v[1][1]);
		}
	}
	double cpi_dm = hitcurve_cpi(r, 0, o->level_sizes, o->level_cycles, o->n_levels,
				     o->mem_cycles);
	double cpi_lru = hitcurve_cpi(r, 1, o->level_sizes, o->level_cycles, o->n_levels,
				      o->mem_cycles);
	/* no instructions, no estimate (it read 0.000, below the formula's own floor of 1) */
	if (o->json) {
		json_object_begin(&w);
		json_ku64(&w, "instructions", r->instructions);
		if (r->instructions) {
			json_kdouble(&w, "cpi_direct_mapped", cpi_dm, 4);
			json_kdouble(&w, "cpi_lru", cpi_lru, 4);
		} else {
			json_knull(&w, "cpi_direct_mapped");
			json_knull(&w, "cpi_lru");
		}
		json_object_end(&w);
		json_newline(&w);
	} else if (r->instructions) {
		printf("\nCPI estimate (1 + incremental hits x service time): direct-mapped %.3f, "
		       "LRU %.3f\n", cpi_dm, cpi_lru);
	} else {
		printf("\nCPI estimate: none (no instructions)\n");
	}
}

static int write_svg(const struct hitcurve_result *r, const struct hitcurve_opts *o)
{
	size_t n = r->n_sizes + 1;
	double *y = calloc(4 * n, sizeof(double));
	char(*labels)[16] = calloc(n, 16);
	const char **lp = calloc(n, sizeof(char *));
	int err = -ENOMEM;
	if (!y || !labels || !lp)
		goto out;
	for (size_t k = 0; k < n; k++) {
		if (k < r->n_sizes)
			studies_size(labels[k], 16, r->sizes[k]);
		else
			snprintf(labels[k], 16, "mem");
		lp[k] = labels[k];
		for (int s = 0; s < 2; s++) {
			uint64_t pd = k ? r->dm_hits[s][k - 1] : 0, pl = k ? r->lru_hits[s][k - 1] : 0;
			uint64_t d = k < r->n_sizes ? r->dm_hits[s][k] : r->refs[s];
			uint64_t l = k < r->n_sizes ? r->lru_hits[s][k] : r->refs[s];
			y[(2 * s) * n + k] = per_k(d - pd, r->instructions);
			y[(2 * s + 1) * n + k] = per_k(l - pl, r->instructions);
		}
	}
	/* every size, on a log scale: the hits the smallest size adds are orders of magnitude
	 * above what the large sizes add, which a linear axis flattens to nothing */
	struct plot_series series[4] = {
		{ "i-stream direct", &y[0 * n], "#3b6fd1" }, { "i-stream LRU", &y[1 * n], "#9bb8ee" },
		{ "d-stream direct", &y[2 * n], "#d13b3b" }, { "d-stream LRU", &y[3 * n], "#ee9b9b" },
	};
	char title[256];
	snprintf(title, sizeof(title), "Incremental cache hits per 1000 instructions (%llu B lines)",
		 (unsigned long long)o->line);
	struct plot_chart ch = { .title = title, .xlabel = "cache size",
				 .ylabel = "incremental hits / 1000 instructions (log scale)",
				 .note = "log scale: each grid line is 10x the one below",
				 .xlabels = lp, .n = n, .series = series, .n_series = 4, .ylog = 1 };
	err = plot_lines(o->svg, &ch);
out:
	free(y);
	free(labels);
	free(lp);
	return err;
}

int cmd_hitcurve(int argc, char **argv)
{
	struct hitcurve_opts o = { .line = 64, .min = 1024, .max = 16 << 20 };
	parse_service("8K=0,96K=2,4M=10,mem=60", &o);
	int prc = parse_opts(argc, argv, &o);
	if (prc == PARSE_OPT_HELP)
		return 0;
	if (prc || (o.svg && cli_check_output_from(o.svg, o.trace)))
		return 2;
	struct hitcurve_config cfg = { (uint32_t)o.line, o.min, o.max };
	struct hitcurve *hc = NULL;
	int herr = o.line > (1 << 20) ? -EINVAL : hitcurve_new(&cfg, &hc);
	if (herr == -ENOMEM) {
		cli_error("hitcurve: out of memory for the sizes %llu to %llu", (unsigned long long)o.min,
			  (unsigned long long)o.max);
		return 1;
	}
	if (herr) {
		cli_error("hitcurve: bad sizes (line %llu, min %llu, max %llu): all must be powers of "
			  "two with line <= 1M, line <= min <= max <= 16G and at most %d sizes from min "
			  "to max", (unsigned long long)o.line, (unsigned long long)o.min,
			  (unsigned long long)o.max, HITCURVE_MAX_SIZES);
		return 2;
	}
	char cut[640];
	int ret = 1;
	studies_filter.tag = 1;	/* processes' equal addresses are different memory */
	if (studies_run("hitcurve", o.trace, feed, hc, cut, sizeof(cut)))
		goto out;
	struct hitcurve_result r;
	hitcurve_result(hc, &r);
	print_result(&r, &o);
	if (o.svg) {
		int rc = write_svg(&r, &o);
		if (rc) {
			cli_error("hitcurve: cannot write '%s': %s", o.svg, outfile_strerror(rc));
			goto out;
		}
	}
	ret = studies_done(cut);
out:
	hitcurve_free(hc);
	return ret;
}
