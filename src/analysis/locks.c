/* analysis/locks.c - lock acquisition/release detection over the trace stream: calls of the
 * pthread lock/unlock entry points (return found at the caller's next instruction, so no
 * call/return flags are needed), the first atomic operation inside naming the lock; bare
 * lock-prefixed RMW + release store; futex waits; condition-variable waits, which release the
 * mutex and take it again before returning; read-write locks (analysis/locks_rwlock.c);
 * semaphores and the dynamic linker's atomics are no locks. Builds the per-thread timeline and
 * the per-lock table, per program of each pid (analysis/lock_programs.c), keeping every lock
 * held by at most one thread at a time (or by readers only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lock_programs.h"
#include "analysis/locks_int.h"
#include "core/alloc.h"

static const struct { const char *name; enum role role; } entry_names[] = {
	{ "pthread_mutex_lock", R_MUTEX_LOCK },	    { "__pthread_mutex_lock", R_MUTEX_LOCK },
	{ "pthread_mutex_unlock", R_MUTEX_UNLOCK }, { "__pthread_mutex_unlock", R_MUTEX_UNLOCK },
	{ "pthread_spin_lock", R_SPIN_LOCK },	    { "pthread_spin_unlock", R_SPIN_UNLOCK },
	{ "pthread_mutex_trylock", R_TRYLOCK },	    { "__pthread_mutex_trylock", R_TRYLOCK },
	/* a lock with a deadline succeeds, as a trylock does, only when it writes the owner (a
	 * timed-out call is no acquisition); it also takes a recursive mutex again */
	{ "pthread_mutex_timedlock", R_TRYLOCK },   { "__pthread_mutex_timedlock", R_TRYLOCK },
	{ "pthread_mutex_clocklock", R_TRYLOCK },   { "__pthread_mutex_clocklock", R_TRYLOCK },
	/* a wait releases the mutex (its lock word written inside the call) and takes it back
	 * (the last write of the lock word) before returning */
	{ "pthread_cond_wait", R_COND_WAIT },	    { "__pthread_cond_wait", R_COND_WAIT },
	{ "pthread_cond_timedwait", R_COND_WAIT },  { "__pthread_cond_timedwait", R_COND_WAIT },
	{ "pthread_cond_clockwait", R_COND_WAIT },
	/* their atomics on the condvar's fields are no lock */
	{ "pthread_cond_signal", R_COND_SIGNAL },   { "__pthread_cond_signal", R_COND_SIGNAL },
	{ "pthread_cond_broadcast", R_COND_SIGNAL }, { "__pthread_cond_broadcast", R_COND_SIGNAL },
	/* read-write locks: each variant's outcome is seen in the call (locks_rwlock.c) */
	{ "pthread_rwlock_rdlock", R_RW_RDLOCK },   { "pthread_rwlock_wrlock", R_RW_WRLOCK },
	{ "pthread_rwlock_tryrdlock", R_RW_RDLOCK }, { "pthread_rwlock_trywrlock", R_RW_WRLOCK },
	{ "pthread_rwlock_timedrdlock", R_RW_RDLOCK }, { "pthread_rwlock_timedwrlock", R_RW_WRLOCK },
	{ "pthread_rwlock_clockrdlock", R_RW_RDLOCK }, { "pthread_rwlock_clockwrlock", R_RW_WRLOCK },
	{ "pthread_rwlock_unlock", R_RW_UNLOCK },
	/* not modelled as locks: a semaphore (one thread may post what another waited for:
	 * Python's threading.Lock is one, released by whoever notifies a Condition's waiter,
	 * so there is no holder to give a hold time to). Its words must not read as bare spin
	 * locks: sem_trywait's and sem_post's cmpxchg looked like spinning until the freed
	 * memory's next plain store */
	{ "sem_wait", R_OTHER_SYNC },		    { "sem_trywait", R_OTHER_SYNC },
	{ "sem_timedwait", R_OTHER_SYNC },	    { "sem_clockwait", R_OTHER_SYNC },
	{ "sem_post", R_OTHER_SYNC },
	/* glibc's own lock's wait after its cmpxchg failed (lll_lock); its xchgs are attempts */
	{ "__lll_lock_wait_private", R_LLL_WAIT },  { "__lll_lock_wait", R_LLL_WAIT },
	/* a once-control is taken by a cmpxchg and set done by a plain store: a lock's pattern
	 * around the init routine, in every process whose libc runs one (~500 instructions) */
	{ "pthread_once", R_OTHER_SYNC },	    { "__pthread_once", R_OTHER_SYNC },
};
#define N_ENTRIES ARRAY_SIZE(entry_names)
/* each name's definitions watched (a wrapper's, libc's, a compat version's) */
#define MAX_DEFS 3
_Static_assert(N_ENTRIES * MAX_DEFS <= LOCK_PROGRAM_MAX_ENTRIES && N_ENTRIES <= 256,
	       "lock_program.entry_pc too small");

