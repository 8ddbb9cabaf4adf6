/* tests/unit/test_profile.c - the profile model (profile.c) and the profile directory
 * (profile_dir.c, profile_file.c): round trips, merges, corrupt-file handling, modes, what
 * replacing and removing a profile directory may touch. */
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

#include "core/binio.h"
#include "profile_test_util.h"
#include "spent/profile.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("profile");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

static struct spent_profile_image mkimg(const char *path, uint8_t idbyte)
{
	struct spent_profile_image im = { .path = (char *)path, .id_kind = SPENT_PROFILE_ID_BUILDID,
				    .id_len = 20 };
	memset(im.id, idbyte, 20);
	return im;
}

/* a profile with two images, two events, some unknowns and two stacks */
static struct spent_profile *sample_profile(void)
{
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t a, b, e0, e1;
	struct spent_profile_image ia = mkimg("/usr/bin/a", 0xaa), ib = mkimg("/lib/libb.so", 0xbb);
	assert_int_equal(spent_profile_image_intern(p, &ia, &a), 0);
	assert_int_equal(spent_profile_image_intern(p, &ib, &b), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000003, 0, &e0), 0);
	assert_int_equal(spent_profile_event_intern(p, "page-faults", 997, 0, &e1), 0);
	for (uint64_t off = 0x1000; off < 0x1100; off += 4)
		assert_int_equal(spent_profile_add(p, a, off, e0, off & 0xff ? off & 0xff : 1), 0);
	assert_int_equal(spent_profile_add(p, b, 0x42, e0, 7), 0);
	assert_int_equal(spent_profile_add(p, b, 0x42, e1, 3), 0);
	assert_int_equal(spent_profile_add_unknown(p, SPENT_PROFILE_UNK_ANON, e0, 5), 0);
	assert_int_equal(spent_profile_add_unknown(p, SPENT_PROFILE_UNK_LOST, e0, 2), 0);
	struct spent_profile_frame st[3] = { { a, 0x1004 }, { b, 0x42 }, { SPENT_PROFILE_NO_IMAGE, 0xdead } };
	assert_int_equal(spent_profile_add_stack(p, e0, st, 3, 4), 0);
	assert_int_equal(spent_profile_add_stack(p, e0, st, 3, 1), 0);
	assert_int_equal(spent_profile_add_stack(p, e0, st + 1, 2, 2), 0);
	return p;
}

static uint64_t count_at(const struct spent_profile *p, const char *path, const char *ev, uint64_t off)
{
	int e = spent_profile_event_find(p, ev);
	for (uint32_t i = 0; e >= 0 && i < spent_profile_nimages(p); i++) {
		if (strcmp(spent_profile_image_get(p, i)->path, path))
			continue;
		struct spent_profile_count *c;
		size_t n;
		assert_int_equal(spent_profile_counts(p, i, (uint32_t)e, &c, &n), 0);
		uint64_t v = 0;
		for (size_t k = 0; k < n; k++)
			if (c[k].offset == off)
				v = c[k].count;
		free(c);
		return v;
	}
	return 0;
}

static void interning_dedups_and_counts_accumulate(void **state)
{
	(void)state;
	struct spent_profile *p = sample_profile();
	struct spent_profile_image ia = mkimg("/usr/bin/a", 0xaa);
	uint32_t again;
	assert_int_equal(spent_profile_image_intern(p, &ia, &again), 0);
	assert_int_equal(again, 0);
	assert_int_equal(spent_profile_nimages(p), 2);
	assert_int_equal(spent_profile_nstacks(p), 2);
	assert_int_equal(count_at(p, "/usr/bin/a", "cpu-clock", 0x1004), 4);
	assert_int_equal(spent_profile_add(p, 99, 0, 0, 1), -EINVAL);
	/* total counts placed + unknown but not lost */
	uint64_t placed = spent_profile_image_total(p, 0, 0) + spent_profile_image_total(p, 1, 0);
	assert_int_equal(spent_profile_event_total(p, 0), placed + 5);
	spent_profile_free(p);
}

