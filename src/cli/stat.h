/* cli/stat.h - what cmd_stat.c (running) shares with stat_output.c (printing). */
#ifndef SPENT_CLI_STAT_H
#define SPENT_CLI_STAT_H

#include <stdbool.h>
#include <stdio.h>

#include "collect/counting.h"
#include "spent/events.h"

/* STAT_PERF_CSV: -x SEP alone, perf stat -x's fields (no header, value first); STAT_CSV:
 * --csv, spent's own columns under a header row */
enum stat_format { STAT_TABLE, STAT_JSON, STAT_CSV, STAT_PERF_CSV };

struct stat_opts {
	char *events;		/* every -e joined into one list, NULL = defaults */
	int all_events;
	int detailed;		/* -d, -dd, -ddd: perf's detailed default events */
	int per_thread, per_process, per_cpu;	/* -A (perf's --no-aggr) is --per-cpu */
	int per_socket, per_die, per_core;	/* -a's CPUs summed by socket, die or core */
	int no_inherit;		/* -i: the command's first thread alone */
	int quiet;		/* -q: no counts (but into -o FILE), no warnings */
	long delay_ms;		/* -D: counting starts this long after the command */
	int null_run;		/* --null: the command timed, no counters */
	int system_wide;	/* -a, or -C */
	long pid;		/* -p */
	long tid;		/* -t: that one thread only */
	int *cpus;		/* -C: the CPUs counted; NULL = all online */
	size_t n_cpus;
	const char *cpu_list;	/* -C as given (argv), for the header as perf prints it */
	long repeat;		/* -r */
	long interval_ms;	/* -I */
	long interval_count;	/* --interval-count: only the first N -I rows, nothing after */
	int costs;
	int list;
	enum stat_format format;
	char sep;		/* CSV field separator: ',' or -x SEP */
	const char *output;	/* -o */
	int append;		/* --append: -o keeps what FILE held, the counts after it */
	char **argv;		/* command after -- */
	int argc;
};

/* One printed row: an event's value for the whole run, a thread, a process or a CPU. */
struct stat_row {
	const struct spent_event *ev;
	struct count_value v;
	bool supported;
	bool use_mean;		/* show MEAN: the mean over runs (-r) or over repeated copies */
	double mean, stddev;	/* stddev over runs when RUNS > 1 */
	int runs;
	/* breakdown identity; -1 when not broken down */
	int tid, pid, cpu;
	const char *comm;
	const char *unit;	/* --per-socket/die/core: "S0", "S0-D0", "S0-D0-C1"; NULL else */
	int unit_cpus;		/* the CPUs summed in it */
};

struct stat_out {
	FILE *f;
	const struct stat_opts *opts;	/* for the header, printed with the first rows */
	enum stat_format format;
	bool header_done;
};

/* The event list of a run, with perf's {a,b} groups; unsupported events stay for display. */
struct stat_events {
	struct spent_event *evs;
	int *group;
	bool *supported;
	size_t n;
	size_t cap_evs, cap_group, cap_supported;	/* each array's room (ALLOC_GROW) */
};

int stat_events_add(struct stat_events *se, const struct spent_event *ev, int group);
void stat_events_release(struct stat_events *se);

/* Run the counting OPTS asks for (once, -r times, or until interrupted) and print it.
 * Returns the exit status spent should exit with. */
int stat_run_all(const struct stat_opts *opts, const struct stat_events *se);

/* Print ROWS (one set: all events of one total/thread/process/cpu); ELAPSED_NS for rates. */
void stat_print_rows(struct stat_out *o, const struct stat_row *rows, size_t n, double elapsed_ns,
		     double interval_ts);
/* The command's CPU time (its reaped children's too), as wait4 gives it: printed after the
 * elapsed time for one run of a command, as perf stat does. */
struct stat_cpu_times {
	double user_s, sys_s;
};
/* CPU: NULL when there is none to print (no command, -r, -I). */
void stat_print_footer(struct stat_out *o, double elapsed_ns, const double *runs_elapsed, int nruns,
		       const struct stat_cpu_times *cpu);
void stat_print_costs(struct stat_out *o, const struct stat_row *rows, size_t n);

#endif
