/* profile/profile_int.h - the in-memory profile's private layout, shared by profile.c (images,
 * events, histograms, stacks) and profile_detail.c (tasks, detail rows, spans), which would
 * not fit one file; nothing outside src/profile includes it. */
#ifndef SPENT_PROFILE_INT_H
#define SPENT_PROFILE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "spent/profile.h"

/* A call chain interned once and shared by every detail row that took it: FRAMES[OFF ..
 * OFF + N) of the detail frame pool, leaf first. */
struct detail_chain {
	uint64_t hash;
	size_t off;
	uint32_t n;
};

/* One detail row: (event, task, bucket start, chain) -> count. */
struct detail_row {
	uint64_t time;
	uint64_t count;
	uint32_t ev, task, chain;
};

struct task_slot {
	struct spent_profile_task pub;
	uint64_t hash;
};

/* Who and when (profile_detail.c): rows in insertion order (dense, so spent_profile_detail_get is
 * an index), each table with an open-addressing index of entry + 1 (0 = empty slot). */
struct profile_detail {
	struct task_slot *tasks;
	size_t ntasks, captasks;
	uint32_t *task_index;
	size_t cap_task_index;
	struct spent_profile_frame *frames;	/* pool of every chain's frames */
	size_t nframes, capframes;
	struct detail_chain *chains;
	size_t nchains, capchains;
	uint32_t *chain_index;
	size_t cap_chain_index;
	struct detail_row *rows;
	size_t nrows, caprows;
	uint64_t *row_index;		/* hash >> 32 << 32 | row + 1: most probes never touch a row */
	size_t cap_row_index;
	uint64_t bucket_ns;		/* 0 = the default, SPENT_PROFILE_TIME_BUCKET_NS */
	uint64_t span_start, span_end;	/* 0, 0 = unknown */
};

struct cell {
	uint32_t img, ev;
	uint64_t off;
	uint64_t count;		/* 0 = empty slot */
};

struct stack {
	uint32_t ev;
	uint32_t n;
	struct spent_profile_frame *frames;
	uint64_t count;
	uint64_t hash;
};

/* Every count of an event is part of one of three sums kept here, which adds refuse to make
 * wrap (-EOVERFLOW): then no cell, image total, event total or file total written from them
 * can wrap either, and a reader, which rejects wrapped totals, reads whatever was written. */
struct event_slot {
	struct spent_profile_event pub;
	uint64_t unknown[SPENT_PROFILE_UNK_NR];
	uint64_t counted;	/* placed (cells) + unknown, all reasons */
	uint64_t stacked;	/* call stacks */
	uint64_t detailed;	/* detail rows */
};

/* Whether SUM + ADD fits in 64 bits. */
static inline bool profile_sum_fits(uint64_t sum, uint64_t add)
{
	return sum <= UINT64_MAX - add;
}

struct image_slot {
	struct spent_profile_image pub;
	uint64_t hash;
};

struct spent_profile {
	struct image_slot *images;
	size_t nimages, capimages;
	struct event_slot *events;
	size_t nevents, capevents;
	struct cell *cells;	/* open addressing, capacity power of two */
	size_t ncells, capcells;
	struct stack *stacks;
	size_t nstacks, capstacks;
	uint32_t *stack_index;	/* open addressing: stack index + 1, 0 = empty */
	size_t capindex;
	struct profile_detail detail;
};

/* The call chain F[0..N) (leaf first; images already checked) interned in D: *IDX. */
int profile_detail_chain_intern(struct profile_detail *d, const struct spent_profile_frame *f, size_t n,
				uint32_t *idx);
/* Add COUNT to the row (EV, TASK, TIME, CHAIN) of P's detail as it is (no rounding), making it
 * when new. 0, -ENOMEM, -ENOSPC, -EOVERFLOW (the event's detail counts would wrap). */
int profile_detail_row_add(struct spent_profile *p, uint32_t ev, uint32_t task, uint64_t time,
			   uint32_t chain, uint64_t count);
/* Free the detail part of P (not P itself). */
void profile_detail_release(struct profile_detail *d);
/* Add SRC's tasks, detail rows (images and events through IMAP / EMAP, SRC's indices to
 * DST's) and span to DST; only rows of event ONLY_EV unless it is UINT32_MAX. */
int profile_detail_merge(struct spent_profile *dst, const struct spent_profile *src, const uint32_t *imap,
			 const uint32_t *emap, uint32_t only_ev);

#endif
