/* cli/stat_output.c - spent stat's output: perf-like aligned table, JSON lines, CSV; derived
 * metrics (CPUs utilized, rates, IPC, miss ratios) and the --costs table. */
#include <math.h>
#include <string.h>

#include "analysis/costs.h"
#include "cli/cli.h"
#include "cli/stat.h"
#include "core/json.h"
#include "core/text.h"

static const struct stat_row *row_named(const struct stat_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].supported && strcmp(rows[i].ev->name, name) == 0)
			return &rows[i];
	return NULL;
}

static double row_value(const struct stat_row *r)
{
	return r->use_mean ? r->mean : count_value_scaled(&r->v);
}

/* The value as shown: the clocks count ns and are shown in msec, as perf does. */
static double shown_value(const struct stat_row *r)
{
	double v = row_value(r);
	return strcmp(r->ev->unit, "msec") == 0 ? v / 1e6 : v;
}

/* A derived metric for row R, from the other rows of the same set. */
static bool derived_metric(const struct stat_row *rows, size_t n, const struct stat_row *r,
			   double elapsed_ns, double *value, const char **unit)
{
	const char *name = r->ev->name;
	/* the CPU time rates are per: task-clock, else cpu-clock (-a), as perf takes them */
	const struct stat_row *tc = row_named(rows, n, "task-clock");
	const struct stat_row *other;
	double v = row_value(r);
	if (!tc)
		tc = row_named(rows, n, "cpu-clock");
	if ((strcmp(name, "task-clock") == 0 || strcmp(name, "cpu-clock") == 0) && elapsed_ns > 0) {
		*value = v / elapsed_ns;
		*unit = "CPUs utilized";
		return true;
	}
	if (strcmp(name, "instructions") == 0 && (other = row_named(rows, n, "cycles")) && row_value(other) > 0) {
		*value = v / row_value(other);
		*unit = "insn per cycle";
		return true;
	}
	if (strcmp(name, "cycles") == 0 && tc && row_value(tc) > 0) {
		*value = v / row_value(tc);
		*unit = "GHz";
		return true;
	}
	if (strcmp(name, "branch-misses") == 0 && (other = row_named(rows, n, "branches")) && row_value(other) > 0) {
		*value = 100.0 * v / row_value(other);
		*unit = "% of all branches";
		return true;
	}
	if (strcmp(name, "cache-misses") == 0 && (other = row_named(rows, n, "cache-references")) &&
	    row_value(other) > 0) {
		*value = 100.0 * v / row_value(other);
		*unit = "% of all cache refs";
		return true;
	}
	if (strcmp(name, "L1-dcache-load-misses") == 0 && (other = row_named(rows, n, "L1-dcache-loads")) &&
	    row_value(other) > 0) {
		*value = 100.0 * v / row_value(other);
		*unit = "% of all L1-dcache accesses";
		return true;
	}
	if ((r->ev->cls == SPENT_EV_SOFTWARE || r->ev->cls == SPENT_EV_TRACEPOINT) &&
	    strcmp(r->ev->unit, "msec") != 0 && tc && row_value(tc) > 0) {
		*value = v / (row_value(tc) / 1e9);
		*unit = "/sec";
		return true;
	}
	return false;
}

static void stat_print_header(struct stat_out *o)
{
	const struct stat_opts *opts = o->opts;
	if (o->header_done)
		return;
	o->header_done = true;
	if (o->format == STAT_CSV) {
		for (const char *h = "interval,event,value,unit,running_pct,counter_value,enabled_ns,"
				     "running_ns,thread,pid,comm,cpu,metric_value,metric_unit,stddev_pct,"
				     "aggregate,aggregate_cpus\n";
		     *h; h++)
			fputc(*h == ',' ? opts->sep : *h, o->f);
		return;
	}
	if (o->format != STAT_TABLE)
		return;
	fprintf(o->f, "\n Performance counter stats for ");
	if (opts->cpu_list)	/* as perf: the CPUs as given to -C */
		fprintf(o->f, "'CPU(s) %s'", opts->cpu_list);
	else if (opts->system_wide)
		fprintf(o->f, "'system wide'");
	else if (opts->pid > 0)
		fprintf(o->f, "process id '%ld'", opts->pid);
	else if (opts->tid > 0)
		fprintf(o->f, "thread id '%ld'", opts->tid);
	else {
		char shown[TEXT_SHOWN_MAX];
		fputc('\'', o->f);
		for (int i = 0; i < opts->argc; i++)
			fprintf(o->f, "%s%s", i ? " " : "", text_for_terminal(opts->argv[i], shown, sizeof(shown)));
		fputc('\'', o->f);
	}
	if (opts->repeat > 1)
		fprintf(o->f, " (%ld runs)", opts->repeat);
	fprintf(o->f, ":\n\n");
}

