/* tests/unit/test_locks.c - lock detection on generated traces shaped like glibc's mutex code
 * (call, atomic on the lock word, futex wait, return to the caller) and bare atomic spin locks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/locks.h"
#include "trace/memsource.h"

#define LOCK_FN 0x7f0000001000ull
#define UNLOCK_FN 0x7f0000002000ull
#define MTX 0x404080ull

static void work(struct memtrace *t, uint32_t tid, int n)
{
	for (int i = 0; i < n; i++)
		memtrace_insn(t, tid, 0x401100 + (uint64_t)(i % 8) * 4, 4, 0);
}

/* call pthread_mutex_lock from 0x401000 (5-byte call); FAIL_FIRST: cmpxchg fails, futex wait */
static void lock_call(struct memtrace *t, uint32_t tid, int fail_first, int finish)
{
	memtrace_insn(t, tid, 0x401000, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, tid, LOCK_FN, 4, 0);
	memtrace_ref(t, 0x7ffd0000, 8, SPENT_TRACE_REF_WRITE);	/* push: not the lock */
	memtrace_insn(t, tid, LOCK_FN + 4, 5, SPENT_TRACE_INSN_LOCKED);	/* lock cmpxchg */
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	if (fail_first) {
		memtrace_insn(t, tid, LOCK_FN + 9, 4, SPENT_TRACE_INSN_LOCKED);	/* xchg */
		memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
		memtrace_insn(t, tid, LOCK_FN + 13, 2, SPENT_TRACE_INSN_SYSCALL);
		struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_SYSCALL, .tid = tid };
		ev.u.syscall.nr = 202;
		ev.u.syscall.args[0] = MTX;
		ev.u.syscall.args[1] = 128;	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
		memtrace_event(t, &ev);
		if (!finish)
			return;
	}
	memtrace_insn(t, tid, LOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401005, 4, 0);	/* back in the caller: acquired */
}

static void lock_return(struct memtrace *t, uint32_t tid)
{
	memtrace_insn(t, tid, LOCK_FN + 9, 4, SPENT_TRACE_INSN_LOCKED);	/* retry xchg succeeds */
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, tid, LOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401005, 4, 0);
}

static void unlock_call(struct memtrace *t, uint32_t tid)
{
	memtrace_insn(t, tid, 0x401200, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, tid, UNLOCK_FN, 4, 0);
	memtrace_ref(t, MTX + 12, 4, SPENT_TRACE_REF_MODIFY);	/* --__nusers before the lock word */
	memtrace_insn(t, tid, UNLOCK_FN + 4, 3, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, tid, UNLOCK_FN + 7, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401205, 4, 0);
}

static struct locks *run(const struct memtrace *t, struct symtab *st)
{
	struct locks *lk;
	assert_int_equal(locks_new(st, &lk), 0);
	struct spent_trace_source *src;
	assert_int_equal(memtrace_source_new(t, 7, &src), 0);
	struct spent_trace_batch b;
	int rc;
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		assert_int_equal(locks_feed(lk, &b), 0);
	assert_int_equal(rc, 0);
	spent_trace_source_free(src);
	locks_finish(lk);
	return lk;
}

static void contended_mutex_shows_holder_waiter_and_contention(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	lock_call(t, 1, 0, 1);		/* thread 1 takes the mutex */
	work(t, 1, 100);
	lock_call(t, 2, 1, 0);		/* thread 2 finds it taken, waits in futex */
	work(t, 1, 50);
	unlock_call(t, 1);		/* thread 1 releases after 150+ instructions */
	lock_return(t, 2);		/* thread 2 wakes up holding it */
	work(t, 2, 30);
	unlock_call(t, 2);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].addr, MTX);
	assert_string_equal(s[0].how, "pthread_mutex");
	assert_int_equal(s[0].acquisitions, 2);
	assert_int_equal(s[0].contended, 1);
	assert_int_equal(s[0].futex_waits, 1);
	assert_int_equal(s[0].n_holders, 2);
	assert_int_equal(s[0].n_waiters, 1);
	assert_int_equal(s[0].waiters[0], 2);
	assert_true(s[0].max_hold >= 150 && s[0].max_hold < 170);
	/* thread 2's five instructions of its lock call ran inside thread 1's hold */
	assert_int_equal(s[0].own_max_hold, s[0].max_hold - 5);
	assert_true(s[0].spin >= 50);
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	assert_int_equal(niv, 3);	/* two holds and one spin */
	int spins = 0;
	for (size_t i = 0; i < niv; i++)
		spins += iv[i].kind == LOCK_SPIN && iv[i].tid == 2;
	assert_int_equal(spins, 1);
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* The unlocking thread writes the lock word, then is descheduled before its call returns (in
 * the futex wake of a contended unlock; Valgrind runs one thread at a time). Another thread
 * works outside the lock, takes it uncontended and releases it, all before the unlocker's
 * return: the first hold ends at the lock word write, not at the other's acquisition (which
 * made it span the other's unlocked work: studies_locks.sh's flaky max_hold of 240103). */
