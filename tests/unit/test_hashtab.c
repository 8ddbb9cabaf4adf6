/* tests/unit/test_hashtab.c - core/hashtab: an inserted entry is found again with its value, a
 * second insert of a key finds the first entry, colliding keys (same home slot, wrapping past
 * the last slot) are all kept, growth past many doublings keeps every entry and its value,
 * iteration visits each entry once, and a released table is empty and usable. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/hashtab.h"

struct entry {
	uint64_t key;
	uint32_t value;
	char tag[12];	/* an entry larger than its key: the whole struct moves on growth */
};

static void insert_then_find(void **state)
{
	(void)state;
	struct hashtab t = HASHTAB_INIT(struct entry);
	struct entry *e;
	assert_null(hashtab_find(&t, 42));	/* empty: no slots yet */
	assert_int_equal(hashtab_insert(&t, 42, (void **)&e), 1);
	assert_int_equal(e->key, 42);
	assert_int_equal(e->value, 0);		/* new entries are zeroed but for the key */
	assert_int_equal(e->tag[0], 0);
	e->value = 7;
	strcpy(e->tag, "answer");
	assert_int_equal(hashtab_insert(&t, 42, (void **)&e), 0);
	assert_int_equal(e->value, 7);
	e = hashtab_find(&t, 42);
	assert_non_null(e);
	assert_string_equal(e->tag, "answer");
	assert_null(hashtab_find(&t, 43));
	assert_int_equal(hashtab_count(&t), 1);
	hashtab_release(&t);
	assert_int_equal(hashtab_count(&t), 0);
	assert_null(hashtab_find(&t, 42));
	assert_int_equal(hashtab_insert(&t, 42, (void **)&e), 1);	/* usable again */
	hashtab_release(&t);
}

static void colliding_keys_wrap_around(void **state)
{
	(void)state;
	struct hashtab t = HASHTAB_INIT(struct entry);
	struct entry *e;
	assert_int_equal(hashtab_insert(&t, 1, (void **)&e), 1);	/* makes the 64 slots */
	assert_int_equal(t.nslots, 64);
	/* keys whose probe starts at the last slot: all but one land past the end, in slot 0.. */
	uint64_t keys[8];
	size_t n = 0;
	for (uint64_t k = 2; n < 8; k++)
		if (hashtab_home_(&t, k) == t.nslots - 1)
			keys[n++] = k;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hashtab_insert(&t, keys[i], (void **)&e), 1);
		e->value = (uint32_t)i + 100;
	}
	assert_int_equal(t.nslots, 64);	/* still 64: the collisions were probed, not grown away */
	for (size_t i = 0; i < n; i++) {
		e = hashtab_find(&t, keys[i]);
		assert_non_null(e);
		assert_int_equal(e->value, i + 100);
	}
	/* a key with the same home that was never inserted is absent */
	for (uint64_t k = keys[n - 1] + 1;; k++)
		if (hashtab_home_(&t, k) == t.nslots - 1) {
			assert_null(hashtab_find(&t, k));
			break;
		}
	hashtab_release(&t);
}

static void many_keys_survive_growth_and_iterate_once(void **state)
{
	(void)state;
	enum { N = 100000 };
	struct hashtab t = HASHTAB_INIT(struct entry);
	struct entry *e;
	for (uint64_t i = 1; i <= N; i++) {
		/* keys that differ only in high bits, and sequential ones */
		uint64_t k = i & 1 ? i << 40 : i;
		assert_int_equal(hashtab_insert(&t, k, (void **)&e), 1);
		e->value = (uint32_t)i;
	}
	assert_int_equal(hashtab_count(&t), N);
	assert_true(t.nslots >= 2 * (size_t)N);	/* at most half full */
	for (uint64_t i = N; i >= 1; i--) {
		uint64_t k = i & 1 ? i << 40 : i;
		e = hashtab_find(&t, k);
		assert_non_null(e);
		assert_int_equal(e->value, i);
		assert_int_equal(hashtab_insert(&t, k, (void **)&e), 0);
	}
	unsigned char *seen = calloc(N + 1, 1);
	assert_non_null(seen);
	size_t visited = 0;
	for (size_t pos = 0; (e = hashtab_next(&t, &pos));) {
		assert_true(e->value >= 1 && e->value <= N);
		assert_int_equal(seen[e->value], 0);
		seen[e->value] = 1;
		visited++;
	}
	assert_int_equal(visited, N);
	free(seen);
	hashtab_release(&t);
	size_t pos = 0;
	assert_null(hashtab_next(&t, &pos));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(insert_then_find),
		cmocka_unit_test(colliding_keys_wrap_around),
		cmocka_unit_test(many_keys_survive_growth_and_iterate_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
