/* citcat/replay_thread.c - the replayed process's threads: all simulated in the one address
 * space, one at a time, switched where the recording's SWITCH records say (the recorder ran
 * them one at a time). Each thread not running keeps its CPU state in a Unicorn context; a
 * thread switched away from in a syscall completes it (its SYSCALL record) when it runs
 * again. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "citcat/replay_int.h"
#include "citcat/replay_mem.h"

int cc_replay_threads_init(struct citcat_replay *rp)
{
	rp->thr = calloc(4, sizeof(*rp->thr));
	if (!rp->thr)
		return -ENOMEM;
	rp->thr_cap = 4;
	rp->nthr = 1;
	rp->cur_thr = 0;
	rp->thr[0].tid = (uint32_t)rp->rec->recs[0].u.meta.pid;
	rp->thr[0].state = CC_RT_RUNNING;
	return 0;
}

void cc_replay_threads_free(struct citcat_replay *rp)
{
	for (size_t i = 0; i < rp->nthr; i++)
		if (rp->thr[i].ctx)
			uc_context_free(rp->thr[i].ctx);
	free(rp->thr);
	rp->thr = NULL;
	rp->nthr = rp->thr_cap = 0;
}

uint32_t cc_replay_tid(const struct citcat_replay *rp)
{
	return rp->nthr ? rp->thr[rp->cur_thr].tid : (uint32_t)rp->rec->recs[0].u.meta.pid;
}

size_t cc_replay_threads_alive(const struct citcat_replay *rp)
{
	size_t n = 0;
	for (size_t i = 0; i < rp->nthr; i++)
		n += rp->thr[i].state != CC_RT_DEAD;
	return n;
}

static struct cc_rthread *thread_find(struct citcat_replay *rp, uint64_t tid)
{
	for (size_t i = 0; i < rp->nthr; i++)
		if (rp->thr[i].tid == tid && rp->thr[i].state != CC_RT_DEAD)
			return &rp->thr[i];
	return NULL;
}

int cc_replay_thread_clone(struct citcat_replay *rp, uint32_t tid)
{
	if (ALLOC_GROW(rp->thr, rp->nthr + 1, rp->thr_cap))
		return -ENOMEM;
	struct cc_rthread *t = &rp->thr[rp->nthr];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = CC_RT_NEW;
	/* the kernel copies the creator's vector and x87 state; REGS gives the rest */
	if (uc_context_alloc(rp->uc, &t->ctx) != UC_ERR_OK)
		return -ENOMEM;
	if (uc_context_save(rp->uc, t->ctx) != UC_ERR_OK) {
		uc_context_free(t->ctx);
		return -ENOMEM;
	}
	rp->nthr++;
	return 0;
}

void cc_replay_thread_exit(struct citcat_replay *rp)
{
	rp->thr[rp->cur_thr].state = CC_RT_DEAD;
}

int cc_replay_switch_next(struct citcat_replay *rp, int reason, uint64_t at_pc)
{
	const struct cc_recording *r = rp->rec;
	if (rp->failed || rp->done || rp->cur >= r->n || r->recs[rp->cur].kind != CC_REC_SWITCH ||
	    r->recs[rp->cur].u.sw.reason != (uint64_t)reason)
		return 0;
	struct cc_rthread *t = &rp->thr[rp->cur_thr];
	if (reason == CC_SWITCH_SYSCALL) {
		t->state = CC_RT_BLOCKED;
		t->sc_pc = at_pc;
	} else if (t->state == CC_RT_RUNNING) {
		t->state = CC_RT_READY;
	}
	rp->switch_pending = 1;
	rp->resume = 1;
	return 1;
}

/* The record after a thread's first SWITCH: REGS (its registers at its first instruction),
 * then MEM (the tid the kernel wrote for it). */
