/* cli/report_who.h - the who-and-when part of `spent report`: the --sort table and the
 * --comm/--pid/--tid/--image/--time selection (analysis/report_detail.h), kept out of
 * cmd_report.c. Other time options (--since, --until) set FILTER.start_ns/end_ns directly. */
#ifndef SPENT_CLI_REPORT_WHO_H
#define SPENT_CLI_REPORT_WHO_H

#include "analysis/report_detail.h"
#include "cli/parse_options.h"

enum out_fmt { OUT_TABLE, OUT_JSON, OUT_CSV };

struct report_who {
	/* as given */
	const char *sort;
	struct opt_string_list comm, pid, tid, image, symbol;
	const char *time;
	/* parsed */
	enum detail_key keys[DETAIL_KEY_NR];
	size_t nkeys;			/* 0: no --sort */
	struct detail_filter filter;
	char **strings;			/* the split --comm, --image and --symbols lists */
	size_t nstrings, cap_strings;
	uint32_t *ids;			/* the split --pid and --tid lists */
	size_t cap_ids;
};

/* The option lines of `spent report` for W (an initializer list of struct option). */
#define REPORT_WHO_OPTIONS(w)								\
	OPT_GROUP("who and when (profiles with detail rows: spent record, the daemon)"),	\
	OPT_STRING('s', "sort", &(w)->sort, "KEYS",					\
		   "group samples by comm,pid,tid,image,function (any order; dso, sym)"),	\
	OPT_STRING_LIST(0, "comm", &(w)->comm, "NAME,...", "only samples of these comms"),	\
	OPT_STRING_LIST(0, "pid", &(w)->pid, "PID,...", "only samples of these processes"),	\
	OPT_STRING_LIST(0, "tid", &(w)->tid, "TID,...", "only samples of these threads"),	\
	OPT_STRING_LIST(0, "image", &(w)->image, "IMAGE,...",				\
			"only samples whose leaf is in these images (path or file name)"),	\
	OPT_STRING_LIST('S', "symbols", &(w)->symbol, "NAME,...",			\
			"only samples whose leaf is in these functions (as reports name them)"),\
	{ .type = OPTION_STRING_LIST, .long_name = "comms", .value = &(w)->comm,		\
	  .argh = "NAME,...", .help = "perf's --comm", .flags = PARSE_OPT_HIDDEN },		\
	{ .type = OPTION_STRING_LIST, .long_name = "dsos", .value = &(w)->image,		\
	  .argh = "IMAGE,...", .help = "perf's --image", .flags = PARSE_OPT_HIDDEN },		\
	OPT_STRING(0, "time", &(w)->time, "START,END",					\
		   "only samples in this window: seconds from the profile's start, "		\
		   "or A%-B% / N%/K of its span")

/* After option parsing: split the lists, parse --sort. 0 or PARSE_OPT_ERROR (printed). */
int report_who_check(struct report_who *w, const struct parse_usage *pu);
/* Whether any who/when option is in use (so the profile needs detail rows). */
bool report_who_active(const struct report_who *w);
/*
 * After loading *P from INPUT: fail with one error line when P has no detail rows, resolve
 * --time against P's span, and replace *P by the selected samples when a filter is active.
 * 0 or -errno (printed); -EINVAL only for a malformed --time (a usage error: exit 2).
 */
int report_who_select(struct report_who *w, const char *input, struct symbols *sym,
		      struct spent_profile **p);
/* Print the --sort table of each of the NEV events EVS in FMT (LIMIT rows each, < 0 = all):
 * tables one after the other, CSV under one header, JSON lines; each row names its event.
 * 0 or -errno (printed). */
int report_who_print(const struct report_who *w, const struct spent_profile *p, struct symbols *sym,
		     const uint32_t *evs, size_t nev, enum out_fmt fmt, long limit);
void report_who_release(struct report_who *w);

#endif
