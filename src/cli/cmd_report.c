/* cli/cmd_report.c - `spent report` (dcpiprof): a profile directory by image, function, line or
 * instruction, several events side by side with ratio columns, inclusive counts from stacks,
 * JSON/CSV, pprof/folded/flame-graph exports, --diff against another profile, and the
 * who-and-when table and selection (--sort, --comm/--pid/--tid/--image/--time: report_who.c). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/profile_input.h"
#include "cli/report_chains.h"
#include "cli/report_html.h"
#include "cli/report_who.h"
#include "core/demangle.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/path.h"
#include "core/text.h"
#include "plot/flamegraph.h"
#include "profile/export.h"

struct report_opts {
	const char *input;
	struct profile_selection sel;	/* --epoch, --since, --until */
	int by;			/* enum report_by */
	struct opt_string_list events;	/* every -e, in order */
	char *events_joined;	/* the -e lists as one "a,b,c" */
	int children;
	const char *call_graph;	/* -g: caller|callee, a threshold %, perf's print type */
	struct chain_view chains;	/* what -g asks for */
	int json, csv;
	enum out_fmt fmt;
	const char *pprof;
	int folded;
	const char *flamegraph;
	struct report_html html;	/* --html FILE, --html-plot PLOT... */
	const char *diff;
	long limit;		/* -1: default */
	double percent_limit;	/* rows under this % of the first event's samples are not shown */
	int stdio, show_nr;	/* perf's --stdio and -n: what the table always is */
	int force;		/* accepted for old scripts: outputs are replaced anyway */
	int demangle;		/* --no-demangle: names as in the symbol table */
	int folded_root, folded_kernel;	/* folded stacks: program root frame, _[k] marks */
	struct report_who who;	/* --sort and the comm/pid/tid/image/time selection */
};

