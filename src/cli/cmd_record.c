/* cli/cmd_record.c - `spent record`: sample a command (or a pid) into a profile directory,
 * SpeedShop-style: counter overflows with preset prime periods, aggregated while recording.
 * This file parses the options and prints; the recording is the library's (spent/record.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "spent/record.h"

#include "cli/parse_options.h"
#include "core/alloc.h"

struct record_opts {
	struct opt_string_list events;	/* every -e, in order; none: the default event */
	const char *freq_arg, *period_arg;	/* -F, -c as given */
	uint64_t freq;		/* -F */
	uint64_t period;	/* -c */
	const char *callgraph;	/* -g/--call-graph: NULL, "fp", "dwarf" or "dwarf,SIZE" */
	enum spent_record_callgraph callchain;
	uint32_t stack_bytes;	/* dwarf,SIZE */
	int per_thread;
	int no_inherit;		/* -i: the command's first thread alone */
	long delay_ms;		/* -D: sampling starts this long after the command */
	int all_cpus;		/* -a, or -C */
	const char *cpu_list;	/* -C as given */
	int *cpus;		/* -C: the CPUs sampled (all_cpus set); NULL: every online one */
	size_t n_cpus;
	long pid;		/* -p */
	const char *output;
	int force;		/* -f: accepted for old scripts, a profile is replaced anyway */
	int quiet;		/* -q: no summary line, no warnings */
	char **argv;		/* the command after -- */
};

static const char *const record_usage[] = {
	"spent record [-e EV[:PERIOD|@fast|@slow],...]... [-F HZ | -c N] [-g [fp|dwarf]] "
	"[--per-thread | -i] [-o DIR] -- CMD [ARGS]",
	"spent record [OPTIONS] -p PID",
	"spent record [OPTIONS] -a | -C CPUS [-- CMD [ARGS]]",
	NULL,
};
static const struct parse_usage record_pu = {
	"record", record_usage, "sample a command into a profile directory (SpeedShop)",
	"Samples CMD (or the running process PID, or with -a every CPU while CMD runs or until "
	"Ctrl-C) on counter overflows and writes the aggregated samples to a profile directory for "
	"spent report and spent annotate.",
};

#define RECORD_OPTIONS(o)                                                                          \
	{                                                                                          \
		OPT_STRING_LIST('e', "event", &(o)->events, "EV,...",                              \
				"events to sample (EV, EV:PERIOD, EV@fast, EV@slow); repeat -e to "\
				"add more"),                                                       \
		{ .type = OPTION_STRING, .short_name = 'F', .long_name = "freq", .value = &(o)->freq_arg, \
		  .argh = "HZ", .help = "samples per second (clamped to the kernel's maximum)",   \
		  .defval = "the event's preset period" },                                        \
		{ .type = OPTION_STRING, .short_name = 'c', .long_name = "count",                 \
		  .value = &(o)->period_arg, .argh = "N", .help = "sample every N events",            \
		  .defval = "the event's preset period" },                                        \
		{ .type = OPTION_STRING, .short_name = 'g', .long_name = "call-graph",            \
		  .value = &(o)->callgraph, .argh = "fp|dwarf[,SIZE]",                             \
		  .help = "record call stacks (frame pointers, or DWARF from SIZE bytes of stack: 8192)",\
		  .defval = "off",                                                                 \
		  .flags = PARSE_OPT_OPTARG, .defarg = "fp" },                                     \
		OPT_BOOL(0, "per-thread", &(o)->per_thread,                                        \
			 "one event per thread, threads created later included, instead of inherited events"),               \
		{ .type = OPTION_INT, .short_name = 'D', .long_name = "delay", .value = &(o)->delay_ms,\
		  .argh = "MS", .help = "start sampling MS ms after the command starts",            \
		  .defval = "0", .min = 0, .max = 24 * 3600 * 1000 },                              \
		OPT_BOOL('i', "no-inherit", &(o)->no_inherit,                                      \
			 "the command's first thread (-p: its threads now) alone, not what it creates"),\
		OPT_BOOL('a', "all-cpus", &(o)->all_cpus,                                          \
			 "every task on every CPU (system-wide), while CMD runs or until Ctrl-C"),     \
		OPT_STRING('C', "cpu", &(o)->cpu_list, "CPUS",                                     \
			   "every task on these CPUs only (0-3,5): -a on part of the machine"),       \
		{ .type = OPTION_INT, .short_name = 'p', .long_name = "pid", .value = &(o)->pid,   \
		  .argh = "PID", .help = "sample a running process until it exits or Ctrl-C",      \
		  .defval = "none", .min = 1, .max = INT_MAX },                                    \
		OPT_STRING('o', "output", &(o)->output, "DIR", "the profile directory to write"), \
		OPT_BOOL('q', "quiet", &(o)->quiet, "print no summary and no warnings (errors still print)"),\
		{ .type = OPTION_BOOL, .short_name = 'f', .long_name = "force", .value = &(o)->force,\
		  .help = "accepted for old scripts", .flags = PARSE_OPT_HIDDEN },                \
		OPT_END(),                                                                         \
	}

