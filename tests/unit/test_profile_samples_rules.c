/* tests/unit/test_profile_samples_rules.c - the samples file parser's rules, one hand-made
 * body each (profile_samples.c, samples_trie.c): version 2 as first written and version 3
 * (the breadth-first frame trie, the row columns, the stored and zstd bodies and their
 * bounds). Whole files, round trips and mutations: test_profile_samples.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zstd.h>

#include "core/binio.h"
#include "profile/profile_file.h"
#include "spent/profile.h"

/* A samples file of FLAGS and BODY (after the flags), with header and CRC around it; the
 * call stacks it gives into *STACKS (NULL: must be none) as "count@offset,...;" text. */
static int parse_flagged(uint32_t version, uint8_t flags, const uint8_t *body, size_t n,
			 const char **why, char *stacks)
{
	struct binbuf b;
	struct spent_profile_event ev = { .name = (char *)"cpu-clock", .period = 1 };
	binbuf_init(&b);
	assert_int_equal(profile_file_put_header(&b, version, PROFILE_FILE_SAMPLES, &ev), 0);
	assert_int_equal(binbuf_put(&b, &flags, 1), 0);
	assert_int_equal(binbuf_put(&b, body, n), 0);
	assert_int_equal(profile_file_put_crc(&b, 0), 0);
	struct spent_profile *t = spent_profile_new();
	int err = spent_profile_file_parse(b.data, b.len, t, why);
	if (err)
		assert_int_equal(spent_profile_ndetail(t), 0);
	if (!stacks)
		assert_int_equal(spent_profile_nstacks(t), 0);
	for (size_t i = 0; stacks && i < spent_profile_nstacks(t); i++) {
		uint32_t sev;
		const struct spent_profile_frame *f;
		size_t nf;
		uint64_t cnt;
		spent_profile_stack_get(t, i, &sev, &f, &nf, &cnt);
		stacks += sprintf(stacks, "%llu", (unsigned long long)cnt);
		for (size_t k = 0; k < nf; k++)
			stacks += sprintf(stacks, "%c%llx", k ? ',' : '@',
					  (unsigned long long)f[k].offset);
		stacks += sprintf(stacks, ";");
	}
	spent_profile_free(t);
	binbuf_release(&b);
	return err;
}

static int parse_body(const uint8_t *body, size_t n, const char **why)
{
	return parse_flagged(PROFILE_FILE_VERSION_SAMPLES_V2, 0, body, n, why, NULL);
}

