/* core/alloc.c - growing heap arrays without overflow (core/alloc.h). */
#include "core/alloc.h"

#include <stdint.h>
#include <stdlib.h>

void *alloc_grow_array(void *p, size_t elem, size_t need, size_t *cap)
{
	size_t n = *cap ? *cap : 8;
	n = n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
	if (n < need)
		n = need;
	if (elem && n > SIZE_MAX / elem) {
		if (need > SIZE_MAX / elem)
			return NULL;
		n = SIZE_MAX / elem;
	}
	void *q = realloc(p, n * elem);
	if (q)
		*cap = n;
	return q;
}
