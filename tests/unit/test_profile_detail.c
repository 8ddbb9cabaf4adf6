/* tests/unit/test_profile_detail.c - who and when in the in-memory profile (profile_detail.c):
 * task interning, detail rows keyed by (event, task, time bucket, chain), bucket widths,
 * spans, and what spent_profile_merge does with all of them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile_test_util.h"
#include "spent/profile.h"

#define MS 1000000ull
#define T0 1700000000000000000ull	/* a wall-clock time, a multiple of every bucket used */

/* The count of the row whose key matches (0 when there is none); the event, task and first
 * frame's image are compared by name so that rows of merged profiles can be looked up. */
static uint64_t row_count(const struct spent_profile *p, const char *ev, const char *comm, uint32_t tid,
			  uint64_t time, const char *leaf_image, uint64_t leaf_off, size_t depth)
{
	uint64_t found = 0;
	int matches = 0;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		struct spent_profile_detail_row r;
		assert_int_equal(spent_profile_detail_get(p, i, &r), 0);
		const struct spent_profile_task *t = spent_profile_task_get(p, r.task);
		const struct spent_profile_image *im = spent_profile_image_get(p, r.frames[0].image);
		if (strcmp(spent_profile_event_get(p, r.event)->name, ev) || (comm && !t) ||
		    (t && (!comm || strcmp(t->comm, comm) || t->tid != tid)) || r.time_ns != time ||
		    !im || strcmp(im->path, leaf_image) || r.frames[0].offset != leaf_off ||
		    r.nframes != depth)
			continue;
		found = r.count;
		matches++;
	}
	assert_true(matches <= 1);	/* rows are unique by key */
	return found;
}

static uint64_t detail_total(const struct spent_profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		struct spent_profile_detail_row r;
		assert_int_equal(spent_profile_detail_get(p, i, &r), 0);
		t += r.count;
	}
	return t;
}

static void tasks_are_interned_by_all_four_fields(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t a = add_task(p, "worker", 10, 11, NULL);
	assert_int_equal(add_task(p, "worker", 10, 11, NULL), a);
	assert_int_equal(add_task(p, "worker", 10, 11, ""), a);	/* "" is "no cgroup" */
	uint32_t b = add_task(p, "worker", 10, 12, NULL);
	uint32_t c = add_task(p, "worker", 13, 11, NULL);
	uint32_t d = add_task(p, "other", 10, 11, NULL);
	uint32_t e = add_task(p, "worker", 10, 11, "/system.slice/x.service");
	assert_int_equal(add_task(p, "worker", 10, 11, "/system.slice/x.service"), e);
	assert_true(a != b && b != c && c != d && d != e && a != e);
	assert_int_equal(spent_profile_ntasks(p), 5);
	const struct spent_profile_task *t = spent_profile_task_get(p, e);
	assert_string_equal(t->comm, "worker");
	assert_string_equal(t->cgroup, "/system.slice/x.service");
	assert_null(spent_profile_task_get(p, a)->cgroup);
	assert_null(spent_profile_task_get(p, 5));

	/* many tasks: the index grows and every one is still found */
	char comm[32];
	for (uint32_t i = 0; i < 3000; i++) {
		snprintf(comm, sizeof(comm), "t%u", i % 7);
		uint32_t idx = add_task(p, comm, 1000 + i, i, NULL);
		assert_int_equal(add_task(p, comm, 1000 + i, i, NULL), idx);
	}
	assert_int_equal(spent_profile_ntasks(p), 3005);

	uint32_t idx;
	struct spent_profile_task bad = { .comm = NULL };
	assert_int_equal(spent_profile_task_intern(p, &bad, &idx), -EINVAL);
	char longcomm[SPENT_PROFILE_COMM_MAX + 1];
	memset(longcomm, 'x', SPENT_PROFILE_COMM_MAX);
	longcomm[SPENT_PROFILE_COMM_MAX] = 0;
	bad.comm = longcomm;
	assert_int_equal(spent_profile_task_intern(p, &bad, &idx), -EINVAL);
	spent_profile_free(p);
}

