/* cli/stat_run.c - running `spent stat`: one counting session of the library (spent/stat.h,
 * collect/stat_session.c) per run, repeated runs, the -I rows it calls back for, and turning
 * readings into printed rows (totals, per thread, per process, per CPU). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stat.h"
#include "collect/stat_session.h"
#include "core/cpus.h"
#include "core/outfile.h"

static volatile sig_atomic_t interrupted;
static struct spent_stat *volatile counting_now;	/* the session a Ctrl-C is passed to */

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT: passed on to the command, whose counts are then printed
 * and -o's file put in place (the default action left a temporary file and an orphaned
 * command behind) */
static void on_interrupt(int sig)
{
	interrupted = 1;
	if (counting_now)
		spent_stat_pass_signal(counting_now, sig);
}

/* The supported subset of the event list, in order: what is actually opened. */
struct open_set {
	struct spent_event *evs;
	int *group;
	size_t *index; /* open index -> event-list index */
	size_t n;
};

static int open_set_build(const struct stat_events *se, struct open_set *os)
{
	os->evs = calloc(se->n, sizeof(*os->evs));
	os->group = calloc(se->n, sizeof(int));
	os->index = calloc(se->n, sizeof(size_t));
	os->n = 0;
	if (!os->evs || !os->group || !os->index)
		return -ENOMEM;
	for (size_t i = 0; i < se->n; i++) {
		if (!se->supported[i])
			continue;
		os->evs[os->n] = se->evs[i];
		os->group[os->n] = se->group[i];
		os->index[os->n++] = i;
	}
	return 0;
}

static void open_set_release(struct open_set *os)
{
	free(os->evs);
	free(os->group);
	free(os->index);
}

static void fill_rows(const struct stat_events *se, const struct open_set *os,
		      const struct count_value *vals, struct stat_row *rows, size_t *nrows)
{
	size_t k = 0;
	for (size_t i = 0; i < se->n; i++) {
		/* a repeated event (cycles, instructions in every --all-events group) is one row:
		 * the mean of its projections; an unsupported copy of a counted event is a fallback
		 * dropped as a duplicate (cycles -> task-clock beside task-clock), no row at all */
		size_t first = i;
		bool dropped = false;
		for (size_t j = 0; j < se->n; j++) {
			if (j == i || strcmp(se->evs[j].spec, se->evs[i].spec) != 0)
				continue;
			if (!se->supported[i] && se->supported[j])
				dropped = true;
			else if (j < i && se->supported[j] == se->supported[i] && first == i)
				first = j;
		}
		if (first != i || dropped)
			continue;
		struct stat_row *r = &rows[k++];
		memset(r, 0, sizeof(*r));
		r->ev = &se->evs[i];
		r->supported = se->supported[i];
		r->tid = r->pid = r->cpu = -1;
		if (!r->supported)
			continue;
		double sum = 0;
		int copies = 0;
		for (size_t o = 0; o < os->n; o++)
			if (strcmp(se->evs[os->index[o]].spec, se->evs[i].spec) == 0) {
				count_value_add(&r->v, &vals[o]);
				sum += count_value_scaled(&vals[o]);
				copies++;
			}
		if (copies > 1) {	/* the raw fields are the copies' means too (--json, -x) */
			r->use_mean = true;
			r->mean = sum / copies;
			r->v.value /= (uint64_t)copies;
			r->v.enabled /= (uint64_t)copies;
			r->v.running /= (uint64_t)copies;
		}
	}
	*nrows = k;
}

static void set_identity(struct stat_row *rows, size_t n, int tid, int pid, int cpu, const char *comm)
{
	for (size_t i = 0; i < n; i++) {
		rows[i].tid = tid;
		rows[i].pid = pid;
		rows[i].cpu = cpu;
		rows[i].comm = comm;
		rows[i].unit = NULL;
	}
}

/* -I with a breakdown: each thread's (slot's, CPU's) reading at the last interval row, so that
 * every interval prints what each did since, as perf does. Entry K is os.n values: the K-th
 * thread of the tracker's list (which only grows) or slot K. */
struct since_last {
	struct count_value *v;
	size_t n;	/* entries */
};

