/* cli/cmd_list.c - `spent list` (perf list): the events this machine can count, by group, with
 * a glob to pick some; tracepoints from tracefs when the glob names them (SYSTEM:EVENT). Also
 * what `spent stat --list` prints. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/tracefs.h"
#include "spent/events.h"

static const char *const usage[] = { "spent list [GLOB]", NULL };
static const struct parse_usage list_usage = {
	"list", usage, "the events this machine can count (perf list)",
	"Lists the events spent stat, record, top and the daemon take, by group, with what each "
	"counts; events known but not countable here (no hardware PMU) are summed up at the end. "
	"GLOB (fnmatch, e.g. 'L1-*' or 'sched:*') keeps the names it matches; a GLOB with a colon "
	"also lists the kernel tracepoints it matches.",
};

/* Tracepoints (tracefs's available_events, "system:event" lines) matching GLOB: how many, or
 * -1 when tracefs is not mounted. */
static long list_tracepoints(const char *glob)
{
	const char *root = tracefs_root();
	char path[128];
	FILE *f = NULL;
	if (root) {
		snprintf(path, sizeof(path), "%s/available_events", root);
		f = fopen(path, "re");
	}
	if (!f)
		return -1;
	char line[512];
	long n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (fnmatch(glob, line, 0))
			continue;
		if (!n++)
			printf("\ntracepoint events:\n");
		printf("  %s\n", line);
	}
	fclose(f);
	return n;
}

int cli_list_events(const char *glob)
{
	struct spent_event_info *cat;
	size_t n;
	int rc = spent_event_catalogue(&cat, &n);
	if (rc) {
		cli_error("cannot list events: %s", strerror(-rc));
		return 1;
	}
	const char *group = "";
	size_t unavailable = 0, shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (glob && fnmatch(glob, cat[i].name, 0))
			continue;
		if (!cat[i].available) {
			unavailable++;
			continue;
		}
		if (strcmp(group, cat[i].group) != 0) {
			group = cat[i].group;
			printf("\n%s events:\n", group);
		}
		printf("  %-32s %s\n", cat[i].name, cat[i].desc);
		shown++;
	}
	if (!spent_pmu_present() && unavailable)
		printf("\nno hardware PMU on this machine: %zu hardware, cache, raw and PMU-specific events "
		       "are known but cannot be counted\n", unavailable);
	spent_event_catalogue_free(cat, n);
	long tp = glob && strchr(glob, ':') ? list_tracepoints(glob) : 0;
	if (tp < 0)
		printf("\ntracepoints: tracefs is not mounted (mount -t tracefs nodev "
		       "/sys/kernel/tracing)\n");
	else if (!glob)
		printf("\ntracepoints: SYSTEM:EVENT as perf spells them (sched:sched_switch), every one "
		       "tracefs lists in /sys/kernel/tracing/available_events ('spent list "
		       "\"sched:*\"' shows some)\n");
	if (glob && !shown && !unavailable && tp <= 0) {
		cli_error("no event matches '%s'", glob);
		return 1;
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	const struct option opts[] = { OPT_END() };
	int n = parse_options(argc, argv, opts, &list_usage, 0);
	if (n < 0)
		return n == PARSE_OPT_HELP ? 0 : 2;
	if (n > 1) {
		parse_options_error(&list_usage, "one GLOB at most ('%s' and '%s' given)", argv[0],
				    argv[1]);
		return 2;
	}
	return cli_list_events(n ? argv[0] : NULL);
}
