/* tests/unit/test_search.c - core/search: upper and lower bounds over an empty array, keys
 * before, between, on and after the elements, runs of equal elements (upper bound past the
 * run, lower bound before it), scalars and a struct member. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/search.h"

static void bounds_of_scalars(void **state)
{
	(void)state;
	const uint64_t a[] = { 10, 20, 20, 20, 30 };
	size_t n = ARRAY_SIZE(a);
	assert_int_equal(SEARCH_UPPER_BOUND(a, 0, , 15), 0);	/* empty */
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , 5), 0);	/* before all */
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , 10), 1);	/* on the first */
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , 15), 1);	/* between */
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , 20), 4);	/* past the run of 20s */
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , 30), 5);
	assert_int_equal(SEARCH_UPPER_BOUND(a, n, , UINT64_MAX), 5);	/* after all */
	assert_int_equal(SEARCH_LOWER_BOUND(a, n, , 20), 1);	/* before the run */
	assert_int_equal(SEARCH_LOWER_BOUND(a, n, , 10), 0);
	assert_int_equal(SEARCH_LOWER_BOUND(a, n, , 31), 5);
	assert_int_equal(SEARCH_LOWER_BOUND(a, 0, , 31), 0);
}

static void bounds_of_a_member(void **state)
{
	(void)state;
	const struct { uint64_t start; const char *name; } syms[] = {
		{ 0x1000, "a" }, { 0x1040, "b" }, { 0x2000, "c" },
	};
	size_t n = ARRAY_SIZE(syms);
	size_t k = SEARCH_UPPER_BOUND(syms, n, .start, 0x1050);
	assert_int_equal(k, 2);
	assert_string_equal(syms[k - 1].name, "b");	/* the last starting at or below */
	/* every element and every gap, against a linear count */
	for (uint64_t key = 0xff0; key < 0x2010; key += 8) {
		size_t le = 0, lt = 0;
		for (size_t i = 0; i < n; i++) {
			le += syms[i].start <= key;
			lt += syms[i].start < key;
		}
		assert_int_equal(SEARCH_UPPER_BOUND(syms, n, .start, key), le);
		assert_int_equal(SEARCH_LOWER_BOUND(syms, n, .start, key), lt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bounds_of_scalars),
		cmocka_unit_test(bounds_of_a_member),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