static void release_before_a_descheduled_unlock_returns(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	lock_call(t, 1, 0, 1);		/* thread 1 takes the mutex at 2 (its cmpxchg) */
	work(t, 1, 20);
	memtrace_insn(t, 1, 0x401200, 5, SPENT_TRACE_INSN_CALL);	/* thread 1 unlocks */
	memtrace_insn(t, 1, UNLOCK_FN, 4, 0);
	memtrace_ref(t, MTX + 8, 4, SPENT_TRACE_REF_WRITE);	/* __owner = 0 */
	memtrace_insn(t, 1, UNLOCK_FN + 4, 3, SPENT_TRACE_INSN_LOCKED);	/* xchg: released */
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	const uint64_t release = t->n_insns - 1;
	memtrace_insn(t, 1, UNLOCK_FN + 7, 2, SPENT_TRACE_INSN_SYSCALL);	/* futex wake */
	work(t, 2, 300);		/* thread 2 runs: work outside the lock */
	lock_call(t, 2, 0, 1);		/* takes it uncontended */
	const uint64_t take = t->n_insns - 3;
	work(t, 2, 10);
	unlock_call(t, 2);
	const uint64_t release2 = t->n_insns - 3;
	memtrace_insn(t, 1, UNLOCK_FN + 9, 1, SPENT_TRACE_INSN_RET);	/* thread 1 returns */
	memtrace_insn(t, 1, 0x401205, 4, 0);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 2);
	assert_int_equal(s[0].contended, 0);
	assert_int_equal(s[0].max_hold, release - 2);
	assert_int_equal(s[0].total_hold, (release - 2) + (release2 - take));
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	assert_int_equal(niv, 2);
	for (size_t i = 0; i < niv; i++) {
		assert_int_equal(iv[i].kind, LOCK_HOLD);
		assert_int_equal(iv[i].start, iv[i].tid == 1 ? 2 : take);
		assert_int_equal(iv[i].end, iv[i].tid == 1 ? release : release2);
	}
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* A recursive mutex taken again by its holder: glibc's lock and unlock only count it in
 * __count (offset 4), no atomic, no lock word write. The hold runs from the outer lock to the
 * outer unlock, not to the inner unlock (where it ended, cutting holds short). */
static void recursive_mutex_is_held_until_the_outer_unlock(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	lock_call(t, 1, 0, 1);		/* the outer lock: its cmpxchg at 2 */
	memtrace_insn(t, 1, 0x401000, 5, SPENT_TRACE_INSN_CALL);	/* the inner lock */
	memtrace_insn(t, 1, LOCK_FN, 4, 0);
	memtrace_ref(t, MTX + 4, 4, SPENT_TRACE_REF_MODIFY);	/* ++__count */
	memtrace_insn(t, 1, LOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401005, 4, 0);
	work(t, 1, 20);
	memtrace_insn(t, 1, 0x401200, 5, SPENT_TRACE_INSN_CALL);	/* the inner unlock */
	memtrace_insn(t, 1, UNLOCK_FN, 4, 0);
	memtrace_ref(t, MTX + 4, 4, SPENT_TRACE_REF_MODIFY);	/* --__count: still held */
	memtrace_insn(t, 1, UNLOCK_FN + 7, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401205, 4, 0);
	work(t, 1, 200);		/* held */
	unlock_call(t, 1);		/* the outer unlock writes the lock word */
	const uint64_t release = t->n_insns - 3;
	work(t, 2, 50);
	lock_call(t, 2, 0, 1);		/* another thread takes it after */
	unlock_call(t, 2);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 2);	/* the inner lock is no acquisition */
	assert_int_equal(s[0].contended, 0);
	assert_int_equal(s[0].max_hold, release - 2);
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* Robust mutexes: unlocking B unlinks it from the thread's robust list, writing into the
 * __list words (bytes 24-39) of A, held too. That names no lock: unlock(B) released A (and B
 * never) before. */
