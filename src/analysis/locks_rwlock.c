/* analysis/locks_rwlock.c - read-write locks in the lock model: the pthread_rwlock_* calls
 * (analysis/locks.c finds them by their entry points and returns) as acquisitions by readers,
 * which hold the lock together, and by writers, who hold it alone. What each call did is read
 * from its memory references, as glibc 2.36 lays out a pthread_rwlock_t on x86-64: the
 * readers word (__readers, offset 0) is the first word any lock call changes atomically, the
 * futex words follow (__wrphase_futex 8, __writers_futex 12), and a writer that got the lock
 * stores its tid into __cur_writer (offset 24) last. No values are in a trace, so a failed
 * call is known by what it did not do:
 *   - a read lock is had when the call changed the readers word, unless it changed that word
 *     again after a futex wait in it timed out (tryrdlock's EBUSY changes nothing; rdlock's
 *     EDEADLK, the caller being the writer, changes nothing; timedrdlock's ETIMEDOUT takes
 *     the registration back with a compare-and-swap of the readers word, but when a read
 *     phase began as the wait timed out, glibc keeps the lock and returns 0: no write. A
 *     compare-and-swap that fails because that read phase begins during it still reads as
 *     the take-back: without values the two look alike);
 *   - a write lock is had when the call stored __cur_writer (trywrlock's EBUSY and a timed-out
 *     timedwrlock do not).
 * A reader that takes the lock again while holding it (glibc allows that) makes no new
 * acquisition: the hold runs to its outer unlock, as a recursive mutex's does. */
#include <errno.h>

#include "analysis/locks_int.h"

#define RWLOCK_STATE_BYTES 16	/* __readers, __writers, the two futex words */
#define RWLOCK_CUR_WRITER 24
#define RWLOCK_NAMING_BYTES 32	/* an unlock writes __cur_writer (24) before the readers word */

void rwlock_call_refs(struct locks *lk, struct thread_state *t, const struct spent_trace_batch *b,
		      const struct spent_trace_insn *in, bool locked)
{
	uint64_t addr;
	if (t->in_call != R_RW_UNLOCK && locks_insn_rmw(b, in, locked, lk->flags_seen, &addr)) {
		t->atomics++;
		if (!t->lock_addr)
			t->lock_addr = addr;
		else if (t->in_call == R_RW_RDLOCK && t->timed_out && addr == t->lock_addr)
			t->unregistered = true;
	}
	for (uint32_t k = 0; k < in->nrefs; k++) {
		const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
		if (r->kind == SPENT_TRACE_REF_READ)
			continue;
		if (t->in_call == R_RW_UNLOCK) {
			if (!t->lock_addr)
				t->lock_addr = locks_held_written(t, r->addr, RWLOCK_NAMING_BYTES, true);
			/* released when the readers word changes (a writer's unlock first clears
			 * __cur_writer and the writers' futex word) */
			if (t->lock_addr && r->addr == t->lock_addr)
				t->at = lk->now;
			continue;
		}
		if (!t->lock_addr)
			continue;
		if (t->in_call == R_RW_RDLOCK && r->addr - t->lock_addr < RWLOCK_STATE_BYTES)
			t->at = lk->now;	/* a reader is in once its last change is made */
		if (t->in_call == R_RW_WRLOCK && r->addr == t->lock_addr + RWLOCK_CUR_WRITER) {
			t->owner_write = true;	/* the writer's tid: it has the lock */
			t->at = lk->now;
		}
	}
}

/* A futex wait inside a read-write lock call (on one of its futex words). */
void rwlock_futex_wait(struct locks *lk, struct thread_state *t, int64_t ret)
{
	if (t->in_call == R_RW_UNLOCK)
		return;
	t->waited = true;
	if (ret == -ETIMEDOUT)
		t->timed_out = true;
	if (t->in_call == R_RW_RDLOCK)
		t->at = 0;	/* in when the wait ends: at the return, unless written again */
	struct lock_rec *l = t->lock_addr ? locks_rec_get(lk, t, t->lock_addr, "pthread_rwlock") : NULL;
	if (l)
		l->s.futex_waits++;
}

/* The call's return: an acquisition, a release, or nothing (a failed lock call). */
void rwlock_call_end(struct locks *lk, struct thread_state *t, enum role r)
{
	uint64_t now = lk->now, addr = t->lock_addr;
	int i = locks_held_index(t, addr);
	if (r == R_RW_UNLOCK) {
		if (i >= 0 && t->held_depth[i]) {	/* a reader's inner unlock: still held */
			t->held_depth[i]--;
			return;
		}
		if (t->at)
			lk->now = t->at;
		locks_released(lk, t, addr);
		lk->now = now;
		return;
	}
	bool reader = r == R_RW_RDLOCK;
	if (reader ? !t->atomics || t->unregistered : !t->owner_write)
		return;	/* EBUSY, ETIMEDOUT, EDEADLK */
	if (reader && i >= 0 && (t->held_flags[i] & HELD_SHARED)) {
		t->held_depth[i]++;
		return;
	}
	if (t->at)
		lk->now = t->at;
	locks_acquired(lk, t, addr, "pthread_rwlock", t->call_start, t->waited,
		       HELD_RWLOCK | (reader ? HELD_SHARED : 0));
	lk->now = now;
}
