/* analysis/locks_own.c - the instructions a holder itself ran during a hold. A hold is measured
 * on the trace's instruction axis, and Valgrind runs one thread at a time: a holder descheduled
 * inside its critical section holds the lock across the others' work (pigz's job-queue mutex:
 * holds of 7.5 M instructions of which the holder ran 190). Each thread keeps the stretches of
 * the trace it ran, back to the oldest position a hold of it may still be dated from; a hold's
 * own instructions are its overlap with them. */
#include <string.h>

#include "analysis/locks_int.h"
#include "core/alloc.h"

/* The oldest position T's model may still date a hold from: its held locks' acquisitions, its
 * open tries' first attempts (a bare lock's acquisition is dated back to its last attempt),
 * its lock call's start (the decisive write inside it); UINT64_MAX when none. */
static uint64_t oldest_needed(const struct thread_state *t)
{
	uint64_t at = t->in_call ? t->call_start : UINT64_MAX;
	for (uint32_t i = 0; i < t->n_held; i++)
		if (t->held_at[i] < at)
			at = t->held_at[i];
	for (uint32_t i = 0; i < MAX_ATOMIC; i++)
		if (t->tries[i].tries && t->tries[i].first < at)
			at = t->tries[i].first;
	return at;
}

void locks_run_begins(struct locks *lk, struct thread_state *t, uint64_t at)
{
	size_t i = (size_t)(t - lk->th);
	if (lk->runner == i)
		return;
	if (lk->runner < lk->n_th) {
		struct thread_state *o = &lk->th[lk->runner];
		if (o->n_runs)
			o->runs[o->n_runs - 1].hi = at;
	}
	lk->runner = i;
	uint64_t keep = oldest_needed(t);
	size_t k = 0;
	while (k < t->n_runs && t->runs[k].hi <= keep)
		k++;
	if (k) {	/* (runs is NULL before the thread's first stretch) */
		memmove(t->runs, t->runs + k, (t->n_runs - k) * sizeof(*t->runs));
		t->n_runs -= k;
	}
	if (ALLOC_GROW(t->runs, t->n_runs + 1, t->cap_runs)) {
		lk->oom = 1;
		return;
	}
	t->runs[t->n_runs++] = (struct run_span){ at, UINT64_MAX };
}

uint64_t locks_own_between(const struct thread_state *t, uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	for (size_t k = t->n_runs; k-- > 0;) {
		const struct run_span *r = &t->runs[k];
		if (r->hi <= a)
			break;
		uint64_t lo = r->lo > a ? r->lo : a, hi = r->hi < b ? r->hi : b;
		if (hi > lo)
			n += hi - lo;
	}
	return n;
}
