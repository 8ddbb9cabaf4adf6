/* cli/cmd_shim.c - `spent shim`: run a command with the Shim observer thread sampling its
 * software signals and counters, print tag histograms and rate summaries (human or JSON),
 * write the sample file with -o; `spent shim dump FILE` prints a sample file back. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/helper_path.h"
#include "cli/parse_options.h"
#include "core/json.h"
#include "core/number.h"
#include "core/outfile.h"
#include "core/text.h"
#include "shim/shim.h"
#include "shim/shim_format.h"
#include "spent/events.h"

#define DEFAULT_DUMP_LIMIT 20

struct shim_opts {
	struct shim_config cfg;
	const char *histogram;	/* tag to print in full, or NULL for every tag's top rows */
	const char *output;
	int json;
	long limit;		/* dump: samples to print */
	char preload[PATH_MAX];
};

static int add_signal(struct shim_opts *o, enum shim_sig_kind kind, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *sym = eq ? eq + 1 : arg;
	size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
	if (!nlen || !*sym || nlen >= SHIM_NAME_MAX || strlen(sym) >= sizeof(o->cfg.sigs[0].symbol)) {
		cli_error("invalid signal '%s': expected NAME=SYMBOL (NAME under %d characters)", arg,
			  SHIM_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->cfg.nsigs; i++)
		if (strlen(o->cfg.sigs[i].name) == nlen && !strncmp(o->cfg.sigs[i].name, arg, nlen)) {
			cli_error("signal name '%.*s' is used twice: give each signal its own NAME",
				  (int)nlen, arg);
			return -EINVAL;
		}
	if (o->cfg.nsigs == SHIM_MAX_SIGNALS) {
		cli_error("too many signals: at most %d", SHIM_MAX_SIGNALS);
		return -EINVAL;
	}
	struct shim_signal_spec *s = &o->cfg.sigs[o->cfg.nsigs++];
	s->kind = kind;
	snprintf(s->name, sizeof(s->name), "%.*s", (int)nlen, arg);
	snprintf(s->symbol, sizeof(s->symbol), "%s", sym);
	return 0;
}

/* -e: hardware events need a PMU; without one say so and continue with software signals. */
static int add_events(struct shim_opts *o, const char *list)
{
	struct spent_event *evs = NULL;
	size_t n = 0;
	char err[512];
	int rc = spent_event_parse_list(list, &evs, &n, err, sizeof(err));
	if (rc) {
		cli_error("%s", err);
		return rc;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (spent_event_needs_pmu(&evs[i]) && !spent_pmu_present()) {
			cli_warn("no hardware PMU on this machine: '%s' cannot be counted; "
				 "observing software signals only", evs[i].spec);
			continue;
		}
		if (o->cfg.nevents == SHIM_MAX_COUNTERS) {
			cli_error("too many events: at most %d", SHIM_MAX_COUNTERS);
			rc = -EINVAL;
			break;
		}
		struct shim_event_spec *e = &o->cfg.events[o->cfg.nevents++];
		snprintf(e->name, sizeof(e->name), "%.31s", evs[i].name);
		e->attr = evs[i].attr;
	}
	free(evs);
	return rc;
}

static int parse_ratio(struct shim_opts *o, const char *s)
{
	char buf[64];
	char *sep;
	double lo = 0, hi = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	sep = strpbrk(buf, ",:");
	if (sep)
		*sep = '\0';
	if (!sep || num_parse_double(buf, &lo) || num_parse_double(sep + 1, &hi) || !(lo > 0) ||
	    !(hi >= lo)) {
		cli_error("invalid --ratio '%s': expected LO,HI with 0 < LO <= HI, e.g. 0.99,1.01", s);
		return -EINVAL;
	}
	o->cfg.ratio_lo = lo;
	o->cfg.ratio_hi = hi;
	return 0;
}

/* $SPENT_SHIM_LIB, else libspent-shim.so in the helper directories (beside the spent binary in
 * the build tree, $(LIBDIR)/spent when installed). */
static int find_preload(struct shim_opts *o)
{
	static const char *const names[] = { "libspent-shim.so", NULL };
	const char *env = getenv("SPENT_SHIM_LIB");
	if (env && *env) {
		snprintf(o->preload, sizeof(o->preload), "%s", env);
		if (access(o->preload, R_OK)) {
			cli_error("observer library '%s' (SPENT_SHIM_LIB) not found", o->preload);
			return -ENOENT;
		}
	} else if (helper_find(names, R_OK, o->preload, sizeof(o->preload))) {
		cli_error("observer library libspent-shim.so not found in %s: build it with make, "
			  "install it with make install, or set SPENT_LIB_DIR", o->preload);
		return -ENOENT;
	}
	o->cfg.preload = o->preload;
	return 0;
}

static int on_signal_opt(const struct option *opt, const char *arg, int unset)
{
	enum shim_sig_kind kind = !strcmp(opt->long_name, "tag") ? SHIM_SIG_TAG :
				  !strcmp(opt->long_name, "rate") ? SHIM_SIG_RATE : SHIM_SIG_COUNTER;
	return add_signal(opt->value, kind, arg);
}

static int on_event(const struct option *opt, const char *arg, int unset)
{
	return add_events(opt->value, arg);
}

static int on_ratio(const struct option *opt, const char *arg, int unset)
{
	return parse_ratio(opt->value, arg);
}

/* --period-ns and --buffer: decimal with an optional K/M/G (x1000) suffix, bounded */
static int on_count_opt(const struct option *opt, const char *arg, int unset)
{
	struct shim_opts *o = opt->value;
	bool period = !strcmp(opt->long_name, "period-ns");
	uint64_t u;

	if (cli_parse_u64(arg, &u) || u > (period ? 1000000000000ULL : 1ULL << 26)) {
		cli_error("invalid value '%s' for --%s: expected a number%s", arg, opt->long_name,
			  period ? " of nanoseconds" : " of samples up to 64M");
		return -EINVAL;
	}
	*(period ? &o->cfg.period_ns : &o->cfg.buffer_samples) = u;
	return 0;
}

static const char *const shim_usage_lines[] = {
	"spent shim [--tag NAME=SYMBOL] [--counter NAME=SYMBOL] [--rate NAME=SYMBOL] [-e EVENT] "
	"[--observer-cpu N] [--app-cpu M] [--period-ns N] [--ratio LO,HI] [--buffer N] "
	"[--histogram TAG] [-o FILE] [--json] -- CMD [ARGS]",
	"spent shim dump FILE [--json] [--limit N] [--histogram TAG]",
	NULL,
};

static const struct parse_usage shim_parse_usage = {
	"shim", shim_usage_lines, "observer thread sampling counters and software signals (Shim)",
	"Runs CMD with an observer thread (preloaded libspent-shim.so) on its own cpu reading the "
	"program's software signals (variables named by symbol) and hardware counters in a tight "
	"loop: a histogram of each tag's values and the rate of each counter, kept when "
	"consecutive clock intervals agree within --ratio. -o writes the results and the last "
	"--buffer samples; spent shim dump FILE prints them back. See docs/shim.md.",
};

/* DUMP: options may follow operands (dump FILE --json); else they stop at the command.
 * The non-option arguments are left in ARGV[0..]; their count, or PARSE_OPT_HELP /
 * PARSE_OPT_ERROR. */
static int parse_args(struct shim_opts *o, int argc, char **argv, bool dump)
{
	long observer_cpu = o->cfg.observer_cpu, app_cpu = o->cfg.app_cpu;
	const struct option opts[] = {
		OPT_GROUP("What to observe"),
		OPT_CALLBACK(0, "tag", o, "NAME=SYMBOL",
			     "a tag variable: histogram of its values (repeatable)", on_signal_opt),
		OPT_CALLBACK(0, "counter", o, "NAME=SYMBOL",
			     "a counter variable: its rate over time (repeatable)", on_signal_opt),
		OPT_CALLBACK(0, "rate", o, "NAME=SYMBOL",
			     "a rate variable: its rate, kept within --ratio (repeatable)", on_signal_opt),
		OPT_CALLBACK('e', "event", o, "EVENT,...",
			     "counters of the app CPU, read with read(2) each sample (software "
			     "events; hardware ones need a PMU)", on_event),
		OPT_GROUP("How to observe"),
		{ .type = OPTION_INT, .long_name = "observer-cpu", .value = &observer_cpu, .argh = "N",
		  .help = "the observer thread's cpu", .min = 0, .max = 1 << 20,
		  .defval = "chosen: another core than the app's" },
		{ .type = OPTION_INT, .long_name = "app-cpu", .value = &app_cpu, .argh = "M",
		  .help = "the program's cpu", .min = 0, .max = 1 << 20,
		  .defval = "chosen: the observer's SMT sibling, else another core" },
		{ .type = OPTION_CALLBACK, .long_name = "period-ns", .value = o, .argh = "N",
		  .help = "pace the loop to one sample every N ns", .callback = on_count_opt,
		  .defval = "flat out" },
		{ .type = OPTION_CALLBACK, .long_name = "ratio", .value = o, .argh = "LO,HI",
		  .help = "keep a rate when consecutive clock intervals agree within [LO, HI]",
		  .callback = on_ratio, .defval = "0.99,1.01" },
		{ .type = OPTION_CALLBACK, .long_name = "buffer", .value = o, .argh = "N",
		  .help = "samples kept in the -o file's log (the last ones)",
		  .callback = on_count_opt, .defval = "65536" },
		OPT_GROUP("Output"),
		OPT_STRING(0, "histogram", &o->histogram, "TAG",
			   "print TAG's histogram in full (default: every tag's top 10)"),
		OPT_STRING('o', "output", &o->output, "FILE", "write the results and the sample log"),
		OPT_BOOL(0, "json", &o->json, "one JSON object per line"),
		OPT_INT(0, "limit", &o->limit, "N", "dump: logged samples to print", 0, LONG_MAX),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &shim_parse_usage,
			      dump ? 0 : PARSE_STOP_AT_NON_OPTION);

	o->cfg.observer_cpu = (int)observer_cpu;
	o->cfg.app_cpu = (int)app_cpu;
	return n;
}

static const char *kind_name(enum shim_sig_kind k)
{
	return k == SHIM_SIG_TAG ? "tag" : k == SHIM_SIG_RATE ? "rate" : "counter";
}

static void totals(const struct shim_result *r, uint64_t *kept, uint64_t *dropped)
{
	*kept = *dropped = 0;
	for (uint32_t i = 0; i < r->ncounters; i++) {
		*kept += r->signals[i].kept;
		*dropped += r->signals[i].dropped;
	}
}

static double run_seconds(const struct shim_result *r)
{
	return r->tsc_hz && r->last_tsc > r->first_tsc
		       ? (double)(r->last_tsc - r->first_tsc) / (double)r->tsc_hz : 0;
}

static void json_summary(FILE *out, const struct shim_result *r)
{
	uint64_t kept, dropped;
	struct json_writer w;
	totals(r, &kept, &dropped);
	json_init(&w, out);
	json_object_begin(&w);
	json_kstr(&w, "type", "summary");
	json_ku64(&w, "samples", r->samples);
	json_kdouble(&w, "period_ns", shim_result_period_ns(r), 2);
	json_ku64(&w, "kept", kept);
	json_ku64(&w, "dropped", dropped);
	json_kdouble(&w, "seconds", run_seconds(r), 6);
	json_ku64(&w, "samples_app", r->samples_app);
	json_ku64(&w, "samples_other", r->samples_other);
	json_ku64(&w, "samples_gap", r->samples_gap);
	json_ku64(&w, "excluded", r->samples_other + r->samples_gap);
	json_kdouble(&w, "app_ms", (double)r->app_ns / 1e6, 3);
	json_kbool(&w, "thread_channel", r->flags & SHIM_RESULT_SCHED_CHANNEL);
	json_ki64(&w, "observer_cpu", r->observer_cpu);
	json_ki64(&w, "app_cpu", r->app_cpu);
	json_ku64(&w, "period_req_ns", r->period_req_ns);
	json_ku64(&w, "tsc_hz", r->tsc_hz);
	json_ki64(&w, "exit_status", r->exit_status);
	json_ki64(&w, "pid", r->pid);
	json_ku64(&w, "logged", r->nlog);
	json_object_end(&w);
	json_newline(&w);
}

static void json_signals(FILE *out, const struct shim_result *r, const char *histogram)
{
	struct json_writer w;
	json_init(&w, out);
	for (uint32_t i = 0; i < r->ncounters + r->ntags; i++) {
		const struct shim_signal_result *s = &r->signals[i];
		if (s->kind != SHIM_SIG_TAG) {
			json_object_begin(&w);
			json_kstr(&w, "type", "rate");
			json_kstr(&w, "name", s->name);
			json_kstr(&w, "kind", kind_name(s->kind));
			json_ku64(&w, "first", s->first_value);
			json_ku64(&w, "last", s->last_value);
			json_ku64(&w, "kept", s->kept);
			json_ku64(&w, "dropped", s->dropped);
			json_ku64(&w, "offcpu", s->offcpu);
			json_ku64(&w, "rates", s->nrates);
			json_kdouble_sig(&w, "min", s->rate_min, 6);
			json_kdouble_sig(&w, "median", s->rate_median, 9);
			json_kdouble_sig(&w, "max", s->rate_max, 6);
			json_object_end(&w);
			json_newline(&w);
			continue;
		}
		if (histogram && strcmp(histogram, s->name) != 0)
			continue;
		for (size_t k = 0; k < s->nrows; k++) {
			json_object_begin(&w);
			json_kstr(&w, "type", "histogram");
			json_kstr(&w, "tag", s->name);
			json_ku64(&w, "value", s->rows[k].value);
			json_kstr(&w, "symbol", s->rows[k].symbol);
			json_ku64(&w, "samples", s->rows[k].samples);
			json_kdouble(&w, "percent", shim_hist_percent(s, &s->rows[k]), 3);
			json_object_end(&w);
			json_newline(&w);
		}
	}
}

#define SHIM_THIN_NS 100000000ULL	/* histograms over less app time get a note */

static void human_summary(FILE *out, const struct shim_result *r)
{
	char period[64];
	if (r->period_req_ns)
		snprintf(period, sizeof(period), "paced at %llu ns", (unsigned long long)r->period_req_ns);
	else
		snprintf(period, sizeof(period), "flat out");
	fprintf(out, "shim: %llu samples in %.3f s: one every %.1f ns (%s), observer cpu %d, "
		     "app cpu %d\n", (unsigned long long)r->samples, run_seconds(r),
		shim_result_period_ns(r), period, r->observer_cpu, r->app_cpu);
	if (r->flags & SHIM_RESULT_SCHED_CHANNEL) {
		fprintf(out, "thread channel (eBPF sched_switch): %llu samples with the app on its cpu "
			     "(%.1f%%) over %.1f ms; excluded from histograms: %llu, of which %llu with "
			     "another task or idle on the app cpu, %llu spanning a context switch on the "
			     "app or observer cpu\n",
			(unsigned long long)r->samples_app,
			r->samples ? 100.0 * (double)r->samples_app / (double)r->samples : 0,
			(double)r->app_ns / 1e6, (unsigned long long)(r->samples_other + r->samples_gap),
			(unsigned long long)r->samples_other, (unsigned long long)r->samples_gap);
		/* a busy machine may let the two threads overlap for a few ms only: say so */
		if (r->ntags && r->app_ns < SHIM_THIN_NS)
			fprintf(out, "note: the histograms watched the app for only %.1f ms (the app and "
				     "the observer ran at the same time that long): few phases of the "
				     "program were seen, shares are uncertain; run longer\n",
				(double)r->app_ns / 1e6);
	}
	if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
}

static void human_counters(FILE *out, const struct shim_result *r)
{
	if (!r->ncounters)
		return;
	fprintf(out, "\n%-16s %-7s %14s %10s %10s %10s %12s %12s %12s\n", "counter", "kind",
		"increase", "kept", "dropped", "offcpu", "min/s", "median/s", "max/s");
	char shown[TEXT_SHOWN_MAX];	/* a sample file's names are its writer's */
	for (uint32_t i = 0; i < r->ncounters; i++) {
		const struct shim_signal_result *s = &r->signals[i];
		fprintf(out, "%-16s %-7s %14llu %10llu %10llu %10llu %12.6g %12.6g %12.6g\n",
			text_for_terminal(s->name, shown, sizeof(shown)),
			kind_name(s->kind), (unsigned long long)(s->last_value - s->first_value),
			(unsigned long long)s->kept, (unsigned long long)s->dropped,
			(unsigned long long)s->offcpu, s->rate_min,
			s->rate_median, s->rate_max);
	}
	fprintf(out, "(rates kept when consecutive clock intervals agree within [%g, %g]; offcpu: "
		     "spanning a context switch on the app or observer cpu)\n",
		r->ratio_lo, r->ratio_hi);
}

static void human_histograms(FILE *out, const struct shim_result *r, const char *histogram)
{
	char shown[TEXT_SHOWN_MAX];
	for (uint32_t i = r->ncounters; i < r->ncounters + r->ntags; i++) {
		const struct shim_signal_result *s = &r->signals[i];
		if (histogram && strcmp(histogram, s->name) != 0)
			continue;
		size_t show = histogram ? s->nrows : (s->nrows < 10 ? s->nrows : 10);
		fprintf(out, "\nhistogram of tag '%s'%s:\n%8s %12s  %s\n",
			text_for_terminal(s->name, shown, sizeof(shown)),
			show < s->nrows ? " (top 10; --histogram for all)" : "", "percent", "samples",
			"value");
		for (size_t k = 0; k < show; k++) {
			const struct shim_hist_row *row = &s->rows[k];
			fprintf(out, "%7.2f%% %12llu  ", shim_hist_percent(s, row),
				(unsigned long long)row->samples);
			if (row->symbol)
				fprintf(out, "%s (0x%llx)\n", text_for_terminal(row->symbol, shown, sizeof(shown)),
					(unsigned long long)row->value);
			else
				fprintf(out, "%llu\n", (unsigned long long)row->value);
		}
		if (s->overflow)
			fprintf(out, "%8s %12llu  (values beyond the observer's table)\n", "",
				(unsigned long long)s->overflow);
	}
}

static int tag_spec_known(const struct shim_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nsigs; i++)
		if (cfg->sigs[i].kind == SHIM_SIG_TAG && strcmp(cfg->sigs[i].name, name) == 0)
			return 1;
	return 0;
}