/* The bit of PC in lock_program.entry_bits: the per-instruction scan of the entry points was
 * half of locks' time (12 s for a 315 M-instruction gzip log that reads in 2 s). */
static inline uint64_t entry_hash(uint64_t pc)
{
	return (pc * 0x9e3779b97f4a7c15ull) >> 52;	/* 12 bits */
}

/* Whether PC may be one of P's entry points (entry_pc says which, if any). */
static inline bool maybe_entry(const struct lock_program *p, uint64_t pc)
{
	uint64_t h = entry_hash(pc);
	return pc - p->entry_lo < p->entry_span && (p->entry_bits[h >> 6] & (1ull << (h & 63)));
}


static bool has_locks(void *ctx, uint32_t pid, uint32_t stream);

int locks_new(struct symtab *syms, struct locks **out)
{
	struct locks *lk = calloc(1, sizeof(*lk));
	if (!lk)
		return -ENOMEM;
	lock_programs_init(&lk->progs, syms, has_locks, lk);
	lk->runner = SIZE_MAX;
	*out = lk;
	return 0;
}

void locks_free(struct locks *lk)
{
	if (!lk)
		return;
	lock_programs_release(&lk->progs);
	for (size_t i = 0; i < lk->n_th; i++)
		free(lk->th[i].runs);
	free(lk->th);
	free(lk->tids);
	free(lk->locks);
	free(lk->iv);
	free(lk->table);
	free(lk);
}

static struct thread_state *thread_find(struct locks *lk, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < lk->n_th; i++)
		if (lk->th[i].tid == tid && lk->th[i].pid == pid) {
			lk->last_th = i;
			return &lk->th[i];
		}
	if (ALLOC_GROW(lk->th, lk->n_th + 1, lk->cap_th) ||
	    ALLOC_GROW(lk->tids, lk->n_th + 1, lk->cap_tids)) {
		lk->oom = 1;
		return NULL;
	}
	struct thread_state *t = lk->th;
	memset(&t[lk->n_th], 0, sizeof(*t));
	t[lk->n_th].pid = pid;
	t[lk->n_th].stream = lock_programs_stream(&lk->progs, pid);
	t[lk->n_th].tid = tid;
	lk->tids[lk->n_th] = (struct lock_thread){ pid, tid };
	lk->last_th = lk->n_th;
	return &t[lk->n_th++];
}

/* A batch's instructions are mostly one thread's: the last one found is tried first, inline. */
static inline struct thread_state *thread(struct locks *lk, uint32_t pid, uint32_t tid)
{
	if (lk->last_th < lk->n_th && lk->th[lk->last_th].tid == tid && lk->th[lk->last_th].pid == pid)
		return &lk->th[lk->last_th];
	return thread_find(lk, pid, tid);
}

/* T's program's lock at ADDR */
static struct lock_rec *lock_find(struct locks *lk, const struct thread_state *t, uint64_t addr)
{
	for (size_t i = 0; i < lk->n_locks; i++)
		if (lk->locks[i].s.addr == addr && lk->locks[i].s.pid == t->pid &&
		    lk->locks[i].s.stream == t->stream)
			return &lk->locks[i];
	return NULL;
}

struct lock_rec *locks_rec_get(struct locks *lk, const struct thread_state *t, uint64_t addr,
			       const char *how)
{
	struct lock_rec *l = lock_find(lk, t, addr);
	if (l)
		return l;
	if (ALLOC_GROW(lk->locks, lk->n_locks + 1, lk->cap_locks)) {
		lk->oom = 1;
		return NULL;
	}
	l = &lk->locks[lk->n_locks++];
	memset(l, 0, sizeof(*l));
	l->s.addr = addr;
	l->s.pid = t->pid;
	l->s.stream = t->stream;
	l->s.how = how;
	return l;
}

