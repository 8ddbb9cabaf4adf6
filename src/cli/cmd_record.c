/* cli/cmd_record.c - `spent record`: sample a command (or a pid) into a profile directory,
 * SpeedShop-style: counter overflows with preset prime periods, aggregated while recording. */
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
#include "collect/sampling.h"
#include "core/outfile.h"
#include "core/symbols.h"
#include "core/workload.h"
#include "spent/profile.h"

#include "cli/parse_options.h"

struct record_opts {
	struct opt_string_list events;	/* every -e, in order; none: the default event */
	const char *freq_arg, *period_arg;	/* -F, -c as given */
	uint64_t freq;		/* -F */
	uint64_t period;	/* -c */
	const char *callgraph;	/* -g/--call-graph: NULL, "fp" or "dwarf" */
	enum sampling_callchain callchain;
	int per_thread;
	long pid;		/* -p */
	const char *output;
	int force;		/* -f: accepted for old scripts, a profile is replaced anyway */
	char **argv;		/* the command after -- */
};

static const char *const record_usage[] = {
	"spent record [-e EV[:PERIOD|@fast|@slow],...]... [-F HZ | -c N] [-g [fp|dwarf]] "
	"[--per-thread] [-o DIR] -- CMD [ARGS]",
	"spent record [OPTIONS] -p PID",
	NULL,
};
static const struct parse_usage record_pu = {
	"record", record_usage, "sample a command into a profile directory (SpeedShop)",
	"Samples CMD (or the running process PID) on counter overflows and writes the aggregated "
	"samples to a profile directory for spent report and spent annotate.",
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
		  .value = &(o)->callgraph, .argh = "fp|dwarf",                                    \
		  .help = "record call stacks (frame pointers or DWARF)", .defval = "off",         \
		  .flags = PARSE_OPT_OPTARG, .defarg = "fp" },                                     \
		OPT_BOOL(0, "per-thread", &(o)->per_thread,                                        \
			 "one event per thread, threads created later included, instead of inherited events"),               \
		{ .type = OPTION_INT, .short_name = 'p', .long_name = "pid", .value = &(o)->pid,   \
		  .argh = "PID", .help = "sample a running process until it exits or Ctrl-C",      \
		  .defval = "none", .min = 1, .max = INT_MAX },                                    \
		OPT_STRING('o', "output", &(o)->output, "DIR", "the profile directory to write"), \
		{ .type = OPTION_BOOL, .short_name = 'f', .long_name = "force", .value = &(o)->force,\
		  .help = "accepted for old scripts", .flags = PARSE_OPT_HIDDEN },                \
		OPT_END(),                                                                         \
	}

static bool is_callgraph_mode(const char *s)
{
	return !strcmp(s, "fp") || !strcmp(s, "dwarf");
}

/* perf's `-g dwarf` and `--call-graph dwarf` give the mode as the next word, which a value the
 * parser takes as optional (`-g -- CMD`) would leave as the program: join the two into
 * `--call-graph=MODE` first. Values of the options that take one are stepped over. */
static int join_callgraph_mode(int argc, char **argv)
{
	static const char *const with_value[] = { "-e", "--event", "-F", "--freq", "-c", "--count",
						  "-p", "--pid", "-o", "--output" };
	static char fp[] = "--call-graph=fp", dwarf[] = "--call-graph=dwarf";
	for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
		bool valued = false;
		for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
			valued |= !strcmp(argv[i], with_value[k]);
		if (valued) {
			i++;
			continue;
		}
		if ((strcmp(argv[i], "-g") && strcmp(argv[i], "--call-graph")) || i + 1 >= argc ||
		    !is_callgraph_mode(argv[i + 1]))
			continue;
		argv[i] = !strcmp(argv[i + 1], "fp") ? fp : dwarf;
		memmove(&argv[i + 1], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
		argc--;
	}
	return argc;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	const struct option opts[] = RECORD_OPTIONS(o);
	argc = join_callgraph_mode(argc, argv);
	int n = parse_options(argc, argv, opts, &record_pu, PARSE_STOP_AT_NON_OPTION);
	if (n < 0)
		return n;
	if (o->callgraph && !is_callgraph_mode(o->callgraph))
		return parse_options_error(&record_pu, "bad call graph '%s': give fp or dwarf",
					   o->callgraph);
	o->callchain = !o->callgraph ? SAMPLING_CG_NONE
		       : !strcmp(o->callgraph, "fp") ? SAMPLING_CG_FP : SAMPLING_CG_DWARF;
	if (o->freq_arg && (cli_parse_u64(o->freq_arg, &o->freq) || !o->freq))
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
	if (!o->pid && !n)
		return parse_options_error(&record_pu, "no command to record: give one after '--' or a pid with '-p'");
	if (o->pid && n)
		return parse_options_error(&record_pu, "both '-p %ld' and a command given: choose one", o->pid);
	return 0;
}

