/* tests/unit/test_time_window.c - --since/--until points in time (durations back from now,
 * local dates and times, Unix seconds, and what is refused) and --epoch lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "cli/time_window.h"

#define S 1000000000ull
/* 2026-11-23 12:00:00 UTC */
#define NOW (1795435200ull * S)

static uint64_t point(const char *s)
{
	const char *why = NULL;
	uint64_t ns = 0;

	assert_int_equal(time_point_parse(s, NOW, &ns, &why), 0);
	return ns;
}

static void refused(const char *s)
{
	const char *why = NULL;
	uint64_t ns = 0;

	assert_int_equal(time_point_parse(s, NOW, &ns, &why), -EINVAL);
	assert_non_null(why);
}

static void test_durations(void **state)
{
	assert_int_equal(point("90s"), NOW - 90 * S);
	assert_int_equal(point("10m"), NOW - 600 * S);
	assert_int_equal(point("10min"), NOW - 600 * S);
	assert_int_equal(point("2h"), NOW - 7200 * S);
	assert_int_equal(point("1d"), NOW - 86400 * S);
	assert_int_equal(point("1.5h"), NOW - 5400 * S);
	assert_int_equal(point("500ms"), NOW - S / 2);
	assert_int_equal(point("now"), NOW);
	assert_int_equal(point("0s"), NOW);
}

static void test_absolute(void **state)
{
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(point("1795435200"), NOW);
	assert_int_equal(point("@1795435200.5"), NOW + S / 2);
	assert_int_equal(point("2026-11-23 12:00:00"), NOW);
	assert_int_equal(point("2026-11-23T11:59:30"), NOW - 30 * S);
	assert_int_equal(point("2026-11-23 11:00"), NOW - 3600 * S);
	assert_int_equal(point("2026-11-23"), NOW - 12 * 3600 * S);
	assert_int_equal(point("08:30"), NOW - (3 * 3600 + 1800) * S);	/* today */
	assert_int_equal(point("08:30:15"), NOW - (3 * 3600 + 1785) * S);
}

static void test_refused(void **state)
{
	refused("");
	refused("10");		/* a duration without its unit is not 1970 */
	refused("10x");
	refused("-10m");
	refused("m");
	refused("1e3s");
	refused("2026-13-45");
	refused("25:00");
	refused("yesterday");
	refused("100000d");	/* before 1970 */
}

static void test_epoch_sets(void **state)
{
	struct epoch_set set;

	assert_int_equal(epoch_set_parse("3", &set), 0);
	assert_true(epoch_set_has(&set, 3));
	assert_false(epoch_set_has(&set, 2));
	epoch_set_release(&set);
	assert_int_equal(epoch_set_parse("1,4-6", &set), 0);
	assert_true(epoch_set_has(&set, 1) && epoch_set_has(&set, 4) && epoch_set_has(&set, 6));
	assert_false(epoch_set_has(&set, 2) || epoch_set_has(&set, 7));
	epoch_set_release(&set);
	const char *bad[] = { "", "a", "5-3", "1,", ",1", "1,,2", "-1", "1-", "4294967296", "1 2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(epoch_set_parse(bad[i], &set), -EINVAL);
		assert_int_equal(set.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_absolute),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_epoch_sets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
