/* analysis/locks_int.h - the lock model's state, shared by analysis/locks.c (threads, lock
 * records, holds, mutexes, condvars, bare atomics) and analysis/locks_rwlock.c (read-write
 * locks). Not a public interface: analysis/locks.h is. */
#ifndef SPENT_ANALYSIS_LOCKS_INT_H
#define SPENT_ANALYSIS_LOCKS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/lock_programs.h"
#include "analysis/locks.h"

#define SYS_FUTEX 202
#define MAX_ATOMIC 4
/* Locks one thread holds at once that get hold times: 8 left the 9th and later of a lock
 * hierarchy at 0 held; beyond this they are still counted as acquisitions. */
#define MAX_HELD 32

enum role { R_NONE, R_MUTEX_LOCK, R_MUTEX_UNLOCK, R_SPIN_LOCK, R_SPIN_UNLOCK, R_TRYLOCK,
	    R_COND_WAIT, R_COND_SIGNAL, R_OTHER_SYNC, R_RW_RDLOCK, R_RW_WRLOCK, R_RW_UNLOCK,
	    R_LLL_WAIT };

/* how a held lock is held (thread_state.held_flags) */
enum { HELD_SHARED = 1,	/* a read lock: other readers may hold it too */
       HELD_RWLOCK = 2 };	/* a pthread_rwlock_t (its unlock writes further into it) */

struct atomic_try {	/* a bare atomic RMW awaiting its release store */
	uint64_t addr, first, last;
	uint32_t tries, size;
	bool by_cas;	/* the first attempt was a cmpxchg (glibc's lock: released by an xchg) */
	bool waited;	/* in glibc's lock wait */
};

/* A stretch of the trace one thread ran: instruction positions [lo, hi). */
struct run_span {
	uint64_t lo, hi;
};

struct thread_state {
	uint32_t pid, stream, tid;	/* stream: the program the pid runs (process_start) */
	uint64_t prev_end[2];	/* pc+len of the last two instructions */
	uint64_t shadow[32];	/* return addresses of calls not yet returned (source flags) */
	uint32_t depth;
	enum role in_call;
	uint64_t ret[3];	/* candidate return addresses */
	uint64_t call_start, lock_addr;
	uint32_t atomics;	/* locked operations inside the call */
	bool waited;		/* futex wait inside the call */
	bool timed_out;		/* a futex wait inside the call returned ETIMEDOUT */
	/* a read lock call changed the readers word after its wait timed out: glibc took its
	 * registration back (no write: a read phase began meanwhile, and it has the lock) */
	bool unregistered;
	/* wrote the mutex's owner fields after the atomic (trylock won); an rwlock's writer */
	bool owner_write;
	uint64_t at;		/* when the lock word was last written in the call (0: unknown) */
	uint64_t released_at;	/* condvar wait: when the mutex's lock word was first written */
	uint64_t mutex_wait_at;	/* condvar wait: a futex wait on the mutex itself (0: none) */
	/* a lock call that made no atomic but wrote into a mutex the thread holds: a recursive
	 * mutex taken again (glibc only counts it in __count) */
	uint64_t relock_addr;
	struct atomic_try tries[MAX_ATOMIC];
	/* held locks: address and acquisition time, and how many times a recursive lock was
	 * taken again on top (each inner unlock only counts down: the lock stays held) */
	uint64_t held[MAX_HELD], held_at[MAX_HELD];
	uint32_t held_depth[MAX_HELD];
	uint8_t held_flags[MAX_HELD];
	uint32_t n_held;
	/* the stretches it ran, the last open (hi = UINT64_MAX) while it runs (locks_own.c) */
	struct run_span *runs;
	size_t n_runs, cap_runs;
};

struct lock_rec {
	struct lock_summary s;
	uint64_t last_release;	/* when, and by which thread, it was last released */
	uint32_t last_holder;
	bool last_contended;
	uint32_t run;	/* consecutive contended acquisitions */
};