static void robust_list_writes_into_another_held_mutex_name_no_lock(void **state)
{
	(void)state;
	const uint64_t mb = MTX + 0x40;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	lock_call(t, 1, 0, 1);		/* A = MTX, taken at 2 */
	memtrace_insn(t, 1, 0x401000, 5, SPENT_TRACE_INSN_CALL);	/* lock B */
	memtrace_insn(t, 1, LOCK_FN, 4, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, mb, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, 1, LOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401005, 4, 0);
	work(t, 1, 10);
	memtrace_insn(t, 1, 0x401200, 5, SPENT_TRACE_INSN_CALL);	/* unlock B */
	memtrace_insn(t, 1, UNLOCK_FN, 4, 0);
	memtrace_ref(t, MTX + 24, 8, SPENT_TRACE_REF_WRITE);	/* A's __list.__prev */
	memtrace_insn(t, 1, UNLOCK_FN + 4, 3, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, mb, 4, SPENT_TRACE_REF_MODIFY);	/* B's lock word */
	const uint64_t release_b = t->n_insns - 1;
	memtrace_insn(t, 1, UNLOCK_FN + 7, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401205, 4, 0);
	work(t, 1, 300);		/* A still held */
	unlock_call(t, 1);
	const uint64_t release_a = t->n_insns - 3;
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].acquisitions, 1);
		if (s[i].addr == MTX)
			assert_int_equal(s[i].max_hold, release_a - 2);
		else
			assert_int_equal(s[i].max_hold, release_b - 6);	/* its atomic at 6 */
	}
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* A thread holding ten locks at once (a lock hierarchy): each gets its hold time (the 9th and
 * 10th had none when a thread's held locks were 8). */
static void ten_locks_held_at_once_each_have_a_hold(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	for (uint64_t m = 0; m < 10; m++) {
		memtrace_insn(t, 1, 0x401000, 5, SPENT_TRACE_INSN_CALL);
		memtrace_insn(t, 1, LOCK_FN, 4, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, MTX + m * 0x40, 4, SPENT_TRACE_REF_MODIFY);
		memtrace_insn(t, 1, LOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
		memtrace_insn(t, 1, 0x401005, 4, 0);
	}
	work(t, 1, 100);
	for (uint64_t m = 10; m-- > 0;) {
		memtrace_insn(t, 1, 0x401200, 5, SPENT_TRACE_INSN_CALL);
		memtrace_insn(t, 1, UNLOCK_FN, 4, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, MTX + m * 0x40, 4, SPENT_TRACE_REF_MODIFY);
		memtrace_insn(t, 1, UNLOCK_FN + 7, 1, SPENT_TRACE_INSN_RET);
		memtrace_insn(t, 1, 0x401205, 4, 0);
	}
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 10);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].acquisitions, 1);
		assert_true(s[i].max_hold > 100);
	}
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

static void bare_atomic_spin_then_release_store_is_a_lock(void **state)
{
	(void)state;
	struct memtrace *t = memtrace_new();
	const uint64_t spin = 0x405000;
	memtrace_insn(t, 8, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);	/* tid 8 takes it at 0 */
	memtrace_ref(t, spin, 4, SPENT_TRACE_REF_MODIFY);
	for (int i = 0; i < 2; i++) {	/* tid 9: two failed xchg while tid 8 holds it */
		memtrace_insn(t, 9, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, spin, 4, SPENT_TRACE_REF_MODIFY);
		memtrace_insn(t, 9, 0x401304, 2, SPENT_TRACE_INSN_PAUSE);
	}
	memtrace_insn(t, 8, 0x401400, 6, 0);	/* tid 8 releases at 5 */
	memtrace_ref(t, spin, 4, SPENT_TRACE_REF_WRITE);
	memtrace_insn(t, 9, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);	/* tid 9's third try wins at 6 */
	memtrace_ref(t, spin, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, 9, 0x401304, 2, SPENT_TRACE_INSN_PAUSE);
	work(t, 9, 40);
	memtrace_insn(t, 9, 0x401400, 6, 0);	/* movl $0, spin: release at 48 */
	memtrace_ref(t, spin, 4, SPENT_TRACE_REF_WRITE);
	struct locks *lk = run(t, NULL);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].addr, spin);
	assert_int_equal(s[0].acquisitions, 2);
	assert_int_equal(s[0].contended, 1);
	assert_int_equal(s[0].spin, 5);	/* tid 9's first try to its successful one */
	assert_int_equal(s[0].total_hold, 5 + 42);
	/* tid 8 ran only its take inside its hold (tid 9 spun meanwhile); tid 9 ran all of its */
	assert_int_equal(s[0].own_total_hold, 1 + 42);
	assert_int_equal(s[0].own_max_hold, 42);
	assert_int_equal(s[0].n_waiters, 1);
	assert_int_equal(s[0].waiters[0], 9);
	locks_free(lk);
	memtrace_free(t);
}

/* Valgrind runs one thread at a time: a holder descheduled inside its critical section holds
 * the lock across another thread's work (pigz: holds of 7.5 M instructions of which the
 * holder ran 190). The hold spans that work; its own instructions do not. Thread 1 holds the
 * mutex from its cmpxchg at 2 to its unlock's write at 527 and runs 25 of those positions in
 * two stretches, across batches of 7 instructions; thread 2 runs 500 between them. */
static void own_hold_counts_only_the_holders_instructions(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	lock_call(t, 1, 0, 1);		/* positions 0-4, the cmpxchg at 2 */
	work(t, 1, 10);			/* 5-14 */
	work(t, 2, 500);		/* 15-514: thread 2 ran while thread 1 held it */
	work(t, 1, 10);			/* 515-524 */
	unlock_call(t, 1);		/* 525-531, the lock word written at 527 */
	lock_call(t, 2, 0, 1);		/* thread 2 takes it at 534 */
	work(t, 2, 7);
	unlock_call(t, 2);		/* released at 546 */
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 2);
	assert_int_equal(s[0].max_hold, 527 - 2);
	assert_int_equal(s[0].total_hold, (527 - 2) + (546 - 534));
	assert_int_equal(s[0].own_max_hold, (15 - 2) + (527 - 515));
	assert_int_equal(s[0].own_total_hold, (15 - 2) + (527 - 515) + (546 - 534));
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* one thread's repeated read-modify-writes before its store are no contention: nobody else
 * held the lock meanwhile */
