/* tests/unit/test_text.c - untrusted text for a terminal and for XML (core/text): printable
 * names pass untouched, control characters and bytes that are not UTF-8 never reach either,
 * and a cut copy never ends inside an escape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/binio.h"
#include "core/text.h"

static void printable_text_is_shown_as_it_is(void **state)
{
	(void)state;
	char buf[64];
	const char *names[] = { "gzip", "/usr/bin/python3 -c print(1)", "caf\xc3\xa9", "\xe2\x82\xac 5",
				"\xf0\x9f\x98\x80", "a\\b ~", "" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_ptr_equal(text_for_terminal(names[i], buf, sizeof(buf)), names[i]);
	assert_string_equal(text_for_terminal(NULL, buf, sizeof(buf)), "");
}

static void control_characters_are_escaped(void **state)
{
	(void)state;
	char buf[128];
	assert_string_equal(text_for_terminal("-c \nimport os\n\tprint(1)\r", buf, sizeof(buf)),
			    "-c \\nimport os\\n\\tprint(1)\\r");
	/* an escape sequence that would recolour the terminal, DEL, a C1 control (U+009B, CSI
	 * to some terminals) */
	assert_string_equal(text_for_terminal("work\x1b[31mRED", buf, sizeof(buf)), "work\\x1b[31mRED");
	assert_string_equal(text_for_terminal("a\x7f" "b", buf, sizeof(buf)), "a\\x7fb");
	assert_string_equal(text_for_terminal("a\xc2\x9b" "1m", buf, sizeof(buf)), "a\\xc2\\x9b1m");
	/* U+00A0 and above are text */
	assert_string_equal(text_for_terminal("\xc2\xa0\n", buf, sizeof(buf)), "\xc2\xa0\\n");
}

static void bytes_that_are_not_utf8_are_escaped(void **state)
{
	(void)state;
	char buf[128];
	assert_string_equal(text_for_terminal("caf\xe9", buf, sizeof(buf)), "caf\\xe9");	/* Latin-1 */
	assert_string_equal(text_for_terminal("\xc0\xaf", buf, sizeof(buf)), "\\xc0\\xaf");	/* overlong '/' */
	assert_string_equal(text_for_terminal("\xed\xa0\x80", buf, sizeof(buf)), "\\xed\\xa0\\x80");	/* surrogate */
	assert_string_equal(text_for_terminal("\xe2\x82", buf, sizeof(buf)), "\\xe2\\x82");	/* cut short */
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);	/* > U+10FFFF */
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xf4\x8f\xbf\xbf", 4), 4);
}

static void a_cut_copy_ends_between_characters(void **state)
{
	(void)state;
	char buf[8];
	/* 7 bytes of room: "ab" and "\n" fit, then "c" */
	assert_string_equal(text_for_terminal("ab\ncdef", buf, sizeof(buf)), "ab\\ncde");
	/* the escape of ESC does not fit after "abcd": not half of it */
	assert_string_equal(text_for_terminal("abcd\x1b", buf, sizeof(buf)), "abcd");
	/* nor half of a UTF-8 character */
	assert_string_equal(text_for_terminal("\n\n\n\xc3\xa9", buf, sizeof(buf)), "\\n\\n\\n");
	char one[1];
	assert_string_equal(text_for_terminal("\n", one, sizeof(one)), "");
	assert_string_equal(text_for_terminal("\n", NULL, 0), "");
}

static void xml_text_is_well_formed(void **state)
{
	(void)state;
	struct binbuf b;
	binbuf_init(&b);
	assert_int_equal(text_xml_append(&b, "<a & \"b\">"), 0);
	assert_int_equal(text_xml_append(&b, "|x\x1b[31my\x01|"), 0);	/* control characters dropped */
	assert_int_equal(text_xml_append(&b, "\t\n|"), 0);		/* whitespace as spaces */
	assert_int_equal(text_xml_append(&b, "caf\xe9|caf\xc3\xa9"), 0);	/* not UTF-8: U+FFFD */
	assert_int_equal(text_xml_append(&b, NULL), 0);
	assert_int_equal(binbuf_put_u8(&b, 0), 0);
	assert_string_equal((const char *)b.data,
			    "&lt;a &amp; &quot;b&quot;&gt;|x[31my|  |caf\xef\xbf\xbd|caf\xc3\xa9");
	binbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(printable_text_is_shown_as_it_is),
		cmocka_unit_test(control_characters_are_escaped),
		cmocka_unit_test(bytes_that_are_not_utf8_are_escaped),
		cmocka_unit_test(a_cut_copy_ends_between_characters),
		cmocka_unit_test(xml_text_is_well_formed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
