/* cli/cmd_stat.c - `spent stat` (perfex): count events for a command (threads and children
 * folded in, or broken down), a running process, or every CPU; repeat, intervals, costs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/stat.h"

int stat_events_add(struct stat_events *se, const struct spent_event *ev, int group)
{
	struct spent_event *e = realloc(se->evs, (se->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	se->evs = e;
	int *g = realloc(se->group, (se->n + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	se->group = g;
	bool *s = realloc(se->supported, (se->n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	se->supported = s;
	se->evs[se->n] = *ev;
	se->group[se->n] = group;
	se->supported[se->n] = true;
	se->n++;
	return 0;
}

void stat_events_release(struct stat_events *se)
{
	free(se->evs);
	free(se->group);
	free(se->supported);
	memset(se, 0, sizeof(*se));
}

/* Parse one event name ending at ',', '}' or the end of the string; advances *P. */
static int parse_one(const char **p, const char *list, struct stat_events *se, int group)
{
	char name[160], err[512];
	size_t n = strcspn(*p, ",}");
	if (n == 0 || n >= sizeof(name)) {
		cli_error("invalid event list '%s': %s event name", list, n ? "overlong" : "empty");
		return -EINVAL;
	}
	memcpy(name, *p, n);
	name[n] = 0;
	*p += n;
	struct spent_event ev;
	int rc = spent_event_parse(name, &ev, err, sizeof(err));
	if (rc) {
		cli_error("%s", err);
		return rc;
	}
	return stat_events_add(se, &ev, group);
}

/* Parse "a,{b,c},d": each brace pair is one perf group; other events are groups of one. */
static int parse_event_groups(const char *list, struct stat_events *se)
{
	const char *p = list;
	int group = 0, rc = 0;
	while (!rc) {
		bool brace = *p == '{';
		p += brace;
		group++;
		for (;;) {
			if ((rc = parse_one(&p, list, se, group)))
				return rc;
			if (brace && *p == ',') {
				p++;
				continue;
			}
			if (brace && *p != '}') {
				cli_error("invalid event list '%s': '{' without '}'", list);
				return -EINVAL;
			}
			if (!brace && *p == '}') {
				cli_error("invalid event list '%s': '}' without '{'", list);
				return -EINVAL;
			}
			p += brace;
			break;
		}
		if (*p == 0)
			return 0;
		if (*p != ',' || p[1] == 0) {
			cli_error("invalid event list '%s': expected ',' between events", list);
			return -EINVAL;
		}
		p++;
	}
	return rc;
}

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions", "branches", "branch-misses",
};

static bool is_alias(const char *name)
{
	static const char *const aliases[] = { "cpu-cycles", "branch-instructions", "faults", "cs",
					       "migrations", "dummy" };
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i]) == 0)
			return true;
	return false;
}

/* perfex -a: every countable event; with a PMU, cycles and instructions ride in every group
 * so ratios come from the same multiplexed intervals. */
static int build_all_events(struct stat_events *se, bool pmu)
{
	struct spent_event_info *cat;
	size_t n;
	int rc = spent_event_catalogue(&cat, &n);
	if (rc)
		return rc;
	struct spent_event cyc, ins, ev;
	spent_event_parse("cycles", &cyc, NULL, 0);
	spent_event_parse("instructions", &ins, NULL, 0);
	int group = 0, in_group = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!cat[i].available || is_alias(cat[i].name) || strcmp(cat[i].group, "raw") == 0 ||
		    strncmp(cat[i].group, "pmu:", 4) == 0)
			continue;
		if (spent_event_parse(cat[i].name, &ev, NULL, 0))
			continue;
		if (!spent_event_needs_pmu(&ev)) {
			rc = stat_events_add(se, &ev, ++group);
			continue;
		}
		if (ev.attr.config == PERF_COUNT_HW_CPU_CYCLES && ev.cls == SPENT_EV_HARDWARE)
			continue;
		if (ev.attr.config == PERF_COUNT_HW_INSTRUCTIONS && ev.cls == SPENT_EV_HARDWARE)
			continue;
		if (in_group == 0) {
			group++;
			rc = stat_events_add(se, &cyc, group);
			if (!rc)
				rc = stat_events_add(se, &ins, group);
		}
		if (!rc)
			rc = stat_events_add(se, &ev, group);
		in_group = (in_group + 1) % 2;
	}
	(void)pmu;
	spent_event_catalogue_free(cat, n);
	return rc;
}

/* Apply perf's fallbacks where there is no PMU: one line per event, cycles replaced. */
static void apply_fallbacks(struct stat_events *se, bool system_wide, bool user_chosen)
{
	if (spent_pmu_present())
		return;
	for (size_t i = 0; i < se->n; i++) {
		if (!spent_event_needs_pmu(&se->evs[i]))
			continue;
		char old[160];
		snprintf(old, sizeof(old), "%s", se->evs[i].spec);
		if (user_chosen && spent_event_fallback(&se->evs[i], system_wide) == 0) {
			cli_error("no hardware PMU on this machine: counting '%s' instead of '%s'",
				  se->evs[i].name, old);
			/* drop the replacement when the same clock is already counted */
			for (size_t j = 0; j < se->n; j++)
				if (j != i && se->supported[j] && strcmp(se->evs[j].spec, se->evs[i].spec) == 0)
					se->supported[i] = false;
			continue;
		}
		se->supported[i] = false;
		if (user_chosen)
			cli_error("no hardware PMU on this machine: '%s' cannot be counted", old);
	}
}

static const char *stat_usage =
	"usage: spent stat [-e EV,...] [--all-events] [--per-thread] [--per-process] [-r N] [-I MS]\n"
	"                  [-a [--per-cpu]] [-p PID] [--costs] [--json|--csv] [-o FILE] [--list] -- CMD";