static const char *const report_usage[] = {
	"spent report [-i DIR] [--by image|function|line|instruction] [-e EVS]... [--children] "
	"[--limit N] [--json|--csv]",
	"spent report [-i DIR] [-e EVS] --pprof FILE|- | --folded | --flamegraph FILE.svg|-",
	"spent report [-i DIR] [-e EVS] --html FILE.html [--html-plot FILE.svg|FILE.png]...",
	"spent report [-i DIR] [--by VIEW] --diff OTHER_DIR",
	"spent report [-i DIR] --sort comm,pid,tid,image,function [--comm NAMES] [--pid PIDS] "
	"[--tid TIDS] [--image IMAGES] [--time START,END] [--json|--csv]",
	NULL,
};
static const struct parse_usage report_pu = {
	"report", report_usage,
	"show a profile directory by image, function, line or instruction (dcpiprof)",
	"Prints the samples of a profile directory written by spent record or the daemon, several "
	"events side by side with ratio columns, inclusive counts from call stacks, or exports them "
	"as pprof, folded stacks or an SVG flame graph ('-' writes to standard output).",
};

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	const struct option opts[] = {
		OPT_STRING('i', "input", &o->input, "DIR", "the profile directory"),
		PROFILE_SELECTION_OPTIONS(&o->sel),
		OPT_CHOICE(0, "by", &o->by, "image|function|line|instruction", "what one row is"),
		OPT_STRING_LIST('e', "event", &o->events, "EV,...",
				"events to show, in this order (repeatable; default: all)"),
		OPT_BOOL(0, "children", &o->children, "add inclusive counts from call stacks"),
		{ .type = OPTION_STRING, .short_name = 'g', .long_name = "call-graph",
		  .value = &o->call_graph, .argh = "caller|callee[,PCT]",
		  .help = "under each function, the call chains of its samples, from the root (caller) "
			  "or from it (callee); chains under PCT% (0.5) left out",
		  .defval = "off", .flags = PARSE_OPT_OPTARG, .defarg = "caller" },
		{ .type = OPTION_INT, .long_name = "limit", .value = &o->limit, .argh = "N",
		  .help = "show the first N rows", .defval = "40 in the table, all in JSON/CSV",
		  .min = 1, .max = LONG_MAX },
		{ .type = OPTION_DOUBLE, .long_name = "percent-limit", .value = &o->percent_limit,
		  .argh = "PCT", .help = "hide rows under PCT% of the first event's samples (perf's)",
		  .defval = "0: none", .min = 0, .max = 100 },
		OPT_BOOL(0, "json", &o->json, "one JSON object per row and event"),
		OPT_BOOL(0, "csv", &o->csv, "CSV, one line per row and event"),
		OPT_STRING(0, "pprof", &o->pprof, "FILE", "write a pprof profile ('-': stdout)"),
		OPT_BOOL(0, "folded", &o->folded, "print folded stacks (flamegraph.pl input)"),
		OPT_BOOL(0, "folded-root", &o->folded_root,
			 "folded stacks and flame graph: the program's name as the root frame"),
		OPT_BOOL(0, "folded-kernel", &o->folded_kernel,
			 "folded stacks and flame graph: kernel frames marked _[k]"),
		OPT_STRING(0, "flamegraph", &o->flamegraph, "FILE.svg",
			   "write an SVG flame graph ('-': stdout)"),
		OPT_STRING(0, "html", &o->html.path, "FILE.html",
			   "write one self-contained HTML page: tables, flame graph, time heat map"),
		OPT_STRING_LIST(0, "html-plot", &o->html.plot_paths, "FILE",
				"embed an SVG or PNG plot in the --html page (repeatable)"),
		OPT_STRING(0, "diff", &o->diff, "OTHER_DIR", "compare with another profile"),
		OPT_BOOL(0, "demangle", &o->demangle,
			 "show C++ and Rust names demangled (--no-demangle: as in the binary)"),
		{ .type = OPTION_BOOL, .short_name = 'f', .long_name = "force", .value = &o->force,
		  .help = "accepted for old scripts", .flags = PARSE_OPT_HIDDEN },
		{ .type = OPTION_BOOL, .long_name = "stdio", .value = &o->stdio,
		  .help = "perf's: the report is text anyway", .flags = PARSE_OPT_HIDDEN },
		{ .type = OPTION_BOOL, .short_name = 'n', .long_name = "show-nr-samples",
		  .value = &o->show_nr, .help = "perf's: sample counts are always shown",
		  .flags = PARSE_OPT_HIDDEN },
		REPORT_WHO_OPTIONS(&o->who),
		OPT_END(),
	};
	argc = parse_options_join_optarg(argc, argv, opts, "call-graph", report_chains_is_arg);
	int n = parse_options(argc, argv, opts, &report_pu, 0);
	if (n < 0)
		return n;
	if (n > 0)
		return parse_options_error(&report_pu, "unexpected argument '%s': give the profile with -i",
					   argv[0]);
	if (o->json && o->csv)
		return parse_options_error(&report_pu, "--json and --csv cannot be combined: choose one");
	if (o->call_graph && report_chains_parse(o->call_graph, &o->chains))
		return parse_options_error(&report_pu, "bad call graph '%s': give caller or callee, and a "
					   "threshold in percent (perf's graph, flat, folded and none too)",
					   o->call_graph);
	if (o->chains.on && (o->csv || o->by != REPORT_BY_FUNCTION || o->who.sort || o->diff || o->pprof ||
			  o->folded || o->flamegraph || o->html.path))
		return parse_options_error(&report_pu, "-g shows call chains under the functions of the "
					   "table or --json: not with --by image|line|instruction, --csv, "
					   "--sort, --diff or an export");
	demangle_set_enabled(o->demangle);
	if (profile_selection_check(&o->sel, &report_pu))
		return PARSE_OPT_ERROR;
	if (o->who.time && (o->sel.since || o->sel.until))
		return parse_options_error(&report_pu, "--time and --since/--until both give the time "
					   "window: choose one");
	o->fmt = o->json ? OUT_JSON : o->csv ? OUT_CSV : OUT_TABLE;
	if (o->pprof && o->flamegraph && !strcmp(o->pprof, "-") && !strcmp(o->flamegraph, "-"))
		return parse_options_error(&report_pu, "--pprof - and --flamegraph - both write to "
					   "standard output: choose one");
	if ((o->folded && o->pprof && !strcmp(o->pprof, "-")) ||
	    (o->folded && o->flamegraph && !strcmp(o->flamegraph, "-")))
		return parse_options_error(&report_pu, "--folded prints to standard output: write the "
					   "other export to a file");
	if (o->events.n && !(o->events_joined = cli_join_list(&o->events)))
		return parse_options_error(&report_pu, "out of memory");
	if (o->who.sort && (o->pprof || o->folded || o->flamegraph || o->html.path || o->diff ||
			    o->children))
		return parse_options_error(&report_pu, "--sort is a table of its own: it cannot be "
					   "combined with --children, --diff or an export");
	if (o->diff && report_who_active(&o->who))
		return parse_options_error(&report_pu, "--diff compares whole profiles: it cannot be "
					   "combined with --comm, --pid, --tid, --image, --symbols or --time");
	return report_who_check(&o->who, &report_pu);
}