static void add_tid(uint32_t *set, uint32_t *n, uint32_t tid)
{
	for (uint32_t i = 0; i < *n; i++)
		if (set[i] == tid)
			return;
	if (*n < LOCKS_MAX_TIDS)
		set[(*n)++] = tid;
}

static void interval(struct locks *lk, const struct thread_state *t, uint32_t kind, uint64_t lock,
		     uint64_t a, uint64_t b)
{
	if (ALLOC_GROW(lk->iv, lk->n_iv + 1, lk->cap_iv)) {
		lk->oom = 1;
		return;
	}
	lk->iv[lk->n_iv++] = (struct lock_interval){ t->pid, t->stream, t->tid, kind, lock,
								     a, b };
}

/* Another thread O of T's process still holds ADDR in this model while T takes it: O is inside
 * an unlock call that wrote the lock word but has not returned yet (descheduled in the futex
 * wake, or anywhere under Valgrind's one-thread-at-a-time scheduling), and that write was the
 * release; else it released it on a path the patterns do not know, at the latest now. */
static void release_other(struct locks *lk, struct thread_state *o, uint64_t addr)
{
	uint64_t now = lk->now;
	if ((o->in_call == R_MUTEX_UNLOCK || o->in_call == R_SPIN_UNLOCK || o->in_call == R_RW_UNLOCK) &&
	    o->lock_addr == addr && o->at && o->at <= now)
		lk->now = o->at;
	locks_released(lk, o, addr);
	lk->now = now;
}

int locks_held_index(const struct thread_state *t, uint64_t addr)
{
	for (uint32_t i = 0; i < t->n_held; i++)
		if (t->held[i] == addr)
			return (int)i;
	return -1;
}

void locks_acquired(struct locks *lk, struct thread_state *t, uint64_t addr, const char *how,
		    uint64_t wait_start, bool contended, unsigned flags)
{
	/* one holder at a time, or readers together: a writer's acquisition ends every other
	 * hold of the lock, a reader's only another thread's write hold */
	for (size_t i = 0; i < lk->n_th; i++) {
		struct thread_state *o = &lk->th[i];
		if (o == t || o->pid != t->pid || o->stream != t->stream)
			continue;
		int k = flags & HELD_SHARED ? locks_held_index(o, addr) : 0;
		if (k >= 0 && !(flags & HELD_SHARED && o->held_flags[k] & HELD_SHARED))
			release_other(lk, o, addr);
	}
	struct lock_rec *l = locks_rec_get(lk, t, addr, how);
	if (!l)
		return;
	l->s.acquisitions++;
	if (flags & HELD_SHARED)
		l->s.shared++;
	add_tid(l->s.holders, &l->s.n_holders, t->tid);
	if (contended) {
		l->s.contended++;
		add_tid(l->s.waiters, &l->s.n_waiters, t->tid);
		l->s.spin += lk->now - wait_start;
		interval(lk, t, LOCK_SPIN, addr, wait_start, lk->now);
		if (++l->run == 3)	/* three handoffs in a row to waiting threads */
			l->s.convoys++;
	} else {
		l->run = 0;
	}
	if (t->n_held < MAX_HELD) {
		t->held[t->n_held] = addr;
		t->held_depth[t->n_held] = 0;
		t->held_flags[t->n_held] = (uint8_t)flags;
		t->held_at[t->n_held++] = lk->now;
	}
}

void locks_released(struct locks *lk, struct thread_state *t, uint64_t addr)
{
	for (uint32_t i = t->n_held; i-- > 0;) {
		if (t->held[i] != addr)
			continue;
		uint64_t hold = lk->now - t->held_at[i];
		uint64_t own = locks_own_between(t, t->held_at[i], lk->now);
		struct lock_rec *l = locks_rec_get(lk, t, addr, "atomic");
		if (l) {
			l->s.total_hold += hold;
			if (hold > l->s.max_hold)
				l->s.max_hold = hold;
			l->s.own_total_hold += own;
			if (own > l->s.own_max_hold)
				l->s.own_max_hold = own;
			l->last_release = lk->now;
			l->last_holder = t->tid;
		}
		interval(lk, t, t->held_flags[i] & HELD_SHARED ? LOCK_SHARED_HOLD : LOCK_HOLD, addr,
			 t->held_at[i], lk->now);
		t->held[i] = t->held[--t->n_held];
		t->held_at[i] = t->held_at[t->n_held];
		t->held_depth[i] = t->held_depth[t->n_held];
		t->held_flags[i] = t->held_flags[t->n_held];
		return;
	}
}

