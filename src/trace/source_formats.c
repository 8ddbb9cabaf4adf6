/* trace/source_formats.c - the formats spent_trace_source_open() tries, in order. */
#include "citcat/citcat.h"
#include "core/alloc.h"
#include "trace/log_io.h"
#include "trace/source_formats.h"

const struct trace_source_format trace_source_formats[] = {
	{ "patchwrx-log", trace_log_probe, trace_log_open_source },	/* spent trace */
	{ "citcat", citcat_probe, citcat_open_source },			/* spent citcat */
	{ 0 },
};

const size_t trace_source_n_formats = ARRAY_SIZE(trace_source_formats) - 1;
