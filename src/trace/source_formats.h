/* trace/source_formats.h - the table of on-disk trace formats spent_trace_source_open() recognises.
 * Each format adds one entry in source_formats.c: a cheap probe (magic bytes) and an opener. */
#ifndef SPENT_TRACE_SOURCE_FORMATS_H
#define SPENT_TRACE_SOURCE_FORMATS_H

#include <stddef.h>

#include "spent/trace.h"

struct trace_source_format {
	const char *name;
	/* 1 when PATH looks like this format, 0 when not, -errno when unreadable */
	int (*probe)(const char *path);
	int (*open)(const char *path, struct spent_trace_source **out, char *err, size_t errlen);
};

extern const struct trace_source_format trace_source_formats[];
extern const size_t trace_source_n_formats;

#endif
