/* tests/fuzz/fuzz_profile_file.c - libFuzzer target for the profile file reader
 * (spent_profile_file_parse): any bytes must be rejected or parsed, never crash or leak; parsed as
 * they are and again with the trailing CRC recomputed (fuzz_util.h), so mutations reach the
 * body's checks. A version-3 samples file is also parsed in its other form: a stored body
 * compressed, a compressed one (at most 4 MB) stored, so that mutations of a stored body reach
 * the decompression path and those of a compressed one the body's parser. What parsed is
 * walked as the views walk it, and its detail rows are written as a samples file again: that
 * must parse back to as many rows (abort otherwise). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

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
		int counts = profile_samples_hold_counts(p, e);
		unsigned flags = (hold ? PROFILE_SAMPLES_STACKS : 0) | (counts > 0 ? PROFILE_SAMPLES_COUNTS : 0);
		if (q && !profile_file_encode_samples(p, e, flags, &b, &empty) && !empty) {
			const char *why = NULL;
			/* the counts a file carries come back as the same cells */
			if (spent_profile_file_parse(b.data, b.len, q, &why) ||
			    spent_profile_ndetail(q) != spent_profile_ndetail(p) ||
			    (hold && spent_profile_nstacks(q) != spent_profile_nstacks(p)) ||
			    (counts > 0 && spent_profile_ncells(q) != spent_profile_ncells(p)))
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

/* The samples file DATA (version 3 or 4) with its body in the other form, CRC fixed; NULL
 * when DATA is not one. */
static uint8_t *other_form(const uint8_t *data, size_t len, size_t *outlen)
{
	struct binreader r;
	uint64_t v, blen;
	uint8_t kind, method;
	char *name = NULL;
	if (len < 13 || memcmp(data, "SPPF", 4) || (data[4] != 3 && data[4] != 4) ||
	    memcmp(data + 5, "\0\0\0", 3))
		return NULL;
	binreader_init(&r, data + 8, len - 12);
	int bad = binreader_get_u8(&r, &kind) || kind != PROFILE_FILE_SAMPLES ||
		  binreader_get_str(&r, 1024, &name);
	for (int i = 0; i < 5 && !bad; i++)
		bad = binreader_get_uvarint(&r, &v);
	free(name);
	if (bad || binreader_get_u8(&r, &method) || binreader_get_uvarint(&r, &blen) || method > 1)
		return NULL;
	size_t head = (size_t)(r.p - data), n = binreader_left(&r);
	const uint8_t *body = r.p;
	uint8_t *tmp = NULL;
	if (method == 1) {
		if (blen > (4u << 20) || !(tmp = malloc(blen + 1)))
			return NULL;
		size_t got = ZSTD_decompress(tmp, blen, body, n);
		if (ZSTD_isError(got) || got != blen) {
			free(tmp);
			return NULL;
		}
		body = tmp;
		n = blen;
	}
	struct binbuf b;
	binbuf_init(&b);
	/* the header up to the method byte, which is followed by the body length */
	size_t lenlen = 1;
	for (uint64_t x = blen; x >= 128; x >>= 7)
		lenlen++;
	binbuf_put(&b, data, head - lenlen - 1);
	binbuf_put_u8(&b, method ? 0 : 1);
	binbuf_put_uvarint(&b, n);
	if (method) {
		binbuf_put(&b, body, n);
	} else if (!binbuf_reserve(&b, ZSTD_compressBound(n))) {
		size_t z = ZSTD_compress(b.data + b.len, ZSTD_compressBound(n), body, n, 1);
		b.len += ZSTD_isError(z) ? 0 : z;
	}
	free(tmp);
	binbuf_put_le32(&b, 0);
	fuzz_fix_trailing_crc(b.data, b.len);
	*outlen = b.len;
	return b.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	parse(data, len);
	uint8_t *copy = len >= 8 && len <= (1u << 20) ? fuzz_copy_fixed_crc(data, len) : NULL;
	if (copy)
		parse(copy, len);
	size_t olen;
	uint8_t *other = copy ? other_form(copy, len, &olen) : NULL;
	if (other)
		parse(other, olen);
	free(other);
	free(copy);
	return 0;
}
