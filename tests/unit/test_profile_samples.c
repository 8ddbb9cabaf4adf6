/* tests/unit/test_profile_samples.c - detail rows and spans on disk: the samples file
 * (profile_samples.c) and the epoch span file (profile_dir.c): round trips through a profile
 * directory, incremental merges, old directories, hostile files, and the bytes a row of a
 * `spent record`-like profile costs. The parser's rules, byte by byte, are in
 * test_profile_samples_rules.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>

#include "core/binio.h"
#include "profile/db.h"
#include "profile/profile_file.h"
#include "profile_test_util.h"
#include "spent/profile.h"

#define MS 1000000ull
#define T0 1700000000000000000ull
#define SAMPLES "samples@cpu-clock-1000000.prof"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("samples");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

static void warn_count(void *ctx, const char *path, const char *why)
{
	(void)path;
	(void)why;
	(*(int *)ctx)++;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* LINES[0..N) sorted and joined, one a line (LINES and its strings freed). */
static char *join_sorted(char **lines, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	qsort(lines, n, sizeof(*lines), line_cmp);
	/* appended at a running end: strcat would walk the whole text each time (quadratic,
	 * and ASan's strcat checks it all again: 30 s for the 31k rows below) */
	char *out = calloc(len + 1, 1), *end = out;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(lines[i]);
		memcpy(end, lines[i], k);
		end[k] = '\n';
		end += k + 1;
		free(lines[i]);
	}
	free(lines);
	return out;
}

/* Every row of P as text, sorted: "event comm/pid/tid/cgroup time count image:offset...". */
static char *dump_rows(const struct spent_profile *p)
{
	size_t n = spent_profile_ndetail(p);
	char **lines = calloc(n + 1, sizeof(*lines));
	for (size_t i = 0; i < n; i++) {
		struct spent_profile_detail_row r;
		assert_int_equal(spent_profile_detail_get(p, i, &r), 0);
		char buf[8192];
		const struct spent_profile_task *t = spent_profile_task_get(p, r.task);
		int k = snprintf(buf, sizeof(buf), "%s %s/%u/%u/%s %llu %llu",
				 spent_profile_event_get(p, r.event)->name, t ? t->comm : "-", t ? t->pid : 0,
				 t ? t->tid : 0, t && t->cgroup ? t->cgroup : "-",
				 (unsigned long long)r.time_ns, (unsigned long long)r.count);
		for (size_t f = 0; f < r.nframes && k < 8000; f++) {
			const struct spent_profile_image *im = spent_profile_image_get(p, r.frames[f].image);
			k += snprintf(buf + k, sizeof(buf) - (size_t)k, " %s:%llx", im ? im->path : "?",
				      (unsigned long long)r.frames[f].offset);
		}
		lines[i] = strdup(buf);
	}
	return join_sorted(lines, n);
}

/* Tasks with and without cgroups, no task, unknown time, frames without image, kernel
 * addresses, deep chains, counts above 3, two events. */
static struct spent_profile *detail_profile(void)
{
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_image(p, "/usr/bin/a"), k = add_image(p, "[kernel.kallsyms]");
	uint32_t e0, e1;
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &e0), 0);
	assert_int_equal(spent_profile_event_intern(p, "page-faults", 1, 0, &e1), 0);
	uint32_t t1 = add_task(p, "a", 100, 100, NULL), t2 = add_task(p, "a", 100, 101, NULL);
	uint32_t t3 = add_task(p, "sshd", 7, 0, "/system.slice/ssh.service");
	struct spent_profile_frame deep[40];
	for (int i = 0; i < 40; i++)
		deep[i] = (struct spent_profile_frame){ a, 0x401000 + 0x10 * (uint64_t)i };
	struct spent_profile_frame kern[3] = { { k, 0xffffffff81234567ull }, { k, 0xffffffff81000010ull },
					 { SPENT_PROFILE_NO_IMAGE, 0x7f0000001234ull } };
	for (uint64_t b = 0; b < 50; b++) {
		assert_int_equal(spent_profile_add_detail(p, e0, t1, T0 + b * 10 * MS + 3, deep, 1 + b % 40,
						    1 + b % 7), 0);
		assert_int_equal(spent_profile_add_detail(p, e0, t2, T0 + b * 30 * MS, kern, 3, 1), 0);
		assert_int_equal(spent_profile_add_detail(p, e0, t1, T0 + b * 10 * MS, kern + 1, 2, 1000), 0);
	}
	assert_int_equal(spent_profile_add_detail(p, e0, SPENT_PROFILE_NO_TASK, 0, deep, 2, 3), 0);
	assert_int_equal(spent_profile_add_detail(p, e0, t3, 0, kern, 1, 1), 0);
	assert_int_equal(spent_profile_add_detail(p, e1, t3, T0 + 5 * MS, deep + 3, 4, 2), 0);
	spent_profile_extend_span(p, T0 - MS, T0 + 2000 * MS);
	return p;
}