/* One spec: EV, EV:PERIOD, EV@fast, EV@slow. */
static int parse_one_event(const char *spec, const struct record_opts *o, struct sampling_event *se)
{
	char buf[200], err[256];
	enum { P_DEFAULT, P_FAST, P_SLOW, P_EXPLICIT } how = P_DEFAULT;
	uint64_t period = 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	size_t l = strlen(buf);
	char *colon = strrchr(buf, ':');
	if (l > 5 && !strcmp(buf + l - 5, "@fast")) {
		how = P_FAST;
		buf[l - 5] = 0;
	} else if (l > 5 && !strcmp(buf + l - 5, "@slow")) {
		how = P_SLOW;
		buf[l - 5] = 0;
	} else if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		if (cli_parse_u64(colon + 1, &period) || !period || period > INT64_MAX) {
			cli_error("bad period in event '%s': give a positive count", spec);
			return -EINVAL;
		}
		how = P_EXPLICIT;
		*colon = 0;
	}
	memset(se, 0, sizeof(*se));
	int r = spent_event_parse(buf, &se->ev, err, sizeof(err));
	if (r) {
		cli_error("%s", err);
		return r;
	}
	if (spent_event_needs_pmu(&se->ev) && !spent_pmu_present()) {
		if (spent_event_fallback(&se->ev, true)) {
			cli_error("event '%s' needs a hardware PMU and this machine has none: "
				  "sample a software event such as 'cpu-clock'", buf);
			return -ENODEV;
		}
		cli_warn("no hardware PMU on this machine: sampling 'cpu-clock' instead of '%s'", buf);
	}
	cli_user_space_fallback(&se->ev);
	if (how == P_EXPLICIT) {
		se->period = period;
	} else if (how == P_FAST || how == P_SLOW) {
		se->period = sampling_preset_period(&se->ev, how == P_FAST);
	} else if (o->freq) {
		se->period = o->freq;
		se->freq = true;
	} else {
		se->period = o->period ? o->period : sampling_preset_period(&se->ev, true);
	}
	return 0;
}

/* Every -e, in order: a repeated -e adds its events to the earlier ones, as perf does. */
static int parse_events(const struct record_opts *o, struct sampling_event **out, size_t *n)
{
	struct sampling_event *evs = calloc(64, sizeof(*evs));
	size_t k = 0;
	int err = 0;
	if (!evs)
		return -ENOMEM;
	if (!o->events.n) {
		const char *def = spent_pmu_present() ? "cycles" : "cpu-clock";
		if (!spent_pmu_present())
			cli_warn("no hardware PMU on this machine: sampling 'cpu-clock' instead of 'cycles'");
		err = parse_one_event(def, o, &evs[k++]);
	}
	for (int i = 0; i < o->events.n && !err; i++) {
		char *list = strdup(o->events.items[i]), *save = NULL;
		size_t before = k;
		if (!list) {
			err = -ENOMEM;
			break;
		}
		for (char *t = strtok_r(list, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
			if (k == 64) {
				cli_error("too many events: at most 64");
				err = -E2BIG;
				break;
			}
			err = parse_one_event(t, o, &evs[k++]);
		}
		if (!err && k == before) {
			cli_error("empty event list '%s'", o->events.items[i]);
			err = -EINVAL;
		}
		free(list);
	}
	if (err) {
		free(evs);
		return err;
	}
	*out = evs;
	*n = k;
	return 0;
}

/* perf's -F above kernel.perf_event_max_sample_rate: the kernel refuses the event, so the
 * rate is lowered to the maximum and the user told, as perf record does. */
static void clamp_frequency(struct record_opts *o)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long long max = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu", &max) != 1)
		max = 0;
	fclose(f);
	if (max && o->freq > max) {
		cli_warn("-F %llu is above the kernel's maximum sample rate "
			 "(kernel.perf_event_max_sample_rate): sampling at %llu Hz",
			 (unsigned long long)o->freq, max);
		o->freq = max;
	}
}

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig) { stop_requested = 1; }

static void warn_file(void *ctx, const char *path, const char *why)
{
	cli_warn("'%s': %s", path, why);
}

/* Why -o cannot take the profile, for the user. */
static const char *output_error(int err)
{
	return err == -EBADMSG || err == -ENOTEMPTY
		       ? "it is a directory but not a spent profile, or holds other files too: only a "
			 "profile directory is replaced"
		       : outfile_strerror(err);
}

/* Write P into a temporary sibling of -o and put it in place; an existing profile directory
 * there is exchanged with it atomically, then removed (it holds only what spent writes). */
