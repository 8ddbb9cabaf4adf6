/* core/alloc.h - the two array idioms every file needs (as git's ARRAY_SIZE and ALLOC_GROW):
 * the element count of an array (a compile error when given a pointer), and growing a
 * heap array to hold N elements, doubling, with the size computation checked for overflow and
 * the array left as it was when memory runs out. */
#ifndef SPENT_CORE_ALLOC_H
#define SPENT_CORE_ALLOC_H

#include <errno.h>
#include <stddef.h>

/* 0 for an array; a negative bit-field width, so an error, for a pointer */
#define ALLOC_MUST_BE_ARRAY_(a) \
	(sizeof(struct { int must_be_array : __builtin_types_compatible_p(__typeof__(a), \
				__typeof__(&(a)[0])) ? -1 : 1; }) * 0)

/* The number of elements of the array A (never a pointer: that does not compile). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]) + ALLOC_MUST_BE_ARRAY_(a))

/*
 * P, an array of ELEM-byte elements with room for *CAP, reallocated to hold at least NEED:
 * the larger of NEED and twice *CAP (16 at first). The new array, with *CAP updated; NULL when
 * the size overflows or memory runs out, with P and *CAP untouched (P still to be freed).
 */
void *alloc_grow_array(void *p, size_t elem, size_t need, size_t *cap);

/*
 * Make the array P (a pointer variable) hold at least NEED elements, CAP being the size_t
 * variable that counts its room: 0, or -ENOMEM with P and CAP as they were. The usual step
 * before appending: if (ALLOC_GROW(v, n + 1, cap)) return -ENOMEM; v[n++] = x;
 */
#define ALLOC_GROW(p, need, cap) __extension__ ({					\
	size_t *alloc_cap_ = &(cap);	/* CAP must be a size_t */			\
	size_t alloc_need_ = (need);							\
	int alloc_err_ = 0;								\
	if (alloc_need_ > *alloc_cap_) {						\
		void *alloc_new_ = alloc_grow_array((p), sizeof(*(p)), alloc_need_,	\
						    alloc_cap_);			\
		if (alloc_new_)								\
			(p) = alloc_new_;						\
		else									\
			alloc_err_ = -ENOMEM;						\
	}										\
	alloc_err_;									\
})

#endif
