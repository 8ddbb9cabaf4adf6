/* tests/fuzz/fuzz_trace_log.c - libFuzzer target for the `spent trace` log reader and
 * reconstructor: the input is a log in its raw form (fuzz_util.h: header + records as they
 * lie in decompressed blocks), which this target blocks, compresses and checksums, so
 * mutations reach the record parsers and the reconstructor instead of failing the block CRC.
 * The input is also read as a log as it is (header and block checks). Anything either
 * reconstructs or fails with a message, never crashes. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_util.h"
#include "spent/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every batch of the log in DATA, at most MAX instructions (a loop in the log cannot be
 * longer than the log, but a bound keeps every run short). */
static void read_all(const uint8_t *data, size_t size, uint64_t max)
{
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	char err[256];
	uint64_t n = 0;
	if (trace_log_open_mem(data, size, &src, err, sizeof(err)) < 0)
		return;
	while (n < max && spent_trace_source_next(src, &b) > 0)
		n += b.n_insns + b.n_events;
	(void)spent_trace_source_error(src);
	spent_trace_source_free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct binbuf log;
	read_all(data, size, 1000000);
	binbuf_init(&log);
	if (fuzz_trace_log_encode(data, size, &log) == 0)
		read_all(log.data, log.len, 1000000);
	binbuf_release(&log);
	return 0;
}