/* A row's name: its CPU, or its thread's or process's comm and id. A comm is whatever the
 * program set with prctl: the table shows it escaped (TABLE), CSV keeps its bytes. */
static void label_of(const struct stat_row *r, char *buf, size_t len, bool table)
{
	char shown[TEXT_SHOWN_MAX];
	const char *comm = !r->comm || !r->comm[0] ? "?" :
			   table ? text_for_terminal(r->comm, shown, sizeof(shown)) : r->comm;
	buf[0] = 0;
	if (r->cpu >= 0)
		snprintf(buf, len, "CPU%d", r->cpu);
	else if (r->tid >= 0)
		snprintf(buf, len, "%s-%d", comm, r->tid);
	else if (r->pid >= 0)
		snprintf(buf, len, "%s-%d", comm, r->pid);
}

static void print_table_row(struct stat_out *o, const struct stat_row *rows, size_t n,
			    const struct stat_row *r, double elapsed_ns, double ts)
{
	char label[64];
	label_of(r, label, sizeof(label), true);
	if (ts >= 0)
		fprintf(o->f, "%14.6f ", ts);
	if (r->unit)	/* perf's: the unit, then how many CPUs it sums */
		fprintf(o->f, "%-12s %4d ", r->unit, r->unit_cpus);
	else if (label[0])
		fprintf(o->f, "%20s ", label);
	if (!r->supported) {
		fprintf(o->f, "%18s      %-26s\n", "<not supported>", r->ev->spec);
		return;
	}
	/* never enabled (a command that ended within -D's delay): no count, as perf says */
	if (!r->v.enabled && !r->use_mean) {
		fprintf(o->f, "%18s %-4s %-26s\n", "<not counted>", r->ev->unit, r->ev->spec);
		return;
	}
	if (strcmp(r->ev->unit, "msec") == 0)
		fprintf(o->f, "%18.2f msec %-26s", shown_value(r), r->ev->spec);
	else
		fprintf(o->f, "%18.0f      %-26s", shown_value(r), r->ev->spec);
	double mv;
	const char *mu;
	if (derived_metric(rows, n, r, elapsed_ns, &mv, &mu))
		fprintf(o->f, " # %9.3f %-20s", mv, mu);
	else
		fprintf(o->f, "   %9s %-20s", "", "");
	if (r->runs > 1)
		fprintf(o->f, " ( +- %5.2f%% )", r->mean > 0 ? 100.0 * r->stddev / r->mean : 0.0);
	fprintf(o->f, " (%.2f%%)\n", count_value_running_pct(&r->v));
}

static void print_json_row(struct stat_out *o, const struct stat_row *rows, size_t n,
			   const struct stat_row *r, double elapsed_ns, double ts)
{
	struct json_writer w;
	json_init(&w, o->f);
	json_object_begin(&w);
	if (ts >= 0)
		json_kdouble(&w, "interval", ts, 6);
	json_kstr(&w, "event", r->ev->spec);
	if (!r->supported) {
		json_knull(&w, "value");
		json_kstr(&w, "unit", "");
		json_ku64(&w, "running_pct", 0);
		json_kbool(&w, "supported", false);
		json_object_end(&w);
		json_newline(&w);
		return;
	}
	json_kdouble(&w, "value", shown_value(r), 6);
	json_kstr(&w, "unit", r->ev->unit);
	json_kdouble(&w, "running_pct", count_value_running_pct(&r->v), 2);
	json_ku64(&w, "counter_value", r->v.value);
	json_ku64(&w, "enabled_ns", r->v.enabled);
	json_ku64(&w, "running_ns", r->v.running);
	if (r->tid >= 0)
		json_ki64(&w, "thread", r->tid);
	if (r->pid >= 0)
		json_ki64(&w, "pid", r->pid);
	if ((r->tid >= 0 || r->pid >= 0) && r->comm)
		json_kstr(&w, "comm", r->comm);
	if (r->cpu >= 0)
		json_ki64(&w, "cpu", r->cpu);
	if (r->unit) {	/* perf's key: what the CPUs were summed by */
		const struct stat_opts *so = o->opts;
		json_kstr(&w, so->per_socket ? "socket" : so->per_die ? "die" : "core", r->unit);
		json_ki64(&w, "cpus", r->unit_cpus);
	}
	double mv;
	const char *mu;
	if (derived_metric(rows, n, r, elapsed_ns, &mv, &mu)) {
		json_kdouble(&w, "metric_value", mv, 6);
		json_kstr(&w, "metric_unit", mu);
	}
	if (r->runs > 1) {
		json_ki64(&w, "runs", r->runs);
		json_kdouble(&w, "stddev_pct", r->mean > 0 ? 100.0 * r->stddev / r->mean : 0.0, 4);
	}
	json_object_end(&w);
	json_newline(&w);
}

