/* tests/unit/test_trace_log.c - the trace log writer, reader and reconstructor on a synthetic
 * log built with log_writer (a loop of two superblocks over stored code bytes), its batches
 * of instructions and of superblock executions, plus the decoder's flags and cache. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <lz4.h>
#include <zstd.h>

#include "core/binio.h"
#include "core/decode.h"
#include "trace/log_io.h"

/* 0x1000: mov rax,[rbx+8]; add [rbx+16],rax; jne 0x1000; ret */
static const uint8_t code[] = { 0x48, 0x8b, 0x43, 0x08, 0x48, 0x01, 0x43, 0x10, 0x75, 0xf6, 0xc3 };

static void add_op(struct binbuf *b, uint8_t kind, uint8_t flags, uint16_t size, uint32_t arg, uint64_t val)
{
	struct log_op op = { .kind = kind, .flags = flags, .size = size, .arg = arg, .val = val };
	binbuf_put(b, &op, sizeof(op));
}

static void add_code(struct log_writer *w, uint64_t key, struct binbuf *ops, uint32_t n_roots)
{
	struct binbuf rec;
	struct log_code c = { .key = key, .n_ops = (uint32_t)(ops->len / sizeof(struct log_op)), .n_roots = n_roots };
	binbuf_init(&rec);
	binbuf_put(&rec, &c, sizeof(c));
	binbuf_put(&rec, ops->data, ops->len);
	assert_int_equal(log_writer_add(w, LOG_REC_CODE, rec.data, (uint32_t)rec.len), 0);
	binbuf_release(&rec);
	ops->len = 0;
}

/* End a synthetic log: thread 1 resumes at 0x1000, then one DATA chunk of N_CTL control bytes
 * (padded to 8) and N_VALS values; commits and frees W. B is a scratch buffer, released. */
static void finish_log(struct log_writer *w, struct binbuf *b, const uint8_t *ctl, size_t n_ctl,
		       const int64_t *vals, size_t n_vals)
{
	struct log_resume rs = { .tid = 1, .pc = 0x1000, .time_ns = 5 };
	uint8_t ctl8[8] = { 0 };
	struct binbuf v;

	assert_int_equal(log_writer_add(w, LOG_REC_RESUME, &rs, sizeof(rs)), 0);
	assert_true(n_ctl <= sizeof(ctl8));
	memcpy(ctl8, ctl, n_ctl);
	binbuf_init(&v);
	for (size_t i = 0; i < n_vals; i++)
		binbuf_put_svarint(&v, vals[i]);
	struct log_data d = { .tid = 1, .n_ctl = (uint32_t)n_ctl, .time_ns = 7, .n_vals = (uint32_t)n_vals,
			      .n_vbytes = (uint32_t)v.len };
	b->len = 0;
	binbuf_put(b, &d, sizeof(d));
	binbuf_put(b, ctl8, sizeof(ctl8));
	binbuf_put(b, v.data, v.len);
	binbuf_release(&v);
	assert_int_equal(log_writer_add(w, LOG_REC_DATA, b->data, (uint32_t)b->len), 0);
	binbuf_release(b);
	assert_int_equal(log_writer_commit(w), 0);
	log_writer_free(w);
}

/* Write the synthetic log to PATH. */
static void write_log(const char *path)
{
	struct log_writer *w;
	struct binbuf b;
	uint8_t img[sizeof(struct log_image) + 8 + 16] = { 0 };
	struct log_image li = { .start = 0x1000, .len = sizeof(code), .flags = LOG_IMG_BYTES,
				.path_len = 6, .n_bytes = sizeof(code) };

	assert_int_equal(log_writer_new(path, LOG_F_DATA, 0, &w), 0);
	memcpy(img, &li, sizeof(li));
	memcpy(img + sizeof(li), "[vdso]", 6);
	memcpy(img + sizeof(li) + 8, code, sizeof(code));
	assert_int_equal(log_writer_add(w, LOG_REC_IMAGE, img, sizeof(li) + 8 + sizeof(code)), 0);
	binbuf_init(&b);
	add_op(&b, LOG_OP_IMARK, 0, 4, 0, 0x1000);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_READ | LOG_OPF_FIRST, 8, 0, 8);
	add_op(&b, LOG_OP_IMARK, 0, 4, 0, 0x1004);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_READ | LOG_OPF_WRITE, 8, 0, 16);
	add_op(&b, LOG_OP_IMARK, 0, 2, 0, 0x1008);
	add_op(&b, LOG_OP_EXIT, 0, 0, 0, 0x1000);
	add_op(&b, LOG_OP_END, 0, 0, 1, 0x100a);
	add_code(w, 0x1000, &b, 1);
	add_op(&b, LOG_OP_IMARK, 0, 1, 0, 0x100a);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_READ | LOG_OPF_FIRST, 8, 0, 0);
	add_op(&b, LOG_OP_END, LOG_OPF_INDIRECT, 0, 0, 0);
	add_code(w, 0x100a, &b, 1);
	/* executions: loop once (exit 0), fall through (end 1), ret (end 0) */
	/* values are per-site deltas: rbx twice (0x5000, +0), then rsp and the return target */
	static const int64_t vals[] = { 0x5000, 0, 0x7000, 0x2000 };
	static const uint8_t ctl[] = { 0, 1, 0 };
	finish_log(w, &b, ctl, sizeof(ctl), vals, sizeof(vals) / sizeof(vals[0]));
}

