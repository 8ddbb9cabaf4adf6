/* core/decode.c - Zydis wrapper: classify x86-64 instructions into trace flags, with an
 * open-addressing cache keyed by (image id, offset) so each static instruction is decoded once. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "core/decode.h"
#include "core/hashtab.h"
#include "spent/trace.h"

struct decode_entry {
	uint64_t key;		/* (image_id << 44) ^ offset, +1 so it is never 0 (core/hashtab.h) */
	struct decoded_insn insn;
};

struct decode_cache {
	ZydisDecoder zd;
	struct hashtab tab;	/* key -> struct decode_entry */
};

static uint16_t classify(const ZydisDecodedInstruction *in)
{
	uint16_t f = 0;
	bool relative = in->raw.imm[0].is_relative;

	if (in->attributes & ZYDIS_ATTRIB_HAS_LOCK)
		f |= SPENT_TRACE_INSN_LOCKED;
	if (in->mnemonic == ZYDIS_MNEMONIC_XCHG && (in->attributes & ZYDIS_ATTRIB_HAS_MODRM) &&
	    in->raw.modrm.mod != 3)
		f |= SPENT_TRACE_INSN_LOCKED | SPENT_TRACE_INSN_EXCHANGE;
	if (in->mnemonic == ZYDIS_MNEMONIC_CMPXCHG || in->mnemonic == ZYDIS_MNEMONIC_CMPXCHG8B ||
	    in->mnemonic == ZYDIS_MNEMONIC_CMPXCHG16B)
		f |= SPENT_TRACE_INSN_CMPXCHG;
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		f |= SPENT_TRACE_INSN_COND_BRANCH;
		break;
	case ZYDIS_CATEGORY_CALL:
		f |= SPENT_TRACE_INSN_CALL;
		if (!relative)
			f |= SPENT_TRACE_INSN_INDIRECT;
		break;
	case ZYDIS_CATEGORY_RET:
		f |= SPENT_TRACE_INSN_RET;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		if (!relative)
			f |= SPENT_TRACE_INSN_INDIRECT;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
		f |= SPENT_TRACE_INSN_SYSCALL;
		break;
	default:
		break;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_PAUSE)
		f |= SPENT_TRACE_INSN_PAUSE;
	return f;
}

static int decode_with(const ZydisDecoder *zd, const uint8_t *bytes, size_t avail,
		       struct decoded_insn *out)
{
	ZydisDecodedInstruction in;
	out->len = 0;
	out->flags = 0;
	if (!bytes || avail == 0)
		return -EILSEQ;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(zd, NULL, bytes, avail, &in)))
		return -EILSEQ;
	out->len = in.length;
	out->flags = classify(&in);
	return 0;
}

int decode_insn_once(const uint8_t *bytes, size_t avail, struct decoded_insn *out)
{
	ZydisDecoder zd;
	ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	return decode_with(&zd, bytes, avail, out);
}

struct decode_cache *decode_cache_new(void)
{
	struct decode_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	ZydisDecoderInit(&c->zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	c->tab = (struct hashtab)HASHTAB_INIT(struct decode_entry);
	return c;
}

void decode_cache_free(struct decode_cache *c)
{
	if (!c)
		return;
	hashtab_release(&c->tab);
	free(c);
}

size_t decode_cache_size(const struct decode_cache *c)
{
	return hashtab_count(&c->tab);
}

int decode_insn(struct decode_cache *c, uint32_t image_id, uint64_t offset, const uint8_t *bytes,
		size_t avail, struct decoded_insn *out)
{
	uint64_t key = (((uint64_t)image_id << 44) ^ offset) + 1;
	struct decode_entry *e;
	int isnew = hashtab_insert(&c->tab, key, (void **)&e);
	if (isnew < 0)
		return isnew;
	if (!isnew) {
		*out = e->insn;
		return out->len ? 0 : -EILSEQ;
	}
	int err = decode_with(&c->zd, bytes, avail, out);
	e->insn = *out;	/* undecodable too (len 0): each static instruction is tried once */
	return err;
}
