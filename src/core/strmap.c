/* core/strmap.c - string -> dense index, open addressing (core/strmap.h). */
#include "core/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/binio.h"

/* The slot holding KEY (LEN bytes, HASH), or the empty slot where it would go. */
static size_t slot_of(const struct strmap *m, const void *key, size_t len, uint64_t hash)
{
	size_t mask = m->nslots - 1, j = hash & mask;
	for (; m->slots[j]; j = (j + 1) & mask) {
		const struct strmap_entry *e = &m->entries[m->slots[j] - 1];
		if (e->hash == hash && e->len == len && !memcmp(e->key, key, len))
			break;
	}
	return j;
}

static int rehash(struct strmap *m, size_t nslots)
{
	size_t *s = calloc(nslots, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		size_t j = m->entries[i].hash & (nslots - 1);
		while (s[j])
			j = (j + 1) & (nslots - 1);
		s[j] = i + 1;
	}
	free(m->slots);
	m->slots = s;
	m->nslots = nslots;
	return 0;
}

long strmap_find(const struct strmap *m, const char *key)
{
	if (!m->nslots)
		return -1;
	size_t len = strlen(key);
	size_t j = slot_of(m, key, len, binio_fnv64(BINIO_FNV64_INIT, key, len));
	return m->slots[j] ? (long)(m->slots[j] - 1) : -1;
}

int strmap_intern_bytes(struct strmap *m, const void *key, size_t len, size_t *index)
{
	uint64_t hash = binio_fnv64(BINIO_FNV64_INIT, key, len);
	if ((m->n + 1) * 2 > m->nslots && rehash(m, m->nslots ? m->nslots * 2 : 64))
		return -ENOMEM;
	size_t j = slot_of(m, key, len, hash);
	if (m->slots[j]) {
		*index = m->slots[j] - 1;
		return 0;
	}
	char *copy;
	if (len == SIZE_MAX || ALLOC_GROW(m->entries, m->n + 1, m->cap) || !(copy = malloc(len + 1)))
		return -ENOMEM;
	memcpy(copy, key, len);
	copy[len] = 0;
	m->entries[m->n] = (struct strmap_entry){ copy, len, hash };
	m->slots[j] = m->n + 1;
	*index = m->n++;
	return 1;
}

int strmap_intern(struct strmap *m, const char *key, size_t *index)
{
	return strmap_intern_bytes(m, key, strlen(key), index);
}

char **strmap_steal_keys(struct strmap *m)
{
	char **keys = malloc((m->n ? m->n : 1) * sizeof(*keys));
	if (!keys)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		keys[i] = m->entries[i].key;
	free(m->entries);
	free(m->slots);
	*m = (struct strmap)STRMAP_INIT;
	return keys;
}

void strmap_release(struct strmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->entries[i].key);
	free(m->entries);
	free(m->slots);
	*m = (struct strmap)STRMAP_INIT;
}
