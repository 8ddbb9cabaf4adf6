/* tests/fuzz/fuzz_citcat_recording.c - libFuzzer target for the citcat recording reader:
 * any byte string is parsed without crashing; what parses is walked like the replayer does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "citcat/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct cc_recording *r = NULL;
	char err[256];
	if (cc_recording_parse(copy, size, &r, err, sizeof(err)) == 0) {
		uint64_t sum = 0;
		for (size_t i = 0; i < r->n; i++) {
			const struct cc_rec *x = &r->recs[i];
			if (x->kind == CC_REC_MEM && x->u.mem.len)
				sum += x->u.mem.bytes[x->u.mem.len - 1];
			if (x->kind == CC_REC_MAP && x->u.map.file_id)
				sum += cc_recording_file(r, x->u.map.file_id) != NULL;
		}
		(void)sum;
		cc_recording_free(r);
	}
	return 0;
}
