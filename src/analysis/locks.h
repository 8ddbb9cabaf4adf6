/* analysis/locks.h - lock activity found in a trace by pattern (PatchWrx paper, section 4.1):
 * pthread mutex, read-write lock and spin lock entry points (by symbol), lock-prefixed read-modify-write on an
 * address followed by a plain release store to it, and futex waits. Times are stream positions
 * (instructions executed, the paper's 1-CPI clock). A thread is a (pid, tid) pair and a lock a
 * (pid, address) pair: a process-tree trace numbers threads afresh in each process, and two
 * processes' equal addresses are different memory. */
#ifndef SPENT_ANALYSIS_LOCKS_H
#define SPENT_ANALYSIS_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/symtab.h"
#include "spent/trace.h"

#define LOCKS_MAX_TIDS 16

/* LOCK_SHARED_HOLD: a read-write lock held as a reader (other readers may hold it meanwhile);
 * LOCK_HOLD: held alone (a mutex, a spin lock, a read-write lock's writer) */
enum lock_interval_kind { LOCK_HOLD, LOCK_SPIN, LOCK_SHARED_HOLD };

struct lock_interval {
	uint32_t pid, stream, tid;
	uint32_t kind;		/* enum lock_interval_kind */
	uint64_t lock;		/* lock address */
	uint64_t start, end;	/* instruction positions */
};

struct lock_summary {
	uint64_t addr;
	uint32_t pid;		/* the process it is in (0: the source knows none) */
	/* the log's number of the program that pid ran (an exec starts another in the same
	 * pid: its locks are its own, named by its images); 0: the source names none */
	uint32_t stream;
	/* "pthread_mutex", "pthread_rwlock", "pthread_spin", "glibc_lock" (glibc's own: malloc's
	 * arenas, stdio's streams), "atomic" (a bare spin lock) */
	const char *how;
	uint64_t acquisitions, contended, convoys, futex_waits;
	uint64_t shared;	/* of the acquisitions, a read-write lock's by readers */
	/* instructions; a read-write lock's total sums its holders' holds, and readers' overlap */
	uint64_t total_hold, max_hold, spin;
	/* of the holds, the instructions the holders themselves ran: Valgrind runs one thread at a
	 * time, so a holder descheduled while it holds the lock holds it across others' work */
	uint64_t own_total_hold, own_max_hold;
	uint32_t holders[LOCKS_MAX_TIDS], n_holders;	/* threads (of pid) that acquired it */
	uint32_t waiters[LOCKS_MAX_TIDS], n_waiters;	/* threads (of pid) that waited for it */
};

struct locks;

/* SYMS (borrowed; NULL: find no pthread calls) names the entry points of instructions of no
 * known process and gets the images of pid 0; every process of the trace gets a table of its
 * own images (locks_symtab), read from its image loads. */
int locks_new(struct symtab *syms, struct locks **out);
void locks_free(struct locks *lk);
/* Pattern-match BATCH; 0 or -ENOMEM. */
int locks_feed(struct locks *lk, const struct spent_trace_batch *batch);
/* Close holds still open at the end of the trace. */
void locks_finish(struct locks *lk);
/* Per-lock table, most acquired first; valid until locks_free(). */
const struct lock_summary *locks_table(struct locks *lk, size_t *n);
/* Every hold and spin interval in the order they ended. */
const struct lock_interval *locks_intervals(const struct locks *lk, size_t *n);
/* Instructions fed (of the selected processes). */
uint64_t locks_instructions(const struct locks *lk);
/* The stream position after the last one fed: the end of the time axis of the intervals
 * (with a selection of processes, positions count the whole tree's instructions). */
uint64_t locks_end_position(const struct locks *lk);
/* The symbols of the images of process PID's program STREAM, to name its locks (the table
 * given to locks_new when the trace named none for it); NULL when locks_new got none. */
struct symtab *locks_symtab(struct locks *lk, uint32_t pid, uint32_t stream);
/* The executable of process PID's program STREAM, NULL when the trace names none. */
const char *locks_program(struct locks *lk, uint32_t pid, uint32_t stream);
struct lock_thread {
	uint32_t pid, tid;
};
/* Threads seen, in order of appearance. */
const struct lock_thread *locks_threads(const struct locks *lk, size_t *n);
/* Whether the threads seen belong to more than one process. */
bool locks_many_processes(const struct locks *lk);

#endif
