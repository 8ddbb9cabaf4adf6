/* tests/unit/test_citcat_recdir.c - the citcat recording directory: copies of mapped files
 * written, deduplicated, read back and verified (corrupt, truncated, missing copies refused);
 * a recording directory recognised and removed only when it holds nothing else. */
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
#include "citcat/recdir.h"

#define DATA_LEN 200000

struct fixture {
	char dir[64];
	uint8_t *data;
	uint64_t hash;
	char copy[160];		/* DIR/files/<hash>.zst */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_recdir.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->data = malloc(DATA_LEN);
	uint32_t x = 12345;
	for (size_t i = 0; i < DATA_LEN; i++) {	/* compressible, not constant */
		x = x * 1103515245 + 12345;
		f->data[i] = (uint8_t)((i % 251) ^ (i % 64 ? 0 : (x >> 16) & 0xff));
	}
	f->hash = binio_fnv64(BINIO_FNV64_INIT, f->data, DATA_LEN);
	snprintf(f->copy, sizeof(f->copy), "%s/files/%016llx.zst", f->dir, (unsigned long long)f->hash);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->data);
	free(f);
	return 0;
}

static void touch(const char *dir, const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static void copy_round_trip_compressed_mode_0600(void **state)
{
	struct fixture *f = *state;
	uint64_t written = 0;
	assert_int_equal(cc_copy_write(f->dir, f->hash, f->data, DATA_LEN, &written), 0);
	struct stat st;
	assert_int_equal(stat(f->copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal((uint64_t)st.st_size, written);
	assert_true(written > 0 && written < DATA_LEN / 2);
	uint8_t *back = NULL;
	size_t stored = 0;
	assert_int_equal(cc_copy_read(f->dir, f->hash, DATA_LEN, &back, &stored), 0);
	assert_int_equal(stored, written);
	assert_memory_equal(back, f->data, DATA_LEN);
	free(back);
}

static void equal_content_is_stored_once(void **state)
{
	struct fixture *f = *state;
	uint64_t w1 = 0, w2 = 1;
	assert_int_equal(cc_copy_write(f->dir, f->hash, f->data, DATA_LEN, &w1), 0);
	assert_int_equal(cc_copy_write(f->dir, f->hash, f->data, DATA_LEN, &w2), 0);
	assert_true(w1 > 0);
	assert_int_equal(w2, 0);
}

static void empty_file_round_trips(void **state)
{
	struct fixture *f = *state;
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, "", 0), written = 0;
	uint8_t *back = NULL;
	size_t stored = 0;
	assert_int_equal(cc_copy_write(f->dir, h, (const uint8_t *)"", 0, &written), 0);
	assert_int_equal(cc_copy_read(f->dir, h, 0, &back, &stored), 0);
	free(back);
}

static void damaged_copies_are_refused(void **state)
{
	struct fixture *f = *state;
	uint64_t written = 0;
	uint8_t *back = (uint8_t *)1;
	size_t stored;
	assert_int_equal(cc_copy_write(f->dir, f->hash, f->data, DATA_LEN, &written), 0);
	/* a size or hash the copy does not have */
	assert_int_equal(cc_copy_read(f->dir, f->hash, DATA_LEN - 1, &back, &stored), -EBADMSG);
	assert_null(back);
	/* a flipped byte in the compressed data */
	int fd = open(f->copy, O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, (off_t)written / 2), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)written / 2), 1);
	assert_int_equal(cc_copy_read(f->dir, f->hash, DATA_LEN, &back, &stored), -EBADMSG);
	/* cut short */
	assert_int_equal(ftruncate(fd, (off_t)written - 10), 0);
	close(fd);
	assert_int_equal(cc_copy_read(f->dir, f->hash, DATA_LEN, &back, &stored), -EBADMSG);
	/* another file's copy under this name: right size, wrong content */
	char other[DATA_LEN / 4];
	memset(other, 7, sizeof(other));
	unlink(f->copy);
	uint64_t oh = binio_fnv64(BINIO_FNV64_INIT, other, sizeof(other));
	assert_int_equal(cc_copy_write(f->dir, oh, (uint8_t *)other, sizeof(other), &written), 0);
	char op[160];
	snprintf(op, sizeof(op), "%s/files/%016llx.zst", f->dir, (unsigned long long)oh);
	assert_int_equal(rename(op, f->copy), 0);
	assert_int_equal(cc_copy_read(f->dir, f->hash, sizeof(other), &back, &stored), -EBADMSG);
	/* gone */
	unlink(f->copy);
	assert_int_equal(cc_copy_read(f->dir, f->hash, DATA_LEN, &back, &stored), -ENOENT);
}

static void recording_directory_removed_only_when_all_its_own(void **state)
{
	struct fixture *f = *state;
	uint64_t written;
	char p[160];
	touch(f->dir, "recording");
	assert_int_equal(cc_copy_write(f->dir, f->hash, f->data, DATA_LEN, &written), 0);
	assert_int_equal(cc_recdir_only_own(f->dir), 1);
	/* a stranger in files/ (not <16 hex>.zst): nothing is removed */
	touch(f->dir, "files/notes.txt");
	assert_int_equal(cc_recdir_only_own(f->dir), 0);
	assert_int_equal(cc_recdir_remove(f->dir), -ENOTEMPTY);
	assert_int_equal(access(f->copy, F_OK), 0);
	snprintf(p, sizeof(p), "%s/recording", f->dir);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/files/notes.txt", f->dir);
	unlink(p);
	/* a stranger next to the recording */
	touch(f->dir, "mine");
	assert_int_equal(cc_recdir_remove(f->dir), -ENOTEMPTY);
	snprintf(p, sizeof(p), "%s/mine", f->dir);
	unlink(p);
	assert_int_equal(cc_recdir_remove(f->dir), 0);
	assert_int_equal(access(f->dir, F_OK), -1);
	assert_int_equal(mkdir(f->dir, 0700), 0);	/* for teardown */
}

static void symlinks_are_not_a_recordings_own(void **state)
{
	struct fixture *f = *state;
	char p[160];
	snprintf(p, sizeof(p), "%s/recording", f->dir);
	assert_int_equal(symlink("/etc/hostname", p), 0);
	assert_int_equal(cc_recdir_only_own(f->dir), 0);
	assert_int_equal(cc_recdir_remove(f->dir), -ENOTEMPTY);
	assert_int_equal(access("/etc/hostname", F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(copy_round_trip_compressed_mode_0600, setup, teardown),
		cmocka_unit_test_setup_teardown(equal_content_is_stored_once, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_file_round_trips, setup, teardown),
		cmocka_unit_test_setup_teardown(damaged_copies_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(recording_directory_removed_only_when_all_its_own,
						setup, teardown),
		cmocka_unit_test_setup_teardown(symlinks_are_not_a_recordings_own, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
