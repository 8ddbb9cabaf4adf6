/* analysis/report_detail.h - who and when in a report: a profile's detail rows (task, time
 * bucket, call chain; spent/profile.h) selected by comm, pid, tid, image and a wall-clock
 * window, grouped by any order of comm, pid, tid, image and function (perf report --sort), or
 * turned back into a plain profile holding only the selected samples for every other view. */
#ifndef SPENT_ANALYSIS_REPORT_DETAIL_H
#define SPENT_ANALYSIS_REPORT_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/symbols.h"
#include "spent/profile.h"

enum detail_key {
	DETAIL_KEY_COMM,
	DETAIL_KEY_PID,
	DETAIL_KEY_TID,
	DETAIL_KEY_IMAGE,	/* of the leaf frame ("dso" in perf) */
	DETAIL_KEY_FUNCTION,	/* of the leaf frame ("sym" in perf) */
	DETAIL_KEY_NR
};

/* Which samples count. Empty lists and 0 times select everything. */
struct detail_filter {
	const char *const *comms;	/* exact names */
	size_t ncomms;
	const uint32_t *pids;
	size_t npids;
	const uint32_t *tids;
	size_t ntids;
	const char *const *images;	/* a full path, or a file name ("libc.so.6") */
	size_t nimages;
	/* function names as reports show them (perf's --symbols), the leaf's named through SYM */
	const char *const *symbols;
	size_t nsymbols;
	struct symbols *sym;
	uint64_t start_ns, end_ns;	/* wall clock (Unix ns): a row's bucket start in
					 * [start, end), both rounded down to the profile's
					 * time bucket; 0 = open on that side */
};

/* Whether F selects anything less than the whole profile. */
bool detail_filter_active(const struct detail_filter *f);

/* Parse a --sort list ("comm,pid", perf's aliases dso and sym) into KEYS (at most
 * DETAIL_KEY_NR, no repeats). 0, or -EINVAL with the offending name in BADBUF. */
int detail_parse_keys(const char *spec, enum detail_key *keys, size_t *nkeys, char *badbuf,
		      size_t badlen);
const char *detail_key_name(enum detail_key k);

/*
 * Parse --time SPEC against the span [SPAN_START, SPAN_END] (Unix ns) into F's window:
 * "START,END" in seconds relative to the span start (decimals allowed, either side may be
 * empty), or perf's percent forms "A%-B%" (a range of the span) and "N%/K" (the K-th of the
 * 100/N equal slices). 0, -EINVAL (malformed), -ERANGE (the profile has no span).
 */
int detail_parse_time(const char *spec, uint64_t span_start, uint64_t span_end,
		      struct detail_filter *f);

/* Whether detail row R of P passes F. */
bool detail_row_selected(const struct spent_profile *p, const struct detail_filter *f,
			 const struct spent_profile_detail_row *r);

struct detail_group {
	char *cols[DETAIL_KEY_NR];	/* the shown value of each key, in the config's order */
	uint64_t samples;
};

struct detail_report {
	enum detail_key keys[DETAIL_KEY_NR];
	size_t nkeys;
	uint32_t event;
	uint64_t total;			/* samples of EVENT selected by the filter */
	struct detail_group *groups;	/* by samples, most first */
	size_t ngroups;
};

/* Group the detail rows of event EV that pass FILTER by KEYS (function names from SYM).
 * *OUT freed with detail_report_free. 0 or -ENOMEM. */
int detail_report_build(const struct spent_profile *p, struct symbols *sym, uint32_t ev,
			const enum detail_key *keys, size_t nkeys, const struct detail_filter *filter,
			struct detail_report **out);
void detail_report_free(struct detail_report *r);

/* A new profile with P's images and events holding only the samples of the detail rows that
 * pass FILTER: histograms from each row's leaf (a leaf with no image counts as unknown,
 * no-mapping), stacks from its chain when P has stacks, the rows themselves and P's span.
 * 0 or -ENOMEM. */
int detail_filter_profile(const struct spent_profile *p, const struct detail_filter *filter,
			  struct spent_profile **out);

#endif
