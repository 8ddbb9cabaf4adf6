/* core/hashtab.h - the one table for fixed-size keys: entries of the caller's struct, kept in
 * the table's slots (no separate allocation per entry), found by a uint64_t key that is the
 * struct's first member. Open addressing with linear probing; a key of 0 marks an empty slot,
 * so callers with a key that can be 0 store it + 1. The slot is picked by the top bits of a
 * Fibonacci multiply (keys that differ only in high or only in low bits still spread), and the
 * table doubles before it is more than half full, so a probe is O(1) expected. No removal:
 * its users (thread names, decoded instructions, cache lines) only ever add.
 * core/strmap.h is the map for string keys. */
#ifndef SPENT_CORE_HASHTAB_H
#define SPENT_CORE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

struct hashtab {
	unsigned char *slots;	/* nslots entries of elem bytes */
	size_t elem;		/* the entry's size; its first 8 bytes are the key */
	size_t n;		/* entries held */
	size_t nslots;		/* a power of two, or 0 before the first insert */
	unsigned shift;		/* 64 - log2(nslots) */
};

/* An empty table of entries of TYPE (a struct whose first member is the uint64_t key). */
#define HASHTAB_INIT(type) { .elem = sizeof(type) }

static inline uint64_t hashtab_key_(const unsigned char *entry)
{
	uint64_t k;
	__builtin_memcpy(&k, entry, sizeof(k));
	return k;
}

/* The slot KEY's probe starts from. */
static inline size_t hashtab_home_(const struct hashtab *t, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> t->shift);
}

/* The slot holding KEY, or the empty slot where it would go (the table not empty). */
static inline unsigned char *hashtab_probe_(const struct hashtab *t, uint64_t key)
{
	size_t mask = t->nslots - 1;
	for (size_t j = hashtab_home_(t, key);; j = (j + 1) & mask) {
		unsigned char *e = t->slots + j * t->elem;
		uint64_t k = hashtab_key_(e);
		if (k == key || !k)
			return e;
	}
}

/* The entry of KEY (not 0), or NULL. Valid until the next insert. */
static inline void *hashtab_find(const struct hashtab *t, uint64_t key)
{
	if (!t->nslots)
		return NULL;
	unsigned char *e = hashtab_probe_(t, key);
	return hashtab_key_(e) ? e : NULL;
}

/* Double the slots (to 64 at first): 0 or -ENOMEM, the table unchanged. */
int hashtab_grow(struct hashtab *t);

/*
 * The entry of KEY (not 0) in *ENTRY, made when new: 1 when new (every byte 0 but the key),
 * 0 when it was there, -ENOMEM (the table unchanged; -EINVAL for a table HASHTAB_INIT did not
 * make). *ENTRY is valid until the next insert.
 */
static inline int hashtab_insert(struct hashtab *t, uint64_t key, void **entry)
{
	if ((t->n + 1) * 2 > t->nslots) {
		int err = hashtab_grow(t);
		if (err) {
			*entry = NULL;
			return err;
		}
	}
	unsigned char *e = hashtab_probe_(t, key);
	*entry = e;
	if (hashtab_key_(e))
		return 0;
	__builtin_memcpy(e, &key, sizeof(key));
	t->n++;
	return 1;
}

static inline size_t hashtab_count(const struct hashtab *t)
{
	return t->n;
}

/* Every entry once, in no particular order: for (size_t pos = 0; (e = hashtab_next(t, &pos));)
 * POS starts at 0; NULL when there is none left. No insert while iterating. */
void *hashtab_next(const struct hashtab *t, size_t *pos);

/* Free the slots; T is empty and usable again (same entry size). */
void hashtab_release(struct hashtab *t);

#endif