static void test_reconstructs_synthetic_log(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	close(fd);
	write_log(path);
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	assert_int_equal(spent_trace_source_next(src, &bt), 1);
	static const uint64_t pcs[] = { 0x1000, 0x1004, 0x1008, 0x1000, 0x1004, 0x1008, 0x100a };
	assert_int_equal(bt.n_insns, 7);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(bt.insns[i].pc, pcs[i]);
	assert_true(bt.insns[2].flags & SPENT_TRACE_INSN_COND_BRANCH);
	assert_true(bt.insns[6].flags & SPENT_TRACE_INSN_RET);
	assert_int_equal(bt.insns[0].flags, 0);
	assert_int_equal(bt.n_refs, 5);
	assert_int_equal(bt.refs[0].addr, 0x5008);
	assert_int_equal(bt.refs[0].kind, SPENT_TRACE_REF_READ);
	assert_int_equal(bt.refs[1].addr, 0x5010);
	assert_int_equal(bt.refs[1].kind, SPENT_TRACE_REF_MODIFY);
	assert_int_equal(bt.refs[2].addr, 0x5008);
	assert_int_equal(bt.refs[3].addr, 0x5010);
	assert_int_equal(bt.refs[4].addr, 0x7000);
	assert_int_equal(bt.insns[6].nrefs, 1);
	assert_int_equal(bt.insns[6].ref0, 4);
	assert_int_equal(spent_trace_source_next(src, &bt), 0);
	spent_trace_source_free(src);
	unlink(path);
}

/* Two superblocks replayed by both paths of the reconstructor: 0x1000 has a guarded access
 * (general path), 0x2000 none (template path); both have a side exit between two accesses of
 * one instruction, 0x2000 ends in a raw indirect target. The expected stream is worked out by
 * hand from the values below. */
static void write_log_paths(const char *path)
{
	struct log_writer *w;
	struct binbuf b;
	assert_int_equal(log_writer_new(path, LOG_F_DATA, 0, &w), 0);
	binbuf_init(&b);
	add_op(&b, LOG_OP_IMARK, 0, 4, 0, 0x1000);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_READ | LOG_OPF_FIRST, 8, 0, 8);
	add_op(&b, LOG_OP_EXIT, 0, 0, 0, 0x2000);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_WRITE, 4, 0, 16);
	add_op(&b, LOG_OP_IMARK, 0, 4, 0, 0x1004);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_WRITE | LOG_OPF_GUARDED | LOG_OPF_FIRST, 8, 1, 0);
	add_op(&b, LOG_OP_END, 0, 0, 1, 0x1000);
	add_code(w, 0x1000, &b, 2);
	add_op(&b, LOG_OP_IMARK, 0, 4, 0, 0x2000);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_READ | LOG_OPF_FIRST, 8, 0, 8);
	add_op(&b, LOG_OP_EXIT, 0, 0, 0, 0x1000);
	add_op(&b, LOG_OP_ACCESS, LOG_OPF_WRITE, 4, 0, 16);
	add_op(&b, LOG_OP_END, LOG_OPF_INDIRECT | LOG_OPF_RAW, 0, 1, 0);
	add_code(w, 0x2000, &b, 1);
	static const int64_t vals[] = { 0x5000, 1, 0x9000, 0x10, 0x6000, 0x1000, 0, 0, 8, 0, 0x100 };
	static const uint8_t ctl[] = { 1, 0, 1, 1, 0, 0 };
	finish_log(w, &b, ctl, sizeof(ctl), vals, sizeof(vals) / sizeof(vals[0]));
}