/* Whether a logged sample fed the histograms: "app", or why not ("other", "gap"). */
static const char *logged_class(const struct shim_result *r, uint64_t thread)
{
	if (thread & SHIM_LOG_THREAD_GAP)
		return "gap";
	if ((r->flags & SHIM_RESULT_SCHED_CHANNEL) && (thread >> 32) != (uint64_t)(uint32_t)r->pid)
		return "other";
	return "app";
}

static void print_samples(FILE *out, const struct shim_result *r, bool json, long limit)
{
	uint64_t words = shim_sample_words(r->ncounters, r->ntags);
	uint64_t n = limit >= 0 && (uint64_t)limit < r->nlog ? (uint64_t)limit : r->nlog;
	double ns = r->tsc_hz ? 1e9 / (double)r->tsc_hz : 0;
	struct json_writer jw;
	json_init(&jw, out);
	if (!json)
		fprintf(out, "\n%llu logged samples (the last of the run):\n%14s %8s %10s %6s",
			(unsigned long long)r->nlog, "t_ns", "read_ns", "tid", "class");
	char shown[TEXT_SHOWN_MAX];
	for (uint32_t i = 0; !json && i < r->ncounters + r->ntags; i++)
		fprintf(out, " %16s", text_for_terminal(r->signals[i].name, shown, sizeof(shown)));
	if (!json)
		fputc('\n', out);
	for (uint64_t k = 0; k < n; k++) {
		const uint64_t *w = r->log + k * words;
		double t = (double)(w[0] - r->first_tsc) * ns, d = (double)(w[1] - w[0]) * ns;
		uint64_t thread = w[2] & ~SHIM_LOG_THREAD_GAP;
		if (json) {
			json_object_begin(&jw);
			json_kstr(&jw, "type", "sample");
			json_kdouble(&jw, "t_ns", t, 1);
			json_kdouble(&jw, "read_ns", d, 1);
			json_ku64(&jw, "pid", thread >> 32);
			json_ku64(&jw, "tid", thread & 0xffffffffu);
			json_kstr(&jw, "class", logged_class(r, w[2]));
			for (uint32_t i = 0; i < r->ncounters + r->ntags; i++)
				json_ku64(&jw, r->signals[i].name, w[3 + i]);
			json_object_end(&jw);
			json_newline(&jw);
			continue;
		}
		fprintf(out, "%14.1f %8.1f %10llu %6s", t, d, (unsigned long long)(thread & 0xffffffffu),
			logged_class(r, w[2]));
		for (uint32_t i = 0; i < r->ncounters + r->ntags; i++)
			fprintf(out, " %16llu", (unsigned long long)w[3 + i]);
		fputc('\n', out);
	}
}