static void own_retries_are_not_contention(void **state)
{
	(void)state;
	struct memtrace *t = memtrace_new();
	const uint64_t spin = 0x405000;
	for (int i = 0; i < 3; i++) {
		memtrace_insn(t, 9, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, spin, 4, SPENT_TRACE_REF_MODIFY);
		memtrace_insn(t, 9, 0x401304, 2, SPENT_TRACE_INSN_PAUSE);
	}
	work(t, 9, 40);
	memtrace_insn(t, 9, 0x401400, 6, 0);
	memtrace_ref(t, spin, 4, SPENT_TRACE_REF_WRITE);
	struct locks *lk = run(t, NULL);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 1);
	assert_int_equal(s[0].contended, 0);
	assert_int_equal(s[0].n_waiters, 0);
	locks_free(lk);
	memtrace_free(t);
}

/* Two processes of a tree, each with its thread 1, take a spin lock at the same address,
 * interleaved: keyed by tid alone they would be one thread whose retries are no contention and
 * one lock acquired once. Keyed by (pid, tid) and (pid, address): two locks, one each. */
static void processes_keep_threads_and_locks_apart(void **state)
{
	(void)state;
	struct memtrace *t = memtrace_new();
	const uint64_t spin = 0x405000;
	for (uint32_t pid = 100; pid <= 101; pid++) {	/* both take it (same tid, same address) */
		memtrace_insn(t, 1, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);
		t->insns[t->n_insns - 1].pid = pid;
		memtrace_ref(t, spin, 4, SPENT_TRACE_REF_MODIFY);
	}
	for (uint32_t pid = 100; pid <= 101; pid++) {	/* each holds it for 10 + 10 instructions */
		for (int i = 0; i < 10; i++) {
			memtrace_insn(t, 1, 0x401100, 4, 0);
			t->insns[t->n_insns - 1].pid = pid;
		}
	}
	for (uint32_t pid = 100; pid <= 101; pid++) {	/* each releases it */
		memtrace_insn(t, 1, 0x401400, 6, 0);
		t->insns[t->n_insns - 1].pid = pid;
		memtrace_ref(t, spin, 4, SPENT_TRACE_REF_WRITE);
	}
	struct locks *lk = run(t, NULL);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].pid, 100 + i);
		assert_int_equal(s[i].addr, spin);
		assert_int_equal(s[i].acquisitions, 1);
		assert_int_equal(s[i].contended, 0);
		assert_int_equal(s[i].n_holders, 1);
		assert_int_equal(s[i].holders[0], 1);
		assert_int_equal(s[i].total_hold, 22);	/* both holds span all 20 work insns + 2 */
	}
	size_t nth;
	const struct lock_thread *th = locks_threads(lk, &nth);
	assert_int_equal(nth, 2);
	assert_int_equal(th[0].pid, 100);
	assert_int_equal(th[1].pid, 101);
	assert_true(locks_many_processes(lk));
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	assert_int_equal(niv, 2);
	assert_int_equal(iv[0].pid + iv[1].pid, 201);
	locks_free(lk);
	memtrace_free(t);
}

/* the bare pattern read the wrong way round: a plain store, then an atomic reset (glibc's lazy
 * binding sets the thread's scope flag with a store and clears it with an xchg), over and over
 * with long work between. Outside the dynamic linker that is a spin lock held from each xchg
 * to the next store; inside it, no lock. */
static void scope_flag_pattern(struct memtrace *t, uint64_t pc)
{
	const uint64_t flag = 0x5a2d6dc;
	for (int k = 0; k < 3; k++) {
		memtrace_insn(t, 2, pc, 12, 0);	/* movl $1, %fs:0x1c */
		memtrace_ref(t, flag, 4, SPENT_TRACE_REF_WRITE);
		memtrace_insn(t, 2, pc + 0xc8, 2, SPENT_TRACE_INSN_LOCKED);	/* xchg %edx, %fs:0x1c */
		memtrace_ref(t, flag, 4, SPENT_TRACE_REF_MODIFY);
		work(t, 2, 500);
	}
}

static void image_load(struct memtrace *t, const char *path, uint64_t start, uint64_t end)
{
	struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_IMAGE_LOAD, .tid = 1 };
	ev.u.image.path = path;
	ev.u.image.base = start & ~0xfffull;
	ev.u.image.start = start;
	ev.u.image.end = end;
	memtrace_event(t, &ev);
}

static void dynamic_linker_atomics_are_no_bare_lock(void **state)
{
	(void)state;
	for (int in_rtld = 0; in_rtld <= 1; in_rtld++) {
		struct symtab *st = symtab_new();
		struct memtrace *t = memtrace_new();
		image_load(t, "/nonexistent/ld-linux-x86-64.so.2", 0x4001000, 0x4027000);
		image_load(t, "/nonexistent/libc.so.6", 0x486d000, 0x49c3000);
		scope_flag_pattern(t, in_rtld ? 0x400fed0 : 0x4900000);
		struct locks *lk = run(t, st);
		size_t n;
		locks_table(lk, &n);
		assert_int_equal(n, in_rtld ? 0 : 1);	/* the pattern is a lock outside ld.so */
		locks_free(lk);
		memtrace_free(t);
		symtab_free(st);
	}
}

