/* tests/fuzz/fuzz_event_spec.c - libFuzzer target: any bytes as an event list must parse or be
 * refused with an error message, never crash, and a parsed event's name must come from the spec. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spent/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 512)
		return 0;
	char *spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	struct spent_event *evs = NULL;
	size_t n = 0;
	char err[256];
	if (spent_event_parse_list(spec, &evs, &n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < n; i++)
			if (!strstr(spec, evs[i].name))
				abort();
		free(evs);
	} else if (!err[0]) {
		abort(); /* every refusal explains itself */
	}
	free(spec);
	return 0;
}
