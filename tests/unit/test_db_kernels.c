/* tests/unit/test_db_kernels.c - `spent db merge` keeps the kernels of different boots or hosts
 * apart: the daemon's [kernel.kallsyms] carries the running kernel's build-id, so two databases
 * of different kernels merge into two kernel images (their addresses mean different code),
 * while the same kernel's counts add up; and it brings each kernel's symbols along. */
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

#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"
#include "profile/db.h"
#include "spent/profile.h"

static char tmpdir[64];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/spent-ut-dbk.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* DB NAME under tmpdir with COUNT samples at the kernel address 0xffffffff81000010 of the
 * kernel whose build-id is 20 bytes of IDBYTE, with its boot's _text TEXT added (0: none) */
static void kernel_db_text(const char *name, uint8_t idbyte, uint64_t count, uint64_t text)
{
	char dir[128];
	struct spent_profile_dir *d;
	struct spent_profile *p = spent_profile_new();
	struct spent_profile_image k = { .path = "[kernel.kallsyms]", .id_kind = SPENT_PROFILE_ID_BUILDID,
				   .id_len = 20 };
	uint32_t img, ev, epoch;

	memset(k.id, idbyte, 20);
	if (text)
		assert_int_equal(kernel_id_add_text(&k, text), 0);
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	assert_int_equal(spent_profile_dir_create(dir, &d), 0);
	assert_int_equal(spent_profile_image_intern(p, &k, &img), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	assert_int_equal(spent_profile_add(p, img, 0xffffffff81000010ull, ev, count), 0);
	assert_int_equal(spent_profile_dir_current_epoch(d, &epoch), 0);
	assert_int_equal(spent_profile_dir_write_epoch(d, epoch, p, NULL, NULL), 0);
	spent_profile_free(p);
	spent_profile_dir_close(d);
}

static void kernel_db(const char *name, uint8_t idbyte, uint64_t count)
{
	kernel_db_text(name, idbyte, count, 0);
}

/* the count at the kernel address of the kernel with build-id byte IDBYTE; -1 when absent */
static int64_t kernel_count(const struct spent_profile *p, uint8_t idbyte)
{
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		const struct spent_profile_image *im = spent_profile_image_get(p, i);
		struct spent_profile_count *c;
		size_t n;
		if (strcmp(im->path, "[kernel.kallsyms]") || im->id[0] != idbyte)
			continue;
		assert_int_equal(spent_profile_counts(p, i, 0, &c, &n), 0);
		assert_int_equal(n, 1);
		int64_t v = (int64_t)c[0].count;
		free(c);
		return v;
	}
	return -1;
}

