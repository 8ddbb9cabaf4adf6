/* tests/unit/test_citcat_recording.c - the citcat recording stream: records written by the
 * writer read back field by field; truncation, corruption, bad order and versions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "citcat/recording.h"

struct built {
	uint8_t *data;
	size_t len;
	size_t exit_off;	/* offset of the EXIT frame */
};

static void put_u(struct cc_writer *w, uint64_t v)
{
	assert_int_equal(binbuf_put_uvarint(&w->payload, v), 0);
}

/* What build_with varies to make a recording malformed. */
struct knobs {
	int with_exit;
	int nregs;		/* REGS records in the initial state */
	uint64_t pc;		/* the initial rip */
	uint64_t file_flags;	/* of the FILE the MAP names */
	uint64_t map_prot;
	int point_words;	/* > 0: a POINT of that many le64 words, then an FPREGS */
	uint64_t switch_tid;	/* > 0: a SWITCH to that thread, with switch_reason */
	uint64_t switch_reason;
	uint64_t sc_extra;	/* flags or'ed into the SYSCALL's (CC_SC_STATE: a state hash follows) */
	uint32_t version;	/* > 0: the header says this format version */
	int meta_tail;		/* META's optional fields written: 1 cpuid mode, 2 and the mask */
	uint64_t mxcsr_mask;	/* the mask written when meta_tail is 2 */
};

#define GOOD_KNOBS { .with_exit = 1, .nregs = 1, .pc = 0x401000, .file_flags = CC_FILE_CHECK, \
		     .map_prot = 5 }

/* A small recording: META, REGS, FILE, MAP, MEM, START, SYSCALL + MEM, RDTSC, EXIT. */
static struct built build_with(struct knobs k)
{
	struct built b = { 0 };
	FILE *f = tmpfile();
	assert_non_null(f);
	struct cc_writer w;
	assert_int_equal(cc_writer_init(&w, fileno(f)), 0);
	binbuf_put_str(&w.payload, "prog arg");
	binbuf_put_str(&w.payload, "/tmp");
	put_u(&w, 1234);
	put_u(&w, 99);
	if (k.meta_tail >= 1)
		put_u(&w, CC_CPUID_PATCH);
	if (k.meta_tail >= 2)
		put_u(&w, k.mxcsr_mask);
	assert_int_equal(cc_writer_emit(&w, CC_REC_META), 0);
	for (int n = 0; n < k.nregs; n++) {
		put_u(&w, CC_NREGS);
		for (int i = 0; i < CC_NREGS; i++)
			put_u(&w, i == CC_REG_RIP ? k.pc : (uint64_t)i * 1000);
		cc_writer_emit(&w, CC_REC_REGS);
	}
	put_u(&w, 1);
	binbuf_put_str(&w.payload, "/bin/true");
	put_u(&w, 1), put_u(&w, 2), put_u(&w, 3), put_u(&w, 4);
	binbuf_put_le64(&w.payload, 0xabcdefULL);
	put_u(&w, k.file_flags);
	cc_writer_emit(&w, CC_REC_FILE);
	put_u(&w, 0x400000), put_u(&w, 0x2000), put_u(&w, k.map_prot), put_u(&w, CC_MAP_FILE);
	put_u(&w, 1), put_u(&w, 0);
	cc_writer_emit(&w, CC_REC_MAP);
	put_u(&w, 0x401000), put_u(&w, 3);
	binbuf_put(&w.payload, "xyz", 3);
	cc_writer_emit(&w, CC_REC_MEM);
	cc_writer_emit(&w, CC_REC_START);
	put_u(&w, 0);
	for (int i = 0; i < 6; i++)
		put_u(&w, (uint64_t)i + 10);
	binbuf_put_svarint(&w.payload, -2);
	put_u(&w, CC_SC_OUT_HASH | k.sc_extra);
	binbuf_put_le64(&w.payload, 0x1122334455667788ULL);
	if (k.sc_extra & CC_SC_STATE)
		binbuf_put_le64(&w.payload, 0x99);
	cc_writer_emit(&w, CC_REC_SYSCALL);
	put_u(&w, 0x7000), put_u(&w, 2);
	binbuf_put(&w.payload, "hi", 2);
	cc_writer_emit(&w, CC_REC_MEM);
	put_u(&w, 0x401234), put_u(&w, CC_TSC_RDTSCP), put_u(&w, 123456789), put_u(&w, 7);
	cc_writer_emit(&w, CC_REC_RDTSC);
	if (k.point_words) {
		for (int i = 0; i < k.point_words; i++)
			binbuf_put_le64(&w.payload, 0x401000ULL + (uint64_t)i);
		cc_writer_emit(&w, CC_REC_POINT);
		for (int i = 0; i < CC_FPREGS_WORDS; i++)
			binbuf_put_le64(&w.payload, i == 0 ? 0x1f80 : 0);
		cc_writer_emit(&w, CC_REC_FPREGS);
	}
	if (k.switch_tid) {
		put_u(&w, k.switch_tid), put_u(&w, k.switch_reason);
		cc_writer_emit(&w, CC_REC_SWITCH);
	}
	b.exit_off = w.bytes;
	if (k.with_exit) {
		binbuf_put_svarint(&w.payload, 3 << 8);
		put_u(&w, 1), put_u(&w, 2);
		binbuf_put_le64(&w.payload, 42);
		cc_writer_emit(&w, CC_REC_EXIT);
	}
	assert_int_equal(cc_writer_flush(&w), 0);
	cc_writer_release(&w);
	long len = ftell(f);
	b.data = malloc((size_t)len);
	rewind(f);
	assert_int_equal(fread(b.data, 1, (size_t)len, f), (size_t)len);
	b.len = (size_t)len;
	if (k.version)
		memcpy(b.data + CC_MAGIC_LEN, &k.version, 4);
	fclose(f);
	return b;
}

