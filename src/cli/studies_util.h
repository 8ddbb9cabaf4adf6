/* cli/studies_util.h - what the trace-study commands share: running a sink over every batch of
 * a trace (with the percentage of the log read on a terminal), and size formatting. */
#ifndef SPENT_CLI_STUDIES_UTIL_H
#define SPENT_CLI_STUDIES_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

struct option;
struct parse_usage;
/* parse_options() for a study: the options of OPTS and exactly one operand, the trace, into
 * *TRACE. 0, PARSE_OPT_HELP or PARSE_OPT_ERROR (the error printed). */
int studies_parse(int argc, char **argv, const struct option *opts, const struct parse_usage *u,
		  const char **trace);

/* Which processes of a process-tree trace a study reads (--pid, --comm), and whether their
 * addresses are tagged apart (a cache or hit-curve model: two processes' equal addresses are
 * different memory). Set by the options STUDIES_FILTER_OPTIONS adds to a command's table. */
struct studies_filter {
	long pid;		/* 0: every process */
	const char *comm;	/* NULL: every program */
	int tag;		/* SPENT_TRACE_SELECT_TAG the addresses by process */
	int progress;		/* --progress: show it even when stderr is no terminal */
	int execs;		/* the sink reads batches of superblock executions too */
	int need_data;		/* refuse a log traced with --no-data (else: a warning) */
};
extern struct studies_filter studies_filter;
/* "--comm NAME" or "--pid PID": a selection as the user gave it, for a message. */
void studies_selection_text(char *buf, size_t len, long pid, const char *comm);
/* (with --progress, which every study has too) */
#define STUDIES_FILTER_OPTIONS \
	OPT_BOOL(0, "progress", &studies_filter.progress, \
		 "show the percentage of the log read on stderr (default: when it is a terminal)"), \
	OPT_INT(0, "pid", &studies_filter.pid, "PID", \
		"only the process PID of a process-tree trace (default: all)", 1, 2147483647), \
	OPT_STRING(0, "comm", &studies_filter.comm, "NAME", \
		   "only processes running the program NAME (default: all)")

/* The "spent: CMD: N% of 'LOG' read" line on stderr, redrawn at most twice a second and cleared
 * at the end; shown when stderr is a terminal or FORCE. */
struct studies_progress {
	const char *cmd, *path;
	int on, shown;
	double last;
};
void studies_progress_begin(struct studies_progress *p, const char *cmd, const char *path,
			    int force);
void studies_progress_update(struct studies_progress *p, struct spent_trace_source *src);
void studies_progress_end(struct studies_progress *p);

typedef int (*studies_sink_fn)(void *ctx, const struct spent_trace_batch *b);

/* Open PATH with spent_trace_source_open() and give every batch to FN. Prints one error line and
 * returns 1 when nothing can be reported (CMD names the command: the log cannot be opened,
 * the sink failed); else 0, with CUT empty when the whole stream was consumed, or holding
 * why the log stopped early (cut or corrupt): the caller reports on the complete part, then
 * calls studies_done(). */
int studies_run(const char *cmd, const char *path, studies_sink_fn fn, void *ctx, char *cut,
		size_t cut_len);
/* After the report: print CUT's error line and return 1 when the log stopped early, else 0. */
int studies_done(const char *cut);
/* "32K", "8M", "96K", "100" */
void studies_size(char *buf, size_t len, uint64_t bytes);

#endif
