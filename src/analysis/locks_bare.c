/* analysis/locks_bare.c - locks found by their atomics alone, outside the pthread calls: glibc's
 * own lock (lll_lock: a cmpxchg takes it, an xchg releases it, __lll_lock_wait_private waits
 * for it) and bare spin locks (a lock-prefixed read-modify-write of a 1-4 byte word, then the
 * same thread's plain store of it). Each thread keeps a few open tries (struct atomic_try)
 * until their release shows which were locks. */
#include "analysis/locks_int.h"

/* The last attempt of try A took the lock; the thread releases it now. HOW: "atomic" (released
 * by a plain store) or "glibc_lock" (by an xchg). */
static void bare_release(struct locks *lk, struct thread_state *t, struct atomic_try *a,
			 const char *how)
{
	uint64_t now = lk->now;
	/* retries are contention only when another thread held it meanwhile (else they are this
	 * thread's own read-modify-writes, say a counter), or when it waited in glibc's lock wait */
	struct lock_rec *l = locks_rec_get(lk, t, a->addr, how);
	bool contended = a->waited || (a->tries > 1 && l && l->s.acquisitions &&
				       l->last_holder != t->tid && l->last_release >= a->first);
	lk->now = a->last;
	locks_acquired(lk, t, a->addr, how, a->first, contended, 0);
	lk->now = now;
	locks_released(lk, t, a->addr);
	a->tries = 0;
}

void locks_bare_ref(struct locks *lk, struct thread_state *t, const struct spent_trace_ref *r,
		    uint16_t flags)
{
	bool locked = flags & SPENT_TRACE_INSN_LOCKED;
	if (r->kind == SPENT_TRACE_REF_READ)
		return;
	struct atomic_try *a = locks_find_try(t, r, false);
	if (a) {
		if (r->addr != a->addr || r->size != a->size) {
			/* a write over part of the word or beyond it: no lock's release but its
			 * memory reused (a counter's object freed; malloc writes its 8-byte list
			 * pointers there: ld showed "holds" of 18 M instructions on refcounts) */
			a->tries = 0;
			return;
		}
		if (locked && (flags & SPENT_TRACE_INSN_EXCHANGE) && a->by_cas) {
			/* glibc's own lock (lll_lock: malloc's arenas, stdio's streams) is taken by a
			 * cmpxchg and released by an xchg; a spin lock taken by xchg retries by xchg */
			bare_release(lk, t, a, "glibc_lock");
		} else if (locked) {	/* another attempt: spinning */
			a->tries++;
			a->last = lk->now;
		} else {	/* release store: the last attempt acquired it */
			bare_release(lk, t, a, "atomic");
		}
		return;
	}
	/* a lock word is 1-4 bytes (an int, a flag); an 8-byte exchange is a pointer's: a
	 * lock-free list emptied by an xchg and pushed with a plain store (glibc's fastbins,
	 * consolidated by malloc and refilled by free while single-threaded: 286 "acquisitions"
	 * held up to 1 M instructions in cc1plus) */
	if (!locked || r->size > 4)
		return;
	/* a free slot, else the oldest try, one begun by a cmpxchg last: that may be glibc's lock
	 * held across a barrier's or a counter's atomics (a stdio lock held over a
	 * pthread_barrier_wait lost its hold) */
	uint32_t slot = 0;
	for (uint32_t i = 0; i < MAX_ATOMIC; i++) {
		const struct atomic_try *x = &t->tries[i], *y = &t->tries[slot];
		if (!x->tries) {
			slot = i;
			break;
		}
		if (x->by_cas != y->by_cas ? !x->by_cas : x->last < y->last)
			slot = i;
	}
	t->tries[slot] = (struct atomic_try){ r->addr, lk->now, lk->now, 1, r->size,
					      .by_cas = (flags & SPENT_TRACE_INSN_CMPXCHG) != 0 };
}

void locks_lll_wait_refs(struct locks *lk, struct thread_state *t, const struct spent_trace_batch *b,
			 const struct spent_trace_insn *in)
{
	if (!(in->flags & SPENT_TRACE_INSN_LOCKED))
		return;
	for (uint32_t k = 0; k < in->nrefs; k++) {
		const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
		if (r->kind == SPENT_TRACE_REF_READ || r->size > 4)
			continue;
		struct atomic_try *a = locks_find_try(t, r, true);
		if (!a) {	/* its cmpxchg was not seen: the wait's first xchg is the try */
			locks_bare_ref(lk, t, r, SPENT_TRACE_INSN_LOCKED | SPENT_TRACE_INSN_CMPXCHG);
			continue;
		}
		a->tries++;
		a->last = lk->now;
		a->waited = true;
	}
}

void locks_forget_counter_tries(struct thread_state *t)
{
	for (uint32_t i = 0; i < MAX_ATOMIC; i++)
		if (!t->tries[i].by_cas)
			t->tries[i].tries = 0;
}