static void refresh_entries(struct lock_program *p)
{
	p->stale = false;
	memset(p->entry_bits, 0, sizeof(p->entry_bits));
	p->n_entries = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; p->st && i < N_ENTRIES; i++) {
		uint64_t pcs[MAX_DEFS];
		size_t n = symtab_find_funcs(p->st, entry_names[i].name, pcs, MAX_DEFS);
		for (size_t k = 0; k < n; k++) {
			p->entry_pc[p->n_entries] = pcs[k];
			p->entry_name[p->n_entries++] = (uint8_t)i;
			uint64_t h = entry_hash(pcs[k]);
			p->entry_bits[h >> 6] |= 1ull << (h & 63);
			lo = pcs[k] < lo ? pcs[k] : lo;
			hi = pcs[k] > hi ? pcs[k] : hi;
		}
	}
	p->entry_lo = p->n_entries ? lo : 0;
	p->entry_span = p->n_entries ? hi - lo + 1 : 0;
}

/* Whether PID's program STREAM has a lock in the table (its symbols name them at the end). */
static bool has_locks(void *ctx, uint32_t pid, uint32_t stream)
{
	const struct locks *lk = ctx;
	for (size_t i = 0; i < lk->n_locks; i++)
		if (lk->locks[i].s.pid == pid && lk->locks[i].s.stream == stream)
			return true;
	return false;
}

/* The entry points for an instruction of PID: its program's, else the shared table's. */
static const struct lock_program *entries_for(struct locks *lk, uint32_t pid)
{
	struct lock_program *p = lock_programs_current(&lk->progs, pid);
	if (p->stale)
		refresh_entries(p);
	return p;
}

struct symtab *locks_symtab(struct locks *lk, uint32_t pid, uint32_t stream)
{
	return lock_programs_symtab(&lk->progs, pid, stream);
}

const char *locks_program(struct locks *lk, uint32_t pid, uint32_t stream)
{
	return lock_programs_exe(&lk->progs, pid, stream);
}

/* A process record: PID runs program STREAM from now on. An exec keeps the pid and its
 * thread 1, but what that thread held belonged to the old program (its locks, its calls in
 * progress): the thread starts afresh in the new one. */
static void process_start(struct locks *lk, uint32_t pid, uint32_t stream)
{
	for (size_t k = 0; k < lk->n_th; k++)
		if (lk->th[k].pid == pid) {
			struct thread_state *t = &lk->th[k];
			uint32_t tid = t->tid;
			free(t->runs);	/* the program before ran them: its next instruction opens one */
			memset(t, 0, sizeof(*t));
			t->pid = pid;
			t->stream = stream;
			t->tid = tid;
			if (lk->runner == k)
				lk->runner = SIZE_MAX;
		}
}

/* A condvar wait's end: the mutex, released at the first write of its lock word in the call
 * (in_call_refs), is taken back at the last one (or the return); contended only when the
 * thread waited on the mutex itself. */
static void cond_wait_end(struct locks *lk, struct thread_state *t)
{
	uint64_t addr = t->lock_addr;
	if (!t->released_at) {
		uint64_t now = lk->now;
		lk->now = t->call_start;
		locks_released(lk, t, addr);
		lk->now = now;
	}
	if (t->at > t->released_at)
		lk->now = t->at;
	locks_acquired(lk, t, addr, "pthread_mutex", t->mutex_wait_at, t->mutex_wait_at != 0, 0);
}

/* The depth of ADDR among T's held locks, NULL when T does not hold it. */
static uint32_t *held_depth(struct thread_state *t, uint64_t addr)
{
	int i = locks_held_index(t, addr);
	return i < 0 ? NULL : &t->held_depth[i];
}