static struct spent_profile_dir *new_dir(const char *name, char *path, size_t len)
{
	struct spent_profile_dir *d;
	snprintf(path, len, "%s/%s", tmpdir, name);
	assert_int_equal(spent_profile_dir_create(path, &d), 0);
	return d;
}

static void rows_and_span_survive_a_round_trip_and_merge(void **state)
{
	(void)state;
	char dir[256], file[512];
	struct spent_profile_dir *d = new_dir("rt", dir, sizeof(dir));
	struct spent_profile *p = detail_profile(), *q = spent_profile_new(), *twice = spent_profile_new();
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	snprintf(file, sizeof(file), "%s/epoch-0000/" SAMPLES, dir);
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_epoch(d, 0, q, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	char *want = dump_rows(p), *got = dump_rows(q);
	assert_string_equal(got, want);
	assert_int_equal(spent_profile_time_bucket(q), SPENT_PROFILE_TIME_BUCKET_NS);
	uint64_t s, e;
	spent_profile_span(q, &s, &e);
	assert_true(s == T0 - MS && e == T0 + 2000 * MS);
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), 0);
	assert_true(s == T0 - MS && e == T0 + 2000 * MS);
	assert_int_equal(spent_profile_dir_epoch_span(d, 7, &s, &e), -ENOENT);

	/* a second write adds to what is there: every count doubles, the span is the union */
	spent_profile_extend_span(p, T0 + 5000 * MS, T0 + 6000 * MS);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	assert_int_equal(spent_profile_dir_read_epoch(d, 0, twice, NULL, NULL, NULL), 0);
	assert_int_equal(spent_profile_merge(q, p), 0);
	char *doubled = dump_rows(q), *got2 = dump_rows(twice);
	assert_string_equal(got2, doubled);
	spent_profile_span(twice, &s, &e);
	assert_true(s == T0 - MS && e == T0 + 6000 * MS);
	free(want);
	free(got);
	free(doubled);
	free(got2);
	spent_profile_free(p);
	spent_profile_free(q);
	spent_profile_free(twice);
	spent_profile_dir_close(d);
}

static void profiles_without_detail_write_what_they_always_did(void **state)
{
	(void)state;
	char dir[256], file[512];
	struct spent_profile_dir *d = new_dir("old", dir, sizeof(dir));
	struct spent_profile *p = spent_profile_new(), *q = spent_profile_new();
	uint32_t a = add_image(p, "/usr/bin/a"), ev;
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	assert_int_equal(spent_profile_add(p, a, 0x10, ev, 5), 0);
	struct spent_profile_frame f = { a, 0x10 };
	assert_int_equal(spent_profile_add_stack(p, ev, &f, 1, 5), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	/* no samples file, no span file; the stacks file is still version 1 */
	struct stat st;
	snprintf(file, sizeof(file), "%s/epoch-0000/" SAMPLES, dir);
	assert_int_equal(stat(file, &st), -1);
	snprintf(file, sizeof(file), "%s/epoch-0000/span", dir);
	assert_int_equal(stat(file, &st), -1);
	snprintf(file, sizeof(file), "%s/epoch-0000/stacks@cpu-clock-1000000.prof", dir);
	uint8_t *data;
	size_t len;
	assert_int_equal(binio_read_file(file, 1 << 20, &data, &len), 0);
	assert_int_equal(data[4], 1);
	free(data);
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_epoch(d, 0, q, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(spent_profile_ndetail(q), 0);
	assert_int_equal(spent_profile_nstacks(q), 1);
	uint64_t s = 1, e = 1;
	spent_profile_span(q, &s, &e);
	assert_true(s == 0 && e == 0);
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), 0);
	assert_true(s == 0 && e == 0);
	spent_profile_free(p);
	spent_profile_free(q);
	spent_profile_dir_close(d);
}