/* One CSV field after its separator SEP (',' or -x SEP). */
static void csv_field(FILE *f, char sep, const char *s)
{
	fputc(sep, f);
	cli_csv_field_sep(f, s, sep);
}

/* A number field: quoted like any field when SEP is a character numbers hold (-x .) */
static void csv_num(FILE *f, char sep, const char *fmt, double v, bool present)
{
	char b[64] = "";
	if (present)
		snprintf(b, sizeof(b), fmt, v);
	csv_field(f, sep, b);
}

static void csv_u64(FILE *f, char sep, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	csv_field(f, sep, b);
}

static void print_csv_row(struct stat_out *o, const struct stat_row *rows, size_t n,
			  const struct stat_row *r, double elapsed_ns, double ts)
{
	FILE *f = o->f;
	char sep = o->opts->sep;
	if (ts >= 0) {
		char b[64];
		snprintf(b, sizeof(b), "%.6f", ts);
		cli_csv_field_sep(f, b, sep);
	}
	csv_field(f, sep, r->ev->spec);
	csv_num(f, sep, "%.6f", r->supported ? shown_value(r) : 0, r->supported);
	csv_field(f, sep, r->supported ? r->ev->unit : "<not supported>");
	csv_num(f, sep, "%.2f", count_value_running_pct(&r->v), r->supported);
	csv_u64(f, sep, r->v.value);
	csv_u64(f, sep, r->v.enabled);
	csv_u64(f, sep, r->v.running);
	csv_num(f, sep, "%.0f", r->tid, r->tid >= 0);
	csv_num(f, sep, "%.0f", r->pid, r->pid >= 0);
	csv_field(f, sep, (r->tid >= 0 || r->pid >= 0) && r->comm ? r->comm : "");
	csv_num(f, sep, "%.0f", r->cpu, r->cpu >= 0);
	double mv = 0;
	const char *mu = "";
	bool has = r->supported && derived_metric(rows, n, r, elapsed_ns, &mv, &mu);
	csv_num(f, sep, "%.6f", mv, has);
	csv_field(f, sep, has ? mu : "");
	csv_num(f, sep, "%.4f", r->mean > 0 ? 100.0 * r->stddev / r->mean : 0.0, r->runs > 1);
	csv_field(f, sep, r->unit ? r->unit : "");
	csv_num(f, sep, "%.0f", r->unit_cpus, r->unit != NULL);
	fputc('\n', f);
}

/* perf stat -x SEP's line: [interval,][CPUn or comm-tid,]value,unit,event,[stddev%,]
 * running ns,running %,metric value,metric unit. A rate per second is scaled to K/M/G as
 * perf scales it. */