/* a call from CALLER of FN, which makes one atomic on MTX and returns; then 50 insns */
static void atomic_call(struct memtrace *t, uint64_t caller, uint64_t fn)
{
	memtrace_insn(t, 1, caller, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, 1, fn, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, 1, fn + 5, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, caller + 5, 4, 0);
	work(t, 1, 50);
}

/* a semaphore's and a once-control's atomics, then a plain store to the same word (the freed
 * memory reused): no lock. Before, sem_trywait's cmpxchg was a try, sem_post's a retry, and the
 * store its release. */
static void semaphores_and_once_controls_are_no_locks(void **state)
{
	(void)state;
	static const char *const pairs[][2] = { { "sem_trywait", "sem_post" },
						{ "pthread_once", "__pthread_once" } };
	for (size_t p = 0; p < 2; p++) {
		struct symtab *st = symtab_new();
		assert_int_equal(symtab_add(st, pairs[p][0], LOCK_FN, 64, true), 0);
		assert_int_equal(symtab_add(st, pairs[p][1], UNLOCK_FN, 64, true), 0);
		struct memtrace *t = memtrace_new();
		for (int k = 0; k < 2; k++) {
			atomic_call(t, 0x401000, LOCK_FN);
			atomic_call(t, 0x401200, UNLOCK_FN);
		}
		memtrace_insn(t, 1, 0x401400, 6, 0);	/* the freed word written again */
		memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_WRITE);
		struct locks *lk = run(t, st);
		size_t n;
		locks_table(lk, &n);
		assert_int_equal(n, 0);
		locks_free(lk);
		memtrace_free(t);
		symtab_free(st);
	}
}

#define RDLOCK_FN 0x7f0000003000ull
#define WRLOCK_FN 0x7f0000004000ull
#define RWUNLOCK_FN 0x7f0000005000ull
#define RW 0x404100ull

/* pthread_rwlock_rdlock as glibc's: the readers word's xadd; TIMED_OUT: then a futex wait that
 * returns ETIMEDOUT and the xadd that takes the registration back */
static void rd_call(struct memtrace *t, uint32_t tid, int timed_out)
{
	memtrace_insn(t, tid, 0x401000, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, tid, RDLOCK_FN, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, RW, 4, SPENT_TRACE_REF_MODIFY);
	if (timed_out) {
		memtrace_insn(t, tid, RDLOCK_FN + 5, 2, SPENT_TRACE_INSN_SYSCALL);
		struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_SYSCALL, .tid = tid };
		ev.u.syscall.nr = 202;
		ev.u.syscall.args[0] = RW + 8;	/* __wrphase_futex */
		ev.u.syscall.args[1] = 137;	/* FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG */
		ev.u.syscall.ret = -ETIMEDOUT;
		memtrace_event(t, &ev);
		memtrace_insn(t, tid, RDLOCK_FN + 7, 5, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, RW, 4, SPENT_TRACE_REF_MODIFY);
	}
	memtrace_insn(t, tid, RDLOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401005, 4, 0);
}

/* pthread_rwlock_wrlock or trywrlock: the readers word's cmpxchg, then (WON) __cur_writer */
static void wr_call(struct memtrace *t, uint32_t tid, int won)
{
	memtrace_insn(t, tid, 0x401000, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, tid, WRLOCK_FN, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, RW, 4, SPENT_TRACE_REF_MODIFY);
	if (won) {
		memtrace_insn(t, tid, WRLOCK_FN + 5, 7, 0);
		memtrace_ref(t, RW + 24, 4, SPENT_TRACE_REF_WRITE);
	}
	memtrace_insn(t, tid, WRLOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401005, 4, 0);
}

/* pthread_rwlock_unlock: a writer clears __cur_writer first; then the readers word's cmpxchg */
static void rw_unlock(struct memtrace *t, uint32_t tid, int writer)
{
	memtrace_insn(t, tid, 0x401200, 5, SPENT_TRACE_INSN_CALL);
	memtrace_insn(t, tid, RWUNLOCK_FN, 7, 0);	/* whose is it? */
	memtrace_ref(t, RW + 24, 4, writer ? SPENT_TRACE_REF_WRITE : SPENT_TRACE_REF_READ);
	memtrace_insn(t, tid, RWUNLOCK_FN + 7, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, RW, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, tid, RWUNLOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, tid, 0x401205, 4, 0);
}

/* Two readers hold the lock at once (neither hold ends the other's), then a writer alone; a
 * timed-out read lock and a trywrlock's EBUSY take nothing; a reader's re-take is no
 * acquisition and its hold runs to the outer unlock. */
