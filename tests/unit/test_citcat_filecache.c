/* tests/unit/test_citcat_filecache.c - citcat's cache of mapped files across recordings: an
 * identity stored is found again with its hash, any change of identity or of the cached copy
 * is a miss, a file changed just now gets no identity entry, a cached copy is hard-linked into
 * a recording (and verifies there), the cache is pruned least recently linked first, and
 * SPENT_CITCAT_CACHE chooses or disables it. */
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/binio.h"
#include "citcat/filecache.h"
#include "citcat/recdir.h"

#define DATA_LEN 100000

struct fixture {
	char top[64], cache[128], rec[128];
	uint8_t *data;
	uint64_t hash;
	struct stat st;		/* an identity settled long ago */
};

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (uint8_t)((i % 251) ^ (i % 64 ? 0 : (seed >> 16) & 0xff));
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->top, sizeof(f->top), "/tmp/test_filecache.XXXXXX");
	assert_non_null(mkdtemp(f->top));
	snprintf(f->cache, sizeof(f->cache), "%s/cache/spent", f->top);
	snprintf(f->rec, sizeof(f->rec), "%s/rec", f->top);
	assert_int_equal(mkdir(f->rec, 0700), 0);
	setenv("SPENT_CITCAT_CACHE", f->cache, 1);
	unsetenv("SPENT_CITCAT_CACHE_MAX");
	char dir[4096];
	assert_int_equal(cc_cache_open(dir, sizeof(dir)), 0);
	assert_string_equal(dir, f->cache);
	f->data = malloc(DATA_LEN);
	fill(f->data, DATA_LEN, 12345);
	f->hash = binio_fnv64(BINIO_FNV64_INIT, f->data, DATA_LEN);
	f->st.st_dev = 0xfe00;
	f->st.st_ino = 4242;
	f->st.st_size = DATA_LEN;
	f->st.st_mtim.tv_sec = f->st.st_ctim.tv_sec = time(NULL) - 3600;
	f->st.st_ctim.tv_nsec = 17;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	assert_int_equal(system(cmd), 0);
	unsetenv("SPENT_CITCAT_CACHE");
	unsetenv("SPENT_CITCAT_CACHE_MAX");
	free(f->data);
	free(f);
	return 0;
}

static void location_and_off(void **state)
{
	struct fixture *f = *state;
	char dir[4096], p[4200];
	assert_true(strstr(f->cache, "/cache/spent") != NULL);
	snprintf(p, sizeof(p), "%s/files", f->cache);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s/ident", f->cache);
	assert_int_equal(stat(p, &st), 0);
	setenv("SPENT_CITCAT_CACHE", "off", 1);
	assert_int_equal(cc_cache_open(dir, sizeof(dir)), -ECANCELED);
	unsetenv("SPENT_CITCAT_CACHE");
	setenv("XDG_CACHE_HOME", f->top, 1);
	assert_int_equal(cc_cache_open(dir, sizeof(dir)), 0);
	snprintf(p, sizeof(p), "%s/spent/citcat", f->top);
	assert_string_equal(dir, p);
	unsetenv("XDG_CACHE_HOME");
}

static void stored_identity_is_found_and_changes_are_misses(void **state)
{
	struct fixture *f = *state;
	uint64_t h = 0;
	assert_int_equal(cc_cache_lookup(f->cache, &f->st, &h), 0);
	assert_int_equal(cc_cache_store(f->cache, &f->st, f->hash, f->data, DATA_LEN), 0);
	assert_int_equal(cc_cache_lookup(f->cache, &f->st, &h), 1);
	assert_true(h == f->hash);
	/* every part of the identity counts */
	struct stat other = f->st;
	other.st_ctim.tv_nsec++;
	assert_int_equal(cc_cache_lookup(f->cache, &other, &h), 0);
	other = f->st;
	other.st_mtim.tv_sec++;
	assert_int_equal(cc_cache_lookup(f->cache, &other, &h), 0);
	other = f->st;
	other.st_size--;
	assert_int_equal(cc_cache_lookup(f->cache, &other, &h), 0);
	other = f->st;
	other.st_ino++;
	assert_int_equal(cc_cache_lookup(f->cache, &other, &h), 0);
}

static void just_changed_file_gets_no_identity(void **state)
{
	struct fixture *f = *state;
	struct stat now = f->st;
	uint64_t h = 0;
	char copy[4200];
	now.st_ctim.tv_sec = time(NULL);	/* may change again within the same tick */
	assert_int_equal(cc_cache_store(f->cache, &now, f->hash, f->data, DATA_LEN), 0);
	cc_copy_path(copy, sizeof(copy), f->cache, f->hash);
	assert_int_equal(access(copy, F_OK), 0);	/* the copy serves this recording */
	assert_int_equal(cc_cache_lookup(f->cache, &now, &h), 0);
}