static void merge_sums_counts_unknowns_and_stacks(void **state)
{
	(void)state;
	struct spent_profile *p = sample_profile(), *q = sample_profile(), *m = spent_profile_new();
	assert_int_equal(spent_profile_merge(m, p), 0);
	assert_int_equal(spent_profile_merge(m, q), 0);
	assert_int_equal(count_at(m, "/usr/bin/a", "cpu-clock", 0x1008), 2 * 8);
	assert_int_equal(count_at(m, "/lib/libb.so", "page-faults", 0x42), 6);
	assert_int_equal(spent_profile_unknown_count(m, 0, SPENT_PROFILE_UNK_ANON), 10);
	assert_int_equal(spent_profile_nstacks(m), 2);
	uint32_t ev;
	const struct spent_profile_frame *f;
	size_t nf;
	uint64_t c;
	assert_int_equal(spent_profile_stack_get(m, 0, &ev, &f, &nf, &c), 0);
	assert_int_equal(c, 10);
	assert_int_equal(nf, 3);
	spent_profile_free(p);
	spent_profile_free(q);
	spent_profile_free(m);
}

static void warn_count(void *ctx, const char *path, const char *why)
{
	(void)path;
	(void)why;
	(*(int *)ctx)++;
}

static void dir_roundtrip_then_incremental_merge(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/rt", tmpdir);
	struct spent_profile_dir *d;
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	uint32_t ep;
	assert_int_equal(spent_profile_dir_current_epoch(d, &ep), 0);
	assert_int_equal(ep, 0);
	struct spent_profile *p = sample_profile();
	int warns = 0;
	assert_int_equal(spent_profile_dir_write_epoch(d, ep, p, warn_count, &warns), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, ep, p, warn_count, &warns), 0);
	assert_int_equal(warns, 0);
	spent_profile_dir_close(d);

	assert_int_equal(spent_profile_dir_open(dir, &d), 0);
	struct spent_profile *r = spent_profile_new();
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_all(d, r, warn_count, &warns, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(count_at(r, "/usr/bin/a", "cpu-clock", 0x1010), 2 * 0x10);
	assert_int_equal(count_at(r, "/lib/libb.so", "cpu-clock", 0x42), 14);
	assert_int_equal(spent_profile_unknown_count(r, (uint32_t)spent_profile_event_find(r, "cpu-clock"),
					       SPENT_PROFILE_UNK_LOST), 4);
	assert_int_equal(spent_profile_nstacks(r), 2);
	assert_int_equal(spent_profile_ncells(r), spent_profile_ncells(p));
	/* a second epoch adds up in read_all */
	uint32_t e2;
	assert_int_equal(spent_profile_dir_new_epoch(d, &e2), 0);
	assert_int_equal(e2, 1);
	assert_int_equal(spent_profile_dir_write_epoch(d, e2, p, NULL, NULL), 0);
	struct spent_profile *r2 = spent_profile_new();
	assert_int_equal(spent_profile_dir_read_all(d, r2, NULL, NULL, NULL), 0);
	assert_int_equal(count_at(r2, "/lib/libb.so", "page-faults", 0x42), 9);
	spent_profile_free(r2);
	spent_profile_free(r);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static void corrupt_and_truncated_files_are_skipped(void **state)
{
	(void)state;
	char dir[128], cmd[512];
	snprintf(dir, sizeof(dir), "%s/bad", tmpdir);
	struct spent_profile_dir *d;
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	struct spent_profile *p = sample_profile();
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	/* truncate the a.out file, flip a byte in the libb one */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/epoch-0000' && f=$(ls a-*cpu-clock*.prof) && truncate -s -3 $f && "
		 "g=$(ls libb.so-*cpu-clock*.prof) && printf 'Z' | dd of=$g bs=1 seek=20 conv=notrunc 2>/dev/null",
		 dir);
	assert_int_equal(system(cmd), 0);
	struct spent_profile *r = spent_profile_new();
	int warns = 0;
	size_t skipped = 0;
	assert_int_equal(spent_profile_dir_read_all(d, r, warn_count, &warns, &skipped), 0);
	assert_int_equal(skipped, 2);
	assert_int_equal(warns, 2);
	assert_int_equal(count_at(r, "/lib/libb.so", "page-faults", 0x42), 3);
	assert_int_equal(count_at(r, "/usr/bin/a", "cpu-clock", 0x1010), 0);
	/* writing over a corrupt file keeps it aside and warns */
	warns = 0;
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, warn_count, &warns), 0);
	assert_int_equal(warns, 2);
	spent_profile_free(r);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static void non_profile_dirs_are_refused(void **state)
{
	(void)state;
	char dir[128], file[160];
	struct spent_profile_dir *d = NULL;
	snprintf(dir, sizeof(dir), "%s/plain", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(spent_profile_dir_open(dir, &d), -EBADMSG);
	snprintf(file, sizeof(file), "%s/junk", dir);
	assert_int_equal(binio_write_file_atomic(file, "x", 1, 0644), 0);
	assert_int_equal(spent_profile_dir_create(dir, &d), -EEXIST);
	assert_int_equal(spent_profile_dir_open(file, &d), -ENOTDIR);
	snprintf(file, sizeof(file), "%s/none", tmpdir);
	assert_int_equal(spent_profile_dir_open(file, &d), -ENOENT);
	/* meta that lies about being a profile */
	snprintf(file, sizeof(file), "%s/meta", dir);
	assert_int_equal(binio_write_file_atomic(file, "spent-profile-dir 7\n", 20, 0644), 0);
	assert_int_equal(spent_profile_dir_open(dir, &d), -EPROTONOSUPPORT);
	/* the version is the whole number on the line: "1x" is not version 1 */
	static const char *const bad[] = { "spent-profile-dir 1x\n", "spent-profile-dir 01\n",
					   "spent-profile-dir 1 2\n", "spent-profile-dir \n",
					   "spent-profile-dir 1\r\n", "spent-profile-dir x1\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(binio_write_file_atomic(file, bad[i], strlen(bad[i]), 0644), 0);
		assert_int_equal(spent_profile_dir_open(dir, &d), -EBADMSG);
	}
	assert_int_equal(binio_write_file_atomic(file, "spent-profile-dir 12345678901\n", 30, 0644), 0);
	assert_int_equal(spent_profile_dir_open(dir, &d), -EPROTONOSUPPORT);
	/* a meta of this spent's: one line of version 1, the rest of the file free */
	const char *good = "spent-profile-dir 1\nhost x\n";
	assert_int_equal(binio_write_file_atomic(file, good, strlen(good), 0644), 0);
	assert_int_equal(spent_profile_dir_open(dir, &d), 0);
	spent_profile_dir_close(d);
	assert_int_equal(binio_write_file_atomic(file, "spent-profile-dir 1", 19, 0644), 0);
	assert_int_equal(spent_profile_dir_open(dir, &d), 0);
	spent_profile_dir_close(d);
}

static void parser_rejects_every_truncation(void **state)
{
	(void)state;
	char dir[128], path[512];
	snprintf(dir, sizeof(dir), "%s/trunc", tmpdir);
	struct spent_profile_dir *d;
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	struct spent_profile *p = sample_profile();
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/epoch-0000/stacks@cpu-clock-1000003.prof", dir);
	uint8_t *data;
	size_t len;
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	struct spent_profile *whole = spent_profile_new();
	assert_int_equal(spent_profile_file_parse(data, len, whole, NULL), 0);
	assert_int_equal(spent_profile_nstacks(whole), 2);
	for (size_t cut = 0; cut < len; cut++) {
		struct spent_profile *t = spent_profile_new();
		const char *why = NULL;
		assert_int_equal(spent_profile_file_parse(data, cut, t, &why), -EBADMSG);
		assert_non_null(why);
		assert_int_equal(spent_profile_nstacks(t), 0);
		spent_profile_free(t);
	}
	free(data);
	spent_profile_free(whole);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static void counts_file_is_compact(void **state)
{
	(void)state;
	/* 1000 distinct offsets 4..16 bytes apart: a delta+count pair is 2 bytes each */
	struct spent_profile *p = spent_profile_new();
	uint32_t a, e;
	struct spent_profile_image ia = mkimg("/bin/x", 1);
	assert_int_equal(spent_profile_image_intern(p, &ia, &a), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000003, 0, &e), 0);
	uint64_t off = 0x400000;
	for (int i = 0; i < 1000; i++) {
		off += 4 + (uint64_t)(i % 13);
		assert_int_equal(spent_profile_add(p, a, off, e, 1 + (uint64_t)(i % 100)), 0);
	}
	char dir[128], cmd[256];
	snprintf(dir, sizeof(dir), "%s/size", tmpdir);
	struct spent_profile_dir *d;
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd), "test $(stat -c %%s '%s'/epoch-0000/x-*.prof) -lt 2200", dir);
	assert_int_equal(system(cmd), 0);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static int mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* record replaces, gc removes: only what spent writes, never through a symlink */