/* The samples file of event 0 of P as bytes. */
static uint8_t *samples_bytes(struct spent_profile *p, size_t *len)
{
	struct binbuf b;
	bool empty = true;
	binbuf_init(&b);
	assert_int_equal(profile_file_encode_samples(p, 0, 0, &b, &empty), 0);
	assert_false(empty);
	spent_profile_free(p);
	*len = b.len;
	return b.data;
}

static void fix_crc(uint8_t *d, size_t len)
{
	uint32_t crc = binio_crc32(0, d, len - 4);
	for (int i = 0; i < 4; i++)
		d[len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/* Where a version-3 file's body starts: after the event header, the flags, bucket and origin,
 * the method byte and the body length. */
static size_t body_start(const uint8_t *d, size_t len, uint8_t *method, uint64_t *blen)
{
	struct binreader r;
	uint64_t v;
	char *name;
	binreader_init(&r, d + 9, len - 13);
	assert_int_equal(binreader_get_str(&r, 255, &name), 0);
	free(name);
	for (int i = 0; i < 5; i++)
		assert_int_equal(binreader_get_uvarint(&r, &v), 0);
	assert_int_equal(binreader_get_u8(&r, method), 0);
	assert_int_equal(binreader_get_uvarint(&r, blen), 0);
	return (size_t)(r.p - d);
}

/* The same file with its body stored (decompressed when it was not). */
static uint8_t *stored_form(const uint8_t *d, size_t len, size_t *outlen)
{
	uint8_t method;
	uint64_t blen;
	size_t at = body_start(d, len, &method, &blen), n = len - 4 - at;
	struct binbuf b;
	binbuf_init(&b);
	binbuf_put(&b, d, at - 1 - (blen < 128 ? 1 : blen < 16384 ? 2 : 3));
	binbuf_put_u8(&b, 0);
	binbuf_put_uvarint(&b, blen);
	assert_int_equal(binbuf_reserve(&b, blen), 0);
	if (method == 1)
		assert_int_equal(ZSTD_decompress(b.data + b.len, blen, d + at, n), blen);
	else
		memcpy(b.data + b.len, d + at, n);
	b.len += blen;
	assert_int_equal(profile_file_put_crc(&b, 0), 0);
	*outlen = b.len;
	return b.data;
}

/* The blocks of the zstd frame Z (N bytes): 0 when it is not one frame of them. */
static unsigned zstd_blocks(const uint8_t *z, size_t n)
{
	static const size_t fcs_len[4] = { 0, 2, 4, 8 }, dict_len[4] = { 0, 1, 2, 4 };
	if (n < 6 || z[0] != 0x28 || z[1] != 0xb5 || z[2] != 0x2f || z[3] != 0xfd)
		return 0;
	uint8_t fhd = z[4];
	bool single = fhd >> 5 & 1;
	size_t at = 5 + !single + dict_len[fhd & 3] + (fhd >> 6 ? fcs_len[fhd >> 6] : single);
	unsigned blocks = 0;
	for (bool last = false; !last && at + 3 <= n; blocks++) {
		uint32_t h = z[at] | (uint32_t)z[at + 1] << 8 | (uint32_t)z[at + 2] << 16;
		last = h & 1;
		at += 3 + ((h >> 1 & 3) == 1 ? 1 : h >> 3);
	}
	return at == n ? blocks : 0;
}

/* The compressed body is one zstd frame with a block per column (each block's entropy tables
 * fit its column), and reads back the same. */
static void compressed_body_has_a_block_per_column(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_image(p, "/usr/bin/app"), ev = add_event(p, "cpu-clock", 1000000);
	uint32_t t = add_task(p, "app", 1, 1, NULL);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 4000; i++) {
		struct spent_profile_frame f[3];
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			f[k] = (struct spent_profile_frame){ k == 2 ? SPENT_PROFILE_NO_IMAGE : a,
							     k == 2 ? x : 0x1000 + x % 50000 };
		}
		assert_int_equal(spent_profile_add_detail(p, ev, t, 1700000000000000000ull +
							  (uint64_t)i * 1000000, f, 3, 1 + i % 5), 0);
	}
	size_t len;
	uint8_t *d = samples_bytes(p, &len), method;
	uint64_t blen;
	size_t at = body_start(d, len, &method, &blen);
	assert_int_equal(method, 1);
	/* tables, child counts, images, ends, two offset columns, group headers, four row
	 * columns (the counts column included) */
	assert_true(zstd_blocks(d + at, len - 4 - at) >= 9);
	struct spent_profile *q = spent_profile_new();
	const char *why = NULL;
	assert_int_equal(spent_profile_file_parse(d, len, q, &why), 0);
	assert_int_equal(spent_profile_ndetail(q), 4000);
	spent_profile_free(q);
	free(d);
}