static struct built build(int with_exit)
{
	struct knobs k = GOOD_KNOBS;
	k.with_exit = with_exit;
	return build_with(k);
}

/* Parse a recording built with K: the error, or "" when it parses. */
static const char *parse_error(struct knobs k)
{
	static char err[256];
	struct built b = build_with(k);
	struct cc_recording *r = NULL;
	err[0] = 0;
	int e = cc_recording_parse(b.data, b.len, &r, err, sizeof(err));
	assert_true(e == 0 || e == -EBADMSG);
	assert_true(e ? r == NULL && err[0] : r != NULL);
	cc_recording_free(r);
	return err;
}

static void roundtrip_reads_every_field(void **state)
{
	(void)state;
	struct built b = build(1);
	struct cc_recording *r;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	assert_int_equal(r->n, 10);
	assert_false(r->truncated);
	assert_string_equal(r->recs[0].u.meta.cmdline, "prog arg");
	assert_int_equal(r->recs[0].u.meta.pid, 1234);
	assert_int_equal(r->recs[1].u.regs[CC_REG_RIP], 0x401000);
	assert_int_equal(r->recs[1].u.regs[15], 15000);
	assert_string_equal(r->recs[2].u.file.path, "/bin/true");
	assert_int_equal(r->recs[2].u.file.hash, 0xabcdefULL);
	assert_int_equal(r->recs[2].u.file.flags, CC_FILE_CHECK);
	assert_int_equal(r->recs[3].u.map.len, 0x2000);
	assert_memory_equal(r->recs[4].u.mem.bytes, "xyz", 3);
	assert_int_equal(r->start_idx, 5);
	assert_int_equal(r->recs[6].u.sc.ret, -2);
	assert_int_equal(r->recs[6].u.sc.args[5], 15);
	assert_int_equal(r->recs[6].u.sc.hash, 0x1122334455667788ULL);
	assert_int_equal(r->recs[8].u.tsc.aux, 7);
	assert_int_equal(r->recs[9].u.exit.status, 3 << 8);
	assert_non_null(cc_recording_file(r, 1));
	assert_null(cc_recording_file(r, 2));
	cc_recording_free(r);
}

/* META's trailing fields are optional: a recording without them reads as "unknown" (0) */
static void meta_cpuid_mode_and_mxcsr_mask_are_optional(void **state)
{
	(void)state;
	for (int tail = 0; tail <= 2; tail++) {
		struct knobs k = GOOD_KNOBS;
		k.meta_tail = tail;
		k.mxcsr_mask = 0x2ffff;
		struct built b = build_with(k);
		struct cc_recording *r;
		char err[256] = "";
		assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
		assert_int_equal(r->recs[0].u.meta.cpuid_mode, tail >= 1 ? CC_CPUID_PATCH : CC_CPUID_UNKNOWN);
		assert_int_equal(r->recs[0].u.meta.mxcsr_mask, tail >= 2 ? 0x2ffff : 0);
		cc_recording_free(r);	/* it owns the bytes */
	}
	/* a mask wider than 32 bits is no MXCSR_MASK */
	struct knobs k = GOOD_KNOBS;
	k.meta_tail = 2;
	k.mxcsr_mask = 1ULL << 32;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 1)"));
}