static void replace_and_remove_touch_only_profile_content(void **state)
{
	(void)state;
	char dir[128], p[256], secret[160], cmd[600];
	struct spent_profile_dir *d;
	snprintf(dir, sizeof(dir), "%s/own", tmpdir);
	mode_t old = umask(0);
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	struct spent_profile *prof = sample_profile();
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, prof, NULL, NULL), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, 1, prof, NULL, NULL), 0);
	umask(old);
	/* a user's outputs: 0700 / 0600 whatever the umask */
	assert_int_equal(mode_of(dir), 0700);
	snprintf(p, sizeof(p), "%s/meta", dir);
	assert_int_equal(mode_of(p), 0600);
	snprintf(p, sizeof(p), "%s/epoch-0000", dir);
	assert_int_equal(mode_of(p), 0700);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), 0);

	/* a symlink inside, to a file outside: refused, nothing removed, the target kept */
	snprintf(secret, sizeof(secret), "%s/secret", tmpdir);
	assert_int_equal(binio_write_file_atomic(secret, "keep", 4, 0600), 0);
	snprintf(p, sizeof(p), "%s/epoch-0000/evil.prof", dir);
	assert_int_equal(symlink(secret, p), 0);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), -ENOTEMPTY);
	assert_int_equal(spent_profile_dir_remove(dir), -ENOTEMPTY);
	assert_int_equal(access(secret, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "%s/meta", dir);
	assert_int_equal(access(cmd, F_OK), 0);
	unlink(p);
	/* a file of the user's at the top: refused too */
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	assert_int_equal(binio_write_file_atomic(p, "x", 1, 0600), 0);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), -ENOTEMPTY);
	unlink(p);

	/* an epoch that is a symlink loses its link only */
	char victim[160];
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	assert_int_equal(mkdir(victim, 0700), 0);
	snprintf(cmd, sizeof(cmd), "%s/x.prof", victim);
	assert_int_equal(binio_write_file_atomic(cmd, "x", 1, 0600), 0);
	snprintf(p, sizeof(p), "%s/epoch-0001", dir);
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", p);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(spent_profile_dir_remove_epoch(d, 1), 0);
	assert_int_equal(mode_of(p), -1);
	snprintf(cmd, sizeof(cmd), "%s/x.prof", victim);
	assert_int_equal(access(cmd, F_OK), 0);

	/* the daemon's modes reach the directory and its meta */
	spent_profile_dir_set_modes(d, 0750, 0640);
	assert_int_equal(mode_of(dir), 0750);
	snprintf(p, sizeof(p), "%s/meta", dir);
	assert_int_equal(mode_of(p), 0640);
	spent_profile_dir_close(d);

	/* spent's own content only: removed, the directory too */
	assert_int_equal(spent_profile_dir_remove(dir), 0);
	assert_int_equal(mode_of(dir), -1);
	/* an empty directory may be replaced, a directory whose meta is not a profile's not */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), 0);
	snprintf(p, sizeof(p), "%s/meta", dir);
	assert_int_equal(binio_write_file_atomic(p, "mine\n", 5, 0600), 0);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), -EBADMSG);
	spent_profile_free(prof);
}

