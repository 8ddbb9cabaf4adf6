/* tests/unit/test_report_detail.c - who and when in report (analysis/report_detail.c): --sort
 * key lists, --time forms against a span, filters by comm/pid/tid/image/time, grouping in any
 * key order, the filtered profile the other views read, and two boots' kernels kept apart. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/report_detail.h"
#include "core/kernel_id.h"
#include "core/symbols.h"
#include "profile_test_util.h"

#define MS 1000000ull
#define T0 1700000000000000000ull	/* span start, a multiple of 10 ms */

static void parse_keys(void **state)
{
	enum detail_key k[DETAIL_KEY_NR];
	size_t n;
	char bad[32];
	assert_int_equal(detail_parse_keys("tid,comm,sym,dso,pid", k, &n, bad, sizeof(bad)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(k[0], DETAIL_KEY_TID);
	assert_int_equal(k[1], DETAIL_KEY_COMM);
	assert_int_equal(k[2], DETAIL_KEY_FUNCTION);
	assert_int_equal(k[3], DETAIL_KEY_IMAGE);
	assert_int_equal(k[4], DETAIL_KEY_PID);
	assert_int_equal(detail_parse_keys("comm,cpu", k, &n, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "cpu");
	assert_int_equal(detail_parse_keys("image,dso", k, &n, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "dso");
	assert_int_equal(detail_parse_keys("comm,", k, &n, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(detail_parse_keys("", k, &n, bad, sizeof(bad)), -EINVAL);
}

static void parse_time(void **state)
{
	struct detail_filter f = { 0 };
	uint64_t s = T0, e = T0 + 10000 * MS;
	assert_int_equal(detail_parse_time("1.5,4", s, e, &f), 0);
	assert_true(f.start_ns == T0 + 1500 * MS && f.end_ns == T0 + 4000 * MS);
	assert_int_equal(detail_parse_time(",2", s, e, &f), 0);
	assert_true(f.start_ns == 0 && f.end_ns == T0 + 2000 * MS);
	assert_int_equal(detail_parse_time("3,", s, e, &f), 0);
	assert_true(f.start_ns == T0 + 3000 * MS && f.end_ns == 0);
	assert_int_equal(detail_parse_time("10%-30%", s, e, &f), 0);
	assert_true(f.start_ns == T0 + 1000 * MS && f.end_ns == T0 + 3000 * MS);
	assert_int_equal(detail_parse_time("25%/2", s, e, &f), 0);
	assert_true(f.start_ns == T0 + 2500 * MS && f.end_ns == T0 + 5000 * MS);
	assert_int_equal(detail_parse_time("50%/2", s, e, &f), 0);	/* the last: open end */
	assert_true(f.start_ns == T0 + 5000 * MS && f.end_ns == 0);
	const char *bad[] = { "4,2", "a,b", "1", "1,2,3", "-1,2", "10%-5%", "50%/3", "0%/1",
			      "10%-200%", "1e99,", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(detail_parse_time(bad[i], s, e, &f), -EINVAL);
	assert_int_equal(detail_parse_time("1,2", 0, 0, &f), -ERANGE);
}

/* Two processes: "sh" (pid 10: tids 10, 11) and "gz" (pid 20), two images, samples at 0, 1 and
 * 2 s. Counts: sh/10 a.so 5 @0s, sh/11 a.so 7 @1s, sh/11 b.so 2 @2s, gz/20 b.so 11 @1s, and one
 * unplaced sample of gz at 2 s. */
static struct spent_profile *sample_profile(uint32_t *ev)
{
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t a = add_image(p, "/lib/a.so"), b = add_image(p, "/usr/lib/b.so");
	*ev = add_event(p, "cpu-clock", 1000);
	uint32_t t10 = add_task(p, "sh", 10, 10, NULL), t11 = add_task(p, "sh", 10, 11, NULL);
	uint32_t t20 = add_task(p, "gz", 20, 20, NULL);
	struct spent_profile_frame fa[2] = { { a, 0x100 }, { b, 0x200 } }, fb = { b, 0x300 },
			     fu = { SPENT_PROFILE_NO_IMAGE, 0xdead };
	assert_int_equal(spent_profile_add_detail(p, *ev, t10, T0 + 3 * MS, fa, 2, 5), 0);
	assert_int_equal(spent_profile_add_detail(p, *ev, t11, T0 + 1000 * MS, fa, 1, 7), 0);
	assert_int_equal(spent_profile_add_detail(p, *ev, t11, T0 + 2000 * MS, &fb, 1, 2), 0);
	assert_int_equal(spent_profile_add_detail(p, *ev, t20, T0 + 1004 * MS, &fb, 1, 11), 0);
	assert_int_equal(spent_profile_add_detail(p, *ev, t20, T0 + 2000 * MS, &fu, 1, 1), 0);
	spent_profile_extend_span(p, T0, T0 + 3000 * MS);
	return p;
}

static uint64_t group_of(const struct detail_report *r, const char *c0, const char *c1)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].cols[0], c0) && (!c1 || !strcmp(r->groups[i].cols[1], c1)))
			return r->groups[i].samples;
	return 0;
}

static struct detail_report *build(const struct spent_profile *p, uint32_t ev, const char *keys,
				   const struct detail_filter *f)
{
	enum detail_key k[DETAIL_KEY_NR];
	size_t n;
	char bad[32];
	struct detail_report *r = NULL;
	assert_int_equal(detail_parse_keys(keys, k, &n, bad, sizeof(bad)), 0);
	/* image and pid keys need no symbols: no symbols object is consulted */
	assert_int_equal(detail_report_build(p, NULL, ev, k, n, f, &r), 0);
	return r;
}

static void group_any_order(void **state)
{
	uint32_t ev;
	struct spent_profile *p = sample_profile(&ev);
	struct detail_filter all = { 0 };
	struct detail_report *r = build(p, ev, "comm,pid", &all);
	assert_int_equal(r->total, 26);
	assert_int_equal(r->ngroups, 2);
	assert_string_equal(r->groups[0].cols[0], "sh");	/* 14 before 12 */
	assert_int_equal(group_of(r, "sh", "10"), 14);
	assert_int_equal(group_of(r, "gz", "20"), 12);
	detail_report_free(r);
	r = build(p, ev, "image,tid", &all);
	assert_int_equal(r->ngroups, 5);
	assert_int_equal(group_of(r, "/lib/a.so", "10"), 5);
	assert_int_equal(group_of(r, "/usr/lib/b.so", "11"), 2);
	assert_int_equal(group_of(r, "/lib/a.so", "11"), 7);
	assert_int_equal(group_of(r, "/usr/lib/b.so", "20"), 11);
	assert_int_equal(group_of(r, "[unknown]", "20"), 1);
	detail_report_free(r);
	spent_profile_free(p);
}

static void filters(void **state)
{
	uint32_t ev;
	struct spent_profile *p = sample_profile(&ev);
	const char *comms[] = { "sh" }, *images[] = { "b.so" };
	uint32_t pids[] = { 20 }, tids[] = { 11, 20 };
	struct detail_filter f = { .comms = comms, .ncomms = 1 };
	struct detail_report *r = build(p, ev, "tid", &f);
	assert_int_equal(r->total, 14);
	detail_report_free(r);
	f = (struct detail_filter){ .pids = pids, .npids = 1 };
	r = build(p, ev, "tid", &f);
	assert_int_equal(r->total, 12);
	detail_report_free(r);
	/* a file name matches the image's path; filters combine */
	f = (struct detail_filter){ .tids = tids, .ntids = 2, .images = images, .nimages = 1 };
	r = build(p, ev, "tid", &f);
	assert_int_equal(r->total, 13);
	assert_int_equal(group_of(r, "11", NULL), 2);
	detail_report_free(r);
	/* time halves: [0, 1 s) and [1 s, end) share nothing and lose nothing; a window start
	 * inside a bucket (1.004 s) takes the whole bucket */
	f = (struct detail_filter){ 0 };
	assert_int_equal(detail_parse_time(",1", T0, T0 + 3000 * MS, &f), 0);
	r = build(p, ev, "comm", &f);
	uint64_t first = r->total;
	detail_report_free(r);
	assert_int_equal(detail_parse_time("1,", T0, T0 + 3000 * MS, &f), 0);
	r = build(p, ev, "comm", &f);
	assert_int_equal(first, 5);
	assert_int_equal(r->total, 21);
	detail_report_free(r);
	f = (struct detail_filter){ .start_ns = T0 + 1004 * MS, .end_ns = T0 + 1500 * MS };
	r = build(p, ev, "comm", &f);
	assert_int_equal(r->total, 18);
	detail_report_free(r);
	spent_profile_free(p);
}

static void filtered_profile(void **state)
{
	uint32_t ev;
	struct spent_profile *p = sample_profile(&ev), *q = NULL;
	const char *comms[] = { "gz" };
	struct detail_filter f = { .comms = comms, .ncomms = 1 };
	assert_int_equal(detail_filter_profile(p, &f, &q), 0);
	assert_int_equal(spent_profile_event_total(q, ev), 12);
	assert_int_equal(spent_profile_image_total(q, 1, ev), 11);
	assert_int_equal(spent_profile_image_total(q, 0, ev), 0);
	assert_int_equal(spent_profile_unknown_count(q, ev, SPENT_PROFILE_UNK_NO_MAPPING), 1);
	assert_int_equal(spent_profile_nstacks(q), 0);	/* P had no stacks: none are made up */
	uint64_t s, e;
	spent_profile_span(q, &s, &e);
	assert_true(s == T0 && e == T0 + 3000 * MS);
	/* the task indices of the rows still name the same tasks */
	struct spent_profile_detail_row row;
	assert_int_equal(spent_profile_detail_get(q, 0, &row), 0);
	assert_string_equal(spent_profile_task_get(q, row.task)->comm, "gz");
	spent_profile_free(q);
	spent_profile_free(p);
}

/* a kernel image of build-id 20 x 0xaa loaded at TEXT in its boot, as the daemon keeps it,
 * with its own kallsyms-HEX in DIR naming "same_fn" at TEXT + 0x100 */
static uint32_t boot_kernel(struct spent_profile *p, const char *dir, uint64_t text)
{
	struct spent_profile_image k = { .path = "[kernel.kallsyms]", .id_kind = SPENT_PROFILE_ID_BUILDID,
					 .id_len = 20 };
	char name[128], path[256];
	uint32_t idx;
	memset(k.id, 0xaa, 20);
	assert_int_equal(kernel_id_add_text(&k, text), 0);
	assert_int_equal(spent_profile_image_intern(p, &k, &idx), 0);
	assert_int_equal(kernel_id_kallsyms_name(&k, name, sizeof(name)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%016llx T same_fn\n%016llx T after_fn\n", (unsigned long long)text + 0x100,
		(unsigned long long)text + 0x200);
	fclose(f);
	return idx;
}

/* two boots of one kernel (KASLR: another _text) in one profile: --sort image and function
 * keep them apart, each named from its own kallsyms */
static void two_kernels(void **state)
{
	char dir[] = "/tmp/spent-ut-rdk.XXXXXX", cmd[64];
	assert_non_null(mkdtemp(dir));
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	uint32_t ev = add_event(p, "cpu-clock", 1000), t = add_task(p, "sh", 10, 10, NULL);
	uint32_t a = boot_kernel(p, dir, 0xffffffff81000000ull), b = boot_kernel(p, dir, 0xffffffff83000000ull);
	struct spent_profile_frame fa = { a, 0xffffffff81000110ull }, fb = { b, 0xffffffff83000110ull };
	assert_int_equal(spent_profile_add(p, a, fa.offset, ev, 3), 0);
	assert_int_equal(spent_profile_add(p, b, fb.offset, ev, 4), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t, T0, &fa, 1, 3), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t, T0, &fb, 1, 4), 0);
	struct symbols *sym;
	assert_int_equal(symbols_new(&sym), 0);
	assert_int_equal(symbols_set_kallsyms_dir(sym, dir), 0);
	enum detail_key k[DETAIL_KEY_NR];
	size_t n;
	char bad[32];
	struct detail_filter all = { 0 };
	struct detail_report *r = NULL;
	assert_int_equal(detail_parse_keys("function", k, &n, bad, sizeof(bad)), 0);
	assert_int_equal(detail_report_build(p, sym, ev, k, n, &all, &r), 0);
	assert_int_equal(r->ngroups, 2);
	assert_string_equal(r->groups[0].cols[0], "same_fn");
	assert_string_equal(r->groups[1].cols[0], "same_fn");
	assert_int_equal(r->groups[0].samples, 4);
	assert_int_equal(r->groups[1].samples, 3);
	detail_report_free(r);
	assert_int_equal(detail_parse_keys("image", k, &n, bad, sizeof(bad)), 0);
	assert_int_equal(detail_report_build(p, sym, ev, k, n, &all, &r), 0);
	assert_int_equal(r->ngroups, 2);
	assert_int_equal(group_of(r, "[kernel.kallsyms:aaaaaaaa..83000000]", NULL), 4);
	assert_int_equal(group_of(r, "[kernel.kallsyms:aaaaaaaa..81000000]", NULL), 3);
	detail_report_free(r);
	symbols_free(sym);
	spent_profile_free(p);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_keys),
		cmocka_unit_test(parse_time),
		cmocka_unit_test(group_any_order),
		cmocka_unit_test(filters),
		cmocka_unit_test(filtered_profile),
		cmocka_unit_test(two_kernels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
