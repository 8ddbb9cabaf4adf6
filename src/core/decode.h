/* core/decode.h - x86-64 instruction decoding (Zydis) for sources and annotators: length and the
 * TRACE_INSN_* flags of include/spent/trace.h, each static instruction decoded once and cached by
 * (image, offset). */
#ifndef SPENT_CORE_DECODE_H
#define SPENT_CORE_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct decode_cache;

struct decoded_insn {
	uint8_t len;		/* bytes, 1..15; 0 when the bytes do not decode */
	uint16_t flags;		/* enum spent_trace_insn_flag */
};

/* A new, empty cache; NULL on ENOMEM. Free with decode_cache_free(). */
struct decode_cache *decode_cache_new(void);
void decode_cache_free(struct decode_cache *c);

/* Decode the instruction at BYTES (AVAIL readable bytes), known as OFFSET in image IMAGE_ID,
 * filling OUT; a second call with the same (IMAGE_ID, OFFSET) is answered from the cache.
 * 0, or -EILSEQ when the bytes are not an instruction (OUT->len = 0), -ENOMEM. */
int decode_insn(struct decode_cache *c, uint32_t image_id, uint64_t offset, const uint8_t *bytes,
		size_t avail, struct decoded_insn *out);

/* Decode without caching. */
int decode_insn_once(const uint8_t *bytes, size_t avail, struct decoded_insn *out);

/* Entries currently cached (for tests). */
size_t decode_cache_size(const struct decode_cache *c);

#endif
