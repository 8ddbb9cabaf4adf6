/* cli/stat_run.c - running `spent stat`: start the command held at a barrier so counting
 * begins at its exec, wait on a pidfd while draining per-thread records and printing
 * intervals, repeat runs, and turn readings into printed rows. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stat.h"
#include "collect/thread_tracker.h"
#include "core/outfile.h"
#include "core/workload.h"

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
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

/* The wait status of PID as a shell exit code; 1 when it cannot be waited for. */
static int wait_status(pid_t pid)
{
	int status;
	return workload_wait(pid, &status, 0) < 0 ? 1 : workload_exit_code(status);
}

static void fill_rows(const struct stat_events *se, const struct open_set *os,
		      const struct count_value *vals, struct stat_row *rows, size_t *nrows)
{
	size_t k = 0;
	for (size_t i = 0; i < se->n; i++) {
		/* a repeated event (cycles, instructions in every --all-events group) is one row:
		 * the mean of its projections */
		size_t first = i;
		for (size_t j = 0; j < i; j++)
			if (strcmp(se->evs[j].spec, se->evs[i].spec) == 0 && se->supported[j] == se->supported[i]) {
				first = j;
				break;
			}
		if (first != i)
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
		if (copies > 1) {
			r->use_mean = true;
			r->mean = sum / copies;
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
	}
}

struct run_ctx {
	const struct stat_opts *opts;
	const struct stat_events *se;
	struct open_set os;
	struct stat_out *out;
	struct stat_row *rows;
	size_t nrows;
	double elapsed_ns;
};

static void print_breakdown(struct run_ctx *rc, const struct thread_counts *th, size_t nth)
{
	struct count_value *acc = calloc(rc->os.n, sizeof(*acc));
	bool *done = calloc(nth, sizeof(bool));
	if (!acc || !done)
		goto out;
	for (size_t t = 0; t < nth; t++) {
		if (rc->opts->per_thread) {
			fill_rows(rc->se, &rc->os, th[t].values, rc->rows, &rc->nrows);
			set_identity(rc->rows, rc->nrows, th[t].tid, th[t].pid, -1, th[t].comm);
			stat_print_rows(rc->out, rc->rows, rc->nrows, rc->elapsed_ns, -1);
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
		stat_print_rows(rc->out, rc->rows, rc->nrows, rc->elapsed_ns, -1);
	}
	if (rc->out->format == STAT_TABLE)
		fputc('\n', rc->out->f);
out:
	free(acc);
	free(done);
}

/* -p: the threads that existed at attach, each with what it and its later children did. */
static void print_slot_breakdown(struct run_ctx *rc, struct counting *c)
{
	size_t n = counting_n_slots(c);
	struct thread_counts *th = calloc(n, sizeof(*th));
	struct count_value *vals = calloc(n * rc->os.n, sizeof(*vals));
	if (th && vals) {
		for (size_t s = 0; s < n; s++) {
			th[s].tid = counting_slot_id(c, s);
			th[s].pid = rc->opts->pid;
			th[s].values = &vals[s * rc->os.n];
			thread_comm(th[s].pid, th[s].tid, th[s].comm);
			counting_read_slot(c, s, th[s].values);
		}
		print_breakdown(rc, th, n);
	}
	free(th);
	free(vals);
}

static void print_per_cpu(struct run_ctx *rc, struct counting *c)
{
	struct count_value *vals = calloc(rc->os.n, sizeof(*vals));
	if (!vals)
		return;
	for (size_t s = 0; s < counting_n_slots(c); s++) {
		if (counting_read_slot(c, s, vals))
			continue;
		fill_rows(rc->se, &rc->os, vals, rc->rows, &rc->nrows);
		set_identity(rc->rows, rc->nrows, -1, -1, counting_slot_id(c, s), NULL);
		stat_print_rows(rc->out, rc->rows, rc->nrows, rc->elapsed_ns, -1);
	}
	if (rc->out->format == STAT_TABLE)
		fputc('\n', rc->out->f);
	free(vals);
}

static int open_counting(struct run_ctx *rc, pid_t child, struct counting **c)
{
	const struct stat_opts *o = rc->opts;
	struct counting_config cfg = {
		.events = rc->os.evs,
		.n_events = rc->os.n,
		.group = rc->os.group,
		.mode = o->system_wide ? COUNTING_CPUS : o->pid ? COUNTING_THREADS : COUNTING_TASK,
		.pid = o->tid ? (pid_t)o->tid : o->pid ? (pid_t)o->pid : child,
		.enable_on_exec = !o->system_wide && !o->pid && !o->tid,
		.inherit = !o->tid,	/* -t: that thread alone, as perf stat -t */
		.cpus = o->cpus,
		.n_cpus = o->n_cpus,
	};
	size_t bad = 0;
	int err = counting_new(&cfg, c, &bad);
	if (err == -ESRCH)
		cli_error("%s '%ld' not found", o->tid ? "thread" : "process", o->tid ? o->tid : o->pid);
	else if (err)
		cli_error("cannot open event '%s': %s%s", rc->os.evs[bad].spec, strerror(-err),
			  err == -EACCES || err == -EPERM ? " (run as root or lower kernel.perf_event_paranoid)" : "");
	if (!err && (cfg.mode != COUNTING_TASK || o->tid))
		err = counting_enable(*c);
	return err;
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
	for (size_t i = 0; i < rc->os.n; i++) {
		delta[i].value = totals[i].value - prev[i].value;
		delta[i].enabled = totals[i].enabled - prev[i].enabled;
		delta[i].running = totals[i].running - prev[i].running;
		prev[i] = totals[i];
	}
	fill_rows(rc->se, &rc->os, delta, rc->rows, &rc->nrows);
	free(delta);
	return 0;
}

/* With -I: the counts since the last interval row, up to now, as one more row. The command's
 * last partial interval is printed as perf does (it was dropped: the interval rows did not add
 * up to the totals). */
static void print_last_interval(struct run_ctx *rc, struct counting *c, struct count_value *totals,
				struct count_value *prev, double start)
{
	if (prev && read_into_rows(rc, c, totals, prev) == 0)
		stat_print_rows(rc->out, rc->rows, rc->nrows, 0, (now_ns() - start) / 1e9);
}

/* Wait for the command or process to end (or Ctrl-C without one), printing intervals. */
static void wait_loop(struct run_ctx *rc, struct counting *c, pid_t watch, double start,
		      struct count_value *totals)
{
	const struct stat_opts *o = rc->opts;
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	struct count_value *prev = o->interval_ms ? calloc(rc->os.n, sizeof(*prev)) : NULL;
	double next = start + (double)o->interval_ms * 1e6;
	for (;;) {
		struct pollfd pfd[2];
		int n = 0;
		if (pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		int timeout = -1;
		if (prev) {
			double ms = (next - now_ns()) / 1e6;
			timeout = ms < 0 ? 0 : (int)ms + 1;
		}
		if (pidfd < 0 && watch > 0 && timeout < 0)
			timeout = 100; /* no pidfd (old kernel): poll the child's state */
		int r = poll(pfd, (nfds_t)n, timeout);
		if (interrupted && (o->argc == 0 || watch <= 0))
			break;
		if (interrupted == 1 && o->argc) {
			/* a terminal's Ctrl-C reaches the command too; a kill aimed at spent alone
			 * is passed on so the command stops and the counts still print */
			kill(watch, SIGINT);
			interrupted = 2;
		}
		if (prev && now_ns() >= next) {
			if (read_into_rows(rc, c, totals, prev) == 0)
				stat_print_rows(rc->out, rc->rows, rc->nrows, 0, (now_ns() - start) / 1e9);
			next += (double)o->interval_ms * 1e6;
		}
		if (r > 0 && pidfd >= 0 && (pfd[0].revents & (POLLIN | POLLHUP)))
			break;
		if (pidfd < 0 && watch > 0 && o->argc && waitid(P_PID, watch, NULL, WEXITED | WNOHANG | WNOWAIT) == 0) {
			siginfo_t si = { 0 };
			if (waitid(P_PID, watch, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == watch)
				break;
		}
		if (pidfd < 0 && watch > 0 && !o->argc && kill(watch, 0) < 0)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	print_last_interval(rc, c, totals, prev, start);
	free(prev);
}

static volatile sig_atomic_t tick;

static void on_tick(int sig)
{
	(void)sig;
	tick = 1;
}

/* The breakdown's wait: every stop of the traced tree comes through waitpid; a timer
 * interrupts it for -I intervals. Returns the root's exit status. */
static int wait_loop_traced(struct run_ctx *rc, struct counting *c, struct thread_tracker *tt,
			    pid_t root, double start, struct count_value *totals)
{
	const struct stat_opts *o = rc->opts;
	struct count_value *prev = o->interval_ms ? calloc(rc->os.n, sizeof(*prev)) : NULL;
	struct sigaction sa = { .sa_handler = on_tick };
	sigaction(SIGALRM, &sa, NULL);
	if (prev) {
		struct itimerval it = { { o->interval_ms / 1000, (o->interval_ms % 1000) * 1000 },
					{ o->interval_ms / 1000, (o->interval_ms % 1000) * 1000 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	int status = 1, err_reported = 0;
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);
		if (tid < 0 && errno == EINTR) {
			if (tick && prev && read_into_rows(rc, c, totals, prev) == 0)
				stat_print_rows(rc->out, rc->rows, rc->nrows, 0, (now_ns() - start) / 1e9);
			tick = 0;
			if (interrupted == 1) {
				kill(root, SIGINT);
				interrupted = 2;
			}
			continue;
		}
		if (tid < 0)
			break; /* no children left */
		int r = thread_tracker_handle(tt, tid, st, &status);
		if (r < 0 && !err_reported++)
			cli_warn("a new thread could not be counted: %s", strerror(-r));
		if (r == 1)
			break;
	}
	if (prev) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	}
	print_last_interval(rc, c, totals, prev, start);
	free(prev);
	return status;
}

/* One run: returns the exit status to report; TOTALS gets the readings. */
static int run_once(struct run_ctx *rc, struct count_value *totals, bool print_details)
{
	const struct stat_opts *o = rc->opts;
	struct workload ch = WORKLOAD_INIT;
	const struct workload_opts held = { .hold = true };	/* exec once the counters are open */
	struct counting *c = NULL;
	struct thread_tracker *tt = NULL;
	bool traced = o->argc && (o->per_thread || o->per_process);
	int status = 0, err;
	size_t bad = 0;
	if (o->argc && (err = workload_spawn(&ch, o->argv, &held))) {
		cli_error("cannot start '%s': %s", o->argv[0], strerror(-err));
		return 1;
	}
	if (traced && ((err = thread_tracker_new(rc->os.evs, rc->os.group, rc->os.n, &tt)) ||
		       (err = thread_tracker_attach(tt, ch.pid, &bad)))) {
		cli_error("cannot follow the threads of '%s': %s", o->argv[0], strerror(-err));
		thread_tracker_free(tt);
		workload_abort(&ch);
		return 2;
	}
	if (open_counting(rc, ch.pid, &c)) {
		thread_tracker_free(tt);
		if (ch.pid > 0)
			workload_abort(&ch);
		return 2;
	}
	double start = now_ns();
	if (ch.pid > 0) {
		int e = workload_start(&ch);
		if (e) {
			wait_status(ch.pid);
			counting_free(c);
			thread_tracker_free(tt);
			cli_error("workload failed: cannot run '%s': %s", o->argv[0], strerror(-e));
			return workload_exec_exit_code(e);
		}
	}
	if (tt) {
		status = wait_loop_traced(rc, c, tt, ch.pid, start, totals);
	} else {
		wait_loop(rc, c, ch.pid > 0 ? ch.pid : (pid_t)(o->pid ? o->pid : o->tid), start, totals);
		if (ch.pid > 0)
			status = wait_status(ch.pid);
	}
	rc->elapsed_ns = now_ns() - start;
	if (read_into_rows(rc, c, totals, NULL) == 0 && print_details) {
		const struct thread_counts *th;
		size_t nth;
		if (tt && thread_tracker_results(tt, &th, &nth) == 0)
			print_breakdown(rc, th, nth);
		else if (o->pid && (o->per_thread || o->per_process))
			print_slot_breakdown(rc, c);
		if (o->per_cpu)
			print_per_cpu(rc, c);
		/* the breakdown printed rows of its own: the totals follow */
		read_into_rows(rc, c, totals, NULL);
	}
	counting_free(c);
	thread_tracker_free(tt);
	return status;
}

static void print_repeat(struct run_ctx *rc, double *const *runs, int nruns, const struct count_value *last)
{
	fill_rows(rc->se, &rc->os, last, rc->rows, &rc->nrows);
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
	double **runs = NULL, *elapsed = NULL;
	struct count_value *totals = NULL;
	struct outfile *of = NULL;
	bool printed = false;
	if (opts->output) {	/* a temporary now, put at -o only once the counts are in it */
		int err = outfile_check(opts->output);
		err = err ? err : outfile_open(opts->output, OUTFILE_MODE, &of);
		if (!err && !(out.f = outfile_stream(of)))
			err = -ENOMEM;
		if (err) {
			cli_error("cannot write '%s': %s", opts->output, outfile_strerror(err));
			outfile_abort(of);
			return 2;
		}
	}
	rc.out = &out;
	if (open_set_build(se, &rc.os) || !(rc.rows = calloc(se->n, sizeof(*rc.rows))) ||
	    !(totals = calloc(se->n, sizeof(*totals))) ||
	    !(runs = calloc((size_t)opts->repeat, sizeof(*runs))) ||
	    !(elapsed = calloc((size_t)opts->repeat, sizeof(*elapsed)))) {
		cli_error("out of memory");
		goto out;
	}
	if (rc.os.n == 0) {
		cli_error("none of the requested events can be counted on this machine");
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int nruns = 0;
	for (long r = 0; r < opts->repeat && !interrupted; r++) {
		status = run_once(&rc, totals, opts->repeat == 1);
		if (!(runs[nruns] = calloc(rc.os.n, sizeof(double))))
			break;
		for (size_t i = 0; i < rc.os.n; i++)
			runs[nruns][i] = count_value_scaled(&totals[i]);
		elapsed[nruns++] = rc.elapsed_ns;
		if (status == 2 || status == 126 || status == 127)
			goto out; /* the command never ran: there is nothing to print */
	}
	if (nruns > 1)
		print_repeat(&rc, runs, nruns, totals);
	stat_print_rows(&out, rc.rows, rc.nrows, rc.elapsed_ns, -1);
	if (opts->costs && spent_pmu_present())
		stat_print_costs(&out, rc.rows, rc.nrows);
	stat_print_footer(&out, rc.elapsed_ns, elapsed, nruns);
	printed = true;
out:
	if (runs)
		for (long r = 0; r < opts->repeat; r++)
			free(runs[r]);
	free(runs);
	free(elapsed);
	free(totals);
	free(rc.rows);
	open_set_release(&rc.os);
	if (of && !printed) {
		outfile_abort(of);	/* the command never ran: an existing -o stays as it was */
	} else if (of) {
		int err = outfile_commit(of);
		if (err) {
			cli_error("cannot write '%s': %s", opts->output, outfile_strerror(err));
			status = status ? status : 2;
		}
	} else {
		fflush(stderr);
	}
	return status;
}
