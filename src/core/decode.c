/* core/decode.c - Zydis wrapper: classify x86-64 instructions into trace flags, with an
 * open-addressing cache keyed by (image id, offset) so each static instruction is decoded once. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "core/decode.h"
#include "spent/trace.h"

struct decode_entry {
	uint64_t key;		/* (image_id << 44) ^ offset, +1 so 0 means empty */
	struct decoded_insn insn;
};

struct decode_cache {
	ZydisDecoder zd;
	struct decode_entry *tab;
	size_t cap, used;	/* cap is a power of two */
};

static uint16_t classify(const ZydisDecodedInstruction *in)
{
	uint16_t f = 0;
	bool relative = in->raw.imm[0].is_relative;

	if (in->attributes & ZYDIS_ATTRIB_HAS_LOCK)
		f |= SPENT_TRACE_INSN_LOCKED;
	if (in->mnemonic == ZYDIS_MNEMONIC_XCHG && (in->attributes & ZYDIS_ATTRIB_HAS_MODRM) &&
	    in->raw.modrm.mod != 3)
		f |= SPENT_TRACE_INSN_LOCKED;
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
	c->cap = 1024;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	if (!c->tab) {
		free(c);
		return NULL;
	}
	return c;
}

void decode_cache_free(struct decode_cache *c)
{
	if (!c)
		return;
	free(c->tab);
	free(c);
}

size_t decode_cache_size(const struct decode_cache *c)
{
	return c->used;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

static int grow(struct decode_cache *c)
{
	size_t ncap = c->cap * 2;
	struct decode_entry *nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->tab[i].key)
			continue;
		size_t s = slot_of(c->tab[i].key, ncap);
		while (nt[s].key)
			s = (s + 1) & (ncap - 1);
		nt[s] = c->tab[i];
	}
	free(c->tab);
	c->tab = nt;
	c->cap = ncap;
	return 0;
}

int decode_insn(struct decode_cache *c, uint32_t image_id, uint64_t offset, const uint8_t *bytes,
		size_t avail, struct decoded_insn *out)
{
	uint64_t key = (((uint64_t)image_id << 44) ^ offset) + 1;
	size_t s = slot_of(key, c->cap);
	while (c->tab[s].key) {
		if (c->tab[s].key == key) {
			*out = c->tab[s].insn;
			return out->len ? 0 : -EILSEQ;
		}
		s = (s + 1) & (c->cap - 1);
	}
	int err = decode_with(&c->zd, bytes, avail, out);
	if (c->used * 2 >= c->cap) {
		if (grow(c) < 0)
			return -ENOMEM;
		s = slot_of(key, c->cap);
		while (c->tab[s].key)
			s = (s + 1) & (c->cap - 1);
	}
	c->tab[s].key = key;
	c->tab[s].insn = *out;
	c->used++;
	return err;
}
