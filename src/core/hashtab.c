/* core/hashtab.c - growth, iteration and release of the fixed-size-key table (core/hashtab.h);
 * lookups and inserts are inline in the header, since the hot loops (cache-line reuse, the
 * decode cache) make one per traced access. */
#include "core/hashtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hashtab_grow(struct hashtab *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	if (t->elem < sizeof(uint64_t))	/* a table not made by HASHTAB_INIT */
		return -EINVAL;
	if (!nslots || nslots > SIZE_MAX / t->elem)
		return -ENOMEM;
	struct hashtab n = { .elem = t->elem, .n = t->n, .nslots = nslots,
			     .shift = (unsigned)__builtin_clzll(nslots) + 1 };
	if (!(n.slots = calloc(nslots, t->elem)))
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		const unsigned char *e = t->slots + i * t->elem;
		if (hashtab_key_(e))
			memcpy(hashtab_probe_(&n, hashtab_key_(e)), e, t->elem);
	}
	free(t->slots);
	*t = n;
	return 0;
}

void *hashtab_next(const struct hashtab *t, size_t *pos)
{
	for (; *pos < t->nslots; ++*pos) {
		unsigned char *e = t->slots + *pos * t->elem;
		if (hashtab_key_(e)) {
			++*pos;
			return e;
		}
	}
	return NULL;
}

void hashtab_release(struct hashtab *t)
{
	free(t->slots);
	*t = (struct hashtab){ .elem = t->elem };
}
