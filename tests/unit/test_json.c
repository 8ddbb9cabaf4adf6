/* tests/unit/test_json.c - the one JSON writer (core/json): commas and nesting, RFC 8259
 * string escapes (quotes, backslashes, every control character), invalid UTF-8 replaced by
 * U+FFFD while valid multi-byte sequences pass, numbers that are always valid JSON. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/json.h"

struct capture {
	char *buf;
	size_t len;
	FILE *f;
	struct json_writer w;
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	json_init(&c->w, c->f);
}

/* Close the stream and compare what was written with WANT. */
static void cap_check(struct capture *c, const char *want)
{
	assert_int_equal(fclose(c->f), 0);
	assert_string_equal(c->buf, want);
	free(c->buf);
}

static void string_of(const char *s, size_t n, const char *want)
{
	struct capture c;
	cap_open(&c);
	json_strn(&c.w, s, n);
	cap_check(&c, want);
}

static void objects_arrays_and_commas(void **state)
{
	(void)state;
	struct capture c;
	cap_open(&c);
	json_object_begin(&c.w);
	json_kstr(&c.w, "a", "x");
	json_ku64(&c.w, "b", UINT64_MAX);
	json_ki64(&c.w, "c", INT64_MIN);
	json_key(&c.w, "d");
	json_array_begin(&c.w);
	json_u64(&c.w, 1);
	json_object_begin(&c.w);
	json_object_end(&c.w);
	json_array_begin(&c.w);
	json_array_end(&c.w);
	json_null(&c.w);
	json_array_end(&c.w);
	json_kbool(&c.w, "e", true);
	json_kbool(&c.w, "f", false);
	json_knull(&c.w, "g");
	json_kstr(&c.w, "h", NULL);
	json_khex(&c.w, "i", 0xffffffff81000000ull);
	json_object_end(&c.w);
	json_newline(&c.w);
	/* a second line starts without a comma */
	json_object_begin(&c.w);
	json_ku64(&c.w, "n", 2);
	json_object_end(&c.w);
	json_newline(&c.w);
	cap_check(&c, "{\"a\":\"x\",\"b\":18446744073709551615,\"c\":-9223372036854775808,"
		       "\"d\":[1,{},[],null],\"e\":true,\"f\":false,\"g\":null,\"h\":null,"
		       "\"i\":\"0xffffffff81000000\"}\n{\"n\":2}\n");
}

static void quotes_backslashes_and_controls(void **state)
{
	(void)state;
	string_of("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"");
	string_of("\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"");
	/* every other control character as \u00XX, NUL included when the length says so */
	string_of("\x01\x1f\x00z", 4, "\"\\u0001\\u001f\\u0000z\"");
	string_of("\x7f~", 2, "\"\x7f~\"");	/* DEL needs no escape in JSON */
	/* keys are escaped the same way */
	struct capture c;
	cap_open(&c);
	json_object_begin(&c.w);
	json_kstr(&c.w, "k\"\n", "v");
	json_object_end(&c.w);
	cap_check(&c, "{\"k\\\"\\n\":\"v\"}");
}

static void utf8_valid_passes_invalid_replaced(void **state)
{
	(void)state;
	/* 2, 3 and 4-byte sequences: é, €, U+10FFFF, 😀 */
	string_of("\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80", 13,
		  "\"\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80\"");
	/* a lone continuation byte, a truncated sequence at the end, 0xff */
	string_of("a\x80" "b", 3, "\"a\\ufffdb\"");
	string_of("a\xe2\x82", 3, "\"a\\ufffd\\ufffd\"");
	string_of("\xff", 1, "\"\\ufffd\"");
	/* overlong forms (C0 80 = NUL, E0 80 80), a surrogate (ED A0 80), above U+10FFFF */
	string_of("\xc0\x80", 2, "\"\\ufffd\\ufffd\"");
	string_of("\xe0\x80\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	string_of("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	string_of("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* a broken sequence does not swallow the ASCII after it */
	string_of("\xe2\x82\"", 3, "\"\\ufffd\\ufffd\\\"\"");
}

static void numbers_are_valid_json(void **state)
{
	(void)state;
	struct capture c;
	cap_open(&c);
	json_array_begin(&c.w);
	json_double(&c.w, 1.5, 2);
	json_double(&c.w, NAN, 2);
	json_double(&c.w, INFINITY, 2);
	json_double_sig(&c.w, -INFINITY, 6);
	json_double_sig(&c.w, 1234567.0, 3);
	json_i64(&c.w, -3);
	json_array_end(&c.w);
	cap_check(&c, "[1.50,null,null,null,1.23e+06,-3]");
}

static void literals_are_checked(void **state)
{
	(void)state;
	const char *ok[] = { "0", "-1", "12.5", "1e9", "-0.5E-3", "true", "false", "null" };
	const char *bad[] = { "", "01", "1.", ".5", "+1", "1e", "nan", "inf", "0x10", "tru",
			      "1 ", "\"s\"", "1,2" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct capture c;
		cap_open(&c);
		json_literal(&c.w, ok[i]);
		cap_check(&c, ok[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct capture c;
		cap_open(&c);
		json_literal(&c.w, bad[i]);
		cap_check(&c, "null");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(objects_arrays_and_commas),
		cmocka_unit_test(quotes_backslashes_and_controls),
		cmocka_unit_test(utf8_valid_passes_invalid_replaced),
		cmocka_unit_test(numbers_are_valid_json),
		cmocka_unit_test(literals_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
