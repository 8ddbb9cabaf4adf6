/* tests/unit/test_binio.c - varints, bounded reader and atomic writes of core/binio. */
#include <errno.h>
#include <fcntl.h>
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

#include "core/binio.h"

static void varint_roundtrip_edges(void **state)
{
	(void)state;
	const uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX };
	const int64_t svals[] = { 0, -1, 1, -64, 64, INT64_MIN, INT64_MAX };
	struct binbuf b;
	binbuf_init(&b);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		assert_int_equal(binbuf_put_uvarint(&b, vals[i]), 0);
	for (size_t i = 0; i < sizeof(svals) / sizeof(svals[0]); i++)
		assert_int_equal(binbuf_put_svarint(&b, svals[i]), 0);
	struct binreader r;
	binreader_init(&r, b.data, b.len);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v;
		assert_int_equal(binreader_get_uvarint(&r, &v), 0);
		assert_true(v == vals[i]);
	}
	for (size_t i = 0; i < sizeof(svals) / sizeof(svals[0]); i++) {
		int64_t v;
		assert_int_equal(binreader_get_svarint(&r, &v), 0);
		assert_true(v == svals[i]);
	}
	assert_int_equal(binreader_left(&r), 0);
	binbuf_release(&b);
}

static void varint_small_values_take_one_byte(void **state)
{
	(void)state;
	uint8_t out[10];
	assert_int_equal(uvarint_encode(127, out), 1);
	assert_int_equal(uvarint_encode(128, out), 2);
	assert_int_equal(uvarint_encode(UINT64_MAX, out), 10);
}

static void reader_rejects_truncated_and_overlong(void **state)
{
	(void)state;
	struct binreader r;
	uint64_t v;
	const uint8_t trunc[] = { 0x80, 0x80 };
	binreader_init(&r, trunc, sizeof(trunc));
	assert_int_equal(binreader_get_uvarint(&r, &v), -EBADMSG);
	const uint8_t overlong[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	binreader_init(&r, overlong, sizeof(overlong));
	assert_int_equal(binreader_get_uvarint(&r, &v), -EBADMSG);
	const uint8_t str[] = { 5, 'a', 'b' };
	char *s = NULL;
	binreader_init(&r, str, sizeof(str));
	assert_int_equal(binreader_get_str(&r, 100, &s), -EBADMSG);
	assert_null(s);
	uint32_t w;
	binreader_init(&r, str, 3);
	assert_int_equal(binreader_get_le32(&r, &w), -EBADMSG);
}

static void atomic_write_replaces_and_keeps_mode(void **state)
{
	(void)state;
	char dir[] = "/tmp/spent-binio.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(binio_write_file_atomic(path, "one", 3, 0640), 0);
	assert_int_equal(binio_write_file_atomic(path, "second", 6, 0640), 0);
	uint8_t *data;
	size_t len;
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(data, "second", 6);
	free(data);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* a write into a missing directory fails and leaves nothing behind */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/missing/f", dir);
	assert_int_equal(binio_write_file_atomic(bad, "x", 1, 0600), -ENOENT);
	assert_int_equal(binio_read_file(dir, 100, &data, &len), -EISDIR);
	unlink(path);
	rmdir(dir);
}

static void read_file_refuses_oversize(void **state)
{
	(void)state;
	uint8_t *data;
	size_t len;
	assert_int_equal(binio_read_file("/etc/passwd", 1, &data, &len), -EFBIG);
	assert_int_equal(binio_read_file("/nonexistent/x", 1, &data, &len), -ENOENT);
}

/* An open file is read whole from its start whatever its offset (pread), which it keeps, and
 * bounded as binio_read_file is: the caller that looked at its head reads the same file. */
static void read_fd_reads_from_the_start_and_keeps_the_offset(void **state)
{
	(void)state;
	char path[] = "/tmp/spent-binio-fd.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	assert_int_equal(lseek(fd, 4, SEEK_SET), 4);
	uint8_t *data = NULL;
	size_t len = 0;
	assert_int_equal(binio_read_fd(fd, 10, &data, &len), 0);
	assert_int_equal(len, 10);
	assert_memory_equal(data, "0123456789", 10);
	free(data);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 4);
	assert_int_equal(binio_read_fd(fd, 9, &data, &len), -EFBIG);
	close(fd);
	unlink(path);
}

/* A FIFO (no writer) must be refused at once, never waited on; a regular file opens
 * blocking again. */
static void open_regular_refuses_fifo_without_blocking(void **state)
{
	(void)state;
	char dir[] = "/tmp/spent-binio-XXXXXX", path[64];
	uint8_t *data;
	size_t len;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(binio_open_regular(path), -EINVAL);
	assert_null(binio_fopen_regular(path));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(binio_read_file(path, 100, &data, &len), -EINVAL);
	assert_int_equal(binio_open_regular(dir), -EISDIR);
	int fd = binio_open_regular("/etc/passwd");
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void crc_and_fnv_known_values(void **state)
{
	(void)state;
	assert_int_equal(binio_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_true(binio_fnv64(BINIO_FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varint_roundtrip_edges),
		cmocka_unit_test(varint_small_values_take_one_byte),
		cmocka_unit_test(reader_rejects_truncated_and_overlong),
		cmocka_unit_test(atomic_write_replaces_and_keeps_mode),
		cmocka_unit_test(read_file_refuses_oversize),
		cmocka_unit_test(read_fd_reads_from_the_start_and_keeps_the_offset),
		cmocka_unit_test(open_regular_refuses_fifo_without_blocking),
		cmocka_unit_test(crc_and_fnv_known_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