static void test_guarded_and_template_paths_agree(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	close(fd);
	write_log_paths(path);
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	assert_int_equal(spent_trace_source_next(src, &bt), 1);
	static const uint64_t pcs[] = { 0x1000, 0x1004, 0x1000, 0x2000, 0x1000, 0x1004, 0x1000, 0x2000 };
	static const uint8_t nrefs[] = { 2, 1, 1, 2, 2, 0, 1, 1 };
	static const uint64_t addrs[] = { 0x5008, 0x5010, 0x9000, 0x5018, 0x6008, 0x6010, 0x5018,
					  0x5020, 0x5018, 0x6108 };
	static const uint32_t kinds[] = { SPENT_TRACE_REF_READ, SPENT_TRACE_REF_WRITE, SPENT_TRACE_REF_WRITE,
					  SPENT_TRACE_REF_READ, SPENT_TRACE_REF_READ, SPENT_TRACE_REF_WRITE,
					  SPENT_TRACE_REF_READ, SPENT_TRACE_REF_WRITE, SPENT_TRACE_REF_READ, SPENT_TRACE_REF_READ };
	static const uint32_t sizes[] = { 8, 4, 8, 8, 8, 4, 8, 4, 8, 8 };
	assert_int_equal(bt.n_insns, 8);
	uint32_t ref = 0;
	for (size_t i = 0; i < 8; i++) {
		assert_int_equal(bt.insns[i].pc, pcs[i]);
		assert_int_equal(bt.insns[i].tid, 1);
		assert_int_equal(bt.insns[i].nrefs, nrefs[i]);
		assert_int_equal(bt.insns[i].ref0, ref);
		ref += nrefs[i];
	}
	assert_int_equal(bt.n_refs, 10);
	for (size_t i = 0; i < 10; i++) {
		assert_int_equal(bt.refs[i].addr, addrs[i]);
		assert_int_equal(bt.refs[i].kind, kinds[i]);
		assert_int_equal(bt.refs[i].size, sizes[i]);
	}
	assert_int_equal(spent_trace_source_next(src, &bt), 0);
	spent_trace_source_free(src);
	unlink(path);
}

/* Every batch of PATH read with batches of executions (EXECS) or of instructions, as
 * instructions (tid, pid, pc, len, nrefs, flags, ref0) and references into INS / REFS;
 * *BLOCKS gets each execution's block number (EXECS only). Returns the instructions. */
static size_t read_stream(const char *path, int execs, struct spent_trace_insn *ins, size_t max,
			  struct spent_trace_ref *refs, size_t *n_refs, uint32_t *blocks)
{
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	size_t n = 0, nr = 0, nx = 0;
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	if (execs)
		assert_int_equal(spent_trace_source_want_execs(src), 0);
	while (spent_trace_source_next(src, &bt) > 0) {
		assert_true(execs ? bt.insns == NULL : bt.execs == NULL);
		size_t first = n, ref = 0;
		for (size_t i = 0; i < bt.n_execs; i++) {
			const struct spent_trace_exec *x = &bt.execs[i];
			assert_int_equal(x->ref0, ref);	/* in stream order */
			for (uint32_t k = 0; k < x->n_insns; k++) {
				assert_true(n < max);
				ins[n] = x->insns[k];
				assert_int_equal(ins[n].tid, 0);
				ins[n].pc |= x->pc_tag;
				ins[n].tid = x->tid;
				ins[n].pid = x->pid;
				ins[n].ref0 += x->ref0;
				if (k == x->n_insns - 1)
					ins[n].nrefs = (uint8_t)x->last_nrefs;
				n++;
			}
			assert_int_equal(ins[n - 1].ref0 + ins[n - 1].nrefs, x->ref0 + x->n_refs);
			ref += x->n_refs;
			blocks[nx++] = x->block;
		}
		for (size_t i = 0; i < bt.n_insns && !execs; i++) {
			assert_true(n < max);
			ins[n++] = bt.insns[i];
		}
		assert_int_equal(n - first, bt.n_insns);
		for (size_t i = first; i < n; i++)
			ins[i].ref0 += (uint32_t)nr;
		for (size_t i = 0; i < bt.n_refs; i++)
			refs[nr++] = bt.refs[i];
	}
	spent_trace_source_free(src);
	*n_refs = nr;
	return n;
}