struct run_ctx {
	const struct stat_opts *opts;
	const struct stat_events *se;
	struct open_set os;
	struct stat_out *out;
	struct stat_row *rows;
	size_t nrows;
	double elapsed_ns;
	struct count_value *totals;	/* the last reading */
	struct count_value *prev;	/* -I: the reading at the last interval row */
	double prev_seconds;	/* -I: its time (the next interval's rates are over the gap) */
	struct since_last tasks, cpus;	/* -I: the breakdowns' readings there */
	/* --per-socket/die/core: each CPU slot's unit label, read from sysfs once a run (every
	 * -I row read it again: three files per CPU) */
	char (*unit_of_slot)[32];
	struct stat_cpu_times cpu;	/* the last run's command: its CPU time */
	long intervals;		/* -I rows printed */
};

/* --append: what PATH holds now goes first into OUT (the temporary that replaces it), so
 * the old counts stay whole whatever happens to this run. A PATH not there yet is empty. */
static int copy_existing(const char *path, FILE *out)
{
	FILE *in = fopen(path, "re");
	char buf[65536];
	size_t n;
	int err = 0;

	if (!in)
		return errno == ENOENT ? 0 : -errno;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			err = -EIO;
			break;
		}
	if (!err && ferror(in))
		err = -EIO;
	fclose(in);
	return err;
}