static void print_perf_csv_row(struct stat_out *o, const struct stat_row *rows, size_t n,
			       const struct stat_row *r, double elapsed_ns, double ts)
{
	FILE *f = o->f;
	char sep = o->opts->sep, label[64], b[64];
	if (ts >= 0) {
		snprintf(b, sizeof(b), "%16.9f", ts);
		cli_csv_field_sep(f, b, sep);
		fputc(sep, f);
	}
	label_of(r, label, sizeof(label), false);
	if (r->unit) {	/* perf's: S0-D0-C1,CPUS, */
		cli_csv_field_sep(f, r->unit, sep);
		fprintf(f, "%c%d%c", sep, r->unit_cpus, sep);
	} else if (label[0]) {
		cli_csv_field_sep(f, label, sep);
		fputc(sep, f);
	}
	bool msec = strcmp(r->ev->unit, "msec") == 0;
	if (!r->supported)
		snprintf(b, sizeof(b), "<not supported>");
	else if (!r->v.enabled && !r->use_mean)
		snprintf(b, sizeof(b), "<not counted>");
	else
		snprintf(b, sizeof(b), msec ? "%.2f" : "%.0f", shown_value(r));
	cli_csv_field_sep(f, b, sep);
	csv_field(f, sep, r->ev->unit);
	csv_field(f, sep, r->ev->spec);
	if (r->runs > 1) {
		snprintf(b, sizeof(b), "%.2f%%", r->mean > 0 ? 100.0 * r->stddev / r->mean : 0.0);
		csv_field(f, sep, b);
	}
	csv_u64(f, sep, r->supported ? r->v.running : 0);
	csv_num(f, sep, "%.2f", r->supported ? count_value_running_pct(&r->v) : 100.0, true);
	double mv = 0;
	const char *mu = "";
	bool has = r->supported && r->v.enabled && derived_metric(rows, n, r, elapsed_ns, &mv, &mu);
	if (has && strcmp(mu, "/sec") == 0) {
		static const struct { double div; const char *unit; } scales[] = {
			{ 1e9, "G/sec" }, { 1e6, "M/sec" }, { 1e3, "K/sec" },
		};
		for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++)
			if (mv >= scales[i].div) {
				mv /= scales[i].div;
				mu = scales[i].unit;
				break;
			}
	}
	csv_num(f, sep, "%.3f", mv, has);
	csv_field(f, sep, has ? mu : "");
	fputc('\n', f);
}

/* R is a whole run's (or interval's) row, not a thread's, process's or CPU's */
static bool row_is_total(const struct stat_row *r)
{
	return r->cpu < 0 && r->tid < 0 && r->pid < 0 && !r->unit;
}

void stat_print_rows(struct stat_out *o, const struct stat_row *rows, size_t n, double elapsed_ns,
		     double interval_ts)
{
	const struct stat_opts *opts = o->opts;
	stat_print_header(o);
	for (size_t i = 0; i < n; i++) {
		switch (o->format) {
		case STAT_TABLE: print_table_row(o, rows, n, &rows[i], elapsed_ns, interval_ts); break;
		case STAT_JSON: print_json_row(o, rows, n, &rows[i], elapsed_ns, interval_ts); break;
		case STAT_CSV: print_csv_row(o, rows, n, &rows[i], elapsed_ns, interval_ts); break;
		case STAT_PERF_CSV:
			/* perf's broken-down output has only the breakdown's lines, every line
			 * with the same fields */
			if ((opts->per_thread || opts->per_process || opts->per_cpu || opts->per_socket ||
			     opts->per_die || opts->per_core) &&
			    row_is_total(&rows[i]))
				break;
			print_perf_csv_row(o, rows, n, &rows[i], elapsed_ns, interval_ts);
			break;
		}
	}
	if (o->format == STAT_TABLE && n && row_is_total(&rows[0]))
		fputc('\n', o->f);
}

void stat_print_footer(struct stat_out *o, double elapsed_ns, const double *runs_elapsed, int nruns,
		       const struct stat_cpu_times *cpu)
{
	if (o->format == STAT_JSON) {
		struct json_writer w;
		json_init(&w, o->f);
		json_object_begin(&w);
		json_kdouble(&w, "elapsed_s", elapsed_ns / 1e9, 9);
		json_ki64(&w, "runs", nruns);
		if (cpu) {
			json_kdouble(&w, "user_s", cpu->user_s, 6);
			json_kdouble(&w, "sys_s", cpu->sys_s, 6);
		}
		json_object_end(&w);
		json_newline(&w);
		return;
	}
	if (o->format != STAT_TABLE)
		return;
	if (nruns > 1) {
		double mean = 0, var = 0;
		for (int i = 0; i < nruns; i++)
			mean += runs_elapsed[i] / nruns;
		for (int i = 0; i < nruns; i++)
			var += (runs_elapsed[i] - mean) * (runs_elapsed[i] - mean) / (nruns - 1);
		fprintf(o->f, "%18.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n\n", mean / 1e9,
			sqrt(var) / 1e9, mean > 0 ? 100.0 * sqrt(var) / mean : 0.0);
	} else {
		fprintf(o->f, "%18.9f seconds time elapsed\n\n", elapsed_ns / 1e9);
		if (cpu)
			fprintf(o->f, "%18.9f seconds user\n%18.9f seconds sys\n\n", cpu->user_s,
				cpu->sys_s);
	}
}