static int cmd_shim_dump(int argc, char **argv)
{
	struct shim_opts o = { .limit = DEFAULT_DUMP_LIMIT };
	struct shim_result *r = NULL;
	shim_config_init(&o.cfg);
	int n = parse_args(&o, argc, argv, true);
	if (n < 0)
		return n == PARSE_OPT_HELP ? 0 : 2;
	if (n != 1) {
		cli_error("'spent shim dump' needs exactly one FILE: spent shim dump FILE [--json]");
		return 2;
	}
	int err = shim_file_read(argv[0], &r);
	if (err) {
		cli_error("cannot read Shim sample file '%s': %s", argv[0],
			  err == -EBADMSG ? "corrupt or truncated (bad checksum or lengths)"
			  : err == -EPROTO ? "unknown format version: use a newer spent"
					   : strerror(-err));
		return 1;
	}
	if (o.json) {
		json_summary(stdout, r);
		json_signals(stdout, r, NULL);
	} else {
		human_summary(stdout, r);
		human_counters(stdout, r);
		human_histograms(stdout, r, o.histogram);
	}
	print_samples(stdout, r, o.json, o.limit);
	shim_result_free(r);
	return 0;
}

int cmd_shim(int argc, char **argv)
{
	struct shim_opts o;
	struct shim_result *r = NULL;
	char err[768] = "";
	int rc;

	if (argc > 1 && strcmp(argv[1], "dump") == 0)
		return cmd_shim_dump(argc - 1, argv + 1);
	memset(&o, 0, sizeof(o));
	shim_config_init(&o.cfg);
	o.limit = DEFAULT_DUMP_LIMIT;	/* shown by -h */
	int n = parse_args(&o, argc, argv, false);
	if (n < 0)
		return n == PARSE_OPT_HELP ? 0 : 2;
	if (o.limit != DEFAULT_DUMP_LIMIT) {	/* it would be ignored without a word */
		cli_error("--limit is an option of 'spent shim dump FILE'");
		return 2;
	}
	if (n == 0) {
		cli_error("no command to observe: spent shim [OPTIONS] -- CMD");
		return 2;
	}
	if (!o.cfg.nsigs && !o.cfg.nevents) {
		cli_error("nothing to observe: give --tag, --counter, --rate or -e");
		return 2;
	}
	if (o.histogram && !tag_spec_known(&o.cfg, o.histogram)) {
		cli_error("--histogram '%s' names no tag: add --tag %s=SYMBOL", o.histogram, o.histogram);
		return 2;
	}
	if (o.output && cli_check_output(o.output))	/* before the run, not after it */
		return 2;
	if (!o.output)
		o.cfg.buffer_samples = 0;	/* the log only goes to -o */
	o.cfg.argv = argv;
	if (find_preload(&o))
		return 2;
	/* a command that cannot run exits as the shell's would (and stat's, record's): 127 when
	 * there is none by that name, 126 when it is not runnable; it was 2, a usage error */
	char exe[PATH_MAX];
	int ferr = shim_find_command(argv[0], exe, sizeof(exe), err, sizeof(err));
	if (ferr == -EACCES || ferr == -ENOENT) {
		cli_error("%s", err);
		return ferr == -EACCES ? 126 : 127;
	}
	rc = shim_run(&o.cfg, &r, err, sizeof(err));
	if (rc) {
		cli_error("%s", err[0] ? err : strerror(-rc));
		return rc == -ENOENT || rc == -EINVAL || rc == -ENOEXEC ? 2 : 1;
	}
	if (o.json) {
		json_summary(stdout, r);
		json_signals(stdout, r, o.histogram);
	} else {
		human_summary(stdout, r);
		human_counters(stdout, r);
		human_histograms(stdout, r, o.histogram);
	}
	rc = r->exit_status;
	int werr = o.output ? shim_file_write(o.output, r) : 0;
	if (werr) {
		cli_error("cannot write '%s': %s", o.output, outfile_strerror(werr));
		rc = 1;
	}
	shim_result_free(r);
	return rc;
}
