/* cli/cmd_memmap.c - `spent memmap`: the memory-map picture (address mod 4 MB against
 * instructions executed, instruction and data dots in two colours) as a PNG. */
#include <stdio.h>
#include <string.h>

#include "plot/memmap_plot.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/outfile.h"
#include "cli/studies_util.h"

struct memmap_opts {
	const char *trace, *png;
	uint64_t mod;
	long width, height;
};

static int feed(void *ctx, const struct spent_trace_batch *b)
{
	memmap_feed(ctx, b);
	return 0;
}

static const char *const memmap_usage[] = { "spent memmap TRACE [-o|--png FILE] [OPTIONS]", NULL };
static const struct parse_usage memmap_u = {
	"memmap", memmap_usage, "memory map plot: address mod 4 MB against time",
	"The PatchWrx memory-map picture of a `spent trace` log as a PNG: every instruction "
	"fetch and data reference as a dot at (instructions executed, address mod --mod), "
	"instructions and data in two colours.",
};

static int parse_opts(int argc, char **argv, struct memmap_opts *o)
{
	struct option opts[] = {
		OPT_STRING('o', "png", &o->png, "FILE", "the picture to write"),
		{ .type = OPTION_U64, .long_name = "mod", .value = &o->mod, .argh = "BYTES",
		  .help = "addresses are taken modulo this size", .defval = "4M" },
		OPT_INT(0, "width", &o->width, "PIXELS", "plot width (the picture adds 140 for the axes)",
			64, 8192),
		OPT_INT(0, "height", &o->height, "PIXELS",
			"plot height (the picture adds 154 for the title and axes)", 64, 8192),
		STUDIES_FILTER_OPTIONS,
		OPT_END(),
	};
	int rc = studies_parse(argc, argv, opts, &memmap_u, &o->trace);
	if (rc)
		return rc;
	/* below a line the picture is one band; above the address space, (addr % mod) x height
	 * would overflow */
	if (o->mod < 64 || o->mod > (1ull << 48))
		return parse_options_error(&memmap_u, "--mod must be a size from 64 to 262144G (256 TiB), such as 4M");
	return 0;
}

int cmd_memmap(int argc, char **argv)
{
	struct memmap_opts o = { .png = "memmap.png", .mod = 4 << 20, .width = 1000, .height = 600 };
	int prc = parse_opts(argc, argv, &o);
	if (prc == PARSE_OPT_HELP)
		return 0;
	if (prc || cli_check_output_from(o.png, o.trace))
		return 2;
	struct memmap_config cfg = { o.mod, (uint32_t)o.width, (uint32_t)o.height };
	struct memmap *mm = NULL;
	if (memmap_new(&cfg, &mm)) {
		cli_error("memmap: out of memory for a %ldx%ld map", o.width, o.height);
		return 2;
	}
	char cut[640];
	int ret = 1;
	struct raster r = { 0 };
	if (studies_run("memmap", o.trace, feed, mm, cut, sizeof(cut)))
		goto out;
	char title[200], mod[32];
	studies_size(mod, sizeof(mod), o.mod);
	snprintf(title, sizeof(title), "MEMORY MAP: ADDRESS MOD %s VS INSTRUCTIONS", mod);
	int rc = plot_memmap(mm, title, &r);
	if (!rc)
		rc = raster_write_png(&r, o.png);
	if (rc) {
		cli_error("memmap: cannot write '%s': %s", o.png, outfile_strerror(rc));
		goto out;
	}
	printf("memory map of '%s': %llu instructions, %llu per column, address mod %s -> '%s'\n",
	       o.trace, (unsigned long long)memmap_instructions(mm),
	       (unsigned long long)memmap_column_span(mm), mod, o.png);
	ret = studies_done(cut);
out:
	raster_release(&r);
	memmap_free(mm);
	return ret;
}
