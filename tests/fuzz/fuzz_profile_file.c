/* tests/fuzz/fuzz_profile_file.c - libFuzzer target for the profile file reader
 * (spent_profile_file_parse): any bytes must be rejected or parsed, never crash or leak; parsed as
 * they are and again with the trailing CRC recomputed (fuzz_util.h), so mutations reach the
 * body's checks. What parsed is walked as the views walk it, and its detail rows are written
 * as a samples file again: that must parse back to as many rows (abort otherwise). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "profile/profile_file.h"
#include "spent/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* Every detail row read as a view reads it; each event's rows re-encoded and parsed back
 * (with the stacks in the chains when they are: then the stacks come back too). */
static void detail_roundtrip(const struct spent_profile *p)
{
	uint64_t total = 0;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		struct spent_profile_detail_row r;
		if (spent_profile_detail_get(p, i, &r))
			abort();
		const struct spent_profile_task *t = spent_profile_task_get(p, r.task);
		total += r.count + (t ? strlen(t->comm) : 0) + r.frames[r.nframes - 1].offset;
	}
	(void)total;
	for (uint32_t e = 0; e < spent_profile_nevents(p); e++) {
		struct binbuf b;
		bool empty = true;
		binbuf_init(&b);
		struct spent_profile *q = spent_profile_new();
		bool hold = profile_samples_hold_stacks(p, e);
		if (q && !profile_file_encode_samples(p, e, hold, &b, &empty) && !empty) {
			const char *why = NULL;
			if (spent_profile_file_parse(b.data, b.len, q, &why) ||
			    spent_profile_ndetail(q) != spent_profile_ndetail(p) ||
			    (hold && spent_profile_nstacks(q) != spent_profile_nstacks(p)))
				abort();
		}
		spent_profile_free(q);
		binbuf_release(&b);
	}
}

static void parse(const uint8_t *data, size_t len)
{
	struct spent_profile *p = spent_profile_new();
	if (!p)
		return;
	const char *why = NULL;
	if (spent_profile_file_parse(data, len, p, &why) == 0) {
		/* a file that parsed must survive the consumers' walks */
		for (uint32_t e = 0; e < spent_profile_nevents(p); e++)
			(void)spent_profile_event_total(p, e);
		detail_roundtrip(p);
	}
	spent_profile_free(p);
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
