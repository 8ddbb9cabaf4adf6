/* tests/unit/test_profile_fold.c - a samples file that carries its event's per-image counts
 * (PROFILE_SAMPLES_COUNTS, profile_dir_write.c): written only when the counts are exactly the
 * rows' sums by leaf frame, read back as the counts, and merged with later writes (counts
 * files alone, or counts the rows no longer match) without losing or doubling a sample. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/db.h"
#include "profile/profile_file.h"
#include "profile_test_util.h"
#include "spent/profile.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("fold");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

/* As `spent record` adds a sample: its leaf frame's count, a stack and a detail row. */
static void add_sample(struct spent_profile *p, uint32_t ev, uint32_t task,
		       const struct spent_profile_frame *f, size_t n, uint64_t count)
{
	if (f[0].image != SPENT_PROFILE_NO_IMAGE)
		assert_int_equal(spent_profile_add(p, f[0].image, f[0].offset, ev, count), 0);
	else
		assert_int_equal(spent_profile_add_unknown(p, SPENT_PROFILE_UNK_ANON, ev, count), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, f, n, count), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, task, 1700000000000000000ull, f, n, count), 0);
}

/* Two images, one event, one frame without an image: every sample in all three places. */
static struct spent_profile *recorded(void)
{
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t a = add_image(p, "/usr/bin/zapp"), b = add_image(p, "/lib/alib.so");
	uint32_t ev = add_event(p, "cpu-clock", 500000), t = add_task(p, "app", 7, 7, NULL);
	struct spent_profile_frame s1[2] = { { a, 0x1010 }, { b, 0x20 } };
	struct spent_profile_frame s2[2] = { { b, 0x30 }, { a, 0x1400 } };
	struct spent_profile_frame s3[1] = { { SPENT_PROFILE_NO_IMAGE, 0xdead } };
	add_sample(p, ev, t, s1, 2, 5);
	add_sample(p, ev, t, s2, 2, 3);
	add_sample(p, ev, t, s2, 1, 2);
	add_sample(p, ev, t, s3, 1, 1);
	return p;
}

/* How many NAME-prefixed .prof files DIR's epoch 0 holds ("" = all). */
static int files_like(const char *dir, const char *prefix)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/epoch-0000", dir);
	DIR *dh = opendir(path);
	assert_non_null(dh);
	int n = 0;
	for (struct dirent *de; (de = readdir(dh));)
		if (strstr(de->d_name, ".prof") && !strncmp(de->d_name, prefix, strlen(prefix)))
			n++;
	closedir(dh);
	return n;
}

static uint64_t count_at(const struct spent_profile *p, const char *path, uint64_t off)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		struct spent_profile_count *c;
		size_t n;
		if (strcmp(spent_profile_image_get(p, i)->path, path))
			continue;
		assert_int_equal(spent_profile_counts(p, i, 0, &c, &n), 0);
		for (size_t k = 0; k < n; k++)
			v += c[k].offset == off ? c[k].count : 0;
		free(c);
	}
	return v;
}