static bool is_callgraph_mode(const char *s)
{
	return !strcmp(s, "fp") || !strcmp(s, "dwarf");
}

/* A word perf takes as a call-graph mode: fp, dwarf, dwarf,SIZE, lbr (taken as the mode, so
 * a bad one is said to be one, not run as the command). */
static bool looks_like_callgraph_mode(const char *s)
{
	return is_callgraph_mode(s) || !strncmp(s, "dwarf,", 6) || !strncmp(s, "fp,", 3) ||
	       !strcmp(s, "lbr");
}

/* MODE into O: fp, dwarf or dwarf,SIZE (perf's stack dump size). 0 or -EINVAL. */
static int parse_callgraph(const char *mode, struct record_opts *o)
{
	if (!strcmp(mode, "fp")) {
		o->callchain = SPENT_RECORD_CG_FP;
		return 0;
	}
	if (strncmp(mode, "dwarf", 5) || (mode[5] && mode[5] != ','))
		return -EINVAL;
	o->callchain = SPENT_RECORD_CG_DWARF;
	uint64_t size;
	if (mode[5] == ',' && (cli_parse_u64(mode + 6, &size) || !size || size % 8 || size > 65528))
		return -EINVAL;
	o->stack_bytes = mode[5] ? (uint32_t)size : 0;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	const struct option opts[] = RECORD_OPTIONS(o);
	/* perf's `-g dwarf` gives the mode as the next word, which a value the parser takes as
	 * optional (`-g -- CMD`) would leave as the program */
	argc = parse_options_join_optarg(argc, argv, opts, "call-graph", looks_like_callgraph_mode);
	int n = parse_options(argc, argv, opts, &record_pu, PARSE_STOP_AT_NON_OPTION);
	if (n < 0)
		return n;
	cli_set_quiet(o->quiet);
	o->callchain = SPENT_RECORD_CG_NONE;
	if (o->callgraph && parse_callgraph(o->callgraph, o))
		return parse_options_error(&record_pu, "bad call graph '%s': give fp, dwarf or "
					   "dwarf,SIZE (a multiple of 8 up to 65528 bytes)", o->callgraph);
	if (o->freq_arg && cli_parse_frequency(o->freq_arg, &o->freq))
		return parse_options_error(&record_pu, "bad frequency '%s': give samples per second",
					   o->freq_arg);
	/* the kernel refuses periods with bit 63 set */
	if (o->period_arg && (cli_parse_u64(o->period_arg, &o->period) || !o->period ||
			      o->period > INT64_MAX))
		return parse_options_error(&record_pu, "bad period '%s': give a positive event count",
					   o->period_arg);
	if (o->freq && o->period)
		return parse_options_error(&record_pu, "'-F' and '-c' both given: choose a frequency or a period");
	o->argv = argv;
	argv[n] = NULL;
	if (o->cpu_list) {	/* perf's -C: system-wide on those CPUs */
		if (cli_parse_cpu_list(o->cpu_list, &o->cpus, &o->n_cpus))
			return PARSE_OPT_ERROR;
		o->all_cpus = 1;
	}
	if (o->all_cpus && o->pid)
		return parse_options_error(&record_pu, "both '%s' and '-p %ld' given: choose one",
					   o->cpu_list ? "-C" : "-a", o->pid);
	if (o->all_cpus && o->per_thread)
		return parse_options_error(&record_pu, "'--per-thread' follows one process tree: not with '%s'",
					   o->cpu_list ? "-C" : "-a");
	if (o->delay_ms && (!n || o->all_cpus || o->per_thread))
		return parse_options_error(&record_pu, "'-D' delays the sampling of a command: %s",
					   !n ? "give one after '--'" : o->all_cpus ? "not with '-a' or '-C'" :
					   "not with '--per-thread' (its events open as threads start)");
	if (o->no_inherit && (o->all_cpus || o->per_thread))
		return parse_options_error(&record_pu, "'--no-inherit' samples the first threads alone: not "
					   "with '%s'", o->all_cpus ? (o->cpu_list ? "-C" : "-a") : "--per-thread");
	if (!o->pid && !n && !o->all_cpus)
		return parse_options_error(&record_pu, "no command to record: give one after '--', a pid "
					   "with '-p', or '-a' for every CPU");
	if (o->pid && n)
		return parse_options_error(&record_pu, "both '-p %ld' and a command given: choose one", o->pid);
	return 0;
}