/* Profile event indices named in LIST (or all events). */
static int select_events(const struct spent_profile *p, const char *list, uint32_t **out, size_t *n)
{
	uint32_t *ev = calloc(spent_profile_nevents(p) + 64, sizeof(*ev));
	size_t k = 0;
	if (!ev)
		return -ENOMEM;
	if (!list) {
		for (uint32_t i = 0; i < spent_profile_nevents(p); i++)
			ev[k++] = i;
	} else {
		char *dup = strdup(list), *save = NULL;
		for (char *t = dup ? strtok_r(dup, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
			/* NAME selects every event of that name (a database sampled at two rates
			 * holds it twice, labelled NAME@PERIOD), NAME@PERIOD the one */
			char *at = strchr(t, '@'), *end = NULL;
			unsigned long long period = at ? strtoull(at + 1, &end, 10) : 0;
			if (at)
				*at = 0;
			int e = -1;
			for (uint32_t i = 0; i < spent_profile_nevents(p) && k < 64; i++) {
				const struct spent_profile_event *pe = spent_profile_event_get(p, i);
				if (strcmp(pe->name, t) != 0 || (at && pe->period != period))
					continue;
				ev[k++] = i;
				e = (int)i;
			}
			if (at) {
				*at = '@';
				if (end == at + 1 || (*end && strcmp(end, "Hz") != 0))
					e = -1;
			}
			if (e < 0 || k == 64) {
				cli_error("event '%s' is not in this profile: it holds %s%s", t,
					  spent_profile_nevents(p) ? spent_profile_event_get(p, 0)->name : "no events",
					  spent_profile_nevents(p) > 1 ? " and others (see spent report)" : "");
				free(dup);
				free(ev);
				return -ENOENT;
			}
		}
		free(dup);
	}
	if (!k) {
		free(ev);
		cli_error("the profile holds no samples");
		return -ENOENT;
	}
	*out = ev;
	*n = k;
	return 0;
}

/* Where ROW is: its image and symbol, then its offset in the instruction view (INSTR) and its
 * file and line in the line and instruction views (LINES). One spelling for the report and
 * --diff, whose rows must be told apart the same way. In a table, what follows the symbol: */
static void table_row_place(const struct report_row *row, bool lines, bool instr)
{
	if (instr)
		printf(" @0x%llx", (unsigned long long)row->offset);
	char shown[TEXT_SHOWN_MAX];
	if (lines && row->file)
		printf("  (%s:%d)", text_for_terminal(path_base_name(row->file), shown, sizeof(shown)),
		       row->line);
}

static void json_row_place(struct json_writer *w, const struct report_row *row, bool lines,
			   bool instr)
{
	json_kstr(w, "image", row->image);
	json_kstr(w, "symbol", row->symbol);
	if (lines) {
		json_kstr(w, "file", row->file ? row->file : "");
		json_ki64(w, "line", row->line);
	}
	if (instr) {
		char off[32];
		snprintf(off, sizeof(off), "0x%llx", (unsigned long long)row->offset);
		json_kstr(w, "offset", off);
	}
}

/* The same as CSV fields; their header is "image,symbol," then csv_place_header() */
static void csv_row_place(const struct report_row *row, bool lines, bool instr)
{
	cli_csv_field(stdout, row->image);
	putchar(',');
	cli_csv_field(stdout, row->symbol);
	if (lines) {
		putchar(',');
		cli_csv_field(stdout, row->file ? row->file : "");
		printf(",%d", row->line);
	}
	if (instr)
		printf(",0x%llx", (unsigned long long)row->offset);
}

static const char *csv_place_header(bool lines, bool instr)
{
	return instr ? "file,line,offset," : lines ? "file,line," : "";
}

/* Event E's label in the columns: its name, or NAME@PERIOD when another selected event has the
 * same name (a daemon database sampled at two rates holds cpu-clock twice: the columns and the
 * ratio between them read "cpu-clock % cpu-clock %" and "cpu-clock/cpu-clock"). */
static const char *event_label(const struct spent_profile *p, const struct report *r, size_t e,
			       char *buf, size_t len)
{
	const struct spent_profile_event *ev = spent_profile_event_get(p, r->events[e]);
	for (size_t k = 0; k < r->cfg.nevents; k++) {
		if (k == e || strcmp(spent_profile_event_get(p, r->events[k])->name, ev->name) != 0)
			continue;
		snprintf(buf, len, "%s@%llu%s", ev->name, (unsigned long long)ev->period,
			 ev->flags & SPENT_PROFILE_EV_FREQ ? "Hz" : "");
		return buf;
	}
	return ev->name;
}

/* ROW's inclusive count of event E: its own without stacks (children = self). */
static uint64_t row_inclusive(const struct report *r, const struct report_row *row, size_t e)
{
	return r->have_stacks ? row->incl[e] : row->self[e];
}

/* Whether ROW is at or above MIN_PCT of the first event's samples (its inclusive count with
 * --children, what the rows are sorted by): --percent-limit. */
static bool row_shown(const struct report *r, const struct report_row *row, double min_pct)
{
	uint64_t v = r->cfg.children ? row_inclusive(r, row, 0) : row->self[0];
	return min_pct <= 0 || cli_pct(v, r->totals[0]) >= min_pct;
}

/* The rows a table or --json shows: down to MIN_PCT; without --children not the rows only
 * stacks made (-g: callers that took no sample themselves), which would read 0 samples. */
static bool row_listed(const struct report *r, const struct report_row *row, double min_pct)
{
	if (!r->cfg.children) {
		bool any = false;
		for (size_t e = 0; e < r->cfg.nevents; e++)
			any |= row->self[e] != 0;
		if (!any)
			return false;
	}
	return row_shown(r, row, min_pct);
}

static void print_table(const struct spent_profile *p, const struct report *r, long limit,
			double min_pct, const struct chain_view *cv)
{
	size_t nev = r->cfg.nevents;
	bool lines = r->cfg.by == REPORT_BY_LINE || r->cfg.by == REPORT_BY_INSTRUCTION;
	for (size_t e = 0; e < nev; e++) {
		const struct spent_profile_event *ev = spent_profile_event_get(p, r->events[e]);
		uint64_t lost = spent_profile_unknown_count(p, r->events[e], SPENT_PROFILE_UNK_LOST);
		printf("# %llu samples of '%s' (%s %llu)%s", (unsigned long long)r->totals[e], ev->name,
		       ev->flags & SPENT_PROFILE_EV_FREQ ? "frequency Hz" : "period",
		       (unsigned long long)ev->period, lost ? "" : "\n");
		if (lost)
			printf(", %llu lost\n", (unsigned long long)lost);
	}
	if (r->cfg.children && !r->have_stacks)
		printf("# no call stacks in this profile (record with -g): children = self\n");
	else if (r->cfg.chains && !r->nchains)
		printf("# no call stacks in this profile (record with -g): no call chains to show\n");
	/* with several events each column is labelled with its event (and each ratio with its two
	 * events), as wide as the label */
	int w[64], rw[64];
	char rl[64][200], lab[64][96];
	for (size_t e = 0; e < nev; e++) {
		const char *name = event_label(p, r, e, lab[e], sizeof(lab[e]));
		w[e] = nev > 1 && (int)strlen(name) > 9 ? (int)strlen(name) : 9;
		snprintf(rl[e], sizeof(rl[e]), "%s/%s", name, event_label(p, r, 0, lab[0], sizeof(lab[0])));
		rw[e] = (int)strlen(rl[e]) > 10 ? (int)strlen(rl[e]) : 10;
	}
	if (r->cfg.children)
		printf("%9s ", "children");
	for (size_t e = 0; e < nev; e++)
		printf("%*s %8s ", w[e], nev > 1 ? event_label(p, r, e, lab[e], sizeof(lab[e]))
				   : r->cfg.children ? "self" : "samples", "%");
	for (size_t e = 1; e < nev; e++)
		printf("%*s ", rw[e], rl[e]);
	printf(" %-22s %s%s\n", "image", r->cfg.by == REPORT_BY_IMAGE ? "" : "symbol",
	       lines ? "  (file:line)" : "");
	for (size_t i = 0; i < r->nrows && (limit < 0 || (long)i < limit); i++) {
		const struct report_row *row = &r->rows[i];
		char shown_image[TEXT_SHOWN_MAX], shown_sym[TEXT_SHOWN_MAX];
		if (!row_listed(r, row, min_pct))
			break;	/* sorted: the rest are smaller */
		if (r->cfg.children)
			printf("%8.2f%% ", cli_pct(row_inclusive(r, row, 0), r->totals[0]));
		for (size_t e = 0; e < nev; e++)
			printf("%*llu %7.2f%% ", w[e], (unsigned long long)row->self[e],
			       cli_pct(row->self[e], r->totals[e]));
		for (size_t e = 1; e < nev; e++)
			if (row->self[0])
				printf("%*.4f ", rw[e], (double)row->self[e] / (double)row->self[0]);
			else
				printf("%*s ", rw[e], "-");
		printf(" %-22s %s",
		       text_for_terminal(path_base_name(row->image), shown_image, sizeof(shown_image)),
		       text_for_terminal(row->symbol, shown_sym, sizeof(shown_sym)));
		table_row_place(row, lines, r->cfg.by == REPORT_BY_INSTRUCTION);
		printf("\n");
		if (r->cfg.chains)
			report_chains_print(r, row, cv);
	}
}

static void print_rows_machine(const struct spent_profile *p, const struct report *r, enum out_fmt fmt,
			       long limit, double min_pct, const struct chain_view *cv)
{
	bool lines = r->cfg.by == REPORT_BY_LINE || r->cfg.by == REPORT_BY_INSTRUCTION;
	bool instr = r->cfg.by == REPORT_BY_INSTRUCTION, ch = r->cfg.children;
	if (fmt == OUT_CSV)
		printf("image,symbol,%sevent,samples,percent%s\n", csv_place_header(lines, instr),
		       ch ? ",children,children_percent" : "");
	for (size_t i = 0; i < r->nrows && (limit < 0 || (long)i < limit); i++) {
		const struct report_row *row = &r->rows[i];
		if (!row_listed(r, row, min_pct))
			break;
		for (size_t e = 0; e < r->cfg.nevents; e++) {
			char lab[96];
			const char *evn = event_label(p, r, e, lab, sizeof(lab));
			uint64_t inc = row_inclusive(r, row, e);
			if (fmt == OUT_JSON) {
				struct json_writer w;
				json_init(&w, stdout);
				json_object_begin(&w);
				json_row_place(&w, row, lines, instr);
				json_kstr(&w, "event", evn);
				json_ku64(&w, "samples", row->self[e]);
				json_kdouble(&w, "percent", cli_pct(row->self[e], r->totals[e]), 4);
				if (ch) {
					json_ku64(&w, "children", inc);
					json_kdouble(&w, "children_percent", cli_pct(inc, r->totals[e]), 4);
				}
				if (r->cfg.chains && e == 0)
					report_chains_json(&w, r, row, cv);
				json_object_end(&w);
				json_newline(&w);
			} else {
				csv_row_place(row, lines, instr);
				putchar(',');
				cli_csv_field(stdout, evn);
				printf(",%llu,%.4f", (unsigned long long)row->self[e], cli_pct(row->self[e], r->totals[e]));
				if (ch)
					printf(",%llu,%.4f", (unsigned long long)inc, cli_pct(inc, r->totals[e]));
				printf("\n");
			}
		}
	}
}

static int do_exports(const struct report_opts *o, const struct spent_profile *p, struct symbols *sym,
		      const uint32_t *evs, size_t nev)
{
	int err;
	if (o->pprof) {
		if ((err = pprof_write(p, sym, evs, nev, o->pprof))) {
			if (!strcmp(o->pprof, "-"))
				cli_stdout_error(err);
			else
				cli_error("cannot write pprof file '%s': %s", o->pprof, outfile_strerror(err));
			return err;
		}
		if (strcmp(o->pprof, "-"))
			fprintf(stderr, "spent: wrote pprof profile '%s' (go tool pprof -top %s)\n",
				o->pprof, o->pprof);
	}
	if (o->folded || o->flamegraph) {
		struct folded *f = NULL;
		unsigned flags = (o->folded_root ? FOLDED_ROOT : 0) |
				 (o->folded_kernel ? FOLDED_KERNEL_MARKS : 0);
		if ((err = folded_build(p, sym, evs[0], flags, &f))) {
			cli_error("cannot fold stacks: %s", strerror(-err));
			return err;
		}
		if (o->folded) {
			errno = 0;
			if ((err = folded_write(f, stdout)) == 0 && fflush(stdout) != 0)
				err = errno ? -errno : -EIO;
			if (err)
				cli_stdout_error(err);
		}
		if (o->flamegraph && !err) {
			char title[300];
			snprintf(title, sizeof(title), "%s: %llu samples", spent_profile_event_get(p, evs[0])->name,
				 (unsigned long long)f->total);
			if ((err = flamegraph_write(f, title, o->flamegraph)) && !strcmp(o->flamegraph, "-"))
				cli_stdout_error(err);
			else if (err)
				cli_error("cannot write flame graph '%s': %s", o->flamegraph, outfile_strerror(err));
			else if (strcmp(o->flamegraph, "-"))
				fprintf(stderr, "spent: wrote flame graph '%s'\n", o->flamegraph);
		}
		folded_free(f);
		return err;
	}
	return 0;
}

struct diff_row {
	const struct report_row *a, *b;
	double pa, pb;
};

static int diff_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double da = fabs(a->pa - a->pb), db = fabs(b->pa - b->pb);
	return da > db ? -1 : da < db;
}

