/* cli/report_chains.h - `spent report -g`: perf's call-graph argument and the call chains
 * printed under each function (table) or carried by its JSON row. The chains themselves are
 * built with the rows (analysis/report.c, report_config.chains). */
#ifndef SPENT_CLI_REPORT_CHAINS_H
#define SPENT_CLI_REPORT_CHAINS_H

#include <stdbool.h>

#include "analysis/report.h"
#include "core/json.h"

/* How -g shows a row's chains. */
struct chain_view {
	bool on;		/* -g given, and not 'none' */
	bool callee;		/* leaf first (else from the root, perf's caller order) */
	double min_pct;		/* chains under this % of the first event's samples are left out */
};

/* -g's argument as perf takes it: comma-separated caller|callee, a threshold in percent, a
 * print type (graph, flat, folded: chains are one per line whatever it is; none: no chains).
 * 0, or -EINVAL for anything else. */
int report_chains_parse(const char *arg, struct chain_view *cv);
/* Whether WORD reads as -g's argument, which perf takes as the next word (`-g caller,0.5`):
 * its first comma-separated item is one of its words or a number. */
bool report_chains_is_arg(const char *word);
/* Under ROW of the table: its chains, one per line, with their share of all samples. */
void report_chains_print(const struct report *r, const struct report_row *row, const struct chain_view *cv);
/* ROW's chains as "call_chains": [{samples, percent, stack: [...]}] into the JSON object W. */
void report_chains_json(struct json_writer *w, const struct report *r, const struct report_row *row,
			const struct chain_view *cv);

#endif
