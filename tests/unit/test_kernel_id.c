/* tests/unit/test_kernel_id.c - the daemon's kernel identity (core/kernel_id.c): build-id plus
 * the boot's _text address, the kallsyms-HEX file name it gives, which names are such files,
 * the label reports show, and finding _text in /proc/kallsyms lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/kernel_id.h"

static void identity_and_names(void **state)
{
	struct spent_profile_image k = { .path = "[kernel.kallsyms]", .id_kind = SPENT_PROFILE_ID_BUILDID,
					 .id_len = 20 };
	char name[128], label[64], hex[80];
	memset(k.id, 0xab, 20);
	k.id[0] = 0x12;
	assert_int_equal(kernel_id_add_text(&k, 0xffffffff9a200000ull), 0);
	assert_int_equal(k.id_len, 28);
	assert_int_equal(kernel_id_kallsyms_name(&k, name, sizeof(name)), 0);
	assert_string_equal(name, "kallsyms-12abababababababababababababababababababffffffff9a200000");
	assert_true(kernel_id_is_kallsyms_name(name));
	kernel_id_hex(&k, hex, sizeof(hex));
	assert_string_equal(hex, name + strlen(KERNEL_KALLSYMS_PREFIX));
	kernel_id_label(&k, label, sizeof(label));
	assert_string_equal(label, "[kernel.kallsyms:12ababab..9a200000]");
	assert_int_equal(kernel_id_kallsyms_name(&k, name, 20), -ENAMETOOLONG);
	/* no room for another 8 bytes, no build-id, no address: refused */
	assert_int_equal(kernel_id_add_text(&k, 1), -EINVAL);
	struct spent_profile_image none = { .path = "[kernel.kallsyms]" };
	assert_int_equal(kernel_id_add_text(&none, 0xffffffff81000000ull), -EINVAL);
	assert_int_equal(kernel_id_kallsyms_name(&none, name, sizeof(name)), -EINVAL);
	kernel_id_label(&none, label, sizeof(label));
	assert_string_equal(label, "[kernel.kallsyms]");
	k.id_len = 20;
	assert_int_equal(kernel_id_add_text(&k, 0), -EINVAL);
}

static void kallsyms_names(void **state)
{
	assert_true(kernel_id_is_kallsyms_name("kallsyms-00ff"));
	assert_false(kernel_id_is_kallsyms_name("kallsyms"));
	assert_false(kernel_id_is_kallsyms_name("kallsyms-"));
	assert_false(kernel_id_is_kallsyms_name("kallsyms-0ff"));	/* odd: not bytes */
	assert_false(kernel_id_is_kallsyms_name("kallsyms-00FF"));
	assert_false(kernel_id_is_kallsyms_name("kallsyms-00ff.tmp.1.abc"));
	char longest[9 + 2 * SPENT_PROFILE_ID_MAX + 3];
	memset(longest, '0', sizeof(longest) - 1);
	memcpy(longest, "kallsyms-", 9);
	longest[9 + 2 * SPENT_PROFILE_ID_MAX] = 0;
	assert_true(kernel_id_is_kallsyms_name(longest));
	longest[9 + 2 * SPENT_PROFILE_ID_MAX] = '0';
	longest[9 + 2 * SPENT_PROFILE_ID_MAX + 1] = '0';
	longest[9 + 2 * SPENT_PROFILE_ID_MAX + 2] = 0;
	assert_false(kernel_id_is_kallsyms_name(longest));
}

static void text_address(void **state)
{
	assert_true(kernel_id_text_address("ffffffff9a200000 T _text\n") == 0xffffffff9a200000ull);
	assert_true(kernel_id_text_address("ffffffff9a200000 t _text") == 0xffffffff9a200000ull);
	assert_true(kernel_id_text_address("ffffffff9a201000 T _stext\n") == 0);
	assert_true(kernel_id_text_address("ffffffff9a200000 T _text_end\n") == 0);
	assert_true(kernel_id_text_address("ffffffff9a200000 D _text\n") == 0);
	assert_true(kernel_id_text_address("0000000000000000 T _text\n") == 0);	/* kptr_restrict */
	assert_true(kernel_id_text_address("1ffffffff9a200000 T _text\n") == 0);	/* 17 digits */
	assert_true(kernel_id_text_address(" T _text\n") == 0);
	assert_true(kernel_id_text_address("ffffffff9a200000 ") == 0);
	assert_true(kernel_id_text_address("") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identity_and_names),
		cmocka_unit_test(kallsyms_names),
		cmocka_unit_test(text_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
