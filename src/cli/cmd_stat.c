/* cli/cmd_stat.c - `spent stat` (perfex): count events for a command (threads and children
 * folded in, or broken down), a running process, or every CPU; repeat, intervals, costs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cpus.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/stat.h"

int stat_events_add(struct stat_events *se, const struct spent_event *ev, int group)
{
	if (ALLOC_GROW(se->evs, se->n + 1, se->cap_evs) ||
	    ALLOC_GROW(se->group, se->n + 1, se->cap_group) ||
	    ALLOC_GROW(se->supported, se->n + 1, se->cap_supported))
		return -ENOMEM;
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

/* The messages quote the list up to LIST_QUOTE characters, then "...": a generated list of
 * 100 KB made a 100 KB error line. */
#define LIST_QUOTE 200
static const char *list_more(const char *list)
{
	return strlen(list) > LIST_QUOTE ? "..." : "";
}

/* Parse one event name ending at ',', '}' or the end of the string; advances *P. */
static int parse_one(const char **p, const char *list, struct stat_events *se, int group)
{
	char name[160], err[512];
	size_t n = strcspn(*p, ",}");
	if (n == 0 || n >= sizeof(name)) {
		cli_error("invalid event list '%.*s%s': %s event name", LIST_QUOTE, list,
			  list_more(list), n ? "overlong" : "empty");
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
				cli_error("invalid event list '%.*s%s': '{' without '}'", LIST_QUOTE,
					  list, list_more(list));
				return -EINVAL;
			}
			if (!brace && *p == '}') {
				cli_error("invalid event list '%.*s%s': '}' without '{'", LIST_QUOTE,
					  list, list_more(list));
				return -EINVAL;
			}
			p += brace;
			break;
		}
		if (*p == 0)
			return 0;
		if (*p == ',' && p[1] == 0) {
			cli_error("invalid event list '%.*s%s': empty event name after the last ','",
				  LIST_QUOTE, list, list_more(list));
			return -EINVAL;
		}
		if (*p != ',') {
			cli_error("invalid event list '%.*s%s': expected ',' between events",
				  LIST_QUOTE, list, list_more(list));
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

/* perf stat -d, -dd, -ddd: cache and TLB events added to the defaults, each level's to the
 * ones before (shown <not supported> without a PMU, as the default cycles are) */
static const char *const detailed_events[3][6] = {
	{ "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses" },
	{ "L1-icache-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads",
	  "iTLB-load-misses" },
	{ "L1-dcache-prefetches", "L1-dcache-prefetch-misses" },
};

static int count_detailed(const struct option *opt, const char *arg, int unset)
{
	(void)arg;
	int *level = opt->value;
	*level = unset ? 0 : *level + 1;
	return 0;
}

static bool is_alias(const char *name)
{
	static const char *const aliases[] = { "cpu-cycles", "branch-instructions", "faults", "cs",
					       "migrations", "dummy" };
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
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
	char said[1024] = "|";	/* "|cycles|...|": each replacement is said once */
	for (size_t i = 0; i < se->n; i++) {
		if (!spent_event_needs_pmu(&se->evs[i]))
			continue;
		char old[160], key[164];
		snprintf(old, sizeof(old), "%s", se->evs[i].spec);
		snprintf(key, sizeof(key), "|%s|", old);
		if (user_chosen && spent_event_fallback(&se->evs[i], system_wide) == 0) {
			if (!strstr(said, key)) {
				cli_warn("no hardware PMU on this machine: counting '%s' instead of '%s'",
					  se->evs[i].name, old);
				if (strlen(said) + strlen(key) < sizeof(said))
					strcat(said, key + 1);
			}
			/* drop the replacement when the same clock is already counted (fill_rows
			 * shows no row for a dropped copy) */
			for (size_t j = 0; j < se->n; j++)
				if (j != i && se->supported[j] && strcmp(se->evs[j].spec, se->evs[i].spec) == 0)
					se->supported[i] = false;
			continue;
		}
		se->supported[i] = false;
		if (user_chosen)
			cli_warn("no hardware PMU on this machine: '%s' cannot be counted", old);
	}
}

static const char *const stat_usage[] = {
	"spent stat [-e EV,...]... [--all-events] [--per-thread|--per-process] [-r N] [-I MS] "
	"[--costs] [--json|--csv|-x SEP] [-o FILE] -- CMD [ARGS]",
	"spent stat [OPTIONS] -p PID | -t TID",
	"spent stat [OPTIONS] -a [-A] | -C CPUS [-A]",
	"spent stat --list",
	NULL,
};
static const struct parse_usage stat_pu = {
	"stat", stat_usage, "count events for a command, a pid or the whole system (perfex)",
	"Counts events (perf's names, {a,b} groups) for CMD and everything it starts, a running "
	"process or thread, or every CPU, and prints them with derived metrics as perf stat does.",
};

static int parse_stat_opts(int argc, char **argv, struct stat_opts *o)
{
	struct opt_string_list events = { 0 };
	const char *cpu_list = NULL, *sep = NULL;
	int json = 0, csv = 0, no_aggr = 0;
	const struct option opts[] = {
		OPT_STRING_LIST('e', "event", &events, "EV,...",
				"events to count, {a,b} a group; repeat -e to add more"),
		OPT_BOOL(0, "all-events", &o->all_events, "every countable event"),
		{ .type = OPTION_CALLBACK, .short_name = 'd', .long_name = "detailed",
		  .value = &o->detailed, .callback = count_detailed, .flags = PARSE_OPT_NOARG,
		  .help = "add cache events to the defaults (-dd: and TLB, -ddd: and prefetch), as perf" },
		OPT_BOOL(0, "per-thread", &o->per_thread, "one line per thread"),
		OPT_BOOL(0, "per-process", &o->per_process, "one line per process"),
		OPT_BOOL(0, "per-cpu", &o->per_cpu, "one line per CPU (with -a or -C)"),
		OPT_BOOL(0, "per-socket", &o->per_socket, "one line per socket, its CPUs summed (with -a or -C)"),
		OPT_BOOL(0, "per-die", &o->per_die, "one line per die, its CPUs summed (with -a or -C)"),
		OPT_BOOL(0, "per-core", &o->per_core, "one line per core, its CPUs summed (with -a or -C)"),
		{ .type = OPTION_BOOL, .short_name = 'A', .long_name = "no-aggr", .value = &no_aggr,
		  .help = "perf's spelling of --per-cpu", .flags = PARSE_OPT_NONEG },
		{ .type = OPTION_INT, .short_name = 'r', .long_name = "repeat", .value = &o->repeat,
		  .argh = "N", .help = "run the command N times: mean and spread", .min = 1,
		  .max = 100000 },
		{ .type = OPTION_INT, .short_name = 'I', .long_name = "interval-print",
		  .value = &o->interval_ms, .argh = "MS", .help = "print the counts every MS ms",
		  .defval = "off", .min = 10, .max = 3600000 },
		{ .type = OPTION_INT, .long_name = "interval-count", .value = &o->interval_count,
		  .argh = "N", .help = "-I: print N rows, then nothing more (the command runs on)",
		  .defval = "all", .min = 1, .max = 1000000000 },
		{ .type = OPTION_INT, .short_name = 'D', .long_name = "delay", .value = &o->delay_ms,
		  .argh = "MS", .help = "start counting MS ms after the command starts (its start-up left out)",
		  .defval = "0", .min = 0, .max = 24 * 3600 * 1000 },
		OPT_BOOL(0, "null", &o->null_run, "count nothing: time the command only (with -r: its spread)"),
		OPT_BOOL('i', "no-inherit", &o->no_inherit,
			 "the command's first thread (-p: its threads now) alone, not what it creates"),
		OPT_BOOL('a', "all-cpus", &o->system_wide, "count every CPU, all tasks"),
		OPT_STRING('C', "cpu", &cpu_list, "CPUS", "count these CPUs only (0-3,5), all tasks"),
		{ .type = OPTION_INT, .short_name = 'p', .long_name = "pid", .value = &o->pid,
		  .argh = "PID", .help = "count a running process (its threads)", .defval = "none",
		  .min = 1, .max = 1 << 22 },
		{ .type = OPTION_INT, .short_name = 't', .long_name = "tid", .value = &o->tid,
		  .argh = "TID", .help = "count one running thread", .defval = "none", .min = 1,
		  .max = 1 << 22 },
		OPT_BOOL(0, "costs", &o->costs, "estimate where the time went (needs a PMU)"),
		OPT_BOOL(0, "json", &json, "one JSON object per count"),
		OPT_BOOL(0, "csv", &csv, "CSV, one line per count"),
		OPT_STRING('x', "field-separator", &sep, "SEP",
			   "perf stat -x's lines, separated by the character SEP (with --csv: its columns)"),
		OPT_STRING('o', "output", &o->output, "FILE", "write the counts to FILE, not stderr"),
		OPT_BOOL(0, "append", &o->append, "-o: add the counts after what FILE holds"),
		OPT_BOOL(0, "list", &o->list, "list the events this machine can count"),
		OPT_BOOL('q', "quiet", &o->quiet,
			 "print no counts (-o FILE is still written) and no warnings; errors still print"),
		OPT_END(),
	};
	memset(o, 0, sizeof(*o));
	o->repeat = 1;
	o->sep = ',';
	int n = parse_options(argc, argv, opts, &stat_pu, PARSE_STOP_AT_NON_OPTION);
	if (n < 0)
		goto out;
	o->argv = argv;
	o->argc = n;
	argv[n] = NULL;
	n = PARSE_OPT_ERROR;
	if (events.n && !(o->events = cli_join_list(&events))) {
		parse_options_error(&stat_pu, "out of memory");
		goto out;
	}
	if (sep && (strlen(sep) != 1 || strchr("\"\n\r", sep[0]) || !sep[0])) {
		parse_options_error(&stat_pu, "bad separator '%s': give one character (not a quote)", sep);
		goto out;
	}
	if ((json + csv + !!sep) > 1 && !(csv && sep && !json)) {
		parse_options_error(&stat_pu, "--json and --csv cannot be combined (nor --json and -x): choose one");
		goto out;
	}
	if (o->interval_count && !o->interval_ms) {
		parse_options_error(&stat_pu, "--interval-count counts -I rows: give -I MS too");
		goto out;
	}
	if (o->append && !o->output) {
		parse_options_error(&stat_pu, "--append needs -o FILE (the file to add the counts to)");
		goto out;
	}
	o->format = json ? STAT_JSON : csv ? STAT_CSV : sep ? STAT_PERF_CSV : STAT_TABLE;
	if (sep)
		o->sep = sep[0];
	if (cpu_list) {
		if (cli_parse_cpu_list(cpu_list, &o->cpus, &o->n_cpus))
			goto out;
		o->system_wide = 1;
		o->cpu_list = cpu_list;
	}
	o->per_cpu |= no_aggr;
	n = PARSE_OPT_ERROR;
	if (o->list && o->argc) {	/* the command would not run, without a word */
		parse_options_error(&stat_pu, "--list lists the events: it takes no command ('%s')", argv[0]);
		goto out;
	}
	n = 0;
	if (o->list)
		goto out;
	n = PARSE_OPT_ERROR;
	if (o->per_thread && o->per_process) {
		parse_options_error(&stat_pu, "--per-thread and --per-process: choose one breakdown");
		goto out;
	}
	if (o->argc == 0 && !o->system_wide && !o->pid && !o->tid) {
		parse_options_error(&stat_pu, "no command to count: give '-- CMD', -p PID, -t TID, -a or -C");
		goto out;
	}
	if ((o->pid || o->tid) && (o->argc || o->system_wide || (o->pid && o->tid))) {
		parse_options_error(&stat_pu, "-p and -t count a running task: they cannot be combined "
				    "with each other, a command, -a or -C");
		goto out;
	}
	if (o->per_cpu && !o->system_wide) {
		parse_options_error(&stat_pu, "--per-cpu/-A needs -a or -C (system-wide counting)");
		goto out;
	}
	int units = o->per_socket + o->per_die + o->per_core;
	if (units && (!o->system_wide || units + o->per_cpu > 1)) {
		parse_options_error(&stat_pu, "--per-socket, --per-die and --per-core sum -a's CPUs: %s",
				    !o->system_wide ? "give -a or -C" : "choose one (or --per-cpu)");
		goto out;
	}
	if (o->detailed && (events.n || o->all_events)) {
		parse_options_error(&stat_pu, "-d adds events to the default ones: not with -e or "
				    "--all-events (name the events instead)");
		goto out;
	}
	if ((o->per_thread || o->per_process) && (o->system_wide || o->tid)) {
		parse_options_error(&stat_pu, "--per-thread/--per-process count a command's or a "
				    "process's tasks: use --per-cpu with -a");
		goto out;
	}
	if (o->null_run && (!o->argc || events.n || o->all_events || o->detailed || o->per_thread ||
			    o->per_process || o->interval_ms || o->costs)) {
		parse_options_error(&stat_pu, "--null times a command and counts nothing: %s",
				    !o->argc ? "give '-- CMD'" : "not with events, a breakdown, -I or --costs");
		goto out;
	}
	if (o->delay_ms && (!o->argc || o->per_thread || o->per_process)) {
		parse_options_error(&stat_pu, "-D delays the counting of a command: %s",
				    !o->argc ? "give '-- CMD'" :
				    "not with --per-thread/--per-process (their counters open as threads start)");
		goto out;
	}
	if (o->no_inherit && (o->system_wide || (o->argc && (o->per_thread || o->per_process)))) {
		parse_options_error(&stat_pu, "--no-inherit counts the first threads alone: not with %s",
				    o->system_wide ? "-a or -C (every task)" :
				    "a command's --per-thread/--per-process (they follow new threads)");
		goto out;
	}
	if (o->repeat > 1 && (o->argc == 0 || o->interval_ms || o->per_thread || o->per_process || o->per_cpu ||
			      units)) {
		parse_options_error(&stat_pu, "-r repeats a command: it cannot be combined with -p, -I or a breakdown");
		goto out;
	}
	n = 0;
out:
	opt_string_list_release(&events);
	return n;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts opts;
	struct stat_events se = { 0 };
	int rc = 0;
	if ((rc = parse_stat_opts(argc, argv, &opts)) < 0) {
		rc = rc == PARSE_OPT_HELP ? 0 : 2;
		goto out;
	}
	cli_set_quiet(opts.quiet);
	if (opts.list) {
		rc = cli_list_events(NULL);
		goto out;
	}
	if (opts.events) {
		if (parse_event_groups(opts.events, &se)) {
			rc = 2;
			goto out;
		}
	}
	if (opts.all_events && build_all_events(&se, spent_pmu_present())) {
		cli_error("cannot build the event list for --all-events");
		rc = 2;
		goto out;
	}
	if (!opts.events && !opts.all_events && !opts.null_run) {
		int group = 0;
		for (size_t i = 0; i < ARRAY_SIZE(default_events); i++) {
			struct spent_event ev;
			spent_event_parse(default_events[i], &ev, NULL, 0);
			stat_events_add(&se, &ev, ++group);
		}
		for (int l = 0; l < opts.detailed && l < 3; l++)
			for (size_t i = 0; i < ARRAY_SIZE(detailed_events[l]) && detailed_events[l][i]; i++) {
				struct spent_event ev;
				if (spent_event_parse(detailed_events[l][i], &ev, NULL, 0) == 0)
					stat_events_add(&se, &ev, ++group);
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
		cli_warn("no hardware PMU on this machine: --all-events counts the software events only");
	if (opts.costs && !spent_pmu_present())
		cli_warn("no hardware PMU on this machine: --costs time estimates are unavailable");
	rc = stat_run_all(&opts, &se);
out:
	stat_events_release(&se);
	free(opts.events);
	free(opts.cpus);
	return rc;
}