static void rows_are_summed_by_key_and_time_rounds_down(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t img = add_image(p, "/bin/a"), ev = add_event(p, "cpu-clock", 1000);
	uint32_t t1 = add_task(p, "a", 1, 1, NULL), t2 = add_task(p, "a", 1, 2, NULL);
	struct spent_profile_frame leaf = { img, 0x10 }, deep[3] = { { img, 0x10 }, { img, 0x20 },
							       { SPENT_PROFILE_NO_IMAGE, 0xdead } };
	assert_int_equal(spent_profile_time_bucket(p), SPENT_PROFILE_TIME_BUCKET_NS);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0 + 1, &leaf, 1, 1), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0 + 9 * MS, &leaf, 1, 2), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0 + 10 * MS, &leaf, 1, 4), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t2, T0, &leaf, 1, 8), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, deep, 3, 16), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, SPENT_PROFILE_NO_TASK, 0, deep, 3, 32), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, &leaf, 1, 0), 0);	/* nothing */
	assert_int_equal(spent_profile_ndetail(p), 5);
	assert_int_equal(row_count(p, "cpu-clock", "a", 1, T0, "/bin/a", 0x10, 1), 3);
	assert_int_equal(row_count(p, "cpu-clock", "a", 1, T0 + 10 * MS, "/bin/a", 0x10, 1), 4);
	assert_int_equal(row_count(p, "cpu-clock", "a", 2, T0, "/bin/a", 0x10, 1), 8);
	assert_int_equal(row_count(p, "cpu-clock", "a", 1, T0, "/bin/a", 0x10, 3), 16);
	assert_int_equal(row_count(p, "cpu-clock", NULL, 0, 0, "/bin/a", 0x10, 3), 32);
	struct spent_profile_detail_row r;
	for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
		assert_int_equal(spent_profile_detail_get(p, i, &r), 0);
		if (r.nframes == 3) {
			assert_int_equal(r.frames[2].image, SPENT_PROFILE_NO_IMAGE);
			assert_int_equal(r.frames[2].offset, 0xdead);
		}
	}
	assert_int_equal(spent_profile_detail_get(p, 5, &r), -EINVAL);

	/* a wider bucket applies to rows added from then on */
	assert_int_equal(spent_profile_set_time_bucket(p, 0), -EINVAL);
	assert_int_equal(spent_profile_set_time_bucket(p, 1000 * MS), 0);
	assert_int_equal(spent_profile_time_bucket(p), 1000 * MS);
	assert_int_equal(spent_profile_add_detail(p, ev, t2, T0 + 999 * MS, &leaf, 1, 1), 0);
	assert_int_equal(row_count(p, "cpu-clock", "a", 2, T0, "/bin/a", 0x10, 1), 9);

	/* bad arguments add nothing */
	struct spent_profile_frame badimg = { img + 1, 0 };
	assert_int_equal(spent_profile_add_detail(p, ev + 1, t1, T0, &leaf, 1, 1), -EINVAL);
	assert_int_equal(spent_profile_add_detail(p, ev, 2, T0, &leaf, 1, 1), -EINVAL);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, &badimg, 1, 1), -EINVAL);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, &leaf, 0, 1), -EINVAL);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, NULL, 1, 1), -EINVAL);
	struct spent_profile_frame *big = calloc(1025, sizeof(*big));
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, big, 1025, 1), -EINVAL);
	for (int i = 0; i < 1024; i++)
		big[i] = (struct spent_profile_frame){ img, (uint64_t)i };
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0, big, 1024, 1), 0);
	free(big);
	assert_int_equal(spent_profile_ndetail(p), 6);
	spent_profile_free(p);
}

