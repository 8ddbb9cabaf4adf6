/* tests/fuzz/fuzz_profile_file.c - libFuzzer target for the profile file reader
 * (profile_file_parse): any bytes must be rejected or parsed, never crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct profile *p = profile_new();
	if (!p)
		return 0;
	const char *why = NULL;
	if (profile_file_parse(data, len, p, &why) == 0) {
		/* a file that parsed must survive the consumers' walks */
		for (uint32_t e = 0; e < profile_nevents(p); e++)
			(void)profile_event_total(p, e);
	}
	profile_free(p);
	return 0;
}
