/* tests/fuzz/fuzz_trace_log.c - libFuzzer target for the `spent trace` log reader and
 * reconstructor: any bytes either reconstruct or fail with a message, never crash. */
#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"
#include "trace/log_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_source *src;
	struct trace_batch b;
	char err[256];
	uint64_t n = 0;
	if (trace_log_open_mem(data, size, &src, err, sizeof(err)) < 0)
		return 0;
	while (trace_source_next(src, &b) > 0 && n < 10000000)
		n += b.n_insns + b.n_events;
	(void)trace_source_error(src);
	trace_source_free(src);
	return 0;
}