static double timeval_s(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* CUR minus PREV into DELTA (N values), and PREV becomes CUR. Whether the counters were
 * enabled meanwhile: a thread that did not run has nothing to show. */
static bool delta_since(size_t n, const struct count_value *cur, struct count_value *prev,
			struct count_value *delta)
{
	bool ran = false;
	for (size_t i = 0; i < n; i++) {
		delta[i].value = cur[i].value - prev[i].value;
		delta[i].enabled = cur[i].enabled - prev[i].enabled;
		delta[i].running = cur[i].running - prev[i].running;
		ran |= delta[i].enabled != 0;
		prev[i] = cur[i];
	}
	return ran;
}

/* Entry K of SL (zeros until first read), grown as threads appear; NULL without memory. */
static struct count_value *since_last_at(struct since_last *sl, size_t k, size_t nvals)
{
	if (k >= sl->n) {
		size_t n = 2 * k + 16;
		struct count_value *v = realloc(sl->v, n * nvals * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + sl->n * nvals, 0, (n - sl->n) * nvals * sizeof(*v));
		sl->v = v;
		sl->n = n;
	}
	return &sl->v[k * nvals];
}

/* Where breakdown rows go: the whole run (TS < 0) or the interval ending at TS. */
struct rows_at {
	double elapsed_ns;	/* for rates: the run's, or the interval's length */
	double ts;
};

static void print_breakdown(struct run_ctx *rc, const struct thread_counts *th, size_t nth,
			    struct rows_at at)
{
	struct count_value *acc = calloc(rc->os.n, sizeof(*acc));
	bool *done = calloc(nth, sizeof(bool));
	if (!acc || !done)
		goto out;
	for (size_t t = 0; t < nth; t++) {
		if (rc->opts->per_thread) {
			fill_rows(rc->se, &rc->os, th[t].values, rc->rows, &rc->nrows);
			set_identity(rc->rows, rc->nrows, th[t].tid, th[t].pid, -1, th[t].comm);
			stat_print_rows(rc->out, rc->rows, rc->nrows, at.elapsed_ns, at.ts);
		}
		if (!rc->opts->per_process || done[t])
			continue;
		/* a process is all of its threads; it is named by its main thread */
		memset(acc, 0, rc->os.n * sizeof(*acc));
		const char *comm = th[t].comm;
		for (size_t u = t; u < nth; u++) {
			if (th[u].pid != th[t].pid)
				continue;
			done[u] = true;
			if (th[u].tid == th[u].pid)
				comm = th[u].comm;
			for (size_t i = 0; i < rc->os.n; i++)
				count_value_add(&acc[i], &th[u].values[i]);
		}
		fill_rows(rc->se, &rc->os, acc, rc->rows, &rc->nrows);
		set_identity(rc->rows, rc->nrows, -1, th[t].pid, -1, comm);
		stat_print_rows(rc->out, rc->rows, rc->nrows, at.elapsed_ns, at.ts);
	}
	if (rc->out->format == STAT_TABLE && at.ts < 0)
		fputc('\n', rc->out->f);
out:
	free(acc);
	free(done);
}

/* The threads' rows of one interval: each one's counts since the last, for those that ran
 * (a thread that had ended before the interval, or slept through it, has no row). TH, NTH are
 * readings now, in the same order every time. */
static void print_breakdown_since(struct run_ctx *rc, const struct thread_counts *th, size_t nth,
				  struct rows_at at)
{
	size_t n = rc->os.n, m = 0;
	struct thread_counts *d = calloc(nth ? nth : 1, sizeof(*d));
	struct count_value *vals = calloc(nth ? nth * n : 1, sizeof(*vals));
	for (size_t t = 0; d && vals && t < nth; t++) {
		struct count_value *prev = since_last_at(&rc->tasks, t, n);
		if (!prev)
			break;
		d[m] = th[t];
		d[m].values = &vals[m * n];
		if (delta_since(n, th[t].values, prev, d[m].values))
			m++;
	}
	if (d && vals)
		print_breakdown(rc, d, m, at);
	if (m && rc->out->format == STAT_TABLE)
		fputc('\n', rc->out->f);	/* the next interval's totals, or the run's rows */
	free(d);
	free(vals);
}

/* -p: the threads that existed at attach, each with what it and its later children did. */
static void print_slot_breakdown(struct run_ctx *rc, struct counting *c, struct rows_at at)
{
	size_t n = counting_n_slots(c);
	struct thread_counts *th = calloc(n, sizeof(*th));
	struct count_value *vals = calloc(n * rc->os.n, sizeof(*vals));
	if (th && vals) {
		for (size_t s = 0; s < n; s++) {
			th[s].tid = counting_slot_id(c, s);
			th[s].pid = rc->opts->pid;
			th[s].values = &vals[s * rc->os.n];
			/* the name now (exec may have changed it); a thread that ended before the
			 * run did has none: its name at attach */
			thread_comm(th[s].pid, th[s].tid, th[s].comm);
			if (!th[s].comm[0])
				snprintf(th[s].comm, sizeof(th[s].comm), "%s", counting_slot_comm(c, s));
			counting_read_slot(c, s, th[s].values);
		}
		if (at.ts < 0)
			print_breakdown(rc, th, n, at);
		else
			print_breakdown_since(rc, th, n, at);
	}
	free(th);
	free(vals);
}

/* CPU slot S's counts for its row: over the run, or (AT.ts >= 0: -I) since the last interval
 * row, into *SHOWN (VALS, or DELTA). 0; 1 when the slot cannot be read (no row); -ENOMEM. */
static int slot_reading(struct run_ctx *rc, struct counting *c, size_t s, struct rows_at at,
			struct count_value *vals, struct count_value *delta, const struct count_value **shown)
{
	if (counting_read_slot(c, s, vals))
		return 1;
	*shown = vals;
	if (at.ts >= 0) {
		struct count_value *prev = since_last_at(&rc->cpus, s, rc->os.n);
		if (!prev)
			return -ENOMEM;
		delta_since(rc->os.n, vals, prev, delta);
		*shown = delta;	/* an idle CPU's row too: perf prints every CPU */
	}
	return 0;
}

/* Every CPU's row (-a --per-cpu): over the run, or since the last interval row. */
static void print_per_cpu(struct run_ctx *rc, struct counting *c, struct rows_at at)
{
	struct count_value *vals = calloc(rc->os.n, sizeof(*vals));
	struct count_value *delta = calloc(rc->os.n, sizeof(*delta));
	if (!vals || !delta)
		goto out;
	for (size_t s = 0; s < counting_n_slots(c); s++) {
		const struct count_value *shown;
		int r = slot_reading(rc, c, s, at, vals, delta, &shown);
		if (r < 0)
			break;
		if (r)
			continue;
		fill_rows(rc->se, &rc->os, shown, rc->rows, &rc->nrows);
		set_identity(rc->rows, rc->nrows, -1, -1, counting_slot_id(c, s), NULL);
		stat_print_rows(rc->out, rc->rows, rc->nrows, at.elapsed_ns, at.ts);
	}
	if (rc->out->format == STAT_TABLE)
		fputc('\n', rc->out->f);
out:
	free(vals);
	free(delta);
}

/* --per-socket/die/core: a CPU's unit, as perf labels it ("S0", "S0-D0", "S0-D0-C1"). A CPU
 * whose topology sysfs does not give is a core of its own on socket 0. */
static void unit_label(const struct stat_opts *o, int cpu, char *buf, size_t len)
{
	struct cpu_place pl;
	if (cpu_place_read(CPU_SYSFS, cpu, &pl))
		pl = (struct cpu_place){ 0, 0, cpu };
	if (o->per_socket)
		snprintf(buf, len, "S%d", pl.socket);
	else if (o->per_die)
		snprintf(buf, len, "S%d-D%d", pl.socket, pl.die);
	else
		snprintf(buf, len, "S%d-D%d-C%d", pl.socket, pl.die, pl.core);
}

/* One unit's row: its label, its CPUs and where its sums are */
struct stat_unit {
	char label[32];
	int cpus;
	size_t sums;	/* its index in the sums, in order of first appearance */
};

/* Label order: by socket, die, core as numbers (S0-D0-C10 after S0-D0-C2) */
static int unit_cmp(const void *a, const void *b)
{
	const char *x = ((const struct stat_unit *)a)->label, *y = ((const struct stat_unit *)b)->label;
	while (*x && *y) {
		if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
			char *ex, *ey;
			long vx = strtol(x, &ex, 10), vy = strtol(y, &ey, 10);
			if (vx != vy)
				return vx < vy ? -1 : 1;
			x = ex;
			y = ey;
		} else if (*x != *y) {
			return *x < *y ? -1 : 1;
		} else {
			x++, y++;
		}
	}
	return (*x != 0) - (*y != 0);
}

