/* tests/fuzz/fuzz_citcat_recording.c - libFuzzer target for the citcat recording reader:
 * any byte string is parsed without crashing, as it is (a bad frame CRC ends the readable
 * stream) and with every frame's CRC recomputed (fuzz_util.h), so mutations reach the payload
 * parsers and the order checks; what parses is walked like the replayer does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "citcat/recording.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse(const uint8_t *data, size_t size, int fix_crcs)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	if (fix_crcs)
		fuzz_fix_citcat_crcs(copy, size);
	struct cc_recording *r = NULL;
	char err[256];
	if (cc_recording_parse(copy, size, &r, err, sizeof(err)) == 0) {	/* owns COPY */
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse(data, size, 0);
	parse(data, size, 1);
	return 0;
}