static void samples_parser_checks_each_rule(void **state)
{
	(void)state;
	const char *why;
	/* bucket 10, origin 20; 1 string "a"; 1 task (a, 1, 1); 0 images; 1 node (root, no image,
	 * offset 5); 1 chain (node 0); then the rows part varies */
#define HEAD 10, 20, 1, 1, 'a', 1, 0, 1, 1, 0, 0, 1, 0, 0, 10, 1, 0
	static const uint8_t ok[] = { HEAD, 1, 2, 3, 1, 2, 0x01, 0, 0x03, 4 };	/* 2 rows, 1 + 2 */
	assert_int_equal(parse_body(ok, sizeof(ok), &why), 0);
	/* flag 1: the chain (one frame at 5) is also a stack of its rows' sum; other flags bad */
	char stacks[256] = "";
	assert_int_equal(parse_flagged(PROFILE_FILE_VERSION_SAMPLES_V2, PROFILE_SAMPLES_STACKS, ok, sizeof(ok), &why, stacks), 0);
	assert_string_equal(stacks, "3@5;");
	assert_int_equal(parse_flagged(PROFILE_FILE_VERSION_SAMPLES_V2, 2, ok, sizeof(ok), &why, NULL), -EBADMSG);
	assert_string_equal(why, "unknown samples flags");
	static const uint8_t big_count[] = { HEAD, 1, 1, 9, 1, 1, 0x07, 0, 5 };
	assert_int_equal(parse_body(big_count, sizeof(big_count), &why), 0);
	static const uint8_t bad_total[] = { HEAD, 1, 1, 8, 1, 1, 0x07, 0, 5 };
	assert_int_equal(parse_body(bad_total, sizeof(bad_total), &why), -EBADMSG);
	static const uint8_t bad_chain[] = { HEAD, 1, 1, 1, 1, 1, 0x09, 0 };
	assert_int_equal(parse_body(bad_chain, sizeof(bad_chain), &why), -EBADMSG);
	/* the same (time, chain) twice in a group: the second's step cannot reach chain 0 */
	static const uint8_t dup_row[] = { HEAD, 1, 2, 2, 1, 2, 0x01, 0, 0x00 };
	assert_int_equal(parse_body(dup_row, sizeof(dup_row), &why), -EBADMSG);
	static const uint8_t bad_task[] = { HEAD, 1, 1, 1, 2, 1, 0x01, 0 };
	assert_int_equal(parse_body(bad_task, sizeof(bad_task), &why), -EBADMSG);
	static const uint8_t groups_unsorted[] = { HEAD, 2, 2, 2, 1, 1, 0x01, 0, 0, 1, 0x01, 0 };
	assert_int_equal(parse_body(groups_unsorted, sizeof(groups_unsorted), &why), -EBADMSG);
	static const uint8_t groups_sorted[] = { HEAD, 2, 2, 2, 0, 1, 0x01, 0, 1, 1, 0x01, 0 };
	assert_int_equal(parse_body(groups_sorted, sizeof(groups_sorted), &why), 0);
	static const uint8_t empty_group[] = { HEAD, 1, 0, 0, 1, 0 };
	assert_int_equal(parse_body(empty_group, sizeof(empty_group), &why), -EBADMSG);
	static const uint8_t rows_short[] = { HEAD, 1, 3, 2, 1, 2, 0x01, 0, 0x01, 4 };
	assert_int_equal(parse_body(rows_short, sizeof(rows_short), &why), -EBADMSG);
	/* a time index past 2^64 ns */
	static const uint8_t far[] = { HEAD, 1, 1, 1, 1, 1, 0x01,
				       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	assert_int_equal(parse_body(far, sizeof(far), &why), -EBADMSG);
	static const uint8_t zero_bucket[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(parse_body(zero_bucket, sizeof(zero_bucket), &why), -EBADMSG);
	static const uint8_t odd_origin[] = { 10, 21, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(parse_body(odd_origin, sizeof(odd_origin), &why), -EBADMSG);
	static const uint8_t empty_ok[] = { 10, 20, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(parse_body(empty_ok, sizeof(empty_ok), &why), 0);
	/* a node whose parent is itself or later; a task naming a missing string */
	static const uint8_t self_parent[] = { 10, 20, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(parse_body(self_parent, sizeof(self_parent), &why), -EBADMSG);
	static const uint8_t no_string[] = { 10, 20, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(parse_body(no_string, sizeof(no_string), &why), -EBADMSG);
	/* two chains ending at one frame (a repeated deep chain would cost 1024 frames a byte) */
	static const uint8_t two_leaves[] = { 10, 20, 0, 0, 0, 2, 0, 0, 2, 1, 0, 2, 2, 0, 1, 0, 0, 0 };
	assert_int_equal(parse_body(two_leaves, sizeof(two_leaves), &why), 0);
	static const uint8_t same_leaf[] = { 10, 20, 0, 0, 0, 2, 0, 0, 2, 1, 0, 2, 2, 1, 1, 0, 0, 0 };
	assert_int_equal(parse_body(same_leaf, sizeof(same_leaf), &why), -EBADMSG);
	assert_string_equal(why, "two chains end at one frame");
#undef HEAD
	/* a chain of 1025 frames */
	struct binbuf b;
	binbuf_init(&b);
	const uint8_t pre[] = { 10, 20, 0, 0, 0 };
	binbuf_put(&b, pre, sizeof(pre));
	binbuf_put_uvarint(&b, 1025);
	for (int i = 0; i < 1025; i++) {
		binbuf_put_uvarint(&b, i ? 1 : 0);
		binbuf_put_uvarint(&b, 0);
		binbuf_put_svarint(&b, 1);
	}
	const uint8_t post[] = { 1, 0x80, 0x08, 0, 0, 0 };	/* chain: node 1024 */
	binbuf_put(&b, post, sizeof(post));
	assert_int_equal(parse_body(b.data, b.len, &why), -EBADMSG);
	assert_string_equal(why, "call chain deeper than 1024");
	binbuf_release(&b);
}

/* A version-3 file of FLAGS whose body (METHOD, declared length BLEN) is BODY. */
static int parse_v3(uint8_t flags, uint8_t method, uint64_t blen, const uint8_t *body, size_t n,
		    const char **why, char *stacks)
{
	struct binbuf b;
	binbuf_init(&b);
	const uint8_t pre[] = { 10, 20, method };
	binbuf_put(&b, pre, sizeof(pre));
	binbuf_put_uvarint(&b, blen);
	binbuf_put(&b, body, n);
	int err = parse_flagged(PROFILE_FILE_VERSION_SAMPLES, flags, b.data, b.len, why, stacks);
	binbuf_release(&b);
	return err;
}

static int parse_v3_stored(const uint8_t *body, size_t n, const char **why)
{
	return parse_v3(0, 0, n, body, n, why, NULL);
}

static void samples_v3_parser_checks_each_rule(void **state)
{
	(void)state;
	const char *why;
	char stacks[256] = "";
	/* 1 string "a"; 1 task (a, 1, 1); 0 images; then the trie; then 2 rows of chain 0 */
#define TABLES 1, 1, 'a', 1, 0, 1, 1, 0, 0
	/* rows: 1 group, 2 rows, total 3; the group (task 1, 2 rows); then the columns: keys
	 * (chain step's low 5 bits << 3 | count code << 1 | new time), the steps' rest, time
	 * steps */
#define ROWS 1, 2, 3, 1, 2, 0x01, 0x03, 0, 0, 0, 4
	/* one node: the root has 1 child, it has 0; no image; (no end byte: a node without
	 * children ends a chain); offset 5 */
	static const uint8_t ok[] = { TABLES, 1, 1, 0, 0, 10, ROWS };
	assert_int_equal(parse_v3_stored(ok, sizeof(ok), &why), 0);
	assert_int_equal(parse_v3(PROFILE_SAMPLES_STACKS, 0, sizeof(ok), ok, sizeof(ok), &why, stacks), 0);
	assert_string_equal(stacks, "3@5;");
	/* the leaf frame 5 called from 7: the chain is the second node */
	static const uint8_t two[] = { TABLES, 2, 1, 1, 0, 0, 0, 0, 10, 14, ROWS };
	stacks[0] = 0;
	assert_int_equal(parse_v3(PROFILE_SAMPLES_STACKS, 0, sizeof(two), two, sizeof(two), &why, stacks), 0);
	assert_string_equal(stacks, "3@5,7;");
	/* siblings 5 and 5 + 2 + 1 of one image: two chains */
	static const uint8_t sib[] = { TABLES, 2, 2, 0, 0, 0, 0, 10, 2,
				       1, 2, 2, 1, 2, 0x01, 0x00, 0, 0, 0 };
	stacks[0] = 0;
	assert_int_equal(parse_v3(PROFILE_SAMPLES_STACKS, 0, sizeof(sib), sib, sizeof(sib), &why, stacks), 0);
	assert_string_equal(stacks, "1@5;1@8;");
	static const uint8_t orphan[] = { TABLES, 2, 1, 0, 0, 0, 0, 10, 10, ROWS };
	assert_int_equal(parse_v3_stored(orphan, sizeof(orphan), &why), -EBADMSG);
	assert_string_equal(why, "frame without a parent");
	static const uint8_t too_many_kids[] = { TABLES, 1, 2, 0, 0, 10, ROWS };
	assert_int_equal(parse_v3_stored(too_many_kids, sizeof(too_many_kids), &why), -EBADMSG);
	/* the frame 5 ends a chain too: chain 0 is [5], chain 1 [5, 7] (no rows: no stack) */
	static const uint8_t inner_end[] = { TABLES, 2, 1, 1, 0, 0, 0, 1, 10, 14, ROWS };
	stacks[0] = 0;
	assert_int_equal(parse_v3(PROFILE_SAMPLES_STACKS, 0, sizeof(inner_end), inner_end,
				  sizeof(inner_end), &why, stacks), 0);
	assert_string_equal(stacks, "3@5;");
	static const uint8_t bad_end[] = { TABLES, 2, 1, 1, 0, 0, 0, 2, 10, 14, ROWS };
	assert_int_equal(parse_v3_stored(bad_end, sizeof(bad_end), &why), -EBADMSG);
	assert_string_equal(why, "bad chain end flag");
	static const uint8_t bad_image[] = { TABLES, 1, 1, 0, 1, 10, ROWS };
	assert_int_equal(parse_v3_stored(bad_image, sizeof(bad_image), &why), -EBADMSG);
	/* a sibling step past 2^64 */
	static const uint8_t wrap[] = { TABLES, 2, 2, 0, 0, 0, 0, 1,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, ROWS };
	assert_int_equal(parse_v3_stored(wrap, sizeof(wrap), &why), -EBADMSG);
	assert_string_equal(why, "bad frame offset");
	/* rows: a count above 3 (code 3, then count - 4 in the last column); a chain step past
	 * the chains in the key's low bits or in the rest; a truncated column; a bad total */
	static const uint8_t big[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 9, 1, 1, 0x07, 0, 0, 5 };
	stacks[0] = 0;
	assert_int_equal(parse_v3(PROFILE_SAMPLES_STACKS, 0, sizeof(big), big, sizeof(big), &why, stacks), 0);
	assert_string_equal(stacks, "9@5;");
	static const uint8_t far_low[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 1, 1, 1, 0x09, 0, 0 };
	assert_int_equal(parse_v3_stored(far_low, sizeof(far_low), &why), -EBADMSG);
	assert_string_equal(why, "row chain out of range");
	static const uint8_t far_chain[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 1, 1, 1, 0x01, 1, 0 };
	assert_int_equal(parse_v3_stored(far_chain, sizeof(far_chain), &why), -EBADMSG);
	assert_string_equal(why, "row chain out of range");
	static const uint8_t huge_step[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 1, 1, 1, 0x01,
					     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0 };
	assert_int_equal(parse_v3_stored(huge_step, sizeof(huge_step), &why), -EBADMSG);
	assert_string_equal(why, "row chain out of range");
	static const uint8_t short_col[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 9, 1, 1, 0x07, 0, 0 };
	assert_int_equal(parse_v3_stored(short_col, sizeof(short_col), &why), -EBADMSG);
	static const uint8_t bad_sum[] = { TABLES, 1, 1, 0, 0, 10, 1, 1, 8, 1, 1, 0x07, 0, 0, 5 };
	assert_int_equal(parse_v3_stored(bad_sum, sizeof(bad_sum), &why), -EBADMSG);
	assert_string_equal(why, "rows do not add up to the header counts");
	/* row counts beyond the body are refused before they size anything (the fuzzer's
	 * crash-b2e8ba0c: rows of 2^53 and a group count past them) */
	static const uint8_t many_rows[] = { TABLES, 1, 1, 0, 0, 10, 0x80, 1, 0xff, 0xff, 0xff, 0xff,
					     0xff, 0xff, 0xff, 0x0f, 0, 1, 2 };
	assert_int_equal(parse_v3_stored(many_rows, sizeof(many_rows), &why), -EBADMSG);
	assert_string_equal(why, "bad row counts");
	static const uint8_t many_rows2[] = { TABLES, 1, 1, 0, 0, 10, 1, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0x0f, 0, 1, 2 };
	assert_int_equal(parse_v3_stored(many_rows2, sizeof(many_rows2), &why), -EBADMSG);
	assert_string_equal(why, "bad row counts");
	/* the body: its stored length must be exact; trailing bytes; methods */
	assert_int_equal(parse_v3(0, 0, sizeof(ok) + 1, ok, sizeof(ok), &why, NULL), -EBADMSG);
	assert_string_equal(why, "bad samples body length");
	static const uint8_t trailing[] = { TABLES, 1, 1, 0, 0, 10, ROWS, 0 };
	assert_int_equal(parse_v3_stored(trailing, sizeof(trailing), &why), -EBADMSG);
	assert_int_equal(parse_v3(0, 2, sizeof(ok), ok, sizeof(ok), &why, NULL), -EBADMSG);
	assert_string_equal(why, "unknown samples body method");
	uint8_t z[256];
	size_t zn = ZSTD_compress(z, sizeof(z), ok, sizeof(ok), 19);
	assert_false(ZSTD_isError(zn));
	assert_int_equal(parse_v3(0, 1, sizeof(ok), ok, sizeof(ok), &why, NULL), -EBADMSG);
	assert_string_equal(why, "bad compressed samples body");
	assert_int_equal(parse_v3(0, 1, sizeof(ok), z, zn, &why, NULL), 0);
	assert_int_equal(parse_v3(0, 1, sizeof(ok) - 1, z, zn, &why, NULL), -EBADMSG);
	assert_int_equal(parse_v3(0, 1, sizeof(ok) + 1, z, zn, &why, NULL), -EBADMSG);
	/* a declared size past 64 times the compressed bytes is refused before any allocation */
	assert_int_equal(parse_v3(0, 1, 64 * zn + 1, z, zn, &why, NULL), -EBADMSG);
	assert_string_equal(why, "compressed samples body too large");
	assert_int_equal(parse_v3(0, 1, UINT64_MAX, z, zn, &why, NULL), -EBADMSG);
#undef TABLES
#undef ROWS
	/* a chain of 1025 frames */
	struct binbuf b;
	binbuf_init(&b);
	const uint8_t pre[] = { 0, 0, 0 };
	binbuf_put(&b, pre, sizeof(pre));
	binbuf_put_uvarint(&b, 1025);
	for (int i = 0; i <= 1025; i++)
		binbuf_put_uvarint(&b, i < 1025);
	for (int i = 0; i < 1025 + 1024; i++)	/* images, end bytes of the inner nodes */
		binbuf_put_uvarint(&b, 0);
	for (int i = 0; i < 1025; i++)
		binbuf_put_svarint(&b, i);
	const uint8_t rows[] = { 0, 0, 0 };
	binbuf_put(&b, rows, sizeof(rows));
	assert_int_equal(parse_v3_stored(b.data, b.len, &why), -EBADMSG);
	assert_string_equal(why, "call chain deeper than 1024");
	binbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_parser_checks_each_rule),
		cmocka_unit_test(samples_v3_parser_checks_each_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