/* The CPUs' rows summed by unit (--per-socket, --per-die, --per-core): over the run, or since
 * the last interval row; each unit's row says how many CPUs it sums, as perf's does. */
static void print_per_unit(struct run_ctx *rc, struct counting *c, struct rows_at at)
{
	size_t n = counting_n_slots(c), nu = 0, nev = rc->os.n;
	struct stat_unit *units = calloc(n + 1, sizeof(*units));
	struct count_value *sums = calloc((n + 1) * nev + 1, sizeof(*sums));
	struct count_value *vals = calloc(nev + 1, sizeof(*vals));
	struct count_value *delta = calloc(nev + 1, sizeof(*delta));
	if (!units || !sums || !vals || !delta)
		goto out;
	if (!rc->unit_of_slot) {	/* the same slots every interval: sysfs read once */
		if (!(rc->unit_of_slot = calloc(n + 1, sizeof(*rc->unit_of_slot))))
			goto out;
		for (size_t s = 0; s < n; s++)
			unit_label(rc->opts, counting_slot_id(c, s), rc->unit_of_slot[s],
				   sizeof(rc->unit_of_slot[s]));
	}
	for (size_t s = 0; s < n; s++) {
		const char *l = rc->unit_of_slot[s];
		size_t u = 0;
		while (u < nu && strcmp(units[u].label, l))
			u++;
		if (u == nu) {
			snprintf(units[nu].label, sizeof(units[nu].label), "%s", l);
			units[nu].sums = nu;
			nu++;
		}
		units[u].cpus++;
		const struct count_value *shown;
		int r = slot_reading(rc, c, s, at, vals, delta, &shown);
		if (r < 0)
			goto out;
		if (r)
			continue;
		for (size_t e = 0; e < nev; e++)
			count_value_add(&sums[u * nev + e], &shown[e]);
	}
	qsort(units, nu, sizeof(*units), unit_cmp);
	for (size_t k = 0; k < nu; k++) {
		fill_rows(rc->se, &rc->os, &sums[units[k].sums * nev], rc->rows, &rc->nrows);
		set_identity(rc->rows, rc->nrows, -1, -1, -1, NULL);
		for (size_t i = 0; i < rc->nrows; i++) {
			rc->rows[i].unit = units[k].label;
			rc->rows[i].unit_cpus = units[k].cpus;
		}
		stat_print_rows(rc->out, rc->rows, rc->nrows, at.elapsed_ns, at.ts);
	}
	if (rc->out->format == STAT_TABLE)
		fputc('\n', rc->out->f);
out:
	free(units);
	free(sums);
	free(vals);
	free(delta);
}

