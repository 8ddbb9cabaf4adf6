/* core/strmap.h - the one string map: each distinct string gets a dense index (0, 1, 2, ... in
 * the order first seen) that callers use for their parallel arrays (report rows, folded
 * stacks, pprof's string table, the HTML page's names and chains). Keys are C strings or byte
 * strings with a length (which may hold NULs: call chains as uint32 arrays); the map owns
 * copies of its keys, each NUL-terminated and malloc-aligned. Open addressing with linear
 * probing over FNV-1a hashes, kept at most half full, so a lookup is O(1) expected. */
#ifndef SPENT_CORE_STRMAP_H
#define SPENT_CORE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap {
	struct strmap_entry {
		char *key;
		size_t len;	/* bytes, without the NUL added after them */
		uint64_t hash;	/* a rehash reads no key, a probe compares few */
	} *entries;		/* by index */
	size_t n, cap;
	size_t *slots;		/* index + 1; 0 is empty */
	size_t nslots;		/* a power of two, or 0 */
};

#define STRMAP_INIT { 0 }

/* KEY's index, made (with a copy of KEY) when it is new: 1 when new, 0 when it was there,
 * -ENOMEM (the map unchanged). */
int strmap_intern(struct strmap *m, const char *key, size_t *index);

/* The same for the LEN bytes at KEY (a string "ab" and the 2 bytes "ab" are one key). */
int strmap_intern_bytes(struct strmap *m, const void *key, size_t len, size_t *index);

/* KEY's index, or -1 when absent. */
long strmap_find(const struct strmap *m, const char *key);

static inline size_t strmap_count(const struct strmap *m)
{
	return m->n;
}

/* The key of INDEX (< strmap_count), owned by the map. */
static inline const char *strmap_key(const struct strmap *m, size_t index)
{
	return m->entries[index].key;
}

/* The length of the key of INDEX, in bytes. */
static inline size_t strmap_key_len(const struct strmap *m, size_t index)
{
	return m->entries[index].len;
}

/* The keys by index (strmap_count of them), each now the caller's to free, as is the array;
 * M is empty and usable again. NULL (M unchanged) when memory runs out; an empty map gives a
 * valid array to free. For callers that keep the distinct strings after the counting
 * (folded stacks) without copying each one again. */
char **strmap_steal_keys(struct strmap *m);

/* Free every key and the table; M is empty and usable again. */
void strmap_release(struct strmap *m);

#endif
