/* tests/fuzz/fuzz_profile_file.c - libFuzzer target for the profile file reader
 * (profile_file_parse): any bytes must be rejected or parsed, never crash or leak; parsed as
 * they are and again with the trailing CRC recomputed (fuzz_util.h), so mutations reach the
 * body's checks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "spent/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static void parse(const uint8_t *data, size_t len)
{
	struct profile *p = profile_new();
	if (!p)
		return;
	const char *why = NULL;
	if (profile_file_parse(data, len, p, &why) == 0) {
		/* a file that parsed must survive the consumers' walks */
		for (uint32_t e = 0; e < profile_nevents(p); e++)
			(void)profile_event_total(p, e);
	}
	profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	parse(data, len);
	uint8_t *copy = len >= 8 && len <= (1u << 20) ? fuzz_copy_fixed_crc(data, len) : NULL;
	if (copy)
		parse(copy, len);
	free(copy);
	return 0;
}