/* epoch numbers run out at SPENT_PROFILE_EPOCH_MAX: nothing is written under a name the reader
 * skips, since such a directory could never be read, replaced or removed again */
static void epochs_past_the_last_readable_are_refused(void **state)
{
	(void)state;
	char dir[128], p[256];
	struct spent_profile_dir *d;
	snprintf(dir, sizeof(dir), "%s/lastep", tmpdir);
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	struct spent_profile *prof = sample_profile();
	assert_int_equal(spent_profile_dir_write_epoch(d, UINT32_MAX, prof, NULL, NULL), -EINVAL);
	snprintf(p, sizeof(p), "%s/epoch-%u", dir, UINT32_MAX);
	assert_int_equal(mode_of(p), -1);
	assert_int_equal(spent_profile_dir_remove_epoch(d, UINT32_MAX), -EINVAL);
	/* the last readable epoch is written and read; none is handed out after it */
	assert_int_equal(spent_profile_dir_write_epoch(d, SPENT_PROFILE_EPOCH_MAX, prof, NULL, NULL), 0);
	uint32_t ep = 0;
	assert_int_equal(spent_profile_dir_current_epoch(d, &ep), 0);
	assert_int_equal(ep, SPENT_PROFILE_EPOCH_MAX);
	assert_int_equal(spent_profile_dir_new_epoch(d, &ep), -EOVERFLOW);
	assert_int_equal(mode_of(p), -1);
	struct spent_profile *r = spent_profile_new();
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_all(d, r, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(spent_profile_ncells(r), spent_profile_ncells(prof));
	spent_profile_dir_close(d);
	assert_int_equal(spent_profile_dir_check_replaceable(dir), 0);
	assert_int_equal(spent_profile_dir_remove(dir), 0);
	spent_profile_free(r);
	spent_profile_free(prof);
}

/* counts refuse to wrap (-EOVERFLOW, nothing changed), so the writer never writes a total its
 * reader rejects */
static void counts_that_would_wrap_are_refused(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t im = add_image(p, "/bin/x"), ev = add_event(p, "cpu-clock", 1000003);
	assert_int_equal(spent_profile_add(p, im, 10, ev, 5), 0);
	assert_int_equal(spent_profile_add(p, im, 10, ev, UINT64_MAX), -EOVERFLOW);
	assert_int_equal(spent_profile_add(p, im, 20, ev, UINT64_MAX - 4), -EOVERFLOW);
	assert_int_equal(spent_profile_add_unknown(p, SPENT_PROFILE_UNK_ANON, ev, UINT64_MAX), -EOVERFLOW);
	assert_int_equal(spent_profile_image_total(p, im, ev), 5);
	assert_int_equal(spent_profile_ncells(p), 1);
	assert_int_equal(spent_profile_merge(p, p), 0);
	assert_int_equal(spent_profile_image_total(p, im, ev), 10);
	/* a merge that would wrap leaves the destination as it was, images and events too */
	struct spent_profile *big = spent_profile_new();
	uint32_t bim = add_image(big, "/bin/big"), bev = add_event(big, "cpu-clock", 1000003);
	add_event(big, "page-faults", 1);
	assert_int_equal(spent_profile_add(big, bim, 1, bev, UINT64_MAX - 3), 0);
	assert_int_equal(spent_profile_merge(p, big), -EOVERFLOW);
	assert_int_equal(spent_profile_nimages(p), 1);
	assert_int_equal(spent_profile_nevents(p), 1);
	assert_int_equal(spent_profile_event_total(p, ev), 10);
	struct spent_profile_frame fr = { im, 10 };
	assert_int_equal(spent_profile_add_stack(p, ev, &fr, 1, UINT64_MAX), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, &fr, 1, 1), -EOVERFLOW);
	assert_int_equal(spent_profile_add_detail(p, ev, SPENT_PROFILE_NO_TASK, 0, &fr, 1, UINT64_MAX), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, SPENT_PROFILE_NO_TASK, 1ull << 40, &fr, 1, 1),
			 -EOVERFLOW);
	spent_profile_free(big);
	spent_profile_free(p);

	/* two cells of 2^63 + 5 and 2^63 + 7 would wrap the image total to 12: the second is
	 * refused, and what is written reads back */
	char dir[128];
	struct spent_profile_dir *d;
	snprintf(dir, sizeof(dir), "%s/wrap", tmpdir);
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	p = spent_profile_new();
	im = add_image(p, "/bin/x");
	ev = add_event(p, "cpu-clock", 1000003);
	assert_int_equal(spent_profile_add(p, im, 0x10, ev, (1ull << 63) + 5), 0);
	assert_int_equal(spent_profile_add(p, im, 0x20, ev, (1ull << 63) + 7), -EOVERFLOW);
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), 0);
	/* writing it again would wrap what the epoch's file holds: refused, the file kept */
	assert_int_equal(spent_profile_dir_write_epoch(d, 0, p, NULL, NULL), -EOVERFLOW);
	struct spent_profile *r = spent_profile_new();
	int warns = 0;
	size_t skipped = 9;
	assert_int_equal(spent_profile_dir_read_all(d, r, warn_count, &warns, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(count_at(r, "/bin/x", "cpu-clock", 0x10), (1ull << 63) + 5);
	spent_profile_free(r);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static void event_find_of_null_is_einval(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t ev = add_event(p, "cpu-clock", 1000003);
	assert_int_equal(spent_profile_event_find(p, "cpu-clock"), ev);
	assert_int_equal(spent_profile_event_find(p, NULL), -EINVAL);
	spent_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interning_dedups_and_counts_accumulate),
		cmocka_unit_test(merge_sums_counts_unknowns_and_stacks),
		cmocka_unit_test(dir_roundtrip_then_incremental_merge),
		cmocka_unit_test(corrupt_and_truncated_files_are_skipped),
		cmocka_unit_test(non_profile_dirs_are_refused),
		cmocka_unit_test(parser_rejects_every_truncation),
		cmocka_unit_test(counts_file_is_compact),
		cmocka_unit_test(replace_and_remove_touch_only_profile_content),
		cmocka_unit_test(epochs_past_the_last_readable_are_refused),
		cmocka_unit_test(counts_that_would_wrap_are_refused),
		cmocka_unit_test(event_find_of_null_is_einval),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