static int write_output(const struct record_opts *o, const struct profile *p)
{
	char tmp[PATH_MAX], ksyms[PATH_MAX + 16];
	struct profile_dir *d = NULL;
	struct symbols *sym = NULL;
	bool replaced = false;
	int err = outdir_make_temp(o->output, OUTDIR_MODE, tmp, sizeof(tmp));
	if (err) {
		cli_error("cannot write profile '%s': %s", o->output, output_error(err));
		return err;
	}
	if ((err = profile_dir_create(tmp, &d)) ||
	    (err = profile_dir_write_epoch(d, 0, p, warn_file, NULL))) {
		cli_error("cannot write profile '%s': %s", tmp, strerror(-err));
		goto out;
	}
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", tmp);
	if (symbols_new(&sym) == 0 && (err = symbols_save_kernel(sym, p, ksyms)))
		cli_warn("cannot save kernel symbols in '%s': %s", ksyms, strerror(-err));
	/* the images' names outlive a rebuild of the binaries: the build-id cache */
	if (sym && (err = symbols_cache_images(sym, p)))
		cli_warn("cannot save symbols in the build-id cache: %s", strerror(-err));
	symbols_free(sym);
	if ((err = outdir_commit(tmp, o->output, profile_dir_check_replaceable, &replaced))) {
		cli_error("cannot write profile '%s': %s", o->output, output_error(err));
		goto out;
	}
	if (replaced && (err = profile_dir_remove(tmp)))
		cli_warn("cannot remove the replaced profile, now '%s': %s: remove it by hand", tmp,
			 strerror(-err));
	err = 0;
out:
	profile_dir_close(d);
	if (err)
		profile_dir_remove(tmp);
	return err;
}

static int run_loop(struct sampling *s, pid_t child, pid_t target, int *status)
{
	int err = 0;
	for (;;) {
		if ((err = sampling_poll(s, 50)))
			return err;
		if (child > 0) {
			pid_t w = waitpid(child, status, WNOHANG);
			if (w == child)
				break;
		} else if (stop_requested || kill(target, 0) < 0) {
			break;
		}
	}
	return sampling_finish(s);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = "spent.profile" };
	struct sampling_event *evs = NULL;
	struct sampling *s = NULL;
	size_t nev = 0, failed = 0;
	int status = 0, rc = 2, err;
	pid_t child = 0;
	struct workload wl = WORKLOAD_INIT;
	char exe[PATH_MAX];
	if ((err = parse_args(argc, argv, &o)) < 0) {
		rc = err == PARSE_OPT_HELP ? 0 : 2;
		goto out;
	}
	clamp_frequency(&o);
	/* refuse a bad -o now, not after the run: its samples would be lost */
	if ((err = outdir_check(o.output, profile_dir_check_replaceable, profile_dir_remove))) {
		cli_error("cannot write profile '%s': %s", o.output, output_error(err));
		goto out;
	}
	if (!o.pid && workload_find(o.argv[0], exe, sizeof(exe))) {
		cli_error("cannot run '%s': no such executable (check the name and PATH)", o.argv[0]);
		rc = 127;
		goto out;
	}
	if (parse_events(&o, &evs, &nev))
		goto out;
	struct sampling_config cfg = { .events = evs, .nevents = nev, .callchain = o.callchain,
				       .per_thread = o.per_thread };
	if ((err = sampling_new(&cfg, &s))) {
		cli_error("cannot set up sampling: %s", strerror(-err));
		goto out;
	}
	signal(SIGINT, o.pid ? on_stop : SIG_IGN);
	signal(SIGQUIT, o.pid ? on_stop : SIG_IGN);
	const struct workload_opts held = { .hold = true, .default_signals = true };
	if (!o.pid && (err = workload_spawn(&wl, o.argv, &held))) {
		cli_error("cannot start '%s': %s", o.argv[0], strerror(-err));
		goto out;
	}
	child = wl.pid > 0 ? wl.pid : 0;
	if ((err = sampling_attach(s, o.pid ? o.pid : child, !o.pid, &failed))) {
		cli_error("cannot open event '%s': %s", evs[failed].ev.spec, strerror(-err));
		workload_abort(&wl);
		goto out;
	}
	if (child > 0 && (err = workload_start(&wl))) {
		cli_error("cannot run '%s': %s", o.argv[0], strerror(-err));
		workload_wait(child, NULL, 0);
		rc = workload_exec_exit_code(err);
		goto out;
	}
	if ((err = run_loop(s, child, o.pid, &status))) {
		cli_error("reading samples failed: %s", strerror(-err));
		goto out;
	}
	struct sampling_stats st;
	sampling_get_stats(s, &st);
	if (write_output(&o, sampling_profile(s)))
		goto out;
	fprintf(stderr, "spent: %llu samples (%llu placed, %llu unknown, %llu lost, %llu throttled) in '%s'\n",
		(unsigned long long)st.samples, (unsigned long long)st.placed,
		(unsigned long long)st.unknown, (unsigned long long)st.lost,
		(unsigned long long)st.throttled, o.output);
	if (st.lost)
		cli_warn("%llu samples were lost in the ring buffers: use a longer period or -F lower",
			 (unsigned long long)st.lost);
	rc = 0;
	if (child > 0)
		rc = workload_exit_code(status);
out:
	sampling_free(s);
	free(evs);
	opt_string_list_release(&o.events);
	return rc;
}