static void rwlock_readers_share_writers_exclude_failures_take_nothing(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_rwlock_rdlock", RDLOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_rwlock_wrlock", WRLOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_rwlock_unlock", RWUNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	rd_call(t, 1, 0);
	work(t, 1, 100);
	rd_call(t, 2, 0);	/* a second reader while the first holds it */
	work(t, 2, 50);
	rw_unlock(t, 1, 0);
	work(t, 2, 50);
	rw_unlock(t, 2, 0);
	wr_call(t, 3, 1);
	work(t, 3, 80);
	rw_unlock(t, 3, 1);
	rd_call(t, 1, 1);	/* ETIMEDOUT */
	wr_call(t, 2, 0);	/* EBUSY */
	work(t, 2, 30);
	rd_call(t, 1, 0);
	rd_call(t, 1, 0);	/* taken again */
	work(t, 1, 20);
	rw_unlock(t, 1, 0);	/* the inner unlock */
	work(t, 1, 40);
	rw_unlock(t, 1, 0);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].addr, RW);
	assert_string_equal(s[0].how, "pthread_rwlock");
	assert_int_equal(s[0].acquisitions, 4);
	assert_int_equal(s[0].shared, 3);
	assert_int_equal(s[0].contended, 0);
	assert_int_equal(s[0].futex_waits, 1);
	assert_int_equal(s[0].n_holders, 3);
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	assert_int_equal(niv, 4);
	const struct lock_interval *r1 = NULL, *r2 = NULL, *w = NULL, *last = NULL;
	for (size_t i = 0; i < niv; i++) {
		if (iv[i].kind == LOCK_HOLD)
			w = &iv[i];
		else if (iv[i].kind == LOCK_SHARED_HOLD && iv[i].tid == 2)
			r2 = &iv[i];
		else if (iv[i].kind == LOCK_SHARED_HOLD && !r1)
			r1 = &iv[i];
		else if (iv[i].kind == LOCK_SHARED_HOLD)
			last = &iv[i];
	}
	assert_non_null(r1);
	assert_non_null(r2);
	assert_non_null(w);
	assert_non_null(last);
	assert_true(r2->start < r1->end && r1->start < r2->end);	/* held together */
	assert_true(r1->end - r1->start >= 150 && r2->end - r2->start >= 100);
	assert_int_equal(w->tid, 3);
	assert_true(w->start >= r2->end && w->end - w->start >= 80);
	assert_true(last->end - last->start >= 60);	/* to the outer unlock */
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* glibc's timed read lock whose wait times out just as the writer leaves: its readers word
 * then shows a read phase, so the call keeps the lock and returns 0, writing nothing more;
 * spent took every timed-out wait for a failure. The control: a timed-out read lock that
 * takes its registration back (rd_call's xadd after the wait) has nothing. */
static void timed_read_lock_that_finds_a_read_phase_has_the_lock(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_rwlock_timedrdlock", RDLOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_rwlock_wrlock", WRLOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_rwlock_unlock", RWUNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	wr_call(t, 3, 1);
	work(t, 3, 40);
	rd_call(t, 2, 1);	/* the control: times out and unregisters */
	memtrace_insn(t, 1, 0x401000, 5, SPENT_TRACE_INSN_CALL);	/* thread 1 registers */
	memtrace_insn(t, 1, RDLOCK_FN, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, RW, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, 1, RDLOCK_FN + 5, 2, SPENT_TRACE_INSN_SYSCALL);
	work(t, 3, 10);
	rw_unlock(t, 3, 1);	/* the writer leaves as thread 1's wait times out */
	struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_SYSCALL, .tid = 1 };
	ev.u.syscall.nr = 202;
	ev.u.syscall.args[0] = RW + 8;
	ev.u.syscall.args[1] = 137;
	ev.u.syscall.ret = -ETIMEDOUT;
	memtrace_event(t, &ev);
	memtrace_insn(t, 1, RDLOCK_FN + 12, 4, 0);	/* loads the readers word: a read phase */
	memtrace_ref(t, RW, 4, SPENT_TRACE_REF_READ);
	memtrace_insn(t, 1, RDLOCK_FN + 20, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401005, 4, 0);	/* it has the lock */
	const uint64_t in = t->n_insns - 1;
	work(t, 1, 25);
	rw_unlock(t, 1, 0);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 2);	/* the writer, and thread 1 as a reader */
	assert_int_equal(s[0].shared, 1);
	assert_int_equal(s[0].n_holders, 2);
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	const struct lock_interval *r = NULL;
	for (size_t i = 0; i < niv; i++)
		if (iv[i].kind == LOCK_SHARED_HOLD)
			r = &iv[i];
	assert_non_null(r);
	assert_int_equal(r->tid, 1);
	assert_int_equal(r->start, in);	/* in at the return (it waited) */
	assert_true(r->end - r->start >= 25);
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

#define LLL_WAIT_FN 0x7f0000006000ull

static void locked_insn(struct memtrace *t, uint32_t tid, uint64_t pc, uint16_t flags, uint64_t word)
{
	memtrace_insn(t, tid, pc, 4, SPENT_TRACE_INSN_LOCKED | flags);
	memtrace_ref(t, word, 4, SPENT_TRACE_REF_MODIFY);
}

/* glibc's own lock: thread 1 takes it by a cmpxchg; thread 2's cmpxchg fails and it waits in
 * __lll_lock_wait_private (an xchg, a futex wait), thread 1 releases it by an xchg, thread 2's
 * xchg in the wait takes it, and its xchg releases it. The control: a spin lock taken and
 * retried by xchg and released by a plain store is a bare atomic lock, once. */