/* Read totals, minus PREV when given (intervals), into the rows. */
static int read_into_rows(struct run_ctx *rc, struct counting *c, struct count_value *totals,
			  struct count_value *prev)
{
	int err = counting_read_totals(c, totals);
	if (err)
		return err;
	if (!prev) {
		fill_rows(rc->se, &rc->os, totals, rc->rows, &rc->nrows);
		return 0;
	}
	struct count_value *delta = calloc(rc->os.n, sizeof(*delta));
	if (!delta)
		return -ENOMEM;
	delta_since(rc->os.n, totals, prev, delta);
	fill_rows(rc->se, &rc->os, delta, rc->rows, &rc->nrows);
	free(delta);
	return 0;
}

/* The breakdowns asked for (per thread, per process, per CPU), over AT. */
static void print_breakdowns(struct run_ctx *rc, struct spent_stat *s, struct rows_at at)
{
	const struct stat_opts *o = rc->opts;
	struct counting *c = stat_session_counting(s);
	const struct thread_counts *th;
	size_t nth;
	if (stat_session_tracker(s) && thread_tracker_results(stat_session_tracker(s), &th, &nth) == 0) {
		if (at.ts < 0)
			print_breakdown(rc, th, nth, at);
		else
			print_breakdown_since(rc, th, nth, at);
	} else if (o->pid && (o->per_thread || o->per_process)) {
		print_slot_breakdown(rc, c, at);
	}
	if (o->per_cpu)
		print_per_cpu(rc, c, at);
	else if (o->per_socket || o->per_die || o->per_core)
		print_per_unit(rc, c, at);
}

/* With -I: the counts since the last interval row, as one more row, then each thread's
 * (process's, CPU's) since then when broken down. */
static void print_interval(void *arg, struct spent_stat *s, double seconds)
{
	struct run_ctx *rc = arg;
	if (rc->opts->interval_count && rc->intervals >= rc->opts->interval_count)
		return;	/* perf's --interval-count: the command runs on, nothing more is printed */
	rc->intervals++;
	double len_ns = (seconds - rc->prev_seconds) * 1e9;
	rc->prev_seconds = seconds;
	if (read_into_rows(rc, stat_session_counting(s), rc->totals, rc->prev) != 0)
		return;
	struct rows_at at = { .elapsed_ns = len_ns > 0 ? len_ns : 0, .ts = seconds };
	stat_print_rows(rc->out, rc->rows, rc->nrows, at.elapsed_ns, at.ts);
	print_breakdowns(rc, s, at);
}

static void warn_user(void *arg, const char *msg)
{
	(void)arg;
	cli_warn("%s", msg);
}

/* After the run: the breakdowns asked for over the whole run, then the totals back in the
 * rows. */
static void print_details(struct run_ctx *rc, struct spent_stat *s)
{
	print_breakdowns(rc, s, (struct rows_at){ .elapsed_ns = rc->elapsed_ns, .ts = -1 });
	/* the breakdown printed rows of its own: the totals follow */
	read_into_rows(rc, stat_session_counting(s), rc->totals, NULL);
}

/* One run through the library's counting session (spent/stat.h): returns the exit status to
 * report; TOTALS gets the readings; *STARTED says whether counting started (a command that
 * could not be run has nothing to print, one that ran and exited 2, 126 or 127 has). */
