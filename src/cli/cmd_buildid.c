/* cli/cmd_buildid.c - `spent buildid`: list and prune the build-id cache (core/buildid_cache.h)
 * where record keeps the symbols that name a profile's images after they are rebuilt. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/buildid_cache.h"

static const char *const usage[] = {
	"spent buildid --list [--dir DIR]",
	"spent buildid --prune [--max-size SIZE] [--dir DIR]",
	NULL,
};
static const struct parse_usage buildid_usage = {
	"buildid", usage, "list and prune the build-id cache of symbols record keeps",
	"record saves each sampled image's symbol table in the build-id cache, keyed by its "
	"build-id (or content hash), so a report names the functions of a binary rebuilt or removed "
	"since. --list shows the entries, least recently used first; --prune removes the least "
	"recently used until the cache fits --max-size.",
};

static int list(void)
{
	struct buildid_entry *e = NULL;
	size_t n = 0;
	uint64_t total = 0;
	int err = buildid_cache_list(&e, &n);
	if (err) {
		cli_error("cannot read the build-id cache: %s", strerror(-err));
		return 1;
	}
	printf("%-20s %10s  %-42s %s\n", "last used (UTC)", "bytes", "key", "image");
	for (size_t i = 0; i < n; i++) {
		char when[32] = "-";
		time_t t = (time_t)e[i].last_used;
		struct tm tm;
		if (e[i].last_used && gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("%-20s %10" PRIu64 "  %-42s %s\n", when, e[i].bytes, e[i].key,
		       e[i].image[0] ? e[i].image : "-");
		total += e[i].bytes;
	}
	printf("%zu entries, %" PRIu64 " bytes\n", n, total);
	free(e);
	return 0;
}

int cmd_buildid(int argc, char **argv)
{
	int do_list = 0, do_prune = 0;
	uint64_t max = BUILDID_CACHE_DEFAULT_MAX;
	const char *dir = NULL;
	const struct option opts[] = {
		OPT_BOOL(0, "list", &do_list, "list the entries, least recently used first"),
		OPT_BOOL(0, "prune", &do_prune, "remove least recently used entries beyond --max-size"),
		{ .type = OPTION_U64, .long_name = "max-size", .value = &max, .argh = "SIZE",
		  .help = "what --prune keeps at most (K, M, G: KiB, MiB, GiB)", .defval = "256M" },
		OPT_STRING(0, "dir", &dir, "DIR",
			   "the cache directory (default: $SPENT_BUILDID_DIR, else "
			   "$XDG_CACHE_HOME/spent/buildid, else ~/.cache/spent/buildid)"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &buildid_usage, 0);
	if (n == PARSE_OPT_HELP)
		return 0;
	if (n < 0)
		return 2;
	if (n > 0 || do_list == do_prune) {
		parse_options_error(&buildid_usage, n > 0 ? "unexpected argument '%s'" :
				    "give one of --list or --prune%s", n > 0 ? argv[0] : "");
		return 2;
	}
	if (do_list && max != BUILDID_CACHE_DEFAULT_MAX) {
		parse_options_error(&buildid_usage, "--max-size is what --prune keeps: --list takes no size");
		return 2;
	}
	/* the default cache not made yet is an empty cache; a --dir that is not a directory is
	 * a typo, which "0 entries" would hide */
	struct stat st;
	if (dir) {
		int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		if (e) {
			cli_error("no build-id cache at '%s': %s", dir, strerror(e));
			return 1;
		}
	}
	if (dir && setenv("SPENT_BUILDID_DIR", dir, 1)) {
		cli_error("out of memory");
		return 1;
	}
	if (do_list)
		return list();
	size_t removed = 0;
	uint64_t freed = 0;
	int err = buildid_cache_prune(max, &removed, &freed);
	if (err) {
		cli_error("cannot prune the build-id cache: %s", strerror(-err));
		return 1;
	}
	printf("removed %zu entries, %" PRIu64 " bytes\n", removed, freed);
	return 0;
}
