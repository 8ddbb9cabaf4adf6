/* tests/unit/test_kallsyms_file.c - saved kallsyms files (core/kallsyms_file.c): written as one
 * zstd frame and read back (with or without its size in the frame header), plain files read
 * as before, and hostile frames (too large once decompressed, said in the header or not, lying
 * about their size, truncated, not zstd past the magic, empty) refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include "core/kallsyms_file.h"

static const char text[] = "ffffffff81000000 t _text\nffffffff81000100 T start_kernel\n";

static char *scratch(const char *name)
{
	static char path[128];
	snprintf(path, sizeof(path), "/tmp/test_kallsyms_file.%d.%s", (int)getpid(), name);
	return path;
}

static void put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* The whole text of PATH as kallsyms_file_open gives it, or NULL with *ERR set. */
static char *read_all(const char *path, int *err)
{
	struct kallsyms_file k;
	char *out = calloc(1, 4096);
	assert_non_null(out);
	if ((*err = kallsyms_file_open(path, &k))) {
		free(out);
		return NULL;
	}
	size_t n = fread(out, 1, 4095, k.f);
	out[n] = 0;
	kallsyms_file_close(&k);
	return out;
}

static void compressed_and_plain(void **state)
{
	char *zst = scratch("zst"), *s;
	int err;
	assert_int_equal(kallsyms_file_write_zst(zst, text, strlen(text), 0600), 0);
	FILE *f = fopen(zst, "r");
	uint8_t magic[4] = {0};
	assert_int_equal(fread(magic, 1, 4, f), 4);
	fclose(f);
	assert_memory_equal(magic, "\x28\xb5\x2f\xfd", 4);	/* stored compressed */
	assert_non_null(s = read_all(zst, &err));
	assert_string_equal(s, text);
	free(s);
	uint64_t size = 0;	/* the text's size from the frame header alone */
	assert_int_equal(kallsyms_file_text_size(zst, &size), 0);
	assert_int_equal(size, strlen(text));
	unlink(zst);
	/* a profile from before: the plain text, read as it is (also shorter than the magic) */
	char *plain = scratch("plain");
	put(plain, text, strlen(text));
	assert_non_null(s = read_all(plain, &err));
	assert_string_equal(s, text);
	free(s);
	assert_int_equal(kallsyms_file_text_size(plain, &size), 0);
	assert_int_equal(size, strlen(text));
	put(plain, "ff", 2);
	assert_non_null(s = read_all(plain, &err));
	assert_string_equal(s, "ff");
	free(s);
	unlink(plain);
	assert_null(read_all(plain, &err));
	assert_int_equal(err, -ENOENT);
	assert_int_equal(kallsyms_file_text_size(plain, &size), -ENOENT);
}

static void hostile_frames(void **state)
{
	char *path = scratch("bad");
	int err;
	/* decompressing to more than the cap: refused from the frame header, nothing allocated */
	size_t big = KALLSYMS_FILE_MAX + 1;
	char *zeros = calloc(1, big);
	size_t cap = ZSTD_compressBound(big);
	uint8_t *z = malloc(cap);
	assert_non_null(zeros);
	assert_non_null(z);
	size_t n = ZSTD_compress(z, cap, zeros, big, 1);
	assert_false(ZSTD_isError(n));
	free(zeros);
	put(path, z, n);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -EFBIG);
	/* a frame claiming one byte more than it holds */
	n = ZSTD_compress(z, cap, text, strlen(text), 3);
	assert_false(ZSTD_isError(n));
	assert_int_equal(ZSTD_getFrameContentSize(z, n), strlen(text));
	size_t fcs = 5;	/* magic, descriptor, then the one-byte size of a single-segment frame */
	assert_true(z[4] & 0x20);
	z[fcs]++;
	put(path, z, n);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -EINVAL);
	/* the magic and nothing valid after it; an empty frame */
	put(path, "\x28\xb5\x2f\xfd\xff\xff", 6);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -EINVAL);
	n = ZSTD_compress(z, cap, "", 0, 3);
	put(path, z, n);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -ENODATA);
	/* an empty file is no copy either (it read as a kernel without a symbol) */
	put(path, "", 0);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -ENODATA);
	/* no size in the header (the zstd tool from a pipe): read by streaming, capped the same */
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(c);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0)));
	n = ZSTD_compress2(c, z, cap, text, strlen(text));
	assert_int_equal(ZSTD_getFrameContentSize(z, n), ZSTD_CONTENTSIZE_UNKNOWN);
	put(path, z, n);
	char *s = read_all(path, &err);
	assert_non_null(s);
	assert_string_equal(s, text);
	free(s);
	put(path, z, n - 2);	/* truncated */
	assert_null(read_all(path, &err));
	assert_int_equal(err, -EINVAL);
	zeros = calloc(1, big);
	assert_non_null(zeros);
	n = ZSTD_compress2(c, z, cap, zeros, big);
	assert_false(ZSTD_isError(n));
	free(zeros);
	put(path, z, n);
	assert_null(read_all(path, &err));
	assert_int_equal(err, -EFBIG);
	ZSTD_freeCCtx(c);
	free(z);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compressed_and_plain),
		cmocka_unit_test(hostile_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