static struct spent_record *volatile recording;	/* for the signal handlers */
static void on_stop(int sig)
{
	(void)sig;
	spent_record_stop(recording);
}

/* SIGTERM or SIGHUP to spent (timeout, a service manager, a closed terminal): passed on to the
 * command, whose end is then recorded and the profile written, as perf record does; a second
 * one kills it. Before, spent died of it and the whole recording was lost. */
static volatile sig_atomic_t terms;
static void on_term(int sig)
{
	if (recording)
		spent_record_signal(recording, terms++ ? SIGKILL : sig);
}

static void warn_user(void *arg, const char *msg)
{
	(void)arg;
	cli_warn("%s", msg);
}

static void print_summary(struct spent_record *r, const char *output)
{
	struct spent_record_stats st;
	spent_record_get_stats(r, &st);
	fprintf(stderr, "spent: %llu samples (%llu placed, %llu unknown, %llu lost, %llu throttled) in '%s'\n",
		(unsigned long long)st.samples, (unsigned long long)st.placed,
		(unsigned long long)st.unknown, (unsigned long long)st.lost,
		(unsigned long long)st.throttled, output);
	if (st.lost)
		cli_warn("%llu samples were lost in the ring buffers: use a longer period or -F lower",
			 (unsigned long long)st.lost);
}

/* Record through the library (spent/record.h): the options become its options, its
 * messages are printed here. */
static int record(const struct record_opts *o)
{
	struct spent_record_opts ro = {
		.events = (const char *const *)o->events.items, .n_events = (size_t)o->events.n,
		.freq = o->freq, .period = o->period, .callgraph = o->callchain,
		.dwarf_stack_bytes = o->stack_bytes,
		.per_thread = o->per_thread, .no_inherit = o->no_inherit,
		.delay_ms = (uint64_t)o->delay_ms, .cpus = o->cpus, .n_cpus = o->n_cpus,
		.warn = warn_user,
	};
	struct spent_record *r = NULL;
	int status = 0, rc = 2, err;
	if ((err = spent_record_new(&ro, &r))) {
		cli_error("%s", spent_record_error(r));
		goto out;
	}
	/* refuse a bad -o now, not after the run: its samples would be lost */
	if (spent_record_check_output(r, o->output)) {
		cli_error("%s", spent_record_error(r));
		goto out;
	}
	recording = r;
	/* with a command, Ctrl-C is the command's (it ends, its end is recorded); without one,
	 * it ends the recording */
	bool no_command = o->pid || !o->argv[0];
	signal(SIGINT, no_command ? on_stop : SIG_IGN);
	signal(SIGQUIT, no_command ? on_stop : SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGHUP, on_term);
	pid_t target = o->all_cpus ? SPENT_RECORD_ALL_CPUS : (pid_t)o->pid;
	if (spent_record_start(r, o->pid || !o->argv[0] ? NULL : o->argv, target) ||
	    spent_record_wait(r, &status) || spent_record_write(r, o->output)) {
		cli_error("%s", spent_record_error(r));
		rc = spent_record_exit_code(r) ? spent_record_exit_code(r) : 2;
		goto out;
	}
	if (!o->quiet)
		print_summary(r, o->output);
	rc = spent_record_exit_code(r);
out:
	spent_record_free(r);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = "spent.profile" };
	int rc, err;
	if ((err = parse_args(argc, argv, &o)) < 0)
		rc = err == PARSE_OPT_HELP ? 0 : 2;
	else
		rc = record(&o);
	opt_string_list_release(&o.events);
	free(o.cpus);
	return rc;
}