static void missing_exit_is_truncated_not_error(void **state)
{
	(void)state;
	struct built b = build(0);
	struct cc_recording *r;
	char err[256];
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	assert_true(r->truncated);
	assert_int_equal(r->n, 9);
	assert_non_null(strstr(r->why, "no EXIT record"));
	cc_recording_free(r);
}

static void cut_inside_a_frame_keeps_the_frames_before(void **state)
{
	(void)state;
	struct built b = build(1);
	struct cc_recording *r;
	char err[256];
	assert_int_equal(cc_recording_parse(b.data, b.exit_off + 3, &r, err, sizeof(err)), 0);
	assert_true(r->truncated);
	assert_int_equal(r->n, 9);
	cc_recording_free(r);
}

static void cut_before_start_is_an_error(void **state)
{
	(void)state;
	struct built b = build(1);
	struct cc_recording *r = (void *)1;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(b.data, 40, &r, err, sizeof(err)), -EBADMSG);
	assert_null(r);
	assert_non_null(strstr(err, "before its initial state"));
}

static void flipped_byte_fails_crc(void **state)
{
	(void)state;
	struct built b = build(1);
	struct cc_recording *r;
	char err[256];
	b.data[b.exit_off - 5] ^= 0x40;	/* inside the RDTSC record */
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	assert_true(r->truncated);
	assert_int_equal(r->n, 8);
	cc_recording_free(r);
}

static void wrong_magic_and_version_rejected(void **state)
{
	(void)state;
	struct built b = build(1);
	struct cc_recording *r;
	char err[256] = "";
	b.data[0] = 'X';
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "bad magic"));
	b = build(1);
	b.data[8] = 9;
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "version 9"));
}

static void event_before_start_rejected(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	struct cc_writer w;
	cc_writer_init(&w, fileno(f));
	binbuf_put_str(&w.payload, "p");
	binbuf_put_str(&w.payload, "/");
	put_u(&w, 1), put_u(&w, 1);
	cc_writer_emit(&w, CC_REC_META);
	put_u(&w, 1), put_u(&w, 2);
	cc_writer_emit(&w, CC_REC_SIGNAL);
	cc_writer_flush(&w);
	cc_writer_release(&w);
	long len = ftell(f);
	uint8_t *data = malloc((size_t)len);
	rewind(f);
	assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	struct cc_recording *r;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(data, (size_t)len, &r, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "an event before START"));
}

static void copied_file_can_be_mapped(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	k.file_flags = CC_FILE_COPY;
	assert_string_equal(parse_error(k), "");
}

static void map_of_file_without_content_rejected(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	k.file_flags = 0;	/* only opened: the replay has no bytes to map */
	assert_non_null(strstr(parse_error(k), "neither copied nor checked"));
}

static void unknown_or_contradictory_file_flags_rejected(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	k.file_flags = CC_FILE_COPY | CC_FILE_CHECK;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 2)"));
	k.file_flags = 4;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 2)"));
}

static void initial_state_needs_exactly_one_regs(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	k.nregs = 0;
	assert_non_null(strstr(parse_error(k), "initial state has no REGS record"));
	k.nregs = 2;
	assert_non_null(strstr(parse_error(k), "initial state has more than one REGS record"));
}

static void initial_pc_must_be_in_an_executable_map(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	k.pc = 0;
	assert_non_null(strstr(parse_error(k), "initial pc 0 is not in an executable mapping"));
	k.pc = 0x402000;	/* one past the mapping */
	assert_non_null(strstr(parse_error(k), "initial pc 0x402000 is not in"));
	k.pc = 0x401fff;
	assert_string_equal(parse_error(k), "");
	k.map_prot = 3;		/* mapped, not executable */
	assert_non_null(strstr(parse_error(k), "no executable MAP record"));
}

