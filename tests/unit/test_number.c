/* tests/unit/test_number.c - the strict number parser (core/number): exactly the number and
 * its suffix; blanks, signs, garbage, octal surprises and overflow are refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "core/number.h"

static void u64_accepts_digits_hex_and_suffixes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(num_parse_u64("0", NUM_PLAIN, &v), 0);
	assert_true(v == 0);
	assert_int_equal(num_parse_u64("18446744073709551615", NUM_PLAIN, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(num_parse_u64("0x1F", NUM_PLAIN, &v), 0);
	assert_true(v == 31);
	assert_int_equal(num_parse_u64("010", NUM_PLAIN, &v), 0);
	assert_true(v == 10);	/* decimal, never octal */
	assert_int_equal(num_parse_u64("4K", NUM_SI, &v), 0);
	assert_true(v == 4000);
	assert_int_equal(num_parse_u64("2m", NUM_SI, &v), 0);
	assert_true(v == 2000000);
	assert_int_equal(num_parse_u64("32K", NUM_BINARY, &v), 0);
	assert_true(v == 32768);
	assert_int_equal(num_parse_u64("16MB", NUM_BINARY, &v), 0);
	assert_true(v == 16u << 20);
	assert_int_equal(num_parse_u64("1G", NUM_BINARY, &v), 0);
	assert_true(v == 1u << 30);
}

static void u64_refuses_blanks_signs_and_garbage(void **state)
{
	(void)state;
	const char *bad[] = { "", " 1", "1 ", " -1", "-1", "+1", "1x", "abc", "0x", "0xg", "1.5",
			      "1e3", "\t2", "1\n", "K", "1KK", "1KB" };
	uint64_t v = 77;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = num_parse_u64(bad[i], NUM_SI, &v);
		if (e != -EINVAL)
			fail_msg("'%s' gave %d, not -EINVAL", bad[i], e);
	}
	assert_true(v == 77);	/* never written on failure */
	assert_int_equal(num_parse_u64("4K", NUM_PLAIN, &v), -EINVAL);
	assert_int_equal(num_parse_u64(NULL, NUM_PLAIN, &v), -EINVAL);
}

static void u64_detects_overflow(void **state)
{
	(void)state;
	uint64_t v = 5;
	assert_int_equal(num_parse_u64("18446744073709551616", NUM_PLAIN, &v), -ERANGE);
	assert_int_equal(num_parse_u64("99999999999999999999999", NUM_PLAIN, &v), -ERANGE);
	assert_int_equal(num_parse_u64("0x10000000000000000", NUM_PLAIN, &v), -ERANGE);
	assert_int_equal(num_parse_u64("18446744073709552K", NUM_SI, &v), -ERANGE);
	assert_int_equal(num_parse_u64("17179869184G", NUM_BINARY, &v), -ERANGE);
	assert_true(v == 5);
}

static void range_bounds(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(num_parse_range("10", 10, 20, &v), 0);
	assert_true(v == 10);
	assert_int_equal(num_parse_range("20", 10, 20, &v), 0);
	assert_int_equal(num_parse_range("9", 10, 20, &v), -ERANGE);
	assert_int_equal(num_parse_range("21", 10, 20, &v), -ERANGE);
	assert_int_equal(num_parse_range("-5", 0, 20, &v), -EINVAL);
}

static void doubles_strict(void **state)
{
	(void)state;
	double d;
	assert_int_equal(num_parse_double("2.5", &d), 0);
	assert_true(d == 2.5);
	assert_int_equal(num_parse_double(".5", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(num_parse_double("3.", &d), 0);
	assert_true(d == 3.0);
	assert_int_equal(num_parse_double("1e3", &d), 0);
	assert_true(d == 1000.0);
	assert_int_equal(num_parse_double("1e-400", &d), 0);	/* rounds to 0 */
	const char *bad[] = { "", " 1", "1 ", "-1", "+1", "nan", "inf", "0x10", ".", "e5", "1e",
			      "1e+", "1,5", "1.5x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (num_parse_double(bad[i], &d) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
	assert_int_equal(num_parse_double("1e999", &d), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(u64_accepts_digits_hex_and_suffixes),
		cmocka_unit_test(u64_refuses_blanks_signs_and_garbage),
		cmocka_unit_test(u64_detects_overflow),
		cmocka_unit_test(range_bounds),
		cmocka_unit_test(doubles_strict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