/* Every truncation of DATA is refused; COUNT changes of one byte (each byte from START with
 * STRIDE, cycling through 0x00, 0xff, 0x80; CRC recomputed so the body's checks are reached)
 * are refused or accepted as some other valid file, never a crash or a partial add. */
static size_t mutate(const uint8_t *data, size_t len, size_t start, size_t stride)
{
	static const uint8_t vals[3] = { 0x00, 0xff, 0x80 };
	uint8_t *copy = malloc(len);
	size_t accepted = 0;
	for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
		struct spent_profile *t = spent_profile_new();
		const char *why = NULL;
		memcpy(copy, data, cut);
		if (cut >= 13)
			fix_crc(copy, cut);
		assert_int_equal(spent_profile_file_parse(copy, cut, t, &why), -EBADMSG);
		assert_non_null(why);
		assert_int_equal(spent_profile_ndetail(t), 0);
		assert_int_equal(spent_profile_ntasks(t), 0);
		spent_profile_free(t);
	}
	for (size_t i = start; i + 4 < len; i += stride) {
		struct spent_profile *t = spent_profile_new();
		uint8_t v = vals[i % 3];
		memcpy(copy, data, len);
		copy[i] = copy[i] == v ? copy[i] ^ 1 : v;
		fix_crc(copy, len);
		int err = spent_profile_file_parse(copy, len, t, NULL);
		assert_true(err == 0 || err == -EBADMSG);
		if (err)
			assert_int_equal(spent_profile_ndetail(t), 0);
		else
			accepted++;
		spent_profile_free(t);
	}
	free(copy);
	return accepted;
}

/* A small profile touching every part of the file: two tasks (one with a cgroup) and no task,
 * unknown time, a frame without image, a kernel address, a shared chain prefix, counts > 3. */
static struct spent_profile *small_profile(void)
{
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_image(p, "/a"), k = add_image(p, "[kernel.kallsyms]"), ev;
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	uint32_t t1 = add_task(p, "a", 1, 1, NULL), t2 = add_task(p, "b", 1, 2, "/c");
	struct spent_profile_frame f[4] = { { a, 0x10 }, { SPENT_PROFILE_NO_IMAGE, 0x7f00 },
					    { k, 0xffffffff81000000ull }, { a, 0x20 } };
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, f, 3, 1), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0 + 30 * MS, f, 2, 9), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t2, T0, f + 3, 1, 2), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, SPENT_PROFILE_NO_TASK, 0, f + 1, 3, 1), 0);
	return p;
}

static void hostile_samples_files_add_nothing(void **state)
{
	(void)state;
	size_t len, slen, small_len;
	uint8_t *data = samples_bytes(detail_profile(), &len);
	uint8_t *small = samples_bytes(small_profile(), &small_len);
	uint8_t *stored = stored_form(data, len, &slen), *small_stored;
	size_t small_slen;
	uint8_t method;
	uint64_t blen;
	/* the large one compresses; both forms read the same rows */
	body_start(data, len, &method, &blen);
	assert_int_equal(method, 1);
	struct spent_profile *whole = spent_profile_new(), *whole2 = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(data, len, whole, NULL), 0);
	assert_int_equal(spent_profile_file_parse(stored, slen, whole2, NULL), 0);
	assert_true(spent_profile_ndetail(whole) > 100);
	char *x = dump_rows(whole), *y = dump_rows(whole2);
	assert_string_equal(x, y);
	free(x);
	free(y);
	small_stored = stored_form(small, small_len, &small_slen);
	/* every byte of the small stored file (every section of the body: tables, trie columns,
	 * rows); the large ones sampled with a fixed stride */
	size_t accepted = mutate(small_stored, small_slen, 9, 1);
	accepted += mutate(data, len, 9, 7);
	accepted += mutate(stored, slen, 11, 29);
	/* a changed byte with the old CRC is always caught */
	uint8_t *copy = malloc(len);
	memcpy(copy, data, len);
	copy[len / 2] ^= 0x40;
	struct spent_profile *t = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(copy, len, t, NULL), -EBADMSG);
	spent_profile_free(t);
	/* a samples file claiming version 1 is refused */
	memcpy(copy, data, len);
	copy[4] = 1;
	fix_crc(copy, len);
	t = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(copy, len, t, NULL), -EBADMSG);
	spent_profile_free(t);
	print_message("%zu single-byte changes still parse\n", accepted);
	free(copy);
	free(data);
	free(stored);
	free(small);
	free(small_stored);
	spent_profile_free(whole);
	spent_profile_free(whole2);
}

