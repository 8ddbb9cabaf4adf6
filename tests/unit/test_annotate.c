/* tests/unit/test_annotate.c - analysis/annotate on functions of this very test binary: one
 * over 1 MiB (annotated; it was refused with ENOMEM) and a symbol whose size claims more
 * than annotate decodes (refused, saying why). */
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

#include "analysis/annotate.h"
#include "core/procmaps.h"
#include "core/symbols.h"
#include "profile_test_util.h"

/* big_unit_fn: 1.1 MB of nop then ret; huge_unit_fn: one ret whose symbol says 80 MiB, as a
 * corrupt symbol table may */
__asm__(".text\n.globl big_unit_fn\n.type big_unit_fn,@function\nbig_unit_fn:\n"
	".fill 1100000,1,0x90\nret\n.size big_unit_fn,.-big_unit_fn\n"
	".globl huge_unit_fn\n.type huge_unit_fn,@function\nhuge_unit_fn:\nret\n"
	".size huge_unit_fn,80*1024*1024\n");

/* annotate_function of NAME in a profile of this binary (no samples): its result; *A and *WHY
 * as it left them. */
static int annotate_self(const char *name, struct annotate **a, const char **why)
{
	struct spent_profile_image im = self_image();
	struct spent_profile *p = spent_profile_new();
	struct symbols *sym;
	uint32_t img, ev;
	long unreadable;
	assert_non_null(p);
	assert_int_equal(spent_profile_image_intern(p, &im, &img), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000003, 0, &ev), 0);
	assert_int_equal(symbols_new(&sym), 0);
	*a = NULL;
	int rc = annotate_function(p, sym, name, &ev, 1, a, why, &unreadable);
	symbols_free(sym);
	spent_profile_free(p);
	return rc;
}

static void function_over_one_mib_is_annotated(void **state)
{
	(void)state;
	struct annotate *a;
	const char *why;
	assert_int_equal(annotate_self("big_unit_fn", &a, &why), 0);
	assert_int_equal(a->size, 1100001);
	assert_int_equal(a->ninsns, 1100001);
	annotate_free(a);
}

static void function_over_the_cap_says_so(void **state)
{
	(void)state;
	struct annotate *a;
	const char *why = NULL;
	assert_int_equal(annotate_self("huge_unit_fn", &a, &why), -EFBIG);
	assert_null(a);
	assert_non_null(why);
	assert_non_null(strstr(why, "64 MiB"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(function_over_one_mib_is_annotated),
		cmocka_unit_test(function_over_the_cap_says_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