static int do_diff(const struct report_opts *o, const struct spent_profile *pa, const struct report *ra)
{
	struct spent_profile *pb = NULL;
	struct report *rb = NULL;
	struct diff_row *rows = NULL;
	struct symbols *symb = NULL;
	size_t skipped, n = 0;
	const char *evn = spent_profile_event_get(pa, ra->events[0])->name;
	int err = profile_input_load(o->diff, &pb, &skipped);
	if (err)
		return err;
	/* OTHER's kernel samples are named by its own saved kernel symbols: a profile keeps only
	 * the ones its samples need, and THIS one's named them after its nearest (__pfx_d_path) */
	if ((err = symbols_new(&symb)) || (err = profile_input_kallsyms(symb, o->diff))) {
		cli_error("cannot read the kernel symbols of '%s': %s", o->diff, strerror(-err));
		goto out;
	}
	int eb = spent_profile_event_find(pb, evn);
	if (eb < 0) {
		cli_error("event '%s' is not in '%s': diff needs the same event in both", evn, o->diff);
		err = -ENOENT;
		goto out;
	}
	uint32_t ebu = (uint32_t)eb;
	struct report_config cfg = { .by = o->by, .events = &ebu, .nevents = 1 };
	if ((err = report_build(pb, symb, &cfg, &rb)))
		goto out;
	rows = calloc(ra->nrows + rb->nrows + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ra->nrows; i++) {
		long j = report_find(rb, ra->rows[i].key);
		rows[n++] = (struct diff_row){ &ra->rows[i], j >= 0 ? &rb->rows[j] : NULL,
					       cli_pct(ra->rows[i].self[0], ra->totals[0]),
					       j >= 0 ? cli_pct(rb->rows[j].self[0], rb->totals[0]) : 0 };
	}
	for (size_t j = 0; j < rb->nrows; j++)
		if (report_find(ra, rb->rows[j].key) < 0)
			rows[n++] = (struct diff_row){ NULL, &rb->rows[j], 0, cli_pct(rb->rows[j].self[0], rb->totals[0]) };
	qsort(rows, n, sizeof(*rows), diff_cmp);
	bool lines = o->by == REPORT_BY_LINE || o->by == REPORT_BY_INSTRUCTION;
	bool instr = o->by == REPORT_BY_INSTRUCTION;
	if (o->fmt == OUT_TABLE)
		printf("# '%s': %s %llu samples, other %llu samples\n%8s %8s %8s  %-22s %s\n", evn,
		       o->input, (unsigned long long)ra->totals[0], (unsigned long long)rb->totals[0],
		       "this%", "other%", "delta", "image", ra->cfg.by == REPORT_BY_IMAGE ? "" : "symbol");
	else if (o->fmt == OUT_CSV)
		printf("image,symbol,%sevent,samples,percent,other_samples,other_percent,delta\n",
		       csv_place_header(lines, instr));
	long limit = o->limit < 0 && o->fmt == OUT_TABLE ? 40 : o->limit;	/* as the report */
	for (size_t i = 0; i < n && (limit < 0 || (long)i < limit); i++) {
		const struct report_row *r = rows[i].a ? rows[i].a : rows[i].b;
		uint64_t sa = rows[i].a ? rows[i].a->self[0] : 0, sb = rows[i].b ? rows[i].b->self[0] : 0;
		double d = rows[i].pb - rows[i].pa;
		if (o->fmt == OUT_TABLE && d > -0.005 && d < 0.005)
			d = 0;	/* not "-0.00" */
		if (o->fmt == OUT_TABLE) {
			char shown_image[TEXT_SHOWN_MAX], shown_sym[TEXT_SHOWN_MAX];
			printf("%7.2f%% %7.2f%% %+7.2f  %-22s %s", rows[i].pa, rows[i].pb, d,
			       text_for_terminal(path_base_name(r->image), shown_image, sizeof(shown_image)),
			       text_for_terminal(r->symbol, shown_sym, sizeof(shown_sym)));
			table_row_place(r, lines, instr);
			printf("\n");
		} else if (o->fmt == OUT_JSON) {
			struct json_writer w;
			json_init(&w, stdout);
			json_object_begin(&w);
			json_row_place(&w, r, lines, instr);
			json_kstr(&w, "event", evn);
			json_ku64(&w, "samples", sa);
			json_kdouble(&w, "percent", rows[i].pa, 4);
			json_ku64(&w, "other_samples", sb);
			json_kdouble(&w, "other_percent", rows[i].pb, 4);
			json_kdouble(&w, "delta", d, 4);
			json_object_end(&w);
			json_newline(&w);
		} else {
			csv_row_place(r, lines, instr);
			putchar(',');
			cli_csv_field(stdout, evn);
			printf(",%llu,%.4f,%llu,%.4f,%.4f\n", (unsigned long long)sa, rows[i].pa,
			       (unsigned long long)sb, rows[i].pb, d);
		}
	}
	err = skipped ? 1 : 0;
out:
	free(rows);
	report_free(rb);
	symbols_free(symb);
	spent_profile_free(pb);
	return err;
}

