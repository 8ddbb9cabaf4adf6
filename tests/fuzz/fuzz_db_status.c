/* tests/fuzz/fuzz_db_status.c - libFuzzer target for the status-file reader `spent db DIR
 * status` uses (db_status_next_member): any bytes must be walked member by member, each call
 * moving forward, keys and values NUL-terminated within their buffers, never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), key[8], val[16];
	const char *p;
	size_t n = 0;
	bool quoted;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	p = text;
	/* small buffers: truncation is exercised on every long key or value */
	while (p && db_status_next_member(&p, key, sizeof(key), val, sizeof(val), &quoted) > 0) {
		if (strlen(key) >= sizeof(key) || strlen(val) >= sizeof(val))
			abort();
		if (p && (p < text || p > text + strlen(text)))
			abort();	/* the cursor stays inside the text */
		if (++n > size + 1)
			abort();	/* every member consumes at least one byte */
	}
	free(text);
	return 0;
}
