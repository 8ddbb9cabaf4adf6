/* tests/unit/test_top.c - analysis/top: the sliding window (counts leave after SLOTS ticks,
 * keys with nothing left are forgotten), the views' grouping (comms summed over pids, the
 * function view's comm NULL when several processes share a row), ordering, and
 * symbolization of a real image (this test binary). */
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

#include "analysis/top.h"

int __attribute__((noinline)) top_marker_function(int x) { return x * 7 + 1; }

struct fixture {
	struct symbols *sym;
	struct top *t;
	struct spent_profile_image img;
	char path[4096];
	uint64_t marker;	/* top_marker_function's offset in this binary */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint64_t size;
	ssize_t n = readlink("/proc/self/exe", f->path, sizeof(f->path) - 1);

	assert_true(n > 0);
	f->path[n] = '\0';
	f->img.path = f->path;
	assert_int_equal(symbols_new(&f->sym), 0);
	assert_int_equal(symbols_find_function(f->sym, &f->img, "top_marker_function", &f->marker,
					       &size), 0);
	assert_int_equal(top_new(2, f->sym, &f->t), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	top_free(f->t);
	symbols_free(f->sym);
	free(f);
	return 0;
}

static const struct top_row *find(const struct top_row *r, size_t n, const char *function,
				  const char *comm)
{
	for (size_t i = 0; i < n; i++)
		if ((!function || (r[i].function && !strcmp(r[i].function, function))) &&
		    (!comm || (r[i].comm && !strcmp(r[i].comm, comm))))
			return &r[i];
	return NULL;
}

static void test_window_slides(void **state)
{
	struct fixture *f = *state;
	struct top_row *r;
	struct top_stats st;
	size_t n;

	assert_int_equal(top_add(f->t, "burn", 10, &f->img, f->marker + 1, 5), 0);
	assert_int_equal(top_add(f->t, "burn", 10, NULL, 0x1234, 1), 0);
	/* the open interval is not in the window yet */
	assert_int_equal(top_rows(f->t, TOP_BY_FUNCTION, &r, &n), 0);
	assert_int_equal(n, 0);
	free(r);
	top_tick(f->t);
	assert_int_equal(top_add(f->t, "burn", 10, &f->img, f->marker, 3), 0);
	top_tick(f->t);
	top_get_stats(f->t, &st);
	assert_int_equal(st.window, 9);
	assert_int_equal(st.last, 3);
	assert_int_equal(st.filled, 2);
	assert_int_equal(top_rows(f->t, TOP_BY_FUNCTION, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].function, "top_marker_function");
	assert_string_equal(r[0].image, f->path);
	assert_int_equal(r[0].count, 8);
	assert_int_equal(r[0].last, 3);
	assert_string_equal(r[1].function, "[unknown]");
	assert_string_equal(r[1].image, "[unknown]");
	free(r);
	/* a third tick: the first interval (5 + 1) leaves the window of 2 */
	top_tick(f->t);
	top_get_stats(f->t, &st);
	assert_int_equal(st.window, 3);
	assert_int_equal(st.keys, 1);
	/* and a fourth: nothing is left, every key forgotten */
	top_tick(f->t);
	top_get_stats(f->t, &st);
	assert_int_equal(st.window, 0);
	assert_int_equal(st.keys, 0);
}

static void test_views_group(void **state)
{
	struct fixture *f = *state;
	struct top_row *r;
	size_t n;

	assert_int_equal(top_add(f->t, "worker", 20, &f->img, f->marker, 4), 0);
	assert_int_equal(top_add(f->t, "worker", 21, &f->img, f->marker, 2), 0);
	assert_int_equal(top_add(f->t, "other", 30, &f->img, f->marker, 7), 0);
	assert_int_equal(top_add(f->t, "other", 30, NULL, 0, 1), 0);
	top_tick(f->t);

	assert_int_equal(top_rows(f->t, TOP_BY_FUNCTION, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].count, 13);
	assert_null(r[0].comm);		/* worker and other */
	assert_string_equal(r[1].comm, "other");	/* [unknown]: one process */
	free(r);

	assert_int_equal(top_rows(f->t, TOP_BY_COMM, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].comm, "other");
	assert_int_equal(r[0].count, 8);
	assert_non_null(find(r, n, NULL, "worker"));
	assert_int_equal(find(r, n, NULL, "worker")->count, 6);
	assert_null(r[0].function);
	free(r);

	assert_int_equal(top_rows(f->t, TOP_BY_PROCESS, &r, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].pid, 30);
	assert_int_equal(r[1].pid, 20);
	assert_int_equal(r[2].pid, 21);
	free(r);

	assert_int_equal(top_rows(f->t, TOP_BY_IMAGE, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].image, f->path);
	assert_int_equal(r[0].count, 13);
	free(r);
}

/* Distinct image paths are counted once each; names survive a change of symbols. */
static void test_images_seen_and_new_symbols(void **state)
{
	struct fixture *f = *state;
	struct spent_profile_image other = { .path = "/nonexistent/other" };
	struct symbols *fresh = NULL;
	struct top_row *rows = NULL;
	size_t n = 0;

	assert_int_equal(top_images_seen(f->t), 0);
	assert_int_equal(top_add(f->t, "a", 1, &f->img, f->marker, 1), 0);
	assert_int_equal(top_add(f->t, "b", 2, &f->img, f->marker, 1), 0);
	assert_int_equal(top_add(f->t, "a", 1, NULL, 0, 1), 0);
	assert_int_equal(top_images_seen(f->t), 1);
	assert_int_equal(top_add(f->t, "a", 1, &other, 0, 1), 0);
	assert_int_equal(top_images_seen(f->t), 2);
	assert_int_equal(symbols_new(&fresh), 0);
	top_set_symbols(f->t, fresh);
	symbols_free(f->sym);
	f->sym = fresh;
	assert_int_equal(top_add(f->t, "c", 3, &f->img, f->marker, 1), 0);
	assert_int_equal(top_images_seen(f->t), 2);
	top_tick(f->t);
	assert_int_equal(top_rows(f->t, TOP_BY_FUNCTION, &rows, &n), 0);
	const struct top_row *r = find(rows, n, "top_marker_function", NULL);
	assert_non_null(r);
	assert_int_equal(r->count, 3);
	free(rows);
}

static void test_refuses_bad_window(void **state)
{
	struct top *t = NULL;

	(void)state;
	assert_int_equal(top_new(0, NULL, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(top_new(3601, NULL, &t), -EINVAL);
	assert_string_equal(top_view_name(TOP_BY_PROCESS), "processes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_window_slides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_views_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_images_seen_and_new_symbols, setup, teardown),
		cmocka_unit_test(test_refuses_bad_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
