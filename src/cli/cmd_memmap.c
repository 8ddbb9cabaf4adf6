/* cli/cmd_memmap.c - `spent memmap`: the memory-map picture (address mod 4 MB against
 * instructions executed, instruction and data dots in two colours) as a PNG. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "plot/memmap_plot.h"
#include "cli/cli.h"
#include "core/outfile.h"
#include "cli/studies_util.h"

struct memmap_opts {
	const char *trace, *png;
	uint64_t mod;
	long width, height;
};

static int feed(void *ctx, const struct trace_batch *b)
{
	memmap_feed(ctx, b);
	return 0;
}

static int parse_opts(int argc, char **argv, struct memmap_opts *o)
{
	static const struct option lopts[] = {
		{ "mod", required_argument, NULL, 'm' },    { "png", required_argument, NULL, 'p' },
		{ "width", required_argument, NULL, 'w' },  { "height", required_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (cli_parse_size(optarg, &o->mod) || !o->mod) {
				cli_error("memmap: invalid --mod '%s': expected a size such as 4M", optarg);
				return -1;
			}
			break;
		case 'p': o->png = optarg; break;
		case 'w':
			if (cli_parse_int_opt("--width", optarg, 64, 8192, &o->width))
				return -1;
			break;
		case 'h':
			if (cli_parse_int_opt("--height", optarg, 64, 8192, &o->height))
				return -1;
			break;
		default:
			cli_error("memmap: unknown option '%s': see 'spent help memmap'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc - 1) {
		cli_error("memmap: expected one trace argument: spent memmap TRACE [--png FILE]");
		return -1;
	}
	o->trace = argv[optind];
	return 0;
}

int cmd_memmap(int argc, char **argv)
{
	struct memmap_opts o = { .png = "memmap.png", .mod = 4 << 20, .width = 1000, .height = 600 };
	if (parse_opts(argc, argv, &o) || cli_check_output(o.png))
		return 2;
	struct memmap_config cfg = { o.mod, (uint32_t)o.width, (uint32_t)o.height };
	struct memmap *mm = NULL;
	if (memmap_new(&cfg, &mm)) {
		cli_error("memmap: out of memory for a %ldx%ld map", o.width, o.height);
		return 2;
	}
	int ret = 1;
	struct raster r = { 0 };
	if (studies_run("memmap", o.trace, feed, mm))
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
	ret = 0;
out:
	raster_release(&r);
	memmap_free(mm);
	return ret;
}
