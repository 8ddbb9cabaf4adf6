/* citcat/replay_int.h - the replayer's state, shared by the simulator (replay.c) and the
 * trace-stream source over it (source.c). */
#ifndef SPENT_CITCAT_REPLAY_INT_H
#define SPENT_CITCAT_REPLAY_INT_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <unicorn/unicorn.h>
#include <Zydis/Zydis.h>

#include "citcat/citcat.h"
#include "citcat/recording.h"

struct cc_bcount {		/* instructions in a translated block, by (pc, size) */
	uint64_t pc;
	uint32_t size, n;
};

/* Callbacks of a sink-driven replay (NULL in the fast path). */
struct cc_sink_hooks {
	void (*insn)(void *ctx, uint64_t pc, uint32_t size);
	void (*ref)(void *ctx, uint64_t addr, uint32_t size, int write);
	void (*event)(void *ctx, const struct spent_trace_event *ev);
	void *ctx;
};

enum cc_rthread_state {
	CC_RT_RUNNING,		/* the thread being simulated */
	CC_RT_NEW,		/* created by a clone, not run yet */
	CC_RT_READY,		/* switched away from between instructions */
	CC_RT_BLOCKED,		/* switched away from at a syscall; its result comes when it runs */
	CC_RT_DEAD,		/* called exit */
};

/* A thread of the replayed process (replay_thread.c) */
struct cc_rthread {
	uint32_t tid;
	int state;		/* enum cc_rthread_state */
	uc_context *ctx;	/* its CPU state while another thread runs */
	uint64_t sc_pc;		/* CC_RT_BLOCKED: the syscall instruction it waits in */
	uint64_t insns;		/* instructions it executed */
};

struct citcat_replay {
	struct cc_recording *rec;
	uc_engine *uc;
	size_t cur;			/* next record to consume */
	uint64_t insns, syscalls, events;
	uint64_t buffered;		/* syscalls whose record came through the syscall buffer */
	int done;			/* reached the recorded exit */
	volatile sig_atomic_t interrupted;	/* citcat_replay_interrupt */
	int failed;			/* -errno of a divergence, truncation or fault */
	int resume;			/* a hook handled the instruction Unicorn stopped at */
	int exit_status;
	uint64_t out_bytes, out_hash;
	char err[512];
	char dir[CC_MAX_PATH];		/* the recording directory (its files/ holds the copies) */
	uint8_t **file_data;		/* content of FILE id i (NULL: neither copied nor checked) */
	size_t *file_len;
	size_t nfile;
	uint64_t copy_bytes;		/* compressed bytes of the copies read */
	struct cc_bcount *bc;		/* open-addressed block-count cache */
	size_t bc_cap, bc_n;
	ZydisDecoder dec;
	uint64_t blk_pc;		/* the translated block the fast path counted last */
	uint32_t blk_size;
	uint64_t points, point_near_misses;	/* replay_point.c */
	/* the one pc hooked for points: the next POINT record's (0: none) */
	size_t point_next;		/* index of that record (>= cur while it is ahead; r->n: none) */
	uint64_t point_pc;
	uc_hook h_point;		/* 0 while no hook is on point_pc (a sink's hook checks) */
	uint8_t *deep_buf;		/* a POINT's deep stack, read at a candidate execution */
	size_t deep_cap;
	uint64_t tsc_armed;		/* pc of an rdtsc about to retire, 0 when none */
	uint64_t fault_addr;
	struct cc_sink_hooks sink;
	FILE *program_stdout;		/* receives what the program writes to fd 1, or NULL */
	uc_hook h_code, h_mem;
	struct cc_rthread *thr;		/* thr[0] the first thread (META's pid) */
	size_t nthr, thr_cap, cur_thr;
	int switch_pending;		/* a SWITCH record is next: switch before running on */
	int hook_rip_pending;		/* the syscall hook loaded registers but not yet RIP: */
	uint64_t hook_rip;		/* this one (set_regs_at) */
	uint64_t insns_mark;		/* rp->insns when the current thread started running */
	uint64_t switches;
	uint64_t preempt_points;	/* switches at an exact point (a preemption) */
	uint64_t *fx_sites;		/* fxsave instructions with a hook (replay_fxsave.c) */
	size_t fx_n, fx_cap;
	/* an fxsave just ran whose image needs the recording CPU's MXCSR_MASK: written when
	 * its thread reaches the next instruction, at FX_MASK_PC */
	int fx_mask_pending;
	size_t fx_mask_thr;
	uint64_t fx_mask_pc, fx_mask_ea;
};

