/* trace/memsource.h - an in-memory trace (built instruction by instruction) and a trace source
 * that replays it in batches, plus small generators of synthetic traces for tests and benches. */
#ifndef SPENT_TRACE_MEMSOURCE_H
#define SPENT_TRACE_MEMSOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

/* A growable trace: instructions, their data references and events, in stream order. */
struct memtrace {
	struct spent_trace_insn *insns;	/* ref0 is absolute (index into refs) */
	size_t n_insns, cap_insns;
	struct spent_trace_ref *refs;
	size_t n_refs, cap_refs;
	struct spent_trace_event *events;	/* before is absolute (index into insns) */
	size_t n_events, cap_events;
};

/* Allocate an empty trace; free with memtrace_free(). NULL on ENOMEM. */
struct memtrace *memtrace_new(void);
void memtrace_free(struct memtrace *t);

/* Append one executed instruction of thread TID; 0 or -ENOMEM. */
int memtrace_insn(struct memtrace *t, uint32_t tid, uint64_t pc, uint8_t len, uint16_t flags);
/* Append a data reference to the last instruction; 0, -EINVAL (no instruction yet), -ENOMEM. */
int memtrace_ref(struct memtrace *t, uint64_t addr, uint32_t size, uint32_t kind);
/* Append an event that precedes the next appended instruction (its 'before' is set here). */
int memtrace_event(struct memtrace *t, const struct spent_trace_event *ev);

/* A source replaying T in batches of at most BATCH instructions (0: 4096). T is borrowed and
 * must outlive the source. 0 or -ENOMEM; free the source with spent_trace_source_free(). */
int memtrace_source_new(const struct memtrace *t, size_t batch, struct spent_trace_source **out);

/* Synthetic workload: loops over a code region, array sweeps, random hits in a working set,
 * stack traffic, several threads. Deterministic for a given seed. */
struct memgen_config {
	uint64_t seed;
	size_t n_insns;		/* instructions to generate */
	uint32_t threads;	/* 1.. (round-robin slices of 'slice' instructions) */
	size_t slice;		/* instructions per thread slice (0: 1000) */
	uint64_t code_bytes;	/* size of the code region the loops wander over */
	uint64_t data_bytes;	/* size of the random working set */
	uint64_t array_bytes;	/* size of the swept array */
	unsigned data_pct;	/* percentage of instructions with a data reference */
};

/* Append N_INSNS generated instructions to T; 0 or -ENOMEM. */
int memgen_mixed(struct memtrace *t, const struct memgen_config *cfg);

#endif