static void call_end(struct locks *lk, struct thread_state *t)
{
	enum role r = t->in_call;
	t->in_call = R_NONE;
	if (!t->lock_addr && t->relock_addr && (r == R_MUTEX_LOCK || r == R_TRYLOCK)) {
		uint32_t *d = held_depth(t, t->relock_addr);
		if (d)
			++*d;
		return;
	}
	if (!t->lock_addr || r == R_COND_SIGNAL || r == R_OTHER_SYNC)
		return;
	if (rwlock_role(r)) {
		rwlock_call_end(lk, t, r);
		return;
	}
	if (r == R_COND_WAIT) {
		uint64_t now = lk->now;
		cond_wait_end(lk, t);
		lk->now = now;
		return;
	}
	const char *how = r == R_SPIN_LOCK || r == R_SPIN_UNLOCK ? "pthread_spin" : "pthread_mutex";
	uint64_t now = lk->now;
	if (t->at)
		lk->now = t->at;	/* the decisive write, not the return */
	if (r == R_MUTEX_LOCK || r == R_SPIN_LOCK || r == R_TRYLOCK) {
		/* a trylock that found the lock taken does one failed atomic and returns */
		bool contended = t->waited || t->atomics > 1;
		if (r != R_TRYLOCK || t->owner_write)	/* EBUSY: glibc writes __owner on success */
			locks_acquired(lk, t, t->lock_addr, how, t->call_start, contended, 0);
	} else {
		/* an unlock that never wrote the lock word but counted a recursive mutex down:
		 * still held (the outer unlock writes it) */
		uint32_t *d = r == R_MUTEX_UNLOCK && !t->at ? held_depth(t, t->lock_addr) : NULL;
		if (d && *d)
			--*d;
		else
			locks_released(lk, t, t->lock_addr);
	}
	lk->now = now;
}

static void call_begin(struct locks *lk, struct thread_state *t, enum role r)
{
	t->in_call = r;
	t->ret[0] = t->prev_end[0];	/* direct call */
	t->ret[1] = t->prev_end[1];	/* call through a PLT jump */
	/* through the lazy-binding resolver: the innermost call still open */
	t->ret[2] = t->depth ? t->shadow[(t->depth - 1) % 32] : 0;
	t->call_start = lk->now;
	t->lock_addr = 0;
	t->atomics = 0;
	t->waited = false;
	t->timed_out = false;
	t->unregistered = false;
	t->owner_write = false;
	t->at = 0;
	t->released_at = 0;
	t->mutex_wait_at = 0;
	t->relock_addr = 0;
}

/* An atomic read-modify-write: a locked write, a modify, or a read and a write of one address
 * by one instruction (whatever way the source reports a compare-and-swap). */
bool locks_insn_rmw(const struct spent_trace_batch *b, const struct spent_trace_insn *in,
		    bool locked, bool flags_seen, uint64_t *addr)
{
	if (flags_seen && !locked)
		return false;	/* a plain `add [mem]` is no atomic */
	for (uint32_t k = 0; k < in->nrefs; k++) {
		const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
		if (r->kind == SPENT_TRACE_REF_MODIFY || (locked && r->kind == SPENT_TRACE_REF_WRITE)) {
			*addr = r->addr;
			return true;
		}
		for (uint32_t j = 0; j < in->nrefs; j++) {
			const struct spent_trace_ref *o = &b->refs[in->ref0 + j];
			if (r->kind == SPENT_TRACE_REF_READ && o->kind == SPENT_TRACE_REF_WRITE && o->addr == r->addr) {
				*addr = r->addr;
				return true;
			}
		}
	}
	return false;
}

/* The words of a pthread_mutex_t (x86-64) whose writes name it: __lock, __count, __owner,
 * __nusers. Not __list (bytes 24-39): a robust mutex's lock and unlock link and unlink it
 * among the thread's other robust mutexes, writing into those (unlock(B) released A). */
#define MUTEX_NAMING_BYTES 16

uint64_t locks_held_written(const struct thread_state *t, uint64_t addr, uint64_t naming_bytes,
			    bool rwlock)
{
	for (uint32_t h = 0; h < t->n_held; h++)
		if (addr >= t->held[h] && addr < t->held[h] + naming_bytes &&
		    !(t->held_flags[h] & HELD_RWLOCK) == !rwlock)
			return t->held[h];
	return 0;
}

/* Inside a lock call the first atomic names the lock; inside an unlock call any write into a
 * lock the thread holds does (glibc writes the owner and user count before the lock word). */
