/* citcat/replay_int.h - the replayer's state, shared by the simulator (replay.c) and the
 * trace-stream source over it (source.c). */
#ifndef SPENT_CITCAT_REPLAY_INT_H
#define SPENT_CITCAT_REPLAY_INT_H

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
	void (*event)(void *ctx, const struct trace_event *ev);
	void *ctx;
};

struct citcat_replay {
	struct cc_recording *rec;
	uc_engine *uc;
	size_t cur;			/* next record to consume */
	uint64_t insns, syscalls, events;
	int done;			/* reached the recorded exit */
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
	uint64_t tsc_armed;		/* pc of an rdtsc about to retire, 0 when none */
	uint64_t fault_addr;
	struct cc_sink_hooks sink;
	FILE *program_stdout;		/* receives what the program writes to fd 1, or NULL */
	uc_hook h_code, h_mem;
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
/* replay_point.c: hooks on the pcs of POINT records; the FPREGS effect. */
int cc_replay_add_point_hooks(struct citcat_replay *rp);
void cc_replay_apply_fpregs(struct citcat_replay *rp, const uint8_t *words);
/* Run at most COUNT instructions (0: to the end). 0 while running, 1 at the end, -errno. */
int cc_replay_step(struct citcat_replay *rp, uint64_t count);

#endif