/* POINT and FPREGS (version 3) are fixed-size runs of le64 words, read in place; any other
 * size is malformed. */
static void point_and_fpregs_read_with_their_exact_size(void **state)
{
	struct knobs k = GOOD_KNOBS;
	k.point_words = CC_POINT_WORDS;
	struct built b = build_with(k);
	struct cc_recording *r = NULL;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	int seen = 0;
	for (size_t i = 0; i < r->n; i++) {
		uint64_t w0, last;
		if (r->recs[i].kind == CC_REC_POINT) {
			memcpy(&w0, r->recs[i].u.words, 8);
			memcpy(&last, r->recs[i].u.words + 8 * (CC_POINT_WORDS - 1), 8);
			assert_int_equal(w0, 0x401000);
			assert_int_equal(last, 0x401000 + CC_POINT_WORDS - 1);
			seen |= 1;
		} else if (r->recs[i].kind == CC_REC_FPREGS) {
			memcpy(&w0, r->recs[i].u.words, 8);
			assert_int_equal(w0, 0x1f80);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	cc_recording_free(r);
	k.point_words = CC_POINT_WORDS - 1;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 15)"));
	k.point_words = CC_POINT_WORDS + 1;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 15)"));
	/* the size of a version 4 POINT (no deep stack hash) in a version 5 recording */
	k.point_words = CC_POINT_WORDS_V4;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 15)"));
}

/* A version 4 recording's POINT (no deep stack hash) still reads, marked as such; the
 * version 5 size is malformed there. */
static void point_of_version_4_still_reads(void **state)
{
	(void)state;
	struct knobs k = GOOD_KNOBS;
	for (int words = CC_POINT_WORDS_V4; words <= CC_POINT_WORDS; words += 2) {
		k.point_words = words;
		struct built b = build_with(k);
		uint32_t v4 = 4;
		memcpy(b.data + CC_MAGIC_LEN, &v4, 4);
		struct cc_recording *r = NULL;
		char err[256] = "";
		int e = cc_recording_parse(b.data, b.len, &r, err, sizeof(err));
		if (words == CC_POINT_WORDS) {
			assert_int_equal(e, -EBADMSG);
			assert_non_null(strstr(err, "malformed record (kind 15)"));
			continue;
		}
		assert_int_equal(e, 0);
		int seen = 0;
		for (size_t i = 0; i < r->n; i++)
			if (r->recs[i].kind == CC_REC_POINT) {
				assert_int_equal(r->recs[i].deep, 0);
				seen = 1;
			}
		assert_int_equal(seen, 1);
		cc_recording_free(r);
	}
}

/* The deep stack hash depends on every byte and on the length (a zero tail included). */
static void point_deep_hash_covers_every_byte(void **state)
{
	(void)state;
	uint8_t a[37] = { 0 }, b[37] = { 0 };
	assert_int_equal(cc_point_deep_hash(a, sizeof(a)), cc_point_deep_hash(b, sizeof(b)));
	assert_int_not_equal(cc_point_deep_hash(a, 36), cc_point_deep_hash(a, 37));
	for (size_t i = 0; i < sizeof(a); i++) {
		b[i] = 1;
		assert_int_not_equal(cc_point_deep_hash(a, sizeof(a)), cc_point_deep_hash(b, sizeof(b)));
		b[i] = 0;
	}
}

/* Version 7 hashes a POINT's stack with the MXCSR exception flags of fxsave images cleared:
 * only in an 8-byte word at an address = 8 mod 16 (fxsave's MXCSR, MXCSR_MASK) whose mask is
 * one a CPU stores and whose MXCSR fits in it. */
static uint32_t le32_at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void put_mxcsr_pair(uint8_t *p, uint32_t mxcsr, uint32_t mask)
{
	memcpy(p, &mxcsr, 4);
	memcpy(p + 4, &mask, 4);
}

