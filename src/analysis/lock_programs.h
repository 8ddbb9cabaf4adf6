/* analysis/lock_programs.h - the programs of a traced process tree as the lock model
 * (analysis/locks.c) needs them: which program each pid runs now (an exec starts another in
 * the same pid), and for each program the symbols of its images, room for the addresses of the
 * lock entry points it watches, and its dynamic linker's code. A program's table is dropped
 * when it exits or execs, unless the model still has locks to name with it. */
#ifndef SPENT_ANALYSIS_LOCK_PROGRAMS_H
#define SPENT_ANALYSIS_LOCK_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/symtab.h"

#define LOCK_PROGRAM_MAX_ENTRIES 128

struct lock_program {
	uint32_t pid, stream;	/* stream: the log's number of the program (0: none named) */
	bool retired;	/* an earlier program of the pid, kept to name its locks */
	bool stale;	/* images added since entry_pc was looked up (the model refills it) */
	struct symtab *st;
	char *exe;	/* its executable, from the process record (NULL: none named) */
	/* the entry points watched: each name's every definition (an LD_PRELOAD wrapper's and
	 * libc's, whose own calls bypass the wrapper), with the index of its name */
	uint64_t entry_pc[LOCK_PROGRAM_MAX_ENTRIES];
	uint8_t entry_name[LOCK_PROGRAM_MAX_ENTRIES];
	uint32_t n_entries;
	/* a bit per hash of each entry_pc: most instructions skip the scan. 4096 bits: with 64,
	 * the 37 names (aliases share a pc) left one instruction in three scanning; with 1024,
	 * 1.2% of a `sort --parallel=2` trace's instructions (17 M) still hit a bit */
	uint64_t entry_bits[64];
	/* [entry_lo, entry_lo + entry_span): the entry points' range (libc's, mostly), so the
	 * program's own instructions skip the hash */
	uint64_t entry_lo, entry_span;
	/* the dynamic linker's code [start, end) (0, 0: none seen) */
	uint64_t rtld_start, rtld_end;
};

struct lock_programs {
	struct lock_program shared;	/* the borrowed table: images of no known process (pid 0) */
	struct lock_program *procs;
	size_t n_procs, cap_procs, cur;	/* cur: the last one looked up */
	struct { uint32_t pid, stream; } *streams;	/* the program each pid runs now */
	size_t n_streams, cap_streams;
	/* whether the model has locks of PID's program STREAM (keep its table to name them) */
	bool (*has_locks)(void *ctx, uint32_t pid, uint32_t stream);
	void *ctx;
	int oom;
};

/* SYMS (borrowed; NULL: no symbols wanted, only the programs' numbers are followed). */
void lock_programs_init(struct lock_programs *lp, struct symtab *syms,
			bool (*has_locks)(void *ctx, uint32_t pid, uint32_t stream), void *ctx);
void lock_programs_release(struct lock_programs *lp);
/* The program PID runs now: 0 until a process record names one. */
uint32_t lock_programs_stream(const struct lock_programs *lp, uint32_t pid);
/* The current table of PID's program, else the shared one (never NULL). */
struct lock_program *lock_programs_lookup(struct lock_programs *lp, uint32_t pid);
static inline struct lock_program *lock_programs_current(struct lock_programs *lp, uint32_t pid)
{
	/* per instruction: the program looked up last, nearly always */
	if (lp->cur < lp->n_procs && lp->procs[lp->cur].pid == pid && !lp->procs[lp->cur].retired)
		return &lp->procs[lp->cur];
	return lock_programs_lookup(lp, pid);
}
/* Follow a trace event: process records, image loads, exits. */
void lock_programs_event(struct lock_programs *lp, const struct spent_trace_event *ev);
/* The symbols of PID's program STREAM, else the shared table's (NULL without symbols). */
struct symtab *lock_programs_symtab(const struct lock_programs *lp, uint32_t pid, uint32_t stream);
/* The executable of PID's program STREAM, NULL when no process record named it. */
const char *lock_programs_exe(const struct lock_programs *lp, uint32_t pid, uint32_t stream);

#endif