static void glibc_lock_cmpxchg_then_xchg_with_a_wait(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "__lll_lock_wait_private", LLL_WAIT_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	locked_insn(t, 1, 0x401300, SPENT_TRACE_INSN_CMPXCHG, MTX);
	work(t, 1, 100);
	locked_insn(t, 2, 0x401300, SPENT_TRACE_INSN_CMPXCHG, MTX);	/* fails */
	memtrace_insn(t, 2, 0x401310, 5, SPENT_TRACE_INSN_CALL);
	locked_insn(t, 2, LLL_WAIT_FN, SPENT_TRACE_INSN_EXCHANGE, MTX);
	memtrace_insn(t, 2, LLL_WAIT_FN + 4, 2, SPENT_TRACE_INSN_SYSCALL);
	struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_SYSCALL, .tid = 2 };
	ev.u.syscall.nr = 202;
	ev.u.syscall.args[0] = MTX;
	ev.u.syscall.args[1] = 128;
	memtrace_event(t, &ev);
	work(t, 1, 50);
	locked_insn(t, 1, 0x401320, SPENT_TRACE_INSN_EXCHANGE, MTX);	/* released */
	locked_insn(t, 2, LLL_WAIT_FN, SPENT_TRACE_INSN_EXCHANGE, MTX);	/* taken */
	memtrace_insn(t, 2, LLL_WAIT_FN + 8, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 2, 0x401315, 4, 0);
	work(t, 2, 30);
	locked_insn(t, 2, 0x401320, SPENT_TRACE_INSN_EXCHANGE, MTX);
	/* the control, on another word */
	for (int k = 0; k < 3; k++)
		locked_insn(t, 1, 0x401400, SPENT_TRACE_INSN_EXCHANGE, MTX + 64);
	work(t, 1, 20);
	memtrace_insn(t, 1, 0x401410, 6, 0);
	memtrace_ref(t, MTX + 64, 4, SPENT_TRACE_REF_WRITE);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].addr, MTX);
	assert_string_equal(s[0].how, "glibc_lock");
	assert_int_equal(s[0].acquisitions, 2);
	assert_int_equal(s[0].contended, 1);
	assert_int_equal(s[0].futex_waits, 1);
	assert_int_equal(s[0].n_waiters, 1);
	assert_int_equal(s[0].waiters[0], 2);
	assert_true(s[0].max_hold >= 150 && s[0].max_hold < 170);
	assert_int_equal(s[1].addr, MTX + 64);
	assert_string_equal(s[1].how, "atomic");
	assert_int_equal(s[1].acquisitions, 1);
	size_t niv;
	const struct lock_interval *iv = locks_intervals(lk, &niv);
	const struct lock_interval *h1 = NULL, *h2 = NULL;
	for (size_t i = 0; i < niv; i++)
		if (iv[i].kind == LOCK_HOLD && iv[i].lock == MTX)
			*(iv[i].tid == 1 ? &h1 : &h2) = &iv[i];
	assert_non_null(h1);
	assert_non_null(h2);
	assert_true(h2->start >= h1->end && h2->end - h2->start >= 30);
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* pthread_mutex_lock defined twice (an LD_PRELOAD wrapper's and libc's): a call into the
 * wrapper, which calls libc's, and libc's own call straight to its definition are both
 * acquisitions (watching the first definition alone missed libc's own calls). */
static void every_definition_of_an_entry_point_is_watched(void **state)
{
	(void)state;
	const uint64_t wrap = 0x7e0000008000ull;	/* loaded first, below libc */
	struct symtab *st = symtab_new();
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", wrap, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_lock", LOCK_FN, 64, true), 0);
	assert_int_equal(symtab_add(st, "pthread_mutex_unlock", UNLOCK_FN, 64, true), 0);
	struct memtrace *t = memtrace_new();
	memtrace_insn(t, 1, 0x401000, 5, SPENT_TRACE_INSN_CALL);	/* the program calls the wrapper */
	memtrace_insn(t, 1, wrap, 4, 0);
	memtrace_insn(t, 1, wrap + 4, 5, SPENT_TRACE_INSN_CALL);	/* which calls libc's */
	memtrace_insn(t, 1, LOCK_FN, 5, SPENT_TRACE_INSN_LOCKED);
	memtrace_ref(t, MTX, 4, SPENT_TRACE_REF_MODIFY);
	memtrace_insn(t, 1, LOCK_FN + 5, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, wrap + 9, 1, SPENT_TRACE_INSN_RET);
	memtrace_insn(t, 1, 0x401005, 4, 0);
	work(t, 1, 40);
	unlock_call(t, 1);
	lock_call(t, 1, 0, 1);	/* libc's own call */
	work(t, 1, 40);
	unlock_call(t, 1);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].acquisitions, 2);
	assert_true(s[0].total_hold >= 80);
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

/* An atomic followed by a plain store of another size, or over part of the word, is no lock:
 * a pointer exchanged and stored again (8 bytes: glibc's fastbins while single-threaded), a
 * counter's object freed and its memory written again. The same with a 4-byte word and a
 * 4-byte store is a spin lock (the control). */