static void point_stack_masks_only_fxsave_mxcsr_flags(void **state)
{
	(void)state;
	uint8_t s[92];
	const uint64_t addr = 0x7ffc1004;	/* s[4] is at 0x...1008: 8 mod 16 */
	memset(s, 0, sizeof(s));
	put_mxcsr_pair(s + 4, 0x1fa0, 0xffff);		/* PE, the mask of a CPU with DAZ */
	put_mxcsr_pair(s + 20, 0x1fbf, 0xffbf);		/* every flag, a CPU without DAZ */
	put_mxcsr_pair(s + 36, 0x9fa1, 0x2ffff);	/* FZ set, a mask with bit 17 */
	put_mxcsr_pair(s + 12, 0x1fa0, 0xffff);		/* 0 mod 16: not an fxsave MXCSR */
	put_mxcsr_pair(s + 52, 0x1fa0, 0x12345678);	/* not a mask */
	put_mxcsr_pair(s + 68, 0x11fa0, 0xffff);	/* bits the mask does not allow */
	put_mxcsr_pair(s + 84, 0x1fa0, 0xffff);		/* the last word whole: masked */
	cc_point_mask_mxcsr_flags(s, 92, addr, 7);
	assert_int_equal(le32_at(s + 4), 0x1f80);
	assert_int_equal(le32_at(s + 8), 0xffff);	/* the mask itself stays */
	assert_int_equal(le32_at(s + 20), 0x1f80);
	assert_int_equal(le32_at(s + 36), 0x9f80);
	assert_int_equal(le32_at(s + 12), 0x1fa0);
	assert_int_equal(le32_at(s + 52), 0x1fa0);
	assert_int_equal(le32_at(s + 68), 0x11fa0);
	assert_int_equal(le32_at(s + 84), 0x1f80);
	/* a word cut by the end of the bytes is left as it is */
	put_mxcsr_pair(s + 84, 0x1fa0, 0xffff);
	cc_point_mask_mxcsr_flags(s, 91, addr, 7);
	assert_int_equal(le32_at(s + 84), 0x1fa0);
	/* so the hashes of the CPU's and the simulator's bytes agree */
	uint8_t cpu[64] = { 0 }, sim[64] = { 0 };
	put_mxcsr_pair(cpu + 24, 0x1fa0, 0xffff);
	put_mxcsr_pair(sim + 24, 0x1f80, 0xffff);
	cc_point_mask_mxcsr_flags(cpu, sizeof(cpu), 0x1000, 7);
	cc_point_mask_mxcsr_flags(sim, sizeof(sim), 0x1000, 7);
	assert_int_equal(cc_point_deep_hash(cpu, sizeof(cpu)), cc_point_deep_hash(sim, sizeof(sim)));
}

/* Version 8 also clears the flags of bare MXCSR copies (stmxcsr), at any 4-byte boundary */
static void point_stack_masks_mxcsr_copies_from_version_8(void **state)
{
	(void)state;
	uint8_t s[40];
	const uint64_t addr = 0x7ffc1002;	/* s[2] is 4-byte aligned */
	memset(s, 0, sizeof(s));
	uint32_t words[] = { 0x1fa0, 0x9fa1, 0x7fbf, 0x1f80, 0x0fa0, 0x11fa0, 0x1f20, 0x1fa0 };
	for (int i = 0; i < 8; i++)
		memcpy(s + 2 + 4 * i, &words[i], 4);
	uint8_t v7[40];
	memcpy(v7, s, sizeof(s));
	cc_point_mask_mxcsr_flags(v7, sizeof(v7), addr, 7);
	assert_memory_equal(v7, s, sizeof(s));	/* none is an fxsave image */
	cc_point_mask_mxcsr_flags(s, sizeof(s), addr, 8);
	assert_int_equal(le32_at(s + 2), 0x1f80);
	assert_int_equal(le32_at(s + 6), 0x9f80);	/* FZ stays */
	assert_int_equal(le32_at(s + 10), 0x7f80);	/* rounding stays */
	assert_int_equal(le32_at(s + 14), 0x1f80);
	assert_int_equal(le32_at(s + 18), 0x0fa0);	/* PM clear: not a masked MXCSR */
	assert_int_equal(le32_at(s + 22), 0x11fa0);	/* above 16 bits */
	assert_int_equal(le32_at(s + 26), 0x1f20);
	assert_int_equal(le32_at(s + 30), 0x1f80);
	/* a word misaligned to the address is not one */
	uint8_t m[12] = { 0 };
	uint32_t w = 0x1fa0;
	memcpy(m + 1, &w, 4);
	cc_point_mask_mxcsr_flags(m, sizeof(m), 0x1000, 8);
	assert_int_equal(le32_at(m + 1), 0x1fa0);
	assert_true(cc_mxcsr_copy_like(0x1f80) && cc_mxcsr_copy_like(0xffbf));
	assert_false(cc_mxcsr_copy_like(0x10000 | 0x1f80) || cc_mxcsr_copy_like(0x1e80));
}