static void in_call_refs(struct locks *lk, struct thread_state *t,
			 const struct spent_trace_batch *b, const struct spent_trace_insn *in, bool locked)
{
	uint64_t addr;
	if (t->in_call == R_COND_SIGNAL || t->in_call == R_OTHER_SYNC)
		return;
	if (t->in_call == R_LLL_WAIT) {
		locks_lll_wait_refs(lk, t, b, in);
		return;
	}
	if (rwlock_role(t->in_call)) {
		rwlock_call_refs(lk, t, b, in, locked);
		return;
	}
	bool unlock = t->in_call == R_MUTEX_UNLOCK || t->in_call == R_SPIN_UNLOCK ||
		      t->in_call == R_COND_WAIT;
	if (!unlock) {
		if (locks_insn_rmw(b, in, locked, lk->flags_seen, &addr)) {
			t->atomics++;
			if (!t->lock_addr)
				t->lock_addr = addr;
			if (addr == t->lock_addr)
				t->at = lk->now;
		}
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
			if (r->kind == SPENT_TRACE_REF_READ)
				continue;
			if (t->lock_addr && r->addr > t->lock_addr &&
			    r->addr < t->lock_addr + MUTEX_NAMING_BYTES)
				t->owner_write = true;
			uint64_t held = t->lock_addr ? 0 :
				locks_held_written(t, r->addr, MUTEX_NAMING_BYTES, false);
			if (held)
				t->relock_addr = held;
		}
		return;
	}
	for (uint32_t k = 0; k < in->nrefs && !t->lock_addr; k++) {
		const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
		if (r->kind != SPENT_TRACE_REF_READ)
			t->lock_addr = locks_held_written(t, r->addr, MUTEX_NAMING_BYTES, false);
	}
	/* the release is the write of the lock word itself, which may come well before the
	 * return (the unlocking thread can be descheduled in the futex wake) */
	for (uint32_t k = 0; k < in->nrefs && t->lock_addr; k++)
		if (b->refs[in->ref0 + k].kind != SPENT_TRACE_REF_READ && b->refs[in->ref0 + k].addr == t->lock_addr) {
			t->at = lk->now;
			if (t->in_call == R_COND_WAIT && !t->released_at) {
				/* released now: other threads may take it while this one waits */
				t->released_at = lk->now;
				locks_released(lk, t, t->lock_addr);
			}
		}
}

/* Instruction IN of thread T, whose process's entry points are PS (its position: lk->now).
 * Out of line: inlined, it left feed_insns' loop too few registers for its own cursors. */
static __attribute__((noinline)) void on_insn(struct locks *lk, const struct spent_trace_batch *b,
					      const struct spent_trace_insn *in, struct thread_state *t,
					      const struct lock_program *ps)
{
	if (t->in_call && (in->pc == t->ret[0] || in->pc == t->ret[1] || in->pc == t->ret[2]))
		call_end(lk, t);
	const uint64_t *entry_pc = ps->entry_pc;
	for (size_t e = 0; maybe_entry(ps, in->pc) && e < ps->n_entries; e++)
		if (in->pc == entry_pc[e]) {
			size_t i = ps->entry_name[e];
			if (t->in_call)	/* its return was missed: close it */
				call_end(lk, t);
			/* a bare atomic still waiting for its release store across a pthread lock
			 * call was an atomic counter, not a spin lock: forget it. A try begun by a
			 * cmpxchg stays: glibc's own lock may be held across the call (flockfile,
			 * then a mutex: stderr's 10 holds were all lost), and glibc's lock wait
			 * goes on with the try its cmpxchg began. */
			if (entry_names[i].role != R_LLL_WAIT)
				locks_forget_counter_tries(t);
			call_begin(lk, t, entry_names[i].role);
			break;
		}
	if (in->flags)
		lk->flags_seen = true;
	if (in->flags & SPENT_TRACE_INSN_CALL)
		t->shadow[t->depth++ % 32] = in->pc + in->len;
	else if ((in->flags & SPENT_TRACE_INSN_RET) && t->depth)
		t->depth--;
	bool locked = in->flags & SPENT_TRACE_INSN_LOCKED;
	if (t->in_call) {
		in_call_refs(lk, t, b, in, locked);
	} else if (in->pc - ps->rtld_start >= ps->rtld_end - ps->rtld_start) {
		for (uint32_t k = 0; k < in->nrefs; k++)
			locks_bare_ref(lk, t, &b->refs[in->ref0 + k], in->flags);
	}
	t->prev_end[1] = t->prev_end[0];
	t->prev_end[0] = in->pc + in->len;
}