/* A report never shows addresses for a binary that had names without saying why. */
static void warn_missing_names(const struct spent_profile *p, struct symbols *sym)
{
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		const struct spent_profile_image *img = spent_profile_image_get(p, i);
		const char *cache_why, *why = img->path[0] == '[' ? NULL :
			symbols_names_missing(sym, img, &cache_why);
		if (why)
			cli_warn("%s: no function names (addresses shown): %s%s%s", img->path, why,
				 cache_why[0] ? ", and " : "", cache_why);
	}
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .input = "spent.profile", .by = REPORT_BY_FUNCTION, .limit = -1,
				  .demangle = 1 };
	struct spent_profile *p = NULL;
	struct symbols *sym = NULL;
	struct report *r = NULL;
	uint32_t *evs = NULL;
	size_t nev = 0, skipped = 0;
	int rc = 2, err;
	if ((err = parse_args(argc, argv, &o)) < 0) {
		rc = err == PARSE_OPT_HELP ? 0 : 2;
		goto out;
	}
	/* an export written into the profile read would destroy it (--flamegraph DIR/meta) */
	if ((o.pprof && strcmp(o.pprof, "-") && cli_check_output_from(o.pprof, o.input)) ||
	    (o.flamegraph && strcmp(o.flamegraph, "-") && cli_check_output_from(o.flamegraph, o.input)) ||
	    report_html_prepare(&o.html, o.input) ||
	    cli_check_outputs_distinct((const char *const[]){ o.pprof, o.flamegraph, o.html.path },
				       (const char *const[]){ "--pprof", "--flamegraph", "--html" }, 3))
		goto out;
	if (profile_input_load_selected(o.input, &o.sel, &p, &skipped)) {
		rc = 1;
		goto out;
	}
	if (!spent_profile_nevents(p)) {
		cli_error("no readable samples in profile '%s'%s", o.input,
			  skipped ? ": every profile file was corrupt" : "");
		rc = 1;
		goto out;
	}
	/* symbols first: --symbols selects samples by their leaf's name */
	if (symbols_new(&sym) || profile_input_kallsyms(sym, o.input)) {
		rc = 1;
		goto out;
	}
	int sel = report_who_select(&o.who, o.input, sym, &p);
	if (sel) {
		rc = sel == -EINVAL ? 2 : 1;	/* a malformed --time, as other bad options */
		goto out;
	}
	if (select_events(p, o.events_joined, &evs, &nev)) {
		rc = 1;
		goto out;
	}
	if (o.by != REPORT_BY_IMAGE)
		warn_missing_names(p, sym);
	if (o.pprof || o.folded || o.flamegraph || o.html.path) {
		rc = do_exports(&o, p, sym, evs, nev) ||
		     (o.html.path && report_html_write(&o.html, p, sym, evs, nev, o.input)) ? 1 :
		     skipped ? 1 : 0;
		goto out;
	}
	if (o.who.nkeys) {
		rc = report_who_print(&o.who, p, sym, evs, nev, o.fmt, o.limit < 0 && o.fmt == OUT_TABLE ?
				      40 : o.limit) ? 1 : skipped ? 1 : 0;
		goto out;
	}
	struct report_config cfg = { .by = o.by, .events = evs, .nevents = nev, .children = o.children,
				     .chains = o.chains.on };
	if ((err = report_build(p, sym, &cfg, &r))) {
		cli_error("cannot build the report: %s", strerror(-err));
		rc = 1;
		goto out;
	}
	if (o.diff) {
		/* a corrupt file on either side is exit 1, as without --diff */
		rc = do_diff(&o, p, r) || skipped ? 1 : 0;
		goto out;
	}
	if (o.fmt == OUT_TABLE)
		print_table(p, r, o.limit < 0 ? 40 : o.limit, o.percent_limit, &o.chains);
	else
		print_rows_machine(p, r, o.fmt, o.limit, o.percent_limit, &o.chains);
	rc = skipped ? 1 : 0;
out:
	report_free(r);
	symbols_free(sym);
	spent_profile_free(p);
	free(evs);
	free(o.events_joined);
	opt_string_list_release(&o.events);
	report_html_release(&o.html);
	report_who_release(&o.who);
	profile_selection_release(&o.sel);
	return rc;
}