/* Batches of executions carry the stream the instruction batches do, from both paths of the
 * reconstructor (write_log_paths): the guarded superblock's executions (slow path) have their
 * own instructions and no block number; the template superblock's share one template array and
 * one number; side exits inside an instruction show in last_nrefs. */
static void test_executions_carry_the_same_stream(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct spent_trace_insn a[16], b[16];
	struct spent_trace_ref ra[32], rb[32];
	uint32_t blocks[16];
	size_t nra, nrb;
	close(fd);
	write_log_paths(path);
	size_t na = read_stream(path, 0, a, 16, ra, &nra, blocks);
	size_t nb = read_stream(path, 1, b, 16, rb, &nrb, blocks);
	assert_int_equal(na, 8);
	assert_int_equal(nb, na);
	assert_int_equal(nrb, nra);
	assert_memory_equal(a, b, na * sizeof(*a));
	assert_memory_equal(ra, rb, nra * sizeof(*ra));
	/* executions: 0x1000 (slow), 0x1000 (slow, exit 0), 0x2000, 0x1000, 0x1000 (exit 0),
	 * 0x2000 (exit 0) */
	for (int i = 0; i < 5; i++)
		assert_int_equal(blocks[i], i == 2 ? blocks[5] : 0);
	assert_int_not_equal(blocks[5], 0);
	unlink(path);
}

/* A superblock described again (retranslated) in the middle of a batch: the batch's earlier
 * executions still point to the old description's templates (kept until the next batch; a
 * use after free under ASan otherwise), the new one gets another block number. */
static void test_retranslation_keeps_the_batch_templates(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct log_writer *w;
	struct binbuf b, d;
	close(fd);
	assert_int_equal(log_writer_new(path, LOG_F_DATA, 0, &w), 0);
	binbuf_init(&b);
	binbuf_init(&d);
	struct log_resume rs = { .tid = 1, .pc = 0x1000, .time_ns = 5 };
	assert_int_equal(log_writer_add(w, LOG_REC_RESUME, &rs, sizeof(rs)), 0);
	for (int version = 0; version < 2; version++) {
		add_op(&b, LOG_OP_IMARK, 0, version ? 2 : 4, 0, 0x1000);
		if (version)
			add_op(&b, LOG_OP_IMARK, 0, 2, 0, 0x1002);
		add_op(&b, LOG_OP_END, 0, 0, 0, 0x1000);
		add_code(w, 0x1000, &b, 0);
		/* two executions of it, no values */
		uint8_t ctl8[8] = { 0 };
		struct log_data dd = { .tid = 1, .n_ctl = 2, .time_ns = 7 };
		d.len = 0;
		binbuf_put(&d, &dd, sizeof(dd));
		binbuf_put(&d, ctl8, sizeof(ctl8));
		assert_int_equal(log_writer_add(w, LOG_REC_DATA, d.data, (uint32_t)d.len), 0);
	}
	binbuf_release(&b);
	binbuf_release(&d);
	assert_int_equal(log_writer_commit(w), 0);
	log_writer_free(w);

	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	assert_int_equal(spent_trace_source_want_execs(src), 0);
	assert_int_equal(spent_trace_source_next(src, &bt), 1);
	assert_int_equal(bt.n_execs, 4);
	assert_int_equal(bt.n_insns, 6);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(bt.execs[i].n_insns, i < 2 ? 1 : 2);
		assert_int_equal(bt.execs[i].insns[0].len, i < 2 ? 4 : 2);
		assert_int_equal(bt.execs[i].insns[0].pc, 0x1000);
		assert_int_equal(bt.execs[i].block, bt.execs[i & 2].block);
	}
	assert_int_not_equal(bt.execs[0].block, bt.execs[2].block);
	assert_int_equal(spent_trace_source_next(src, &bt), 0);
	spent_trace_source_free(src);
	unlink(path);
}