/* Install the per-instruction and data-reference hooks for HOOKS (replacing the fast block
 * counter). 0 or -errno. */
int cc_replay_set_sink(struct citcat_replay *rp, const struct cc_sink_hooks *hooks, int want_refs);
/* Tell the sink about an executable file mapping (MAP record M), if it has an event hook. */
void cc_replay_image_event(struct citcat_replay *rp, const struct cc_rec *m);
/* Instructions in the SIZE bytes of code at PC (Zydis; at least 1). */
uint32_t cc_replay_count_insns(struct citcat_replay *rp, uint64_t pc, uint32_t size);
/* Deliver the SIGNAL (+ REGS, FPREGS, MEM) at the next record, if there is one. AT_SYSCALL:
 * from a syscall hook, where Unicorn still advances rip past the instruction. */
void cc_replay_deliver_signal(struct citcat_replay *rp, uint64_t resume_pc, int at_syscall);
/* replay_point.c: the hook on the pc of the next POINT record, moved there before the
 * simulator runs again (0 or -ENOMEM); the check at a pc, for a sink's per-instruction hook
 * (1: the point's event was made there and the simulator stopped before PC); the FPREGS
 * effect. */
int cc_replay_arm_point(struct citcat_replay *rp);
int cc_replay_point_at(struct citcat_replay *rp, uint64_t pc);
void cc_replay_apply_fpregs(struct citcat_replay *rp, const uint8_t *words);
/* replay_fxsave.c: hook the fxsave instructions in the LEN bytes of CODE mapped at START
 * (executable), so they leave the x87 slots' upper bytes zero as the CPU does. 0 or -ENOMEM. */
int cc_replay_fxsave_scan(struct citcat_replay *rp, uint64_t start, const uint8_t *code,
			  uint64_t len);
/* replay.c: the syscall at PC of the current thread with the next record (its SYSCALL):
 * checked, its effects applied. IN_HOOK: from the syscall hook (Unicorn then still advances
 * rip past the instruction); 0: completing a syscall the thread blocked in. */
void cc_replay_syscall(struct citcat_replay *rp, uint64_t pc, int in_hook);
/* Stop the simulation with an error (the first one wins). */
void cc_replay_fail(struct citcat_replay *rp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* replay_thread.c: threads in one address space, switched where the recording says. */
int cc_replay_threads_init(struct citcat_replay *rp);
void cc_replay_threads_free(struct citcat_replay *rp);
uint32_t cc_replay_tid(const struct citcat_replay *rp);
size_t cc_replay_threads_alive(const struct citcat_replay *rp);
/* A clone created thread TID: it starts from the current CPU state (and the REGS recorded
 * at its first switch). */
int cc_replay_thread_clone(struct citcat_replay *rp, uint32_t tid);
void cc_replay_thread_exit(struct citcat_replay *rp);
/* 1 when the next record is a SWITCH for REASON: the switch is made pending (the caller
 * stops the simulator). AT_PC: the syscall the current thread blocks in, for
 * CC_SWITCH_SYSCALL. */
int cc_replay_switch_next(struct citcat_replay *rp, int reason, uint64_t at_pc);
/* Make the pending switches (run outside the simulator). */
void cc_replay_do_switch(struct citcat_replay *rp);
/* Run at most COUNT instructions (0: to the end). 0 while running, 1 at the end, -errno. */
int cc_replay_step(struct citcat_replay *rp, uint64_t count);

#endif