static int parse_stat_opts(int argc, char **argv, struct stat_opts *o)
{
	enum { OPT_ALL = 256, OPT_PER_THREAD, OPT_PER_PROCESS, OPT_PER_CPU, OPT_COSTS, OPT_JSON,
	       OPT_CSV, OPT_LIST };
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "all-events", no_argument, NULL, OPT_ALL },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "per-process", no_argument, NULL, OPT_PER_PROCESS },
		{ "per-cpu", no_argument, NULL, OPT_PER_CPU },
		{ "repeat", required_argument, NULL, 'r' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "costs", no_argument, NULL, OPT_COSTS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, OPT_LIST },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;
	memset(o, 0, sizeof(*o));
	o->repeat = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+e:r:I:ap:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': o->events = optarg; break;
		case OPT_ALL: o->all_events = true; break;
		case OPT_PER_THREAD: o->per_thread = true; break;
		case OPT_PER_PROCESS: o->per_process = true; break;
		case OPT_PER_CPU: o->per_cpu = true; break;
		case 'r':
			if (cli_parse_int_opt("-r", optarg, 1, 100000, &v))
				return -EINVAL;
			o->repeat = v;
			break;
		case 'I':
			if (cli_parse_int_opt("-I", optarg, 10, 3600000, &v))
				return -EINVAL;
			o->interval_ms = v;
			break;
		case 'a': o->system_wide = true; break;
		case 'p':
			if (cli_parse_int_opt("-p", optarg, 1, 1 << 22, &v))
				return -EINVAL;
			o->pid = (pid_t)v;
			break;
		case OPT_COSTS: o->costs = true; break;
		case OPT_JSON:
		case OPT_CSV: {
			enum stat_format f = c == OPT_JSON ? STAT_JSON : STAT_CSV;
			if (o->format != STAT_TABLE && o->format != f) {
				cli_error("--json and --csv cannot be combined: choose one");
				return -EINVAL;
			}
			o->format = f;
			break;
		}
		case 'o': o->output = optarg; break;
		case OPT_LIST: o->list = true; break;
		default:
			cli_error("unknown or incomplete option '%s'\n%s", argv[optind - 1], stat_usage);
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->list)
		return 0;
	if (o->argc == 0 && !o->system_wide && o->pid == 0) {
		cli_error("no command to count: give '-- CMD', -p PID or -a\n%s", stat_usage);
		return -EINVAL;
	}
	if (o->pid && (o->argc || o->system_wide)) {
		cli_error("-p counts a running process: it cannot be combined with a command or -a");
		return -EINVAL;
	}
	if (o->per_cpu && !o->system_wide) {
		cli_error("--per-cpu needs -a (system-wide counting)");
		return -EINVAL;
	}
	if ((o->per_thread || o->per_process) && o->system_wide) {
		cli_error("--per-thread/--per-process count tasks: use --per-cpu with -a");
		return -EINVAL;
	}
	if (o->repeat > 1 && (o->argc == 0 || o->interval_ms || o->per_thread || o->per_process || o->per_cpu)) {
		cli_error("-r repeats a command: it cannot be combined with -p, -I or a breakdown");
		return -EINVAL;
	}
	return 0;
}

static int print_event_list(void)
{
	struct spent_event_info *cat;
	size_t n;
	int rc = spent_event_catalogue(&cat, &n);
	if (rc) {
		cli_error("cannot list events: %s", strerror(-rc));
		return 1;
	}
	const char *group = "";
	size_t unavailable = 0;
	for (size_t i = 0; i < n; i++) {
		if (!cat[i].available) {
			unavailable++;
			continue;
		}
		if (strcmp(group, cat[i].group) != 0) {
			group = cat[i].group;
			printf("\n%s events:\n", group);
		}
		printf("  %-32s %s\n", cat[i].name, cat[i].desc);
	}
	if (!spent_pmu_present())
		printf("\nno hardware PMU on this machine: %zu hardware, cache, raw and PMU-specific events "
		       "are known but cannot be counted\n", unavailable);
	spent_event_catalogue_free(cat, n);
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts opts;
	struct stat_events se = { 0 };
	int rc = 0;
	if (parse_stat_opts(argc, argv, &opts))
		return 2;
	if (opts.list)
		return print_event_list();
	if (opts.events) {
		if (parse_event_groups(opts.events, &se)) {
			stat_events_release(&se);
			return 2;
		}
	}
	if (opts.all_events && build_all_events(&se, spent_pmu_present())) {
		cli_error("cannot build the event list for --all-events");
		stat_events_release(&se);
		return 2;
	}
	if (!opts.events && !opts.all_events) {
		for (size_t i = 0; i < sizeof(default_events) / sizeof(default_events[0]); i++) {
			struct spent_event ev;
			spent_event_parse(default_events[i], &ev, NULL, 0);
			stat_events_add(&se, &ev, (int)i + 1);
		}
		if (opts.system_wide) /* per-CPU time is cpu-clock, as perf stat -a shows */
			spent_event_parse("cpu-clock", &se.evs[0], NULL, 0);
	}
	apply_fallbacks(&se, opts.system_wide, opts.events != NULL);
	/* system-wide counting needs privileges that counting user space only does not give */
	for (size_t i = 0; i < se.n && !opts.system_wide; i++)
		if (se.supported[i])
			cli_user_space_fallback(&se.evs[i]);
	if (opts.all_events && !spent_pmu_present())
		cli_error("no hardware PMU on this machine: --all-events counts the software events only");
	if (opts.costs && !spent_pmu_present())
		cli_error("no hardware PMU on this machine: --costs time estimates are unavailable");
	rc = stat_run_all(&opts, &se);
	stat_events_release(&se);
	return rc;
}