struct locks {
	struct lock_programs progs;	/* per program: symbols, entry points, dynamic linker */
	uint64_t insns;		/* instructions fed */
	struct thread_state *th;
	size_t n_th, cap_th;
	size_t last_th;		/* index of the thread found last (thread()) */
	struct lock_thread *tids;	/* by thread, beside th */
	size_t cap_tids;
	struct lock_rec *locks;
	size_t n_locks, cap_locks;
	struct lock_interval *iv;
	size_t n_iv, cap_iv;
	uint64_t now;
	size_t runner;		/* index in th of the thread running at now (SIZE_MAX: none) */
	struct lock_summary *table;
	bool flags_seen;	/* the source sets instruction flags: trust SPENT_TRACE_INSN_LOCKED */
	/* futex words condvar waits slept on: never a lock, even when a wait on one is seen
	 * outside a recognised pthread_cond_wait call */
	struct { uint32_t pid; uint64_t addr; } cond_words[64];
	uint32_t n_cond_words;
	int oom;
};

/* locks.c */
struct lock_rec *locks_rec_get(struct locks *lk, const struct thread_state *t, uint64_t addr,
			       const char *how);
/* T acquires ADDR now (FLAGS: HELD_*), after waiting since WAIT_START when CONTENDED; other
 * threads' holds it excludes end first. */
void locks_acquired(struct locks *lk, struct thread_state *t, uint64_t addr, const char *how,
		    uint64_t wait_start, bool contended, unsigned flags);
/* T releases ADDR now. */
void locks_released(struct locks *lk, struct thread_state *t, uint64_t addr);
/* Where T holds ADDR among its held locks (its index), -1 when it does not. */
int locks_held_index(const struct thread_state *t, uint64_t addr);
/* The lock T holds whose first NAMING_BYTES a write to ADDR lies in, among its read-write
 * locks (RWLOCK) or its other locks; 0 when none. An unlock call's writes name its lock so. */
uint64_t locks_held_written(const struct thread_state *t, uint64_t addr, uint64_t naming_bytes,
			    bool rwlock);
/* Whether instruction IN of B is an atomic read-modify-write, and of which address. */
bool locks_insn_rmw(const struct spent_trace_batch *b, const struct spent_trace_insn *in,
		    bool locked, bool flags_seen, uint64_t *addr);

/* T's try on the word R writes (EXACT), or on a word R overlaps; NULL when none. */
static inline struct atomic_try *locks_find_try(struct thread_state *t,
						 const struct spent_trace_ref *r, bool exact)
{
	for (uint32_t i = 0; i < MAX_ATOMIC; i++) {
		struct atomic_try *a = &t->tries[i];
		if (a->tries && (exact ? r->addr == a->addr && r->size == a->size :
				 r->addr < a->addr + a->size && a->addr < r->addr + r->size))
			return a;
	}
	return NULL;
}

/* locks_bare.c: glibc's own locks and bare spin locks */
/* A bare atomic outside the pthread calls (FLAGS: its instruction's): a try on the word R
 * writes, or a release of a word tried. */
void locks_bare_ref(struct locks *lk, struct thread_state *t, const struct spent_trace_ref *r,
		    uint16_t flags);
/* Inside glibc's lock wait (__lll_lock_wait_private, after the cmpxchg failed): each xchg of
 * the lock word is another attempt, and the thread waits; the last one took it. */
void locks_lll_wait_refs(struct locks *lk, struct thread_state *t, const struct spent_trace_batch *b,
			 const struct spent_trace_insn *in);
/* T's open tries begun by an arithmetic atomic (a counter's, never glibc's lock) end. */
void locks_forget_counter_tries(struct thread_state *t);

/* locks_own.c: the instructions a holder ran during its hold */
/* T runs from position AT on; the thread that ran before it stopped there. */
void locks_run_begins(struct locks *lk, struct thread_state *t, uint64_t at);
/* How many of the instructions at positions [A, B) T ran. */
uint64_t locks_own_between(const struct thread_state *t, uint64_t a, uint64_t b);

/* locks_rwlock.c: the pthread_rwlock_* calls */
static inline bool rwlock_role(enum role r)
{
	return r == R_RW_RDLOCK || r == R_RW_WRLOCK || r == R_RW_UNLOCK;
}
void rwlock_call_refs(struct locks *lk, struct thread_state *t, const struct spent_trace_batch *b,
		      const struct spent_trace_insn *in, bool locked);
void rwlock_call_end(struct locks *lk, struct thread_state *t, enum role r);
void rwlock_futex_wait(struct locks *lk, struct thread_state *t, int64_t ret);

#endif
