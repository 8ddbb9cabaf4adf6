/* tests/fuzz/fuzz_shim_reader.c - libFuzzer target for the Shim sample-file reader: parse the
 * input as is, then again with its trailing checksum recomputed so mutations reach the body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "shim/shim_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shim_result *r = NULL;
	if (shim_file_parse(data, size, &r) == 0)
		shim_result_free(r);
	uint8_t *copy = size >= 20 && size <= (1u << 20) ? fuzz_copy_fixed_crc(data, size) : NULL;
	r = NULL;
	if (copy && shim_file_parse(copy, size, &r) == 0)
		shim_result_free(r);
	free(copy);
	return 0;
}