/* Every call stack of P as text, sorted: "event count image:offset...". */
static char *dump_stacks(const struct spent_profile *p)
{
	size_t n = spent_profile_nstacks(p);
	char **lines = calloc(n + 1, sizeof(*lines));
	for (size_t i = 0; i < n; i++) {
		uint32_t ev;
		const struct spent_profile_frame *f;
		size_t nf;
		uint64_t cnt;
		char buf[8192];
		spent_profile_stack_get(p, i, &ev, &f, &nf, &cnt);
		int k = snprintf(buf, sizeof(buf), "%s %llu", spent_profile_event_get(p, ev)->name,
				 (unsigned long long)cnt);
		for (size_t j = 0; j < nf && k < 8000; j++) {
			const struct spent_profile_image *im = spent_profile_image_get(p, f[j].image);
			k += snprintf(buf + k, sizeof(buf) - (size_t)k, " %s:%llx", im ? im->path : "?",
				      (unsigned long long)f[j].offset);
		}
		lines[i] = strdup(buf);
	}
	return join_sorted(lines, n);
}

static bool stacks_file_exists(const char *dir, const char *ev)
{
	char file[512];
	struct stat st;
	snprintf(file, sizeof(file), "%s/epoch-0000/stacks@%s.prof", dir, ev);
	return stat(file, &st) == 0;
}

static void read_back(struct spent_profile_dir *d, const struct spent_profile *want)
{
	struct spent_profile *q = spent_profile_new();
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_epoch(d, 0, q, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	char *ws = dump_stacks(want), *gs = dump_stacks(q), *wr = dump_rows(want), *gr = dump_rows(q);
	assert_string_equal(gs, ws);
	assert_string_equal(gr, wr);
	free(ws);
	free(gs);
	free(wr);
	free(gr);
	spent_profile_free(q);
}

/* As `spent record` makes them: each detail row's chain is also added as a stack. */
static struct spent_profile *record_profile(void)
{
	struct spent_profile *p = detail_profile();
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		struct spent_profile_detail_row r;
		assert_int_equal(spent_profile_detail_get(p, i, &r), 0);
		assert_int_equal(spent_profile_add_stack(p, r.event, r.frames, r.nframes, r.count), 0);
	}
	return p;
}

/* Stacks that are the sum of the detail chains are stored once, in the samples file; any
 * write that breaks the equality (a daemon's rows without stacks, stacks without rows)
 * brings the stacks file back, and nothing is lost or counted twice on the way. */
static void stacks_equal_to_the_chains_are_not_written_twice(void **state)
{
	(void)state;
	char dir[256];
	struct spent_profile_dir *d = new_dir("once", dir, sizeof(dir));
	struct spent_profile *p = record_profile(), *want = spent_profile_new();
	assert_true(profile_samples_hold_stacks(p, 0) && profile_samples_hold_stacks(p, 1));
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	assert_false(stacks_file_exists(dir, "cpu-clock-1000000"));
	assert_false(stacks_file_exists(dir, "page-faults-1"));
	assert_int_equal(spent_profile_merge(want, p), 0);
	read_back(d, want);
	/* a merge of the same keeps them equal: still one file */
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	assert_false(stacks_file_exists(dir, "cpu-clock-1000000"));
	assert_int_equal(spent_profile_merge(want, p), 0);
	read_back(d, want);
	/* rows without stacks (the daemon): the stacks move back to their own file */
	struct spent_profile *rows = detail_profile();
	assert_false(profile_samples_hold_stacks(rows, 0));
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, rows, NULL, NULL), 0);
	assert_true(stacks_file_exists(dir, "cpu-clock-1000000"));
	assert_int_equal(spent_profile_merge(want, rows), 0);
	read_back(d, want);
	spent_profile_free(rows);
	spent_profile_free(p);
	spent_profile_free(want);
	spent_profile_dir_close(d);

	/* stacks without rows next to a samples file that holds stacks: both kept */
	d = new_dir("once2", dir, sizeof(dir));
	p = record_profile();
	want = spent_profile_new();
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	struct spent_profile *st = spent_profile_new();
	uint32_t a = add_image(st, "/usr/bin/a"), ev;
	assert_int_equal(spent_profile_event_intern(st, "cpu-clock", 1000000, 0, &ev), 0);
	struct spent_profile_frame f = { a, 0x99 };
	assert_int_equal(spent_profile_add_stack(st, ev, &f, 1, 4), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, st, NULL, NULL), 0);
	assert_true(stacks_file_exists(dir, "cpu-clock-1000000"));
	assert_false(stacks_file_exists(dir, "page-faults-1"));
	assert_int_equal(spent_profile_merge(want, p), 0);
	assert_int_equal(spent_profile_merge(want, st), 0);
	read_back(d, want);
	spent_profile_free(st);
	spent_profile_free(p);
	spent_profile_free(want);
	spent_profile_dir_close(d);
}