static void on_event(struct locks *lk, const struct spent_trace_event *ev)
{
	if (ev->kind == SPENT_TRACE_EV_PROCESS_START && ev->pid)
		process_start(lk, ev->pid, ev->u.process.stream);
	lock_programs_event(&lk->progs, ev);
	if (ev->kind != SPENT_TRACE_EV_SYSCALL || ev->u.syscall.nr != SYS_FUTEX)
		return;
	int op = (int)(ev->u.syscall.args[1] & 0x7f);
	if (op != 0 && op != 9)	/* FUTEX_WAIT, FUTEX_WAIT_BITSET */
		return;
	struct thread_state *t = thread(lk, ev->pid, ev->tid);
	if (!t || t->in_call == R_OTHER_SYNC)
		return;
	if (rwlock_role(t->in_call)) {	/* on one of its futex words, not its lock word */
		rwlock_futex_wait(lk, t, ev->u.syscall.ret);
		return;
	}
	if (t->in_call == R_LLL_WAIT) {	/* its lock word; the try goes on (locks_lll_wait_refs) */
		struct lock_rec *l = locks_rec_get(lk, t, ev->u.syscall.args[0], "glibc_lock");
		if (l)
			l->s.futex_waits++;
		return;
	}
	uint64_t addr = ev->u.syscall.args[0];
	if (t->in_call == R_COND_WAIT || t->in_call == R_COND_SIGNAL) {
		/* waiting on the condvar (a signal may wait for the group switch too) is no lock
		 * wait; on the mutex, when taking it back, it is */
		if (t->in_call == R_COND_SIGNAL || !t->lock_addr || addr != t->lock_addr) {
			uint32_t i = 0;
			while (i < lk->n_cond_words && (lk->cond_words[i].addr != addr ||
							lk->cond_words[i].pid != t->pid))
				i++;
			if (i == lk->n_cond_words && i < 64)
				lk->cond_words[lk->n_cond_words++] = (typeof(lk->cond_words[0])){
					t->pid, addr };
			return;
		}
		t->mutex_wait_at = lk->now;
	} else if (t->in_call) {
		t->waited = true;
		if (!t->lock_addr)
			t->lock_addr = addr;
	}
	/* outside the lock calls a futex wait is on a lock only if the address is one already
	 * (a custom lock); a join or a semaphore is none */
	struct lock_rec *l = t->in_call ? locks_rec_get(lk, t, addr, "pthread_mutex") :
					  lock_find(lk, t, addr);
	if (l)
		l->s.futex_waits++;
}

static inline bool any_try_open(const struct thread_state *t)
{
	uint32_t open = 0;
	for (uint32_t i = 0; i < MAX_ATOMIC; i++)
		open |= t->tries[i].tries;
	return open != 0;
}

/* Whether a write of IN, no atomic, can matter to T outside the lock calls: it overlaps a bare
 * atomic T has open (its release store, or the memory reused: locks_bare_ref). */
static inline bool writes_to_watch(struct thread_state *t, const struct spent_trace_batch *b,
				   const struct spent_trace_insn *in)
{
	for (uint32_t k = 0; k < in->nrefs; k++) {
		const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
		if (r->kind != SPENT_TRACE_REF_READ && locks_find_try(t, r, false))
			return true;
	}
	return false;
}

/* Instructions [I, END) of B, between two events. Most of a trace is none of the lock model's
 * business: an instruction outside the lock calls, no atomic, at no entry point, writing over
 * no bare atomic its thread has open only moves the thread's last two instruction ends and, a
 * call or a return, its shadow stack. Through on_insn each such instruction cost 3 of the 5 s
 * `spent locks` took on a 473 M-instruction gzip log that reads in 2 s; here, under 1 s. */