/* SWITCH (version 4): a thread id (1 .. 2^31-1) and a reason the format knows. */
static void switch_reads_tid_and_reason(void **state)
{
	struct knobs k = GOOD_KNOBS;
	k.switch_tid = 4242;
	k.switch_reason = CC_SWITCH_SYSCALL;
	struct built b = build_with(k);
	struct cc_recording *r = NULL;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	const struct cc_rec *sw = &r->recs[r->n - 2];
	assert_int_equal(sw->kind, CC_REC_SWITCH);
	assert_int_equal(sw->u.sw.tid, 4242);
	assert_int_equal(sw->u.sw.reason, CC_SWITCH_SYSCALL);
	cc_recording_free(r);
	k.switch_reason = CC_SWITCH_HERE;
	assert_string_equal(parse_error(k), "");
	k.switch_reason = CC_SWITCH_MAX_REASON + 1;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 17)"));
	k.switch_reason = CC_SWITCH_HERE;
	k.switch_tid = 1ULL << 31;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 17)"));
}

/* CC_SC_BUFFERED (version 6): a call that came through the syscall buffer; the recorder never
 * saw its registers (no state hash) and never skipped it; older versions cannot have it. */
static void buffered_syscall_flag(void **state)
{
	struct knobs k = GOOD_KNOBS;
	k.sc_extra = CC_SC_BUFFERED;
	struct built b = build_with(k);
	struct cc_recording *r = NULL;
	char err[256] = "";
	assert_int_equal(cc_recording_parse(b.data, b.len, &r, err, sizeof(err)), 0);
	assert_int_equal(r->recs[r->start_idx + 1].kind, CC_REC_SYSCALL);
	assert_true(r->recs[r->start_idx + 1].u.sc.flags & CC_SC_BUFFERED);
	cc_recording_free(r);
	k.sc_extra = CC_SC_BUFFERED | CC_SC_STATE;
	assert_non_null(strstr(parse_error(k), "a buffered SYSCALL claims a state hash"));
	k.sc_extra = CC_SC_BUFFERED | CC_SC_SKIPPED;
	assert_non_null(strstr(parse_error(k), "a buffered SYSCALL claims a state hash or a skipped"));
	k.sc_extra = CC_SC_BUFFERED;
	k.version = 5;
	assert_non_null(strstr(parse_error(k), "a buffered SYSCALL in a recording older than version 6"));
	k.sc_extra = 0;
	assert_string_equal(parse_error(k), "");	/* a version 5 recording without one */
	k.sc_extra = CC_SC_ALL + 1;
	k.version = 0;
	assert_non_null(strstr(parse_error(k), "malformed record (kind 8)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip_reads_every_field),
		cmocka_unit_test(meta_cpuid_mode_and_mxcsr_mask_are_optional),
		cmocka_unit_test(point_and_fpregs_read_with_their_exact_size),
		cmocka_unit_test(switch_reads_tid_and_reason),
		cmocka_unit_test(buffered_syscall_flag),
		cmocka_unit_test(missing_exit_is_truncated_not_error),
		cmocka_unit_test(cut_inside_a_frame_keeps_the_frames_before),
		cmocka_unit_test(cut_before_start_is_an_error),
		cmocka_unit_test(flipped_byte_fails_crc),
		cmocka_unit_test(wrong_magic_and_version_rejected),
		cmocka_unit_test(point_of_version_4_still_reads),
		cmocka_unit_test(point_deep_hash_covers_every_byte),
		cmocka_unit_test(point_stack_masks_only_fxsave_mxcsr_flags),
		cmocka_unit_test(point_stack_masks_mxcsr_copies_from_version_8),
		cmocka_unit_test(event_before_start_rejected),
		cmocka_unit_test(copied_file_can_be_mapped),
		cmocka_unit_test(map_of_file_without_content_rejected),
		cmocka_unit_test(unknown_or_contradictory_file_flags_rejected),
		cmocka_unit_test(initial_state_needs_exactly_one_regs),
		cmocka_unit_test(initial_pc_must_be_in_an_executable_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