static void test_corrupt_block_is_reported(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *data;
	size_t len;
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	close(fd);
	write_log(path);
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	data[len - 3] ^= 0x55;	/* inside the only block's LZ4 block */
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), 0);
	assert_true(spent_trace_source_next(src, &bt) < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "checksum mismatch in block at byte 40"));
	spent_trace_source_free(src);
	assert_int_equal(trace_log_open_mem(data, len - 5, &src, err, sizeof(err)), 0);
	assert_true(spent_trace_source_next(src, &bt) < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "truncated"));
	spent_trace_source_free(src);
	free(data);
	unlink(path);
}

/* Version 2's header CRC: a flipped bit of max_insns (byte 24) no longer cuts the stream
 * silently; version 1 (no CRC) and unknown versions are refused with the version named. */
static void test_header_checksum_and_versions(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *data;
	size_t len;
	struct spent_trace_source *src;
	char err[256];
	close(fd);
	write_log(path);
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), 0);
	spent_trace_source_free(src);
	data[24] ^= 0x10;
	assert_true(trace_log_open_mem(data, len, &src, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "header checksum mismatch"));
	data[24] ^= 0x10;
	data[8] = 1;
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 1 is not supported"));
	data[8] = 2;	/* a single-process log of the version before process trees */
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 2 is not supported"));
	assert_non_null(strstr(err, "versions 3 to 6"));
	/* version 4 (LZ4 blocks, no CODE_SAME records) still reads, its header sealed as written */
	data[8] = LOG_VERSION_LZ4;
	uint32_t crc4 = binio_crc32(0, data, LOG_HEADER_CRC_OFF), crc_was;
	memcpy(&crc_was, data + LOG_HEADER_CRC_OFF, 4);
	memcpy(data + LOG_HEADER_CRC_OFF, &crc4, 4);
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), 0);
	spent_trace_source_free(src);
	/* version 5 (no REAPED records) too */
	data[8] = LOG_VERSION_NO_REAPED;
	uint32_t crc5 = binio_crc32(0, data, LOG_HEADER_CRC_OFF);
	memcpy(data + LOG_HEADER_CRC_OFF, &crc5, 4);
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), 0);
	spent_trace_source_free(src);
	memcpy(data + LOG_HEADER_CRC_OFF, &crc_was, 4);
	data[8] = LOG_VERSION + 1;
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "newer spent"));
	data[8] = LOG_VERSION;
	assert_true(trace_log_open_mem(data, 30, &src, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "truncated"));
	free(data);
	unlink(path);
}

/* Bytes after the END record (a second block, or garbage) make the log corrupt. */
static void test_data_after_end_is_corrupt(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *data, *more;
	size_t len;
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	int r;
	close(fd);
	write_log(path);
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	more = malloc(2 * len);
	assert_non_null(more);
	memcpy(more, data, len);
	/* the log's own block again after it: a well-formed block, still after the end */
	memcpy(more + len, data + LOG_HEADER_SIZE, len - LOG_HEADER_SIZE);
	assert_int_equal(trace_log_open_mem(more, 2 * len - LOG_HEADER_SIZE, &src, err, sizeof(err)), 0);
	while ((r = spent_trace_source_next(src, &bt)) > 0)
		;
	assert_true(r < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "after the end record"));
	spent_trace_source_free(src);
	memcpy(more + len, "garbage!", 8);
	assert_int_equal(trace_log_open_mem(more, len + 8, &src, err, sizeof(err)), 0);
	while ((r = spent_trace_source_next(src, &bt)) > 0)
		;
	assert_true(r < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "8 bytes after the end record"));
	spent_trace_source_free(src);
	free(more);
	free(data);
	unlink(path);
}

static void test_decode_flags_and_cache(void **state)
{
	struct decode_cache *c = decode_cache_new();
	struct decoded_insn d;
	static const uint8_t call_ind[] = { 0xff, 0xd0 };		/* call rax */
	static const uint8_t lock_add[] = { 0xf0, 0x48, 0x01, 0x07 };	/* lock add [rdi],rax */
	static const uint8_t pause[] = { 0xf3, 0x90 };
	static const uint8_t sys[] = { 0x0f, 0x05 };
	assert_non_null(c);
	assert_int_equal(decode_insn(c, 1, 0, call_ind, sizeof(call_ind), &d), 0);
	assert_int_equal(d.len, 2);
	assert_int_equal(d.flags, SPENT_TRACE_INSN_CALL | SPENT_TRACE_INSN_INDIRECT);
	assert_int_equal(decode_insn_once(lock_add, sizeof(lock_add), &d), 0);
	assert_int_equal(d.flags, SPENT_TRACE_INSN_LOCKED);
	assert_int_equal(decode_insn_once(pause, sizeof(pause), &d), 0);
	assert_int_equal(d.flags, SPENT_TRACE_INSN_PAUSE);
	assert_int_equal(decode_insn_once(sys, sizeof(sys), &d), 0);
	assert_int_equal(d.flags, SPENT_TRACE_INSN_SYSCALL);
	/* a second lookup of (1, 0) is served from the cache, whatever the bytes now say */
	assert_int_equal(decode_insn(c, 1, 0, sys, sizeof(sys), &d), 0);
	assert_int_equal(d.flags, SPENT_TRACE_INSN_CALL | SPENT_TRACE_INSN_INDIRECT);
	assert_int_equal(decode_cache_size(c), 1);
	decode_cache_free(c);
}

