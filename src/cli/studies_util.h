/* cli/studies_util.h - what the trace-study commands share: running a sink over every batch of
 * a trace (with progress on a terminal), and size formatting. */
#ifndef SPENT_CLI_STUDIES_UTIL_H
#define SPENT_CLI_STUDIES_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

typedef int (*studies_sink_fn)(void *ctx, const struct trace_batch *b);

/* Open PATH with trace_source_open() and give every batch to FN. Prints one error line and
 * returns 1 on failure (CMD names the command), 0 when the whole stream was consumed. */
int studies_run(const char *cmd, const char *path, studies_sink_fn fn, void *ctx);
/* "32K", "8M", "96K", "100" */
void studies_size(char *buf, size_t len, uint64_t bytes);

#endif