static __attribute__((noinline)) void feed_insns(struct locks *lk, const struct spent_trace_batch *b,
						  size_t i, size_t end)
{
	struct thread_state *t = NULL;
	const struct lock_program *ps = NULL;
	uint32_t pid = 0, tid = 0;
	/* T's last two instruction ends and what it watches, in registers between on_insn's
	 * calls: kept in memory, each instruction waited for the store of the one before */
	uint64_t end0 = 0, end1 = 0;
	enum { WATCH_NOTHING, WATCH_WRITES, IN_CALL } watch = WATCH_NOTHING;
	bool flags_seen = lk->flags_seen;
	for (const struct spent_trace_insn *in = &b->insns[i], *last = &b->insns[end]; in < last; in++) {
		if (!t || in->tid != tid || in->pid != pid) {
			if (t) {
				t->prev_end[0] = end0;
				t->prev_end[1] = end1;
			}
			/* thread() may move the array: T is the last one it gave */
			if (!(t = thread(lk, in->pid, in->tid)))
				continue;
			locks_run_begins(lk, t, b->first_index + (uint64_t)(in - b->insns));
			ps = entries_for(lk, in->pid);
			pid = in->pid;
			tid = in->tid;
			end0 = t->prev_end[0];
			end1 = t->prev_end[1];
			watch = t->in_call ? IN_CALL : any_try_open(t) ? WATCH_WRITES : WATCH_NOTHING;
		}
		if (watch != IN_CALL && !(in->flags & SPENT_TRACE_INSN_LOCKED) && !maybe_entry(ps, in->pc) &&
		    (watch == WATCH_NOTHING || !writes_to_watch(t, b, in))) {
			if (in->flags & SPENT_TRACE_INSN_CALL)	/* as on_insn */
				t->shadow[t->depth++ % 32] = in->pc + in->len;
			else if ((in->flags & SPENT_TRACE_INSN_RET) && t->depth)
				t->depth--;
			if (!flags_seen && in->flags)
				lk->flags_seen = flags_seen = true;
			end1 = end0;
			end0 = in->pc + in->len;
			continue;
		}
		t->prev_end[0] = end0;
		t->prev_end[1] = end1;
		lk->now = b->first_index + (uint64_t)(in - b->insns);
		on_insn(lk, b, in, t, ps);
		flags_seen = lk->flags_seen;
		end0 = t->prev_end[0];
		end1 = t->prev_end[1];
		watch = t->in_call ? IN_CALL : any_try_open(t) ? WATCH_WRITES : WATCH_NOTHING;
	}
	if (t) {
		t->prev_end[0] = end0;
		t->prev_end[1] = end1;
	}
	lk->now = b->first_index + end - 1;	/* the events after it see the last instruction's */
}

int locks_feed(struct locks *lk, const struct spent_trace_batch *b)
{
	size_t e = 0;
	lk->insns += b->n_insns;
	for (size_t i = 0; i < b->n_insns;) {
		while (e < b->n_events && b->events[e].before <= i)
			on_event(lk, &b->events[e++]);
		size_t end = e < b->n_events && b->events[e].before < b->n_insns ? b->events[e].before :
										    b->n_insns;
		feed_insns(lk, b, i, end);
		i = end;
	}
	while (e < b->n_events)
		on_event(lk, &b->events[e++]);
	lk->now = b->first_index + b->n_insns;
	return lk->oom || lk->progs.oom ? -ENOMEM : 0;
}

/* Holds never released within the trace are dropped, not drawn to the end: they are usually a
 * release that took a path the patterns do not know. */
void locks_finish(struct locks *lk)
{
	for (size_t i = 0; i < lk->n_th; i++)
		lk->th[i].n_held = 0;
}

static int table_cmp(const void *a, const void *b)
{
	const struct lock_summary *x = a, *y = b;
	if (x->acquisitions != y->acquisitions)
		return x->acquisitions > y->acquisitions ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const struct lock_summary *locks_table(struct locks *lk, size_t *n)
{
	free(lk->table);
	lk->table = malloc((lk->n_locks + 1) * sizeof(*lk->table));
	*n = 0;
	if (!lk->table)
		return NULL;
	for (size_t i = 0; i < lk->n_locks; i++) {
		bool cond = false;
		for (uint32_t k = 0; k < lk->n_cond_words; k++)
			cond |= lk->cond_words[k].addr == lk->locks[i].s.addr &&
				lk->cond_words[k].pid == lk->locks[i].s.pid;
		if (!lk->locks[i].s.acquisitions && (cond || !lk->locks[i].s.futex_waits))
			continue;
		lk->table[(*n)++] = lk->locks[i].s;
	}
	qsort(lk->table, *n, sizeof(*lk->table), table_cmp);
	return lk->table;
}

const struct lock_interval *locks_intervals(const struct locks *lk, size_t *n)
{
	*n = lk->n_iv;
	return lk->iv;
}

uint64_t locks_instructions(const struct locks *lk)
{
	return lk->insns;
}

uint64_t locks_end_position(const struct locks *lk)
{
	return lk->now;
}

const struct lock_thread *locks_threads(const struct locks *lk, size_t *n)
{
	*n = lk->n_th;
	return lk->tids;
}

bool locks_many_processes(const struct locks *lk)
{
	for (size_t i = 1; i < lk->n_th; i++)
		if (lk->tids[i].pid != lk->tids[0].pid)
			return true;
	return false;
}