static int run_once(struct run_ctx *rc, struct count_value *totals, bool details, bool *started)
{
	const struct stat_opts *o = rc->opts;
	struct spent_stat_opts so = {
		.events = rc->os.evs, .n_events = rc->os.n, .group = rc->os.group,
		.pid = (pid_t)o->pid, .tid = (pid_t)o->tid, .system_wide = o->system_wide,
		.cpus = o->cpus, .n_cpus = o->n_cpus,
		.follow_threads = o->argc && (o->per_thread || o->per_process),
		.no_inherit = o->no_inherit,
		.delay_ms = (uint64_t)o->delay_ms,
		.interval_ms = (uint64_t)o->interval_ms, .interval = print_interval, .interval_arg = rc,
		.warn = warn_user,
	};
	struct spent_stat *s = NULL;
	int status = 2;
	rc->totals = totals;
	rc->prev = o->interval_ms ? calloc(rc->os.n, sizeof(*rc->prev)) : NULL;
	rc->prev_seconds = 0;
	if ((o->interval_ms && !rc->prev) || spent_stat_new(&so, &s)) {
		cli_error("out of memory");
		goto out;
	}
	counting_now = s;
	if (interrupted)
		spent_stat_interrupt(s);
	if (spent_stat_start(s, o->argc ? o->argv : NULL)) {
		cli_error("%s", spent_stat_error(s));
		status = spent_stat_exit_code(s) ? spent_stat_exit_code(s) : 2;
		goto out;
	}
	*started = true;
	/* the command's CPU time is what its reaping added to ours: the command is the only
	 * child stat has (wait4's rusage, as perf reads it, counts the reaped tree as well) */
	struct rusage before, after;
	getrusage(RUSAGE_CHILDREN, &before);
	spent_stat_wait(s, NULL);
	getrusage(RUSAGE_CHILDREN, &after);
	rc->cpu.user_s = timeval_s(after.ru_utime) - timeval_s(before.ru_utime);
	rc->cpu.sys_s = timeval_s(after.ru_stime) - timeval_s(before.ru_stime);
	status = spent_stat_exit_code(s);
	rc->elapsed_ns = (double)spent_stat_elapsed_ns(s);
	/* the command's last partial interval is printed as perf does (the interval rows
	 * would not add up to the totals) */
	if (rc->prev)
		print_interval(rc, s, rc->elapsed_ns / 1e9);
	if (rc->os.n && read_into_rows(rc, stat_session_counting(s), totals, NULL) == 0 && details &&
	    !o->interval_count)
		print_details(rc, s);
out:
	counting_now = NULL;
	spent_stat_free(s);
	free(rc->prev);
	rc->prev = NULL;
	free(rc->tasks.v);
	free(rc->cpus.v);
	rc->tasks = rc->cpus = (struct since_last){ 0 };
	free(rc->unit_of_slot);
	rc->unit_of_slot = NULL;
	return status;
}

/* The rows of -r N: each event's mean and spread over the runs; its raw counter, enabled and
 * running times are the runs' means too (SUMS over NRUNS), so --json's fields all describe
 * the same thing (they were the last run's beside the mean). */
static void print_repeat(struct run_ctx *rc, double *const *runs, int nruns, const struct count_value *sums)
{
	struct count_value *mean_raw = calloc(rc->os.n, sizeof(*mean_raw));
	if (!mean_raw)
		return;
	for (size_t i = 0; i < rc->os.n; i++) {
		mean_raw[i].value = sums[i].value / (uint64_t)nruns;
		mean_raw[i].enabled = sums[i].enabled / (uint64_t)nruns;
		mean_raw[i].running = sums[i].running / (uint64_t)nruns;
	}
	fill_rows(rc->se, &rc->os, mean_raw, rc->rows, &rc->nrows);
	free(mean_raw);
	for (size_t k = 0; k < rc->nrows; k++) {
		struct stat_row *r = &rc->rows[k];
		if (!r->supported)
			continue;
		size_t oi = 0;
		while (oi < rc->os.n && strcmp(rc->se->evs[rc->os.index[oi]].spec, r->ev->spec) != 0)
			oi++;
		double mean = 0, var = 0;
		for (int i = 0; i < nruns; i++)
			mean += runs[i][oi] / nruns;
		for (int i = 0; i < nruns; i++)
			var += (runs[i][oi] - mean) * (runs[i][oi] - mean) / (nruns - 1);
		r->use_mean = true;
		r->mean = mean;
		r->stddev = sqrt(var);
		r->runs = nruns;
	}
}