static void spans_are_united(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint64_t s, e;
	spent_profile_span(p, &s, &e);
	assert_true(s == 0 && e == 0);
	spent_profile_extend_span(p, 0, 0);
	spent_profile_span(p, &s, &e);
	assert_true(s == 0 && e == 0);
	spent_profile_extend_span(p, 200, 300);
	spent_profile_extend_span(p, 250, 260);
	spent_profile_span(p, &s, &e);
	assert_true(s == 200 && e == 300);
	spent_profile_extend_span(p, 400, 100);	/* reversed: the same interval */
	spent_profile_span(p, &s, &e);
	assert_true(s == 100 && e == 400);
	spent_profile_extend_span(p, 0, 500);		/* one known end stands for both */
	spent_profile_extend_span(p, 50, 0);
	spent_profile_span(p, &s, &e);
	assert_true(s == 50 && e == 500);
	spent_profile_free(p);
}

/* SRC has its images, events and tasks interned in another order than DST's */
static void merge_remaps_tasks_images_events_and_unites_spans(void **state)
{
	(void)state;
	struct spent_profile *dst = spent_profile_new(), *src = spent_profile_new();
	uint32_t da = add_image(dst, "/bin/a"), dev = add_event(dst, "cpu-clock", 1000);
	uint32_t dt = add_task(dst, "a", 1, 1, NULL);
	struct spent_profile_frame f = { da, 0x10 };
	assert_int_equal(spent_profile_add_detail(dst, dev, dt, T0, &f, 1, 5), 0);
	spent_profile_extend_span(dst, T0, T0 + 100 * MS);

	uint32_t sev2 = add_event(src, "page-faults", 1000), sev = add_event(src, "cpu-clock", 1000);
	uint32_t sb = add_image(src, "/lib/b.so"), sa = add_image(src, "/bin/a");
	uint32_t st2 = add_task(src, "b", 2, 2, "/user.slice"), st1 = add_task(src, "a", 1, 1, NULL);
	struct spent_profile_frame sf[2] = { { sa, 0x10 }, { sb, 0x99 } }, sl = { sa, 0x10 };
	assert_int_equal(spent_profile_add_detail(src, sev, st1, T0, &sl, 1, 7), 0);
	assert_int_equal(spent_profile_add_detail(src, sev, st2, T0, sf, 2, 1), 0);
	assert_int_equal(spent_profile_add_detail(src, sev2, st1, T0 + 20 * MS, sf, 2, 3), 0);
	spent_profile_extend_span(src, T0 - 50 * MS, T0 + 10 * MS);

	assert_int_equal(spent_profile_merge(dst, src), 0);
	assert_int_equal(spent_profile_ntasks(dst), 2);
	assert_int_equal(spent_profile_ndetail(dst), 3);
	assert_int_equal(row_count(dst, "cpu-clock", "a", 1, T0, "/bin/a", 0x10, 1), 12);
	assert_int_equal(row_count(dst, "cpu-clock", "b", 2, T0, "/bin/a", 0x10, 2), 1);
	assert_int_equal(row_count(dst, "page-faults", "a", 1, T0 + 20 * MS, "/bin/a", 0x10, 2), 3);
	for (size_t i = 0; i < spent_profile_ndetail(dst); i++) {
		struct spent_profile_detail_row r;
		spent_profile_detail_get(dst, i, &r);
		if (r.nframes == 2)
			assert_string_equal(spent_profile_image_get(dst, r.frames[1].image)->path, "/lib/b.so");
		if (!strcmp(spent_profile_task_get(dst, r.task)->comm, "b"))
			assert_string_equal(spent_profile_task_get(dst, r.task)->cgroup, "/user.slice");
	}
	uint64_t s, e;
	spent_profile_span(dst, &s, &e);
	assert_true(s == T0 - 50 * MS && e == T0 + 100 * MS);

	/* merging again doubles every count and adds no row */
	assert_int_equal(spent_profile_merge(dst, src), 0);
	assert_int_equal(spent_profile_ndetail(dst), 3);
	assert_int_equal(detail_total(dst), 5 + 2 * 11);
	spent_profile_free(src);
	spent_profile_free(dst);
}

