/* core/search.h - the one binary search over sorted arrays (symbols, line rows, inline ranges,
 * JIT maps: "the last entry starting at or below an address"), as two bounds in C++'s sense:
 * how many leading elements sort before KEY. A macro, so that it reads the caller's field of
 * the caller's struct at full speed with no comparison callback. */
#ifndef SPENT_CORE_SEARCH_H
#define SPENT_CORE_SEARCH_H

#include <stddef.h>

/* Steps of both bounds; OP is <= (upper) or < (lower). */
#define SEARCH_BOUND_(a, n, member, key, op) __extension__ ({				\
	size_t search_lo_ = 0, search_hi_ = (n);					\
	while (search_lo_ < search_hi_) {						\
		size_t search_mid_ = search_lo_ + (search_hi_ - search_lo_) / 2;	\
		if ((a)[search_mid_] member op (key))					\
			search_lo_ = search_mid_ + 1;					\
		else									\
			search_hi_ = search_mid_;					\
	}										\
	search_lo_;									\
})

/*
 * The number of elements of A[0..N) (sorted by MEMBER, ascending) whose MEMBER is <= KEY: the
 * entry that applies to KEY, when any, is the one before that index. MEMBER is a field access
 * such as .start (nothing for an array of scalars); KEY is evaluated at each step.
 */
#define SEARCH_UPPER_BOUND(a, n, member, key) SEARCH_BOUND_(a, n, member, key, <=)

/* The number of elements whose MEMBER is < KEY: where KEY is, or would be inserted. */
#define SEARCH_LOWER_BOUND(a, n, member, key) SEARCH_BOUND_(a, n, member, key, <)

#endif
