/* cli/trace_cli.h - what `spent trace`'s files share: the stats subcommand (trace_stats.c),
 * called by cmd_trace.c. */
#ifndef SPENT_CLI_TRACE_CLI_H
#define SPENT_CLI_TRACE_CLI_H

/* `spent trace stats [--json] PATH`: 0, or 1 after an error line. */
/* PROGRESS: show the percentage read on stderr even when it is no terminal */
int trace_stats(const char *path, int json, int progress);

#endif