static void merge_keeps_one_bucket_width(void **state)
{
	(void)state;
	/* an empty destination takes the source's width */
	struct spent_profile *dst = spent_profile_new(), *src = spent_profile_new();
	uint32_t img = add_image(src, "/bin/a"), ev = add_event(src, "cpu-clock", 1000);
	uint32_t t = add_task(src, "a", 1, 1, NULL);
	struct spent_profile_frame f = { img, 1 };
	assert_int_equal(spent_profile_set_time_bucket(src, MS), 0);
	assert_int_equal(spent_profile_add_detail(src, ev, t, T0 + 3 * MS, &f, 1, 1), 0);
	assert_int_equal(spent_profile_add_detail(src, ev, t, T0 + 13 * MS, &f, 1, 1), 0);
	assert_int_equal(spent_profile_merge(dst, src), 0);
	assert_int_equal(spent_profile_time_bucket(dst), MS);
	assert_int_equal(spent_profile_ndetail(dst), 2);

	/* a coarser source widens the destination: its rows meet in one bucket */
	struct spent_profile *coarse = spent_profile_new();
	uint32_t ci = add_image(coarse, "/bin/a"), ce = add_event(coarse, "cpu-clock", 1000);
	uint32_t ct = add_task(coarse, "a", 1, 1, NULL);
	struct spent_profile_frame cf = { ci, 1 };
	assert_int_equal(spent_profile_set_time_bucket(coarse, 100 * MS), 0);
	assert_int_equal(spent_profile_add_detail(coarse, ce, ct, T0 + 50 * MS, &cf, 1, 4), 0);
	assert_int_equal(spent_profile_merge(dst, coarse), 0);
	assert_int_equal(spent_profile_time_bucket(dst), 100 * MS);
	assert_int_equal(spent_profile_ndetail(dst), 1);
	assert_int_equal(row_count(dst, "cpu-clock", "a", 1, T0, "/bin/a", 1, 1), 6);

	/* a finer source is rounded down to the destination's width */
	assert_int_equal(spent_profile_merge(dst, src), 0);
	assert_int_equal(spent_profile_time_bucket(dst), 100 * MS);
	assert_int_equal(spent_profile_ndetail(dst), 1);
	assert_int_equal(row_count(dst, "cpu-clock", "a", 1, T0, "/bin/a", 1, 1), 8);
	spent_profile_free(coarse);
	spent_profile_free(src);
	spent_profile_free(dst);
}

/* One row per sample of a long recording: every row stays findable and summed. */
static void many_rows_stay_exact(void **state)
{
	(void)state;
	struct spent_profile *p = spent_profile_new();
	uint32_t img = add_image(p, "/bin/a"), ev = add_event(p, "cpu-clock", 1000);
	uint32_t tasks[4];
	for (uint32_t i = 0; i < 4; i++)
		tasks[i] = add_task(p, "w", 1, i + 1, NULL);
	struct spent_profile_frame f[3] = { { img, 0 }, { img, 0x100 }, { img, 0x200 } };
	uint64_t n = 0;
	for (uint32_t b = 0; b < 5000; b++)
		for (uint32_t k = 0; k < 40; k++) {
			f[0].offset = k % 10;
			assert_int_equal(spent_profile_add_detail(p, ev, tasks[k % 4], T0 + b * 10 * MS + k,
							    f, 3, 1), 0);
			n++;
		}
	/* (k % 4, k % 10) takes 20 distinct (task, chain) values in each bucket */
	assert_int_equal(spent_profile_ndetail(p), 5000 * 20);
	assert_int_equal(detail_total(p), n);
	struct spent_profile *q = spent_profile_new();
	assert_int_equal(spent_profile_merge(q, p), 0);
	assert_int_equal(spent_profile_ndetail(q), spent_profile_ndetail(p));
	assert_int_equal(detail_total(q), n);
	spent_profile_free(q);
	spent_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tasks_are_interned_by_all_four_fields),
		cmocka_unit_test(rows_are_summed_by_key_and_time_rounds_down),
		cmocka_unit_test(spans_are_united),
		cmocka_unit_test(merge_remaps_tasks_images_events_and_unites_spans),
		cmocka_unit_test(merge_keeps_one_bucket_width),
		cmocka_unit_test(many_rows_stay_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