/* Each block's LZ4 acceleration follows the ratio of the block before it (log_writer.c). */
static void test_block_accel_follows_ratio(void **state)
{
	(void)state;
	size_t full = LOG_BLOCK_MAX;
	assert_int_equal(log_block_accel(full, full / 2), LOG_LZ4_ACCEL_POOR);	/* 2x */
	assert_int_equal(log_block_accel(full, full * 10 / 24), LOG_LZ4_ACCEL_POOR);	/* 2.4x */
	assert_int_equal(log_block_accel(full, full), LOG_LZ4_ACCEL_POOR);
	assert_int_equal(log_block_accel(full, full / 3), 1);	/* 3x */
	assert_int_equal(log_block_accel(full, full / 8), 1);
	/* a short block, or nothing compressed, keeps the default */
	assert_int_equal(log_block_accel(full / 4, full / 2), 1);
	assert_int_equal(log_block_accel(full, 0), 1);
	assert_true(LOG_LZ4_ACCEL_POOR > 1);
}

/* The log at DATA (LEN bytes, as log_writer writes it) rewritten as version VERSION with
 * every block recompressed by zstd under block magic MAGIC; *OUT_LEN its length. */
static uint8_t *recompress_zstd(const uint8_t *data, size_t len, uint32_t version, uint32_t magic,
				size_t *out_len)
{
	uint8_t *out = malloc(len * 4 + 4096), *raw = malloc(LOG_BLOCK_MAX);
	size_t pos = LOG_HEADER_SIZE, o = LOG_HEADER_SIZE;
	assert_non_null(out);
	assert_non_null(raw);
	memcpy(out, data, LOG_HEADER_SIZE);
	memcpy(out + 8, &version, 4);
	uint32_t crc = binio_crc32(0, out, LOG_HEADER_CRC_OFF);
	memcpy(out + LOG_HEADER_CRC_OFF, &crc, 4);
	while (pos < len) {
		uint32_t h[4];
		memcpy(h, data + pos, sizeof(h));
		assert_int_equal(h[0], LOG_BLOCK_MAGIC);
		int n = LZ4_decompress_safe((const char *)data + pos + LOG_BLOCK_HDR_SIZE, (char *)raw,
					    (int)h[2], LOG_BLOCK_MAX);
		assert_int_equal(n, h[1]);
		size_t c = ZSTD_compress(out + o + LOG_BLOCK_HDR_SIZE, len * 4 + 4096 - o - LOG_BLOCK_HDR_SIZE,
					 raw, (size_t)n, 1);
		assert_false(ZSTD_isError(c));
		uint32_t nh[4] = { magic, h[1], (uint32_t)c, binio_crc32(0, out + o + LOG_BLOCK_HDR_SIZE, c) };
		memcpy(out + o, nh, sizeof(nh));
		o += LOG_BLOCK_HDR_SIZE + c;
		pos += LOG_BLOCK_HDR_SIZE + h[2];
	}
	free(raw);
	*out_len = o;
	return out;
}

/* Instructions in the stream of the log at DATA; -1 when it fails to open or read. */
static long stream_insns(const uint8_t *data, size_t len)
{
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	long n = 0;
	int r;
	if (trace_log_open_mem(data, len, &src, err, sizeof(err)) < 0)
		return -1;
	while ((r = spent_trace_source_next(src, &bt)) > 0)
		n += (long)bt.n_insns;
	spent_trace_source_free(src);
	return r < 0 ? -1 : n;
}