/* `spent record` of one thread for 60 s at 1 kHz: 10 ms buckets of 10 samples over a few
 * chains. Each row must cost 2-3 bytes, so that the profile stays far below perf.data
 * (which spends 40+ bytes per sample). */
static void a_record_row_costs_two_to_three_bytes(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_image(p, "/usr/bin/a"), lc = add_image(p, "/lib/libc.so.6"), ev;
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	uint32_t t = add_task(p, "a", 4242, 4242, NULL);
	uint64_t rng = 88172645463325252ull, samples = 0;
	for (uint64_t ms = 0; ms < 60000; ms++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* a hot loop with 24 distinct pcs in two images, mostly in four of them */
		uint64_t pick = rng % 100 < 80 ? rng % 4 : rng % 24;
		struct spent_profile_frame f[3] = { { pick < 20 ? a : lc, 0x401000 + 8 * pick },
					      { a, 0x402345 }, { a, 0x402010 } };
		assert_int_equal(spent_profile_add_detail(p, ev, t, T0 + ms * MS + 17, f, 3, 1), 0);
		samples++;
	}
	struct binbuf b;
	binbuf_init(&b);
	assert_int_equal(profile_file_encode_samples(p, ev, 0, &b, NULL), 0);
	size_t rows = spent_profile_ndetail(p);
	double per_row = (double)b.len / (double)rows, per_sample = (double)b.len / (double)samples;
	print_message("%zu rows, %llu samples: %zu bytes, %.2f bytes/row, %.2f bytes/sample\n",
		      rows, (unsigned long long)samples, b.len, per_row, per_sample);
	assert_true(per_row <= 3.0);
	struct spent_profile *q = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(b.data, b.len, q, NULL), 0);
	assert_int_equal(spent_profile_ndetail(q), rows);
	char *x = dump_rows(p), *y = dump_rows(q);
	assert_string_equal(x, y);
	free(x);
	free(y);
	binbuf_release(&b);
	spent_profile_free(q);
	spent_profile_free(p);
}