static void thread_start(struct citcat_replay *rp, struct cc_rthread *t)
{
	const struct cc_recording *r = rp->rec;
	if (rp->cur >= r->n || r->recs[rp->cur].kind != CC_REC_REGS)
		return cc_replay_fail(rp, -EPROTO, "the recording switches to the new thread %" PRIu32
				      " without its registers", t->tid);
	cc_replay_set_regs(rp, r->recs[rp->cur++].u.regs, true);
	for (; rp->cur < r->n && r->recs[rp->cur].kind == CC_REC_MEM; rp->cur++)
		if (cc_replay_apply(rp, &r->recs[rp->cur], 0))
			return cc_replay_fail(rp, -EFAULT, "cannot start thread %" PRIu32 ": %s",
					      t->tid, rp->err);
}

static void switch_event(struct citcat_replay *rp, uint32_t from, uint32_t to)
{
	if (!rp->sink.event)
		return;
	struct spent_trace_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = SPENT_TRACE_EV_THREAD_SWITCH;
	ev.tid = to;
	ev.u.thread_switch.from_tid = from;
	ev.u.thread_switch.to_tid = to;
	rp->sink.event(rp->sink.ctx, &ev);
}

void cc_replay_do_switch(struct citcat_replay *rp)
{
	const struct cc_recording *r = rp->rec;
	while (rp->switch_pending && !rp->failed && !rp->done) {
		rp->switch_pending = 0;
		const struct cc_rec *sw = &r->recs[rp->cur];
		struct cc_rthread *from = &rp->thr[rp->cur_thr], *to = thread_find(rp, sw->u.sw.tid);
		if (!to || to == from || to->state == CC_RT_RUNNING)
			return cc_replay_fail(rp, -EPROTO, "divergence after %" PRIu64 " instructions: "
					      "the recording switches from thread %" PRIu32 " to thread %"
					      PRIu64 ", which %s", rp->insns, from->tid, sw->u.sw.tid,
					      to ? "is the one running" : "the replay did not create");
		rp->cur++;
		rp->events++;
		rp->switches++;
		from->insns += rp->insns - rp->insns_mark;
		rp->insns_mark = rp->insns;
		if (rp->hook_rip_pending) {	/* where the syscall hook's registers resume */
			uc_reg_write(rp->uc, UC_X86_REG_RIP, &rp->hook_rip);
			rp->hook_rip_pending = 0;
		}
		if (from->state != CC_RT_DEAD) {
			if (!from->ctx && uc_context_alloc(rp->uc, &from->ctx) != UC_ERR_OK)
				return cc_replay_fail(rp, -ENOMEM, "out of memory");
			uc_context_save(rp->uc, from->ctx);
		}
		uc_context_restore(rp->uc, to->ctx);
		int was = to->state;
		to->state = CC_RT_RUNNING;
		rp->cur_thr = (size_t)(to - rp->thr);
		switch_event(rp, from->tid, to->tid);
		if (was == CC_RT_NEW)
			thread_start(rp, to);
		else if (was == CC_RT_BLOCKED && rp->cur < r->n &&
			 r->recs[rp->cur].kind == CC_REC_SIGNAL)
			/* a signal interrupted that syscall while another thread ran: the handler
			 * runs now; the frame holds how the call ends (-EINTR, or a restart) */
			cc_replay_deliver_signal(rp, to->sc_pc, 0);
		else if (was == CC_RT_BLOCKED)	/* its syscall returns now (may switch again) */
			cc_replay_syscall(rp, to->sc_pc, 0);
		else
			cc_replay_switch_next(rp, CC_SWITCH_HERE, 0);
	}
}

int citcat_replay_thread(const struct citcat_replay *rp, size_t i, uint32_t *tid, uint64_t *insns)
{
	if (i >= rp->nthr)
		return -ENOENT;
	*tid = rp->thr[i].tid;
	*insns = rp->thr[i].insns + (i == rp->cur_thr ? rp->insns - rp->insns_mark : 0);
	return 0;
}