/* Version 3 logs (zstd blocks, before LZ4) still read, to the same stream; a block of the
 * other compressor than its header's version says is corrupt. */
static void test_version3_zstd_logs_still_read(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *data, *v3;
	size_t len, v3_len;
	struct spent_trace_source *src;
	struct spent_trace_batch bt;
	char err[256];
	(void)state;
	close(fd);
	write_log(path);
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	assert_int_equal(stream_insns(data, len), 7);
	v3 = recompress_zstd(data, len, LOG_VERSION_ZSTD, LOG_BLOCK_MAGIC_ZSTD, &v3_len);
	assert_int_equal(stream_insns(v3, v3_len), 7);
	free(v3);
	/* zstd blocks in a version 4 log, LZ4 blocks in a version 3 one */
	v3 = recompress_zstd(data, len, LOG_VERSION, LOG_BLOCK_MAGIC_ZSTD, &v3_len);
	assert_int_equal(trace_log_open_mem(v3, v3_len, &src, err, sizeof(err)), 0);
	assert_true(spent_trace_source_next(src, &bt) < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "no block magic at byte 40"));
	spent_trace_source_free(src);
	free(v3);
	data[8] = LOG_VERSION_ZSTD;
	uint32_t crc = binio_crc32(0, data, LOG_HEADER_CRC_OFF);
	memcpy(data + LOG_HEADER_CRC_OFF, &crc, 4);
	assert_int_equal(trace_log_open_mem(data, len, &src, err, sizeof(err)), 0);
	assert_true(spent_trace_source_next(src, &bt) < 0);
	assert_non_null(strstr(spent_trace_source_error(src), "no block magic at byte 40"));
	spent_trace_source_free(src);
	free(data);
	unlink(path);
}

/* A full block of bytes LZ4 cannot shrink compresses to more than the block: the reader takes
 * every such block the writer makes (the bound was zstd's, 32 bytes short, before). */
static void test_incompressible_block_reads_back(void **state)
{
	char path[] = "/tmp/spent-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct log_writer *w;
	struct log_reader *rd;
	struct log_record rec;
	uint8_t *data, *noise = malloc(LOG_REC_MAX);
	size_t len;
	char err[256];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	(void)state;
	close(fd);
	assert_non_null(noise);
	for (size_t i = 0; i < LOG_REC_MAX; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		noise[i] = (uint8_t)(x >> 32);
	}
	assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
	/* with the next record the block is all but full (the END record starts another) */
	assert_int_equal(log_writer_add(w, LOG_REC_IMAGE, noise, LOG_REC_MAX - 8), 0);
	assert_int_equal(log_writer_add(w, LOG_REC_IMAGE, noise, 32), 0);
	assert_int_equal(log_writer_commit(w), 0);
	log_writer_free(w);
	assert_int_equal(binio_read_file(path, 4 << 20, &data, &len), 0);
	uint32_t h[4];
	memcpy(h, data + LOG_HEADER_SIZE, sizeof(h));
	assert_int_equal(h[1], LOG_BLOCK_MAX - 8);
	assert_true(h[2] > LOG_BLOCK_MAX + 4096);	/* past the old bound */
	assert_int_equal(log_reader_new_mem(data, len, &rd, err, sizeof(err)), 0);
	assert_int_equal(log_reader_next(rd, &rec), 1);
	assert_int_equal(rec.len, LOG_REC_MAX - 8);
	assert_memory_equal(rec.payload, noise, LOG_REC_MAX - 8);
	assert_int_equal(log_reader_next(rd, &rec), 1);
	assert_int_equal(log_reader_next(rd, &rec), 0);	/* END */
	log_reader_free(rd);
	free(data);
	free(noise);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reconstructs_synthetic_log),
		cmocka_unit_test(test_guarded_and_template_paths_agree),
		cmocka_unit_test(test_executions_carry_the_same_stream),
		cmocka_unit_test(test_retranslation_keeps_the_batch_templates),
		cmocka_unit_test(test_corrupt_block_is_reported),
		cmocka_unit_test(test_header_checksum_and_versions),
		cmocka_unit_test(test_data_after_end_is_corrupt),
		cmocka_unit_test(test_decode_flags_and_cache),
		cmocka_unit_test(test_block_accel_follows_ratio),
		cmocka_unit_test(test_version3_zstd_logs_still_read),
		cmocka_unit_test(test_incompressible_block_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
