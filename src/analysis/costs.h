/* analysis/costs.h - perfex -y: estimated time per event class = count x typical cost, from a
 * cost table per CPU family. Costs are typical latencies in core cycles assuming no overlap,
 * as the R10000 tools did; each entry says where its number comes from. */
#ifndef SPENT_ANALYSIS_COSTS_H
#define SPENT_ANALYSIS_COSTS_H

#include <stddef.h>

struct cost_entry {
	const char *event;	/* perf event name the cost applies to */
	double cycles;		/* typical cost of one event, core cycles */
	const char *what;	/* what one event costs, in words */
	const char *source;	/* citation */
};

struct cost_model {
	const char *cpu;	/* family the table describes */
	const struct cost_entry *entries;
	size_t n_entries;
};

/* The model for this machine's CPU (from /proc/cpuinfo vendor and family). Never fails: an
 * unknown CPU gets the generic table, whose cpu name says so. */
const struct cost_model *costs_model_for_host(void);
/* The model for VENDOR ("GenuineIntel", "AuthenticAMD", other) and FAMILY. */
const struct cost_model *costs_model_for(const char *vendor, int family);

struct cost_estimate {
	const char *event;
	double count;
	double cycles;		/* count x cost */
	double pct_of_cycles;	/* of the measured total cycles */
	double seconds;		/* cycles / measured frequency, 0 when unknown */
	const struct cost_entry *entry;
};

/*
 * Estimate the cost of each counted event the model knows. NAMES/COUNTS are the events
 * measured; TOTAL_CYCLES the measured cycles (0 when not counted), RUN_SECONDS the task time
 * that ran those cycles. Writes up to MAX estimates into OUT; returns how many.
 */
size_t costs_estimate(const struct cost_model *m, const char *const *names, const double *counts,
		      size_t n, double total_cycles, double run_seconds,
		      struct cost_estimate *out, size_t max);

#endif