static struct spent_profile *read_back(const char *dir)
{
	struct spent_profile_dir *d;
	struct spent_profile *r = spent_profile_new();
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_open(dir, &d), 0);
	assert_int_equal(spent_profile_dir_read_all(d, r, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	spent_profile_dir_close(d);
	return r;
}

static void write_to(const char *dir, const struct spent_profile *p)
{
	struct spent_profile_dir *d;
	assert_int_equal(spent_profile_dir_open_or_create(dir, &d), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	spent_profile_dir_close(d);
}

static void samples_file_carries_exact_counts(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/rec", tmpdir);
	struct spent_profile *p = recorded();
	assert_int_equal(profile_samples_hold_counts(p, 0), 1);
	write_to(dir, p);
	/* no counts file: only the samples file (and the unknown one) */
	assert_int_equal(files_like(dir, "zapp-"), 0);
	assert_int_equal(files_like(dir, "alib.so-"), 0);
	assert_int_equal(files_like(dir, "samples@"), 1);
	assert_int_equal(files_like(dir, "stacks@"), 0);
	struct spent_profile *r = read_back(dir);
	assert_int_equal(count_at(r, "/usr/bin/zapp", 0x1010), 5);
	assert_int_equal(count_at(r, "/lib/alib.so", 0x30), 5);
	assert_int_equal(spent_profile_ncells(r), 2);
	assert_int_equal(spent_profile_event_total(r, 0), 11);
	assert_int_equal(spent_profile_nstacks(r), 4);
	/* a counts-only write (the daemon's pairs) adds a counts file; a second recorded write
	 * then folds it back in: twice the recorded counts, nothing lost or doubled */
	struct spent_profile *extra = spent_profile_new();
	uint32_t b = add_image(extra, "/lib/alib.so"), ev = add_event(extra, "cpu-clock", 500000);
	assert_int_equal(spent_profile_add(extra, b, 0x30, ev, 100), 0);
	write_to(dir, extra);
	assert_int_equal(files_like(dir, "alib.so-"), 1);
	spent_profile_free(r);
	r = read_back(dir);
	assert_int_equal(count_at(r, "/lib/alib.so", 0x30), 105);
	/* the rows now hold 10 at alib 0x30 but the counts 110: the samples file stops carrying
	 * them, and the counts files hold all of them again */
	write_to(dir, p);
	assert_int_equal(files_like(dir, "alib.so-"), 1);
	assert_int_equal(files_like(dir, "zapp-"), 1);
	spent_profile_free(r);
	r = read_back(dir);
	assert_int_equal(count_at(r, "/lib/alib.so", 0x30), 110);
	assert_int_equal(count_at(r, "/usr/bin/zapp", 0x1010), 10);
	assert_int_equal(spent_profile_event_total(r, 0), 122);
	spent_profile_free(r);
	spent_profile_free(extra);
	spent_profile_free(p);
}

static void counts_that_differ_keep_their_files(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/differ", tmpdir);
	struct spent_profile *p = recorded();
	/* one count no row has: the counts are not the leaves' sums */
	assert_int_equal(spent_profile_add(p, 0, 0x1010, 0, 1), 0);
	assert_int_equal(profile_samples_hold_counts(p, 0), 0);
	write_to(dir, p);
	assert_int_equal(files_like(dir, "zapp-"), 1);
	assert_int_equal(files_like(dir, "alib.so-"), 1);
	struct spent_profile *r = read_back(dir);
	assert_int_equal(count_at(r, "/usr/bin/zapp", 0x1010), 6);
	assert_int_equal(count_at(r, "/lib/alib.so", 0x30), 5);
	spent_profile_free(r);
	spent_profile_free(p);
}

/* The images are numbered by their counts files' names, whichever file their counts are in. */
static void image_order_does_not_depend_on_the_files(void **state)
{
	(void)state;
	char a[128], b[128];
	snprintf(a, sizeof(a), "%s/ord-a", tmpdir);
	snprintf(b, sizeof(b), "%s/ord-b", tmpdir);
	struct spent_profile *p = recorded();
	write_to(a, p);
	assert_int_equal(spent_profile_add(p, 0, 0x1010, 0, 1), 0);	/* keeps counts files */
	write_to(b, p);
	struct spent_profile *ra = read_back(a), *rb = read_back(b);
	assert_int_equal(spent_profile_nimages(ra), 2);
	assert_int_equal(spent_profile_nimages(rb), 2);
	/* "alib.so-..." sorts before "zapp-...", which was interned first */
	assert_string_equal(spent_profile_image_get(ra, 0)->path, "/lib/alib.so");
	assert_string_equal(spent_profile_image_get(rb, 0)->path, "/lib/alib.so");
	spent_profile_free(ra);
	spent_profile_free(rb);
	spent_profile_free(p);
}

/* A database (db_open) keeps its counts files: a write there folds nothing, and writes back
 * the counts a recorded profile's samples file carried (as `spent db merge` may bring one). */
static void a_database_keeps_counts_files(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/db", tmpdir);
	struct spent_profile *p = recorded();
	write_to(dir, p);
	assert_int_equal(files_like(dir, "zapp-"), 0);
	struct spent_profile_dir *d;
	int err = db_open(dir, false, &d);
	if (err == -EPERM)	/* a database must be root's */
		skip();
	assert_int_equal(err, 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	spent_profile_dir_close(d);
	assert_int_equal(files_like(dir, "zapp-"), 1);
	assert_int_equal(files_like(dir, "alib.so-"), 1);
	struct spent_profile *r = read_back(dir);
	assert_int_equal(count_at(r, "/usr/bin/zapp", 0x1010), 10);
	assert_int_equal(count_at(r, "/lib/alib.so", 0x30), 10);
	assert_int_equal(spent_profile_event_total(r, 0), 22);
	spent_profile_free(r);
	spent_profile_free(p);
}

/* A version-3 file may not say it carries counts; version 4 may. */
static void counts_flag_is_version_4(void **state)
{
	(void)state;
	struct spent_profile *p = recorded();
	struct binbuf b;
	binbuf_init(&b);
	assert_int_equal(profile_file_encode_samples(p, 0, PROFILE_SAMPLES_COUNTS, &b, NULL), 0);
	struct spent_profile *r = spent_profile_new();
	const char *why = NULL;
	assert_int_equal(spent_profile_file_parse(b.data, b.len, r, &why), 0);
	assert_int_equal(spent_profile_event_total(r, 0), 10);	/* the imageless leaf aside */
	/* the same bytes as version 3: refused */
	b.data[4] = PROFILE_FILE_VERSION_SAMPLES_V3;
	b.len -= 4;
	assert_int_equal(profile_file_put_crc(&b, 0), 0);
	struct spent_profile *r3 = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(b.data, b.len, r3, &why), -EBADMSG);
	assert_string_equal(why, "unknown samples flags");
	spent_profile_free(r3);
	spent_profile_free(r);
	binbuf_release(&b);
	spent_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_file_carries_exact_counts),
		cmocka_unit_test(counts_that_differ_keep_their_files),
		cmocka_unit_test(image_order_does_not_depend_on_the_files),
		cmocka_unit_test(a_database_keeps_counts_files),
		cmocka_unit_test(counts_flag_is_version_4),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