static void copy_written_to_is_a_miss_and_is_replaced(void **state)
{
	struct fixture *f = *state;
	char copy[4200];
	struct stat before, after;
	uint64_t h = 0, bytes = 0;
	assert_int_equal(cc_cache_store(f->cache, &f->st, f->hash, f->data, DATA_LEN), 0);
	assert_int_equal(cc_cache_link(f->cache, f->rec, f->hash, &bytes), 0);
	cc_copy_path(copy, sizeof(copy), f->cache, f->hash);
	assert_int_equal(stat(copy, &before), 0);
	/* damaged in place through a recording's link (the same inode): its mtime moves */
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { before.st_mtim.tv_sec + 5, 0 } };
	int fd = open(copy, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "xx", 2, 20), 2);
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
	assert_int_equal(cc_cache_lookup(f->cache, &f->st, &h), 0);
	/* stored again: a new file under the name, the recording's damaged one untouched */
	assert_int_equal(cc_cache_store(f->cache, &f->st, f->hash, f->data, DATA_LEN), 0);
	assert_int_equal(cc_cache_lookup(f->cache, &f->st, &h), 1);
	assert_int_equal(stat(copy, &after), 0);
	assert_true(after.st_ino != before.st_ino);
	uint8_t *out = NULL;
	size_t stored = 0;
	assert_int_equal(cc_copy_read(f->cache, f->hash, DATA_LEN, &out, &stored), 0);
	free(out);
}

static void cached_copy_is_linked_into_the_recording(void **state)
{
	struct fixture *f = *state;
	char from[4200], to[4200];
	struct stat a, b;
	uint64_t bytes = 0;
	assert_int_equal(cc_cache_link(f->cache, f->rec, f->hash, &bytes), -ENOENT);
	assert_int_equal(cc_cache_store(f->cache, &f->st, f->hash, f->data, DATA_LEN), 0);
	assert_int_equal(cc_cache_link(f->cache, f->rec, f->hash, &bytes), 0);
	cc_copy_path(from, sizeof(from), f->cache, f->hash);
	cc_copy_path(to, sizeof(to), f->rec, f->hash);
	assert_int_equal(stat(from, &a), 0);
	assert_int_equal(stat(to, &b), 0);
	assert_true(a.st_ino == b.st_ino);
	assert_true(bytes == (uint64_t)a.st_size && bytes > 0);
	/* the recording's copy is a whole, verified copy */
	uint8_t *out = NULL;
	size_t stored = 0;
	assert_int_equal(cc_copy_read(f->rec, f->hash, DATA_LEN, &out, &stored), 0);
	assert_memory_equal(out, f->data, DATA_LEN);
	free(out);
	/* present already: nothing more counted */
	assert_int_equal(cc_cache_link(f->cache, f->rec, f->hash, &bytes), 0);
	assert_true(bytes == 0);
}

static void pruned_least_recently_linked_first(void **state)
{
	struct fixture *f = *state;
	uint64_t hashes[3], bytes = 0, h;
	struct stat ids[3];
	struct timespec pause = { 0, 30 * 1000 * 1000 };	/* ctime ticks are coarse */
	uint8_t *d = malloc(DATA_LEN);
	char copy[4200];
	for (int i = 0; i < 3; i++) {
		fill(d, DATA_LEN, 100 + i);
		hashes[i] = binio_fnv64(BINIO_FNV64_INIT, d, DATA_LEN);
		ids[i] = f->st;
		ids[i].st_ino += i;
		if (i == 2) {
			/* the first is linked again now: the second is the least recently used */
			assert_int_equal(cc_cache_link(f->cache, f->rec, hashes[0], &bytes), 0);
			nanosleep(&pause, NULL);
			cc_copy_path(copy, sizeof(copy), f->cache, hashes[0]);
			struct stat st;
			assert_int_equal(stat(copy, &st), 0);
			char max[32];
			snprintf(max, sizeof(max), "%llu", (unsigned long long)st.st_size * 29 / 10);
			setenv("SPENT_CITCAT_CACHE_MAX", max, 1);
		}
		assert_int_equal(cc_cache_store(f->cache, &ids[i], hashes[i], d, DATA_LEN), 0);
		nanosleep(&pause, NULL);
	}
	assert_int_equal(cc_cache_lookup(f->cache, &ids[0], &h), 1);
	assert_int_equal(cc_cache_lookup(f->cache, &ids[1], &h), 0);
	assert_int_equal(cc_cache_lookup(f->cache, &ids[2], &h), 1);
	cc_copy_path(copy, sizeof(copy), f->cache, hashes[1]);
	assert_int_equal(access(copy, F_OK), -1);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(location_and_off, setup, teardown),
		cmocka_unit_test_setup_teardown(stored_identity_is_found_and_changes_are_misses,
						setup, teardown),
		cmocka_unit_test_setup_teardown(just_changed_file_gets_no_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(copy_written_to_is_a_miss_and_is_replaced, setup,
						teardown),
		cmocka_unit_test_setup_teardown(cached_copy_is_linked_into_the_recording, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pruned_least_recently_linked_first, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