/* Rows added before spent_profile_set_time_bucket widened the buckets meet in the file. */
static void a_wider_bucket_merges_rows_on_write(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_image(p, "/usr/bin/a"), ev;
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	struct spent_profile_frame f = { a, 1 };
	assert_int_equal(spent_profile_set_time_bucket(p, MS), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(spent_profile_add_detail(p, ev, SPENT_PROFILE_NO_TASK, T0 + (uint64_t)i * MS, &f,
						    1, 1), 0);
	assert_int_equal(spent_profile_set_time_bucket(p, 10 * MS), 0);
	struct binbuf b;
	binbuf_init(&b);
	assert_int_equal(profile_file_encode_samples(p, ev, 0, &b, NULL), 0);
	struct spent_profile *q = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(b.data, b.len, q, NULL), 0);
	assert_int_equal(spent_profile_ndetail(q), 1);
	struct spent_profile_detail_row r;
	assert_int_equal(spent_profile_detail_get(q, 0, &r), 0);
	assert_int_equal(r.count, 10);
	assert_int_equal(r.time_ns, T0);
	assert_int_equal(spent_profile_time_bucket(q), 10 * MS);
	binbuf_release(&b);
	spent_profile_free(q);
	spent_profile_free(p);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void span_files_are_checked_replaced_and_owned(void **state)
{
	(void)state;
	char dir[256], file[512];
	struct spent_profile_dir *d = new_dir("span", dir, sizeof(dir));
	struct spent_profile *p = spent_profile_new();
	uint64_t s, e;
	assert_int_equal(spent_profile_dir_new_epoch(d, &(uint32_t){ 0 }), 0);
	snprintf(file, sizeof(file), "%s/epoch-0000/span", dir);
	static const char *const bad[] = {
		"", "spent-span 1 5 4\n", "spent-span 1 0 4\n", "spent-span 1 5 6", "spent-span 1 5 6\nx",
		"spent-span 2 5 6\n", "spent-span 1 05 6\n", "spent-span 1 -5 6\n",
		"spent-span 1 5 99999999999999999999\n", "spent-span 1  5 6\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(file, bad[i]);
		assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), -EBADMSG);
		struct spent_profile *q = spent_profile_new();
		int warned = 0;
		size_t skipped = 0;
		assert_int_equal(spent_profile_dir_read_epoch(d, 0, q, warn_count, &warned, &skipped), 0);
		assert_int_equal(warned, 1);
		assert_int_equal(skipped, 1);
		spent_profile_span(q, &s, &e);
		assert_true(s == 0 && e == 0);
		spent_profile_free(q);
	}
	write_file(file, "spent-span 1 5 18446744073709551615\n");
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), 0);
	assert_true(s == 5 && e == UINT64_MAX);

	/* a corrupt span met while writing is set aside, and the new one written */
	write_file(file, "garbage");
	spent_profile_extend_span(p, 100, 200);
	int warned = 0;
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, warn_count, &warned), 0);
	assert_int_equal(warned, 1);
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), 0);
	assert_true(s == 100 && e == 200);
	spent_profile_extend_span(p, 50, 60);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, warn_count, &warned), 0);
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), 0);
	assert_true(s == 50 && e == 200);
	/* span and span.corrupt are spent's own: the directory may be replaced and removed */
	char corrupt[600];
	snprintf(corrupt, sizeof(corrupt), "%s.corrupt", file);
	struct stat st;
	assert_int_equal(stat(corrupt, &st), 0);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), 0);
	assert_int_equal(spent_profile_dir_remove_epoch(d, 0), 0);
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &s, &e), -ENOENT);
	spent_profile_free(p);
	spent_profile_dir_close(d);
	assert_int_equal(spent_profile_dir_remove(dir), 0);
	assert_int_equal(stat(dir, &st), -1);
}

/* `spent db DST merge SRC` carries detail rows and spans like every other kind */
static void db_merge_carries_rows_and_spans(void **state)
{
	(void)state;
	char src[256], dst[256];
	struct spent_profile_dir *s = new_dir("msrc", src, sizeof(src)), *d = new_dir("mdst", dst, sizeof(dst));
	struct spent_profile *p = detail_profile(), *q = spent_profile_new();
	assert_int_equal(spent_profile_dir_write_epoch(s, 0, p, NULL, NULL), 0);
	assert_int_equal(spent_profile_dir_new_epoch(d, &(uint32_t){ 0 }), 0);
	const char *srcs[1] = { src };
	size_t skipped = 9;
	assert_int_equal(db_merge(d, srcs, 1, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(spent_profile_dir_read_epoch(d, 0, q, NULL, NULL, &skipped), 0);
	char *want = dump_rows(p), *got = dump_rows(q);
	assert_string_equal(got, want);
	uint64_t a, b;
	assert_int_equal(spent_profile_dir_epoch_span(d, 0, &a, &b), 0);
	assert_true(a == T0 - MS && b == T0 + 2000 * MS);
	free(want);
	free(got);
	spent_profile_free(p);
	spent_profile_free(q);
	spent_profile_dir_close(s);
	spent_profile_dir_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_and_span_survive_a_round_trip_and_merge),
		cmocka_unit_test(profiles_without_detail_write_what_they_always_did),
		cmocka_unit_test(hostile_samples_files_add_nothing),
		cmocka_unit_test(stacks_equal_to_the_chains_are_not_written_twice),
		cmocka_unit_test(a_record_row_costs_two_to_three_bytes),
		cmocka_unit_test(a_wider_bucket_merges_rows_on_write),
		cmocka_unit_test(span_files_are_checked_replaced_and_owned),
		cmocka_unit_test(db_merge_carries_rows_and_spans),
		cmocka_unit_test(compressed_body_has_a_block_per_column),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