static void pointer_exchanges_and_reused_counters_are_no_locks(void **state)
{
	(void)state;
	const uint64_t w = 0x405000;
	static const struct { uint32_t rmw, store; int64_t off; size_t want; } cases[] = {
		{ 8, 8, 0, 0 },	 /* xchg of a list head, then a push */
		{ 4, 32, 0, 0 }, /* a counter, then memset's vector store over its block */
		{ 4, 8, -4, 0 }, /* a counter, then a store over part of it ... */
		{ 4, 4, 0, 1 },	 /* the control: a 4-byte lock word and its release */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct memtrace *t = memtrace_new();
		memtrace_insn(t, 1, 0x401300, 4, SPENT_TRACE_INSN_LOCKED);
		memtrace_ref(t, w, cases[c].rmw, SPENT_TRACE_REF_MODIFY);
		work(t, 1, 50);
		memtrace_insn(t, 1, 0x401400, 6, 0);
		memtrace_ref(t, w + (uint64_t)cases[c].off, cases[c].store, SPENT_TRACE_REF_WRITE);
		if (cases[c].off) {	/* ... and later the word itself, written plainly */
			work(t, 1, 50);
			memtrace_insn(t, 1, 0x401400, 6, 0);
			memtrace_ref(t, w, 4, SPENT_TRACE_REF_WRITE);
		}
		struct locks *lk = run(t, NULL);
		size_t n;
		locks_table(lk, &n);
		assert_int_equal(n, cases[c].want);
		locks_free(lk);
		memtrace_free(t);
	}
}

/* an instruction of process PID touching WORD (4 bytes) as KIND (0: none) */
static void pid_insn(struct memtrace *t, uint32_t pid, uint64_t pc, uint16_t flags, uint64_t word,
		     uint32_t kind)
{
	memtrace_insn(t, 1, pc, 4, flags);
	t->insns[t->n_insns - 1].pid = pid;
	if (kind)
		memtrace_ref(t, word, 4, kind);
}

/* A pid that execs runs another program: its spin lock at the same address is another lock
 * (two rows, one acquisition each; one row of two before), and a hold the old program had
 * open does not carry over. */
static void an_exec_starts_another_programs_locks(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	struct memtrace *t = memtrace_new();
	const uint64_t spin = 0x405000;
	for (uint32_t stream = 1; stream <= 2; stream++) {
		struct spent_trace_event ev = { .kind = SPENT_TRACE_EV_PROCESS_START, .tid = 1,
						.pid = 100 };
		ev.u.process.stream = stream;
		ev.u.process.path = "/bin/prog";
		memtrace_event(t, &ev);
		pid_insn(t, 100, 0x401300, SPENT_TRACE_INSN_LOCKED, spin, SPENT_TRACE_REF_MODIFY);
		for (int i = 0; i < 10; i++)
			pid_insn(t, 100, 0x401100, 0, 0, 0);
		if (stream == 2)
			break;	/* the second program releases it below */
		pid_insn(t, 100, 0x401400, 0, spin, SPENT_TRACE_REF_WRITE);
		/* taken again, then exec */
		pid_insn(t, 100, 0x401300, SPENT_TRACE_INSN_LOCKED, spin, SPENT_TRACE_REF_MODIFY);
	}
	pid_insn(t, 100, 0x401400, 0, spin, SPENT_TRACE_REF_WRITE);
	struct locks *lk = run(t, st);
	size_t n;
	const struct lock_summary *s = locks_table(lk, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].pid, 100);
		assert_int_equal(s[i].stream, i + 1);
		assert_int_equal(s[i].acquisitions, 1);
		assert_int_equal(s[i].total_hold, 11);	/* the atomic and 10 work insns */
	}
	assert_ptr_not_equal(locks_symtab(lk, 100, 1), locks_symtab(lk, 100, 2));
	assert_string_equal(locks_program(lk, 100, 1), "/bin/prog");
	assert_string_equal(locks_program(lk, 100, 2), "/bin/prog");
	assert_null(locks_program(lk, 100, 3));
	locks_free(lk);
	memtrace_free(t);
	symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(contended_mutex_shows_holder_waiter_and_contention),
		cmocka_unit_test(release_before_a_descheduled_unlock_returns),
		cmocka_unit_test(recursive_mutex_is_held_until_the_outer_unlock),
		cmocka_unit_test(robust_list_writes_into_another_held_mutex_name_no_lock),
		cmocka_unit_test(ten_locks_held_at_once_each_have_a_hold),
		cmocka_unit_test(bare_atomic_spin_then_release_store_is_a_lock),
		cmocka_unit_test(own_retries_are_not_contention),
		cmocka_unit_test(own_hold_counts_only_the_holders_instructions),
		cmocka_unit_test(processes_keep_threads_and_locks_apart),
		cmocka_unit_test(dynamic_linker_atomics_are_no_bare_lock),
		cmocka_unit_test(semaphores_and_once_controls_are_no_locks),
		cmocka_unit_test(rwlock_readers_share_writers_exclude_failures_take_nothing),
		cmocka_unit_test(timed_read_lock_that_finds_a_read_phase_has_the_lock),
		cmocka_unit_test(glibc_lock_cmpxchg_then_xchg_with_a_wait),
		cmocka_unit_test(every_definition_of_an_entry_point_is_watched),
		cmocka_unit_test(an_exec_starts_another_programs_locks),
		cmocka_unit_test(pointer_exchanges_and_reused_counters_are_no_locks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