void stat_print_costs(struct stat_out *o, const struct stat_row *rows, size_t n)
{
	const struct cost_model *m = costs_model_for_host();
	const char *names[64];
	double counts[64];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 64; i++)
		if (rows[i].supported) {
			names[k] = rows[i].ev->name;
			counts[k++] = row_value(&rows[i]);
		}
	const struct stat_row *cyc = row_named(rows, n, "cycles");
	const struct stat_row *tc = row_named(rows, n, "task-clock");
	struct cost_estimate est[64];
	size_t ne = costs_estimate(m, names, counts, k, cyc ? row_value(cyc) : 0,
				   tc ? row_value(tc) / 1e9 : 0, est, 64);
	FILE *f = o->f;
	if (o->format == STAT_JSON) {
		struct json_writer w;
		json_init(&w, f);
		for (size_t i = 0; i < ne; i++) {
			json_object_begin(&w);
			json_kstr(&w, "cost_event", est[i].event);
			json_kdouble(&w, "count", est[i].count, 0);
			json_kdouble(&w, "cycles_each", est[i].entry->cycles, 1);
			json_kdouble(&w, "cycles", est[i].cycles, 0);
			json_kdouble(&w, "pct_of_cycles", est[i].pct_of_cycles, 2);
			json_kdouble(&w, "seconds", est[i].seconds, 6);
			json_kstr(&w, "source", est[i].entry->source);
			json_object_end(&w);
			json_newline(&w);
		}
		return;
	}
	if (o->format == STAT_CSV || o->format == STAT_PERF_CSV) {
		/* --csv: its own header, as the counts have theirs; -x SEP: lines only, as perf's */
		char sep = o->format == STAT_PERF_CSV ? o->opts->sep : ',';
		if (o->format == STAT_CSV)
			fprintf(f, "cost_event%ccount%ccycles_each%ccycles%cpct_of_cycles%cseconds%csource\n",
				sep, sep, sep, sep, sep, sep);
		for (size_t i = 0; i < ne; i++) {
			char num[5][64];
			snprintf(num[0], sizeof(num[0]), "%.0f", est[i].count);
			snprintf(num[1], sizeof(num[1]), "%.1f", est[i].entry->cycles);
			snprintf(num[2], sizeof(num[2]), "%.0f", est[i].cycles);
			snprintf(num[3], sizeof(num[3]), "%.2f", est[i].pct_of_cycles);
			snprintf(num[4], sizeof(num[4]), "%.6f", est[i].seconds);
			cli_csv_field_sep(f, est[i].event, sep);
			for (int j = 0; j < 5; j++) {
				fputc(sep, f);
				cli_csv_field_sep(f, num[j], sep);
			}
			fputc(sep, f);
			cli_csv_field_sep(f, est[i].entry->source, sep);
			fputc('\n', f);
		}
		return;
	}
	fprintf(f, " Estimated cost per event class (%s, no overlap assumed):\n\n", m->cpu);
	fprintf(f, "  %-24s %16s %8s %16s %8s %12s\n", "event", "count", "cycles", "est. cycles", "% cyc", "est. sec");
	for (size_t i = 0; i < ne; i++)
		fprintf(f, "  %-24s %16.0f %8.1f %16.0f %7.2f%% %12.6f\n", est[i].event, est[i].count,
			est[i].entry->cycles, est[i].cycles, est[i].pct_of_cycles, est[i].seconds);
	fprintf(f, "\n Sources:\n");
	for (size_t i = 0; i < ne; i++)
		fprintf(f, "  %-24s %s: %s\n", est[i].event, est[i].entry->what, est[i].entry->source);
	fputc('\n', f);
}
