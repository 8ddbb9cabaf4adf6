/* core/strmap.c - string -> dense index, open addressing (core/strmap.h). */
#include "core/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/binio.h"

static uint64_t key_hash(const char *s)
{
	return binio_fnv64(BINIO_FNV64_INIT, s, strlen(s));
}

/* The slot holding KEY (HASH), or the empty slot where it would go. */
static size_t slot_of(const struct strmap *m, const char *key, uint64_t hash)
{
	size_t mask = m->nslots - 1, j = hash & mask;
	for (; m->slots[j]; j = (j + 1) & mask) {
		size_t i = m->slots[j] - 1;
		if (m->entries[i].hash == hash && !strcmp(m->entries[i].key, key))
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
	size_t j = slot_of(m, key, key_hash(key));
	return m->slots[j] ? (long)(m->slots[j] - 1) : -1;
}

int strmap_intern(struct strmap *m, const char *key, size_t *index)
{
	uint64_t hash = key_hash(key);
	if ((m->n + 1) * 2 > m->nslots && rehash(m, m->nslots ? m->nslots * 2 : 64))
		return -ENOMEM;
	size_t j = slot_of(m, key, hash);
	if (m->slots[j]) {
		*index = m->slots[j] - 1;
		return 0;
	}
	char *copy;
	if (ALLOC_GROW(m->entries, m->n + 1, m->cap) || !(copy = strdup(key)))
		return -ENOMEM;
	m->entries[m->n] = (struct strmap_entry){ copy, hash };
	m->slots[j] = m->n + 1;
	*index = m->n++;
	return 1;
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