static void merge_keeps_different_kernels_apart(void **state)
{
	char dst[128];
	struct spent_profile_dir *d;
	size_t skipped = 0;

	kernel_db("bootA", 0xaa, 7);
	kernel_db("bootB", 0xbb, 5);
	kernel_db("bootA2", 0xaa, 3);	/* the same kernel on another machine */
	snprintf(dst, sizeof(dst), "%s/all", tmpdir);
	assert_int_equal(spent_profile_dir_create(dst, &d), 0);
	char a[128], b[128], a2[128];
	snprintf(a, sizeof(a), "%s/bootA", tmpdir);
	snprintf(b, sizeof(b), "%s/bootB", tmpdir);
	snprintf(a2, sizeof(a2), "%s/bootA2", tmpdir);
	const char *srcs[] = { a, b, a2 };
	assert_int_equal(db_merge(d, srcs, 3, NULL, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	struct spent_profile *all = spent_profile_new();
	assert_int_equal(spent_profile_dir_read_all(d, all, NULL, NULL, NULL), 0);
	assert_int_equal(spent_profile_nimages(all), 2);
	assert_int_equal(kernel_count(all, 0xaa), 10);
	assert_int_equal(kernel_count(all, 0xbb), 5);
	spent_profile_free(all);
	spent_profile_dir_close(d);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *dir, const char *name)
{
	char path[256];
	uint8_t *d = NULL;
	size_t n = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (binio_read_file(path, 1 << 20, &d, &n))
		return NULL;
	char *s = realloc(d, n + 1);
	assert_non_null(s);
	s[n] = 0;
	return s;
}

/* NAME in DIR as text, decompressed when it is zstd (kallsyms_file_open); NULL when absent */
static char *get_text(const char *dir, const char *name)
{
	char path[256], *s = NULL;
	size_t n = 0, cap = 0;
	struct kallsyms_file k;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (kallsyms_file_open(path, &k))
		return NULL;
	for (int c; (c = getc(k.f)) != EOF;) {
		if (n + 2 > cap)
			assert_non_null(s = realloc(s, cap = cap ? 2 * cap : 64));
		s[n++] = (char)c;
	}
	kallsyms_file_close(&k);
	assert_non_null(s);
	s[n] = 0;
	return s;
}

/* merge brings a source's kernel symbols (kallsyms-HEX per identity; an older daemon's
 * kallsyms, or a recorded profile's kallsyms.zst, when the destination has neither), keeps
 * the destination's copy of an identity it has, and never copies through a symlink */
static void merge_brings_kernel_symbols(void **state)
{
	char src[128], dst[128], secret[160];
	struct spent_profile_dir *d;
	size_t skipped = 0;
	kernel_db("symsrc", 0xcc, 1);
	snprintf(src, sizeof(src), "%s/symsrc", tmpdir);
	snprintf(dst, sizeof(dst), "%s/symdst", tmpdir);
	snprintf(secret, sizeof(secret), "%s/secret", tmpdir);
	put(src, "kallsyms-cc01", "ffffffff81000000 T boot1\n");
	put(src, "kallsyms-cc02", "ffffffff83000000 T boot2 from src\n");
	put(src, "kallsyms", "ffffffff81000000 T older\n");
	put(tmpdir, "secret", "not to be copied\n");
	char link[200];
	snprintf(link, sizeof(link), "%s/kallsyms-cc03", src);
	assert_int_equal(symlink(secret, link), 0);
	assert_int_equal(spent_profile_dir_create(dst, &d), 0);
	put(dst, "kallsyms-cc02", "ffffffff83000000 T boot2 in dst\n");
	const char *srcs[] = { src };
	assert_int_equal(db_merge(d, srcs, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	char *s;
	assert_non_null(s = get(dst, "kallsyms-cc01"));
	assert_string_equal(s, "ffffffff81000000 T boot1\n");
	free(s);
	/* the same identity's copies add up (one may be what a recorded profile needed) */
	assert_non_null(s = get_text(dst, "kallsyms-cc02"));
	assert_string_equal(s, "ffffffff83000000 T boot2 in dst\nffffffff83000000 T boot2 from src\n");
	free(s);
	assert_non_null(s = get(dst, "kallsyms"));
	assert_string_equal(s, "ffffffff81000000 T older\n");
	free(s);
	assert_null(get(dst, "kallsyms-cc03"));
	/* a profile of spent record keeps its kallsyms compressed: brought to a destination
	 * without one, never beside the destination's plain one (that one names its epochs) */
	char rec[128], dst2[128];
	kernel_db("symrec", 0xcd, 1);
	snprintf(rec, sizeof(rec), "%s/symrec", tmpdir);
	snprintf(dst2, sizeof(dst2), "%s/symdst2", tmpdir);
	put(rec, "kallsyms.zst", "compressed stand-in\n");
	const char *recs[] = { rec };
	assert_int_equal(spent_profile_dir_open(dst, &d), 0);
	assert_int_equal(db_merge(d, recs, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	assert_null(get(dst, "kallsyms.zst"));
	assert_int_equal(spent_profile_dir_create(dst2, &d), 0);
	assert_int_equal(db_merge(d, recs, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	assert_non_null(s = get(dst2, "kallsyms.zst"));
	assert_string_equal(s, "compressed stand-in\n");
	free(s);
	assert_null(get(dst2, "kallsyms"));
}

/* A recorded profile names its kernel by build-id and _text, as the daemon does: merged in,
 * its kallsyms (the symbols its samples need) becomes the destination's copy of that
 * identity, so a daemon's epochs of the same boot and the profile are one kernel, and a
 * profile of another boot keeps its own symbols instead of being refused. */
static void merge_files_a_profiles_symbols_by_identity(void **state)
{
	const uint64_t boot1 = 0xffffffff81000000ull, boot2 = 0xffffffff9a000000ull;
	char p1[128], p2[128], dst[128], name1[128], name2[128];
	struct spent_profile_dir *d;
	size_t skipped = 0;
	struct spent_profile_image id1 = { .id_kind = SPENT_PROFILE_ID_BUILDID, .id_len = 20 }, id2;
	memset(id1.id, 0xe1, 20);
	id2 = id1;
	assert_int_equal(kernel_id_add_text(&id1, boot1), 0);
	assert_int_equal(kernel_id_add_text(&id2, boot2), 0);
	assert_true(kernel_id_has_text(&id1));
	assert_int_equal(kernel_id_kallsyms_name(&id1, name1, sizeof(name1)), 0);
	assert_int_equal(kernel_id_kallsyms_name(&id2, name2, sizeof(name2)), 0);
	kernel_db_text("rec1", 0xe1, 4, boot1);
	kernel_db_text("rec2", 0xe1, 6, boot2);
	snprintf(p1, sizeof(p1), "%s/rec1", tmpdir);
	snprintf(p2, sizeof(p2), "%s/rec2", tmpdir);
	put(p1, "kallsyms", "ffffffff81000000 T fn_one\nffffffff81000100 T fn_two\n");
	put(p2, "kallsyms", "ffffffff9a000000 T fn_one\nffffffff9a000100 T fn_two\n");
	snprintf(dst, sizeof(dst), "%s/bydb", tmpdir);
	assert_int_equal(spent_profile_dir_create(dst, &d), 0);
	put(dst, name1, "ffffffff81000000 T fn_one\nffffffff81000200 T fn_three\n");
	const char *srcs[] = { p1, p2 };
	assert_int_equal(db_merge(d, srcs, 2, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	char *s;
	assert_non_null(s = get_text(dst, name1));	/* the daemon's copy, completed */
	assert_string_equal(s, "ffffffff81000000 T fn_one\nffffffff81000200 T fn_three\nffffffff81000100 T fn_two\n");
	free(s);
	assert_non_null(s = get_text(dst, name2));	/* another boot: its own copy */
	assert_string_equal(s, "ffffffff9a000000 T fn_one\nffffffff9a000100 T fn_two\n");
	free(s);
	assert_null(get(dst, "kallsyms"));	/* nothing left without an identity */
	assert_null(get(dst, "kallsyms.zst"));
	/* a destination with its own kallsyms (a recorded profile of boot 1): the new copy starts
	 * from it; one that disagrees with it (moved symbols) is refused, no copy left */
	char dst2[128];
	snprintf(dst2, sizeof(dst2), "%s/byrec", tmpdir);
	kernel_db_text("byrec", 0xe1, 1, boot1);
	put(dst2, "kallsyms", "ffffffff81000300 T fn_own\n");
	assert_int_equal(spent_profile_dir_open(dst2, &d), 0);
	assert_int_equal(db_merge(d, srcs, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	assert_non_null(s = get_text(dst2, name1));
	assert_string_equal(s, "ffffffff81000300 T fn_own\nffffffff81000000 T fn_one\nffffffff81000100 T fn_two\n");
	free(s);
	char dst3[128];
	snprintf(dst3, sizeof(dst3), "%s/moved", tmpdir);
	kernel_db_text("moved", 0xe1, 1, boot1);
	put(dst3, "kallsyms", "ffffffff82000000 T fn_one\nffffffff82000100 T fn_two\n");
	assert_int_equal(spent_profile_dir_open(dst3, &d), 0);
	assert_int_equal(db_merge(d, srcs, 1, NULL, NULL, &skipped), -EXDEV);
	spent_profile_dir_close(d);
	assert_null(get(dst3, name1));
	/* a destination whose own kallsyms is of another kernel (a recorded profile of boot 1,
	 * or an older database's): a profile of boot 2 is merged, its copy holds its own symbols
	 * only (the destination has no samples of that kernel) */
	char dst4[128];
	snprintf(dst4, sizeof(dst4), "%s/boot1rec", tmpdir);
	kernel_db_text("boot1rec", 0xe1, 1, boot1);
	put(dst4, "kallsyms", "ffffffff81000000 T fn_one\nffffffff81000100 T fn_two\n");
	const char *boot2src[] = { p2 };
	assert_int_equal(spent_profile_dir_open(dst4, &d), 0);
	assert_int_equal(db_merge(d, boot2src, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	assert_non_null(s = get_text(dst4, name2));
	assert_string_equal(s, "ffffffff9a000000 T fn_one\nffffffff9a000100 T fn_two\n");
	free(s);
	assert_non_null(s = get(dst4, "kallsyms"));	/* its own, as it was */
	assert_string_equal(s, "ffffffff81000000 T fn_one\nffffffff81000100 T fn_two\n");
	free(s);
	char dst5[128];
	snprintf(dst5, sizeof(dst5), "%s/olddb", tmpdir);
	kernel_db("olddb", 0xe1, 2);	/* a kernel named by its build-id alone */
	put(dst5, "kallsyms", "ffffffff81000000 T fs_fn_boot1\n");
	assert_int_equal(spent_profile_dir_open(dst5, &d), 0);
	assert_int_equal(db_merge(d, boot2src, 1, NULL, NULL, &skipped), 0);
	spent_profile_dir_close(d);
	assert_non_null(s = get_text(dst5, name2));
	assert_string_equal(s, "ffffffff9a000000 T fn_one\nffffffff9a000100 T fn_two\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_keeps_different_kernels_apart),
		cmocka_unit_test(merge_brings_kernel_symbols),
		cmocka_unit_test(merge_files_a_profiles_symbols_by_identity),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
