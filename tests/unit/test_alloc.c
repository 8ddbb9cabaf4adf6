/* tests/unit/test_alloc.c - core/alloc.h: ARRAY_SIZE counts elements; ALLOC_GROW grows to what
 * is asked (at least doubling), keeps the contents, and on an impossible size returns -ENOMEM
 * leaving the array and its count as they were. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/alloc.h"

static void array_size_counts_elements(void **state)
{
	(void)state;
	int a[7];
	struct { char c[3]; double d; } b[5];
	const char *names[] = { "x", "y" };
	assert_int_equal(ARRAY_SIZE(a), 7);
	assert_int_equal(ARRAY_SIZE(b), 5);
	assert_int_equal(ARRAY_SIZE(names), 2);
	assert_int_equal(ARRAY_SIZE(b[0].c), 3);
}

static void grow_appends_and_keeps_contents(void **state)
{
	(void)state;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0, reallocs = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		size_t before = cap;
		assert_int_equal(ALLOC_GROW(v, n + 1, cap), 0);
		reallocs += cap != before;
		assert_true(cap >= n + 1);
		v[n++] = i * 3;
	}
	for (size_t i = 0; i < n; i++)
		assert_true(v[i] == i * 3);
	assert_true(reallocs < 20);	/* doubling: logarithmic, not one per element */
	free(v);
}

static void grow_to_a_larger_need_at_once(void **state)
{
	(void)state;
	char *b = NULL;
	size_t cap = 0;
	assert_int_equal(ALLOC_GROW(b, 1000, cap), 0);
	assert_true(cap >= 1000);
	size_t before = cap;
	assert_int_equal(ALLOC_GROW(b, 10, cap), 0);	/* enough room: nothing changes */
	assert_int_equal(cap, before);
	free(b);
}

static void overflow_is_enomem_and_leaves_the_array(void **state)
{
	(void)state;
	uint64_t *v = NULL;
	size_t cap = 0;
	assert_int_equal(ALLOC_GROW(v, 4, cap), 0);
	v[3] = 42;
	uint64_t *keep = v;
	size_t keep_cap = cap;
	/* SIZE_MAX / 4 elements of 8 bytes: the byte count overflows size_t */
	assert_int_equal(ALLOC_GROW(v, SIZE_MAX / 4, cap), -ENOMEM);
	assert_ptr_equal(v, keep);
	assert_int_equal(cap, keep_cap);
	assert_true(v[3] == 42);
	assert_null(alloc_grow_array(v, 8, SIZE_MAX, &cap));
	assert_int_equal(cap, keep_cap);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(array_size_counts_elements),
		cmocka_unit_test(grow_appends_and_keeps_contents),
		cmocka_unit_test(grow_to_a_larger_need_at_once),
		cmocka_unit_test(overflow_is_enomem_and_leaves_the_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
