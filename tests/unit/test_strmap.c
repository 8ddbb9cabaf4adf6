/* tests/unit/test_strmap.c - core/strmap: dense indexes in first-seen order, a found key keeps
 * its index, the map owns copies of its keys, growth past many rehashes keeps every key, and
 * keys that differ only late (or are empty) are distinct, stolen keys outlive the map, and
 * byte keys (with NULs, prefixes, empty) are distinct by length and content. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/strmap.h"

static void indexes_are_dense_in_first_seen_order(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	size_t i;
	assert_int_equal(strmap_find(&m, "main"), -1);	/* empty: no table yet */
	assert_int_equal(strmap_intern(&m, "main", &i), 1);
	assert_int_equal(i, 0);
	assert_int_equal(strmap_intern(&m, "foo", &i), 1);
	assert_int_equal(i, 1);
	assert_int_equal(strmap_intern(&m, "main", &i), 0);
	assert_int_equal(i, 0);
	assert_int_equal(strmap_intern(&m, "", &i), 1);
	assert_int_equal(i, 2);
	assert_int_equal(strmap_count(&m), 3);
	assert_string_equal(strmap_key(&m, 1), "foo");
	assert_int_equal(strmap_find(&m, "foo"), 1);
	assert_int_equal(strmap_find(&m, "fo"), -1);
	assert_int_equal(strmap_find(&m, ""), 2);
	strmap_release(&m);
	assert_int_equal(strmap_count(&m), 0);
	assert_int_equal(strmap_find(&m, "main"), -1);
}

static void the_map_owns_its_keys(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	char buf[32] = "a;b;c";
	size_t i;
	assert_int_equal(strmap_intern(&m, buf, &i), 1);
	strcpy(buf, "changed");
	assert_string_equal(strmap_key(&m, i), "a;b;c");
	assert_int_equal(strmap_find(&m, "a;b;c"), 0);
	assert_int_equal(strmap_find(&m, "changed"), -1);
	strmap_release(&m);
}

static void many_keys_survive_rehashing(void **state)
{
	(void)state;
	enum { N = 50000 };
	struct strmap m = STRMAP_INIT;
	char k[64];
	size_t idx;
	for (int i = 0; i < N; i++) {
		/* a long common prefix: keys differ only at the end */
		snprintf(k, sizeof(k), "main;work;compute;inner_%d", i);
		assert_int_equal(strmap_intern(&m, k, &idx), 1);
		assert_int_equal(idx, (size_t)i);
	}
	assert_int_equal(strmap_count(&m), N);
	assert_true(m.nslots >= 2 * (size_t)N);	/* at most half full */
	for (int i = N - 1; i >= 0; i--) {
		snprintf(k, sizeof(k), "main;work;compute;inner_%d", i);
		assert_int_equal(strmap_find(&m, k), i);
		assert_int_equal(strmap_intern(&m, k, &idx), 0);
		assert_int_equal(idx, (size_t)i);
		assert_string_equal(strmap_key(&m, (size_t)i), k);
	}
	strmap_release(&m);
}

static void stolen_keys_are_the_callers(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	size_t i;
	assert_int_equal(strmap_intern(&m, "b", &i), 1);
	assert_int_equal(strmap_intern(&m, "a", &i), 1);
	assert_int_equal(strmap_intern(&m, "b", &i), 0);
	char **keys = strmap_steal_keys(&m);
	assert_non_null(keys);
	assert_string_equal(keys[0], "b");	/* by index: first seen first */
	assert_string_equal(keys[1], "a");
	assert_int_equal(strmap_count(&m), 0);	/* emptied, and usable again */
	assert_int_equal(strmap_find(&m, "a"), -1);
	assert_int_equal(strmap_intern(&m, "a", &i), 1);
	assert_int_equal(i, 0);
	strmap_release(&m);
	free(keys[0]);	/* ASan: the keys outlive the map, freed once, here */
	free(keys[1]);
	free(keys);
	keys = strmap_steal_keys(&m);	/* empty map: an array to free */
	assert_non_null(keys);
	free(keys);
}

static void byte_keys_may_hold_nuls(void **state)
{
	(void)state;
	struct strmap m = STRMAP_INIT;
	const uint32_t chain_a[] = { 1, 0, 2 }, chain_b[] = { 1, 0, 3 };
	size_t i;
	assert_int_equal(strmap_intern_bytes(&m, chain_a, sizeof(chain_a), &i), 1);
	assert_int_equal(i, 0);
	/* the same up to the first NUL byte, different after: another key */
	assert_int_equal(strmap_intern_bytes(&m, chain_b, sizeof(chain_b), &i), 1);
	assert_int_equal(i, 1);
	assert_int_equal(strmap_intern_bytes(&m, chain_a, sizeof(chain_a), &i), 0);
	assert_int_equal(i, 0);
	/* a prefix is another key too */
	assert_int_equal(strmap_intern_bytes(&m, chain_a, 2 * sizeof(uint32_t), &i), 1);
	assert_int_equal(strmap_key_len(&m, 0), sizeof(chain_a));
	assert_memory_equal(strmap_key(&m, 1), chain_b, sizeof(chain_b));
	/* the empty byte string, and a string given as bytes is the string */
	assert_int_equal(strmap_intern_bytes(&m, "", 0, &i), 1);
	assert_int_equal(strmap_intern(&m, "", &i), 0);
	assert_int_equal(strmap_intern_bytes(&m, "main;x", 4, &i), 1);
	assert_string_equal(strmap_key(&m, i), "main");	/* copies end in a NUL */
	assert_int_equal(strmap_find(&m, "main"), (long)i);
	assert_int_equal(strmap_intern(&m, "main", &i), 0);
	strmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(indexes_are_dense_in_first_seen_order),
		cmocka_unit_test(the_map_owns_its_keys),
		cmocka_unit_test(many_keys_survive_rehashing),
		cmocka_unit_test(stolen_keys_are_the_callers),
		cmocka_unit_test(byte_keys_may_hold_nuls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