int stat_run_all(const struct stat_opts *opts, const struct stat_events *se)
{
	struct run_ctx rc = { .opts = opts, .se = se };
	struct stat_out out = { .f = stderr, .opts = opts, .format = opts->format };
	int status = 2;
	double **runs = NULL, *elapsed = NULL, mean_elapsed = 0;
	struct count_value *totals = NULL, *sums = NULL;
	struct outfile *of = NULL;
	FILE *nowhere = NULL;	/* -q without -o: the counts are written to no one */
	bool printed = false;
	/* before the temporary exists: a signal from here on is handled */
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	if (opts->output) {	/* a temporary now, put at -o only once the counts are in it */
		int err = outfile_check(opts->output);
		err = err ? err : outfile_open(opts->output, OUTFILE_MODE, &of);
		if (!err && !(out.f = outfile_stream(of)))
			err = -ENOMEM;
		if (!err && opts->append)
			err = copy_existing(opts->output, out.f);
		if (!err && opts->format == STAT_TABLE) {
			/* perf's line, so appended runs tell themselves apart */
			time_t now = time(NULL);
			char when[64];
			if (!ctime_r(&now, when))
				snprintf(when, sizeof(when), "%lld\n", (long long)now);
			fprintf(out.f, "# started on %s\n", when);
		}
		if (err) {
			cli_error("cannot write '%s': %s", opts->output, outfile_strerror(err));
			outfile_abort(of);
			return 2;
		}
	}
	if (opts->quiet && !opts->output) {
		if (!(nowhere = fopen("/dev/null", "w"))) {
			cli_error("cannot open /dev/null: %s", strerror(errno));
			return 2;
		}
		out.f = nowhere;
	}
	rc.out = &out;
	/* + 1: --null has no events, and calloc(0) may be NULL */
	if (open_set_build(se, &rc.os) || !(rc.rows = calloc(se->n + 1, sizeof(*rc.rows))) ||
	    !(totals = calloc(se->n + 1, sizeof(*totals))) ||
	    !(runs = calloc((size_t)opts->repeat, sizeof(*runs))) ||
	    !(elapsed = calloc((size_t)opts->repeat, sizeof(*elapsed))) ||
	    !(sums = calloc(se->n + 1, sizeof(*sums)))) {
		cli_error("out of memory");
		goto out;
	}
	if (rc.os.n == 0 && !opts->null_run) {
		cli_error("none of the requested events can be counted on this machine");
		goto out;
	}
	int nruns = 0;
	for (long r = 0; r < opts->repeat && !interrupted; r++) {
		bool started = false;
		status = run_once(&rc, totals, opts->repeat == 1, &started);
		if (!started)
			goto out; /* the command never ran: there is nothing to print */
		if (!(runs[nruns] = calloc(rc.os.n + 1, sizeof(double))))
			break;
		for (size_t i = 0; i < rc.os.n; i++) {
			runs[nruns][i] = count_value_scaled(&totals[i]);
			sums[i].value += totals[i].value;
			sums[i].enabled += totals[i].enabled;
			sums[i].running += totals[i].running;
		}
		elapsed[nruns++] = rc.elapsed_ns;
	}
	/* with -r, a rate (CPUs utilized: task-clock per elapsed second) is the mean count over
	 * the mean elapsed time, as perf stat prints it; the last run's time made a
	 * single-threaded gzip read 1.10 CPUs */
	for (int i = 0; i < nruns; i++)
		mean_elapsed += elapsed[i] / nruns;
	if (nruns > 1)
		print_repeat(&rc, runs, nruns, sums);
	else
		mean_elapsed = rc.elapsed_ns;
	/* perf stat -x with -I prints the intervals only: a script reads every line as one; with
	 * --interval-count perf prints nothing after the last row it was asked for */
	if (!(opts->format == STAT_PERF_CSV && opts->interval_ms) && !opts->interval_count)
		stat_print_rows(&out, rc.rows, rc.nrows, mean_elapsed, -1);
	if (opts->costs && spent_pmu_present() && !opts->interval_count)
		stat_print_costs(&out, rc.rows, rc.nrows);
	if (!opts->interval_count)
		stat_print_footer(&out, mean_elapsed, elapsed, nruns,
				  opts->argc && nruns == 1 && !opts->interval_ms ? &rc.cpu : NULL);
	printed = true;
out:
	if (runs)
		for (long r = 0; r < opts->repeat; r++)
			free(runs[r]);
	free(runs);
	free(elapsed);
	free(sums);
	free(totals);
	free(rc.rows);
	open_set_release(&rc.os);
	if (nowhere) {
		fclose(nowhere);
	} else if (of && !printed) {
		outfile_abort(of);	/* the command never ran: an existing -o stays as it was */
	} else if (of) {
		int err = outfile_commit(of);
		if (err) {
			cli_error("cannot write '%s': %s", opts->output, outfile_strerror(err));
			status = status ? status : 2;
		}
	} else if ((fflush(stderr) != 0 || ferror(stderr)) && printed) {
		/* the table is stat's output (on stderr, as perf's): nowhere to say so, but the
		 * exit status does (2 when the command's was 0, as for -o) */
		status = status ? status : 2;
	}
	return status;
}
