/* citcat/replay_point.c - exact points without a PMU, replay side: a code hook on the pc of
 * the next POINT record (and nowhere else); when the next record is that POINT and the simulated
 * state at the pc equals the recorded one (general registers, FS/GS base,
 * mxcsr and xmm0-15, the stack around rsp), the signal that follows is delivered there (or
 * the thread switch that follows, a preemption, is made there). Also
 * the FPREGS effect (the vector state a signal delivery or rt_sigreturn left). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "citcat/replay_int.h"
#include "citcat/replay_mem.h"
#include "core/alloc.h"

/* Flags are not compared: the simulator computes the ones the architecture leaves undefined
 * differently from the CPU (ZF after imul: 0x845 recorded on AMD EPYC, 0x805 in Unicorn at the
 * same instruction of tests/progs/citcat_busyalarm), so a point would never match. Correct
 * code never reads an undefined flag, and the handler's rt_sigreturn restores the recorded
 * eflags anyway. */

/* struct user_regs_struct index -> Unicorn register, for the registers a point compares */
static const int point_regs[][2] = {
	/* the registers a loop changes most often first: a mismatch is found after one read */
	{ 10, UC_X86_REG_RAX }, { 11, UC_X86_REG_RCX }, { 12, UC_X86_REG_RDX },
	{ 13, UC_X86_REG_RSI }, { 14, UC_X86_REG_RDI }, { 9, UC_X86_REG_R8 }, { 8, UC_X86_REG_R9 },
	{ 7, UC_X86_REG_R10 }, { 6, UC_X86_REG_R11 }, { 0, UC_X86_REG_R15 }, { 1, UC_X86_REG_R14 },
	{ 2, UC_X86_REG_R13 }, { 3, UC_X86_REG_R12 }, { 4, UC_X86_REG_RBP }, { 5, UC_X86_REG_RBX },
	{ 16, UC_X86_REG_RIP }, { 19, UC_X86_REG_RSP },
	{ 21, UC_X86_REG_FS_BASE }, { 22, UC_X86_REG_GS_BASE },
};
#define N_POINT_REGS ARRAY_SIZE(point_regs)
#define REG_RSP_INDEX 19

static uint64_t word(const uint8_t *w, size_t i)
{
	uint64_t v;
	memcpy(&v, w + 8 * i, 8);
	return v;	/* little-endian host (x86-64 only) */
}

void cc_replay_apply_fpregs(struct citcat_replay *rp, const uint8_t *w)
{
	uint64_t mxcsr = word(w, 0), fcw = word(w, 1);
	uc_reg_write(rp->uc, UC_X86_REG_MXCSR, &mxcsr);
	uc_reg_write(rp->uc, UC_X86_REG_FPCW, &fcw);
	for (int i = 0; i < 16; i++) {
		uint64_t x[2] = { word(w, 2 + 2 * i), word(w, 3 + 2 * i) };
		uc_reg_write(rp->uc, UC_X86_REG_XMM0 + i, x);
	}
}

/* A register holding a stored MXCSR (glibc's sin keeps one in rbx): the CPU's copy has the
 * sticky exception flags it set (PE), the simulator's the flags it was given, never more. So
 * WANT (the CPU's) may have more flags than V when both look like stored MXCSRs whose control
 * bits are the simulator's live ones. */
static int mxcsr_copy_matches(struct citcat_replay *rp, uint64_t v, uint64_t want)
{
	uint64_t live = 0, flags = CC_MXCSR_EXCEPTION_FLAGS;
	if (!cc_mxcsr_copy_like(v) || !cc_mxcsr_copy_like(want) || ((v ^ want) & ~flags) ||
	    (v & flags & ~want))
		return 0;
	uc_reg_read(rp->uc, UC_X86_REG_MXCSR, &live);
	return !((v ^ live) & ~flags);
}

/* 1 when the simulated general registers (and flags, FS/GS base) equal the point's. */
static int regs_match(struct citcat_replay *rp, const uint8_t *w)
{
	for (size_t i = 0; i < N_POINT_REGS; i++) {
		uint64_t v = 0, want = word(w, 1 + (size_t)point_regs[i][0]);
		uc_reg_read(rp->uc, point_regs[i][1], &v);
		if (v != want && !mxcsr_copy_matches(rp, v, want))
			return 0;
	}
	return 1;
}

/* 1 when the LEN bytes from FROM hash to HASH (cc_point_deep_hash): the stack up to its
 * mapping's end, read only for an execution whose registers and nearby stack already match */
static int deep_stack_matches(struct citcat_replay *rp, uint64_t from, uint64_t len,
			      uint64_t hash)
{
	if (len > CC_POINT_DEEP_MAX)
		return 0;
	if (len > rp->deep_cap) {
		uint8_t *b = realloc(rp->deep_buf, len);
		if (!b)
			return 0;
		rp->deep_buf = b;
		rp->deep_cap = len;
	}
	if (len && uc_mem_read(rp->uc, from, rp->deep_buf, len) != UC_ERR_OK)
		return 0;
	cc_point_mask_mxcsr_flags(rp->deep_buf, len, from, rp->rec->version);
	return cc_point_deep_hash(rp->deep_buf, len) == hash;
}

/* 1 when mxcsr, xmm0-15 and the stack around rsp equal the point's too (and the deep stack,
 * when DEEP: a version 5 POINT). */
static int rest_matches(struct citcat_replay *rp, const uint8_t *w, int deep)
{
	size_t k = 1 + CC_NREGS;
	uint64_t mxcsr = 0;
	uc_reg_read(rp->uc, UC_X86_REG_MXCSR, &mxcsr);
	/* without the flags: a point recorded after an inexact SSE result (PE, 0x1fa0, in
	 * python3's interpreter) would never match; the control bits (masks, rounding, FZ, DAZ)
	 * are compared */
	if ((mxcsr ^ word(w, k++)) & ~(uint64_t)CC_MXCSR_EXCEPTION_FLAGS)
		return 0;
	for (int i = 0; i < 16; i++, k += 2) {
		uint64_t x[2] = { 0, 0 };
		uc_reg_read(rp->uc, UC_X86_REG_XMM0 + i, x);
		if (x[0] != word(w, k) || x[1] != word(w, k + 1))
			return 0;
	}
	uint8_t stack[CC_POINT_STACK_BELOW + CC_POINT_STACK_ABOVE];
	uint64_t rsp = word(w, 1 + REG_RSP_INDEX);
	if (uc_mem_read(rp->uc, rsp - CC_POINT_STACK_BELOW, stack, sizeof(stack)) != UC_ERR_OK)
		memset(stack, 0, sizeof(stack));	/* as the recorder counts it */
	cc_point_mask_mxcsr_flags(stack, sizeof(stack), rsp - CC_POINT_STACK_BELOW, rp->rec->version);
	if (binio_fnv64(BINIO_FNV64_INIT, stack, sizeof(stack)) != word(w, k++))
		return 0;
	return !deep || deep_stack_matches(rp, rsp + CC_POINT_STACK_ABOVE, word(w, k),
					  word(w, k + 1));
}

int cc_replay_point_at(struct citcat_replay *rp, uint64_t pc)
{
	const struct cc_recording *r = rp->rec;
	if (rp->failed || rp->done || rp->cur >= r->n || r->recs[rp->cur].kind != CC_REC_POINT)
		return 0;
	const uint8_t *w = r->recs[rp->cur].u.words;
	if (word(w, 0) != pc || !regs_match(rp, w))
		return 0;
	if (!rest_matches(rp, w, r->recs[rp->cur].deep)) {
		rp->point_near_misses++;
		return 0;
	}
	/* the fast path counted the whole translated block on entry: the instructions from
	 * here to its end did not run (they run again after the handler returns) */
	if (!rp->sink.insn && pc >= rp->blk_pc && pc < rp->blk_pc + rp->blk_size)
		rp->insns -= cc_replay_count_insns(rp, pc, (uint32_t)(rp->blk_pc + rp->blk_size - pc));
	rp->cur++;
	/* the recorder preempted the thread here: the next one runs; or a signal came here */
	if (cc_replay_switch_next(rp, CC_SWITCH_HERE, 0)) {
		rp->preempt_points++;
	} else {
		rp->points++;
		cc_replay_deliver_signal(rp, pc, 0);
	}
	uc_emu_stop(rp->uc);	/* before the instruction at pc; resume at the handler */
	rp->resume = 1;
	/* the next point's hook, now: after a signal the simulator runs on at the handler
	 * (Unicorn restarts at a pc written in a hook instead of stopping) */
	if (cc_replay_arm_point(rp))
		cc_replay_fail(rp, -ENOMEM, "out of memory");
	return 1;
}

static void on_point(uc_engine *uc, uint64_t pc, uint32_t size, void *user)
{
	cc_replay_point_at(user, pc);
}

/* Drop the translated code holding PC, so that it is translated again with the code hooks as
 * they are now (Unicorn decides at translation which instructions call them). Only for a pc
 * the simulator maps executable (the replay maps everything so): nothing elsewhere was
 * translated, and Unicorn 2.0.1 cannot take a fault while it looks the page up. */
static void retranslate(struct citcat_replay *rp, uint64_t pc)
{
	uc_mem_region *regs = NULL;
	uint32_t n = 0;
	if (uc_mem_regions(rp->uc, &regs, &n) != UC_ERR_OK)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (pc >= regs[i].begin && pc <= regs[i].end && (regs[i].perms & UC_PROT_EXEC)) {
			uc_ctl_remove_cache(rp->uc, pc, pc + 1);
			break;
		}
	uc_free(regs);
}

/* One code hook, on the pc of the next POINT record only. Unicorn's helper walks every code
 * hook at each execution of any hooked pc: with a hook per POINT pc for the whole replay,
 * `xz -T2` recorded at 1 ms slices (159 points in its hot loops) spent 82% of its replay
 * there (9.8 M instructions a second). The hook moves when a point is passed (before the
 * simulator runs on) and before each run of the simulator, so the next point's pc is hooked
 * before any of its executions; the code translated before is dropped (retranslate). With a
 * sink's hook on every instruction, that hook checks instead (on_code). Either way the check
 * comes after the rdtsc and fxsave site hooks at the same pc, as it did for the fxsave sites
 * of the images mapped at the start. */
int cc_replay_arm_point(struct citcat_replay *rp)
{
	const struct cc_recording *r = rp->rec;
	size_t i = rp->point_next;
	if (i < rp->cur) {	/* passed (or, at 0, none looked for: cur is past START) */
		for (i = rp->cur; i < r->n && r->recs[i].kind != CC_REC_POINT; i++)
			;
		rp->point_next = i;
	}
	uint64_t pc = i < r->n ? word(r->recs[i].u.words, 0) : 0;
	bool want_hook = pc && !rp->sink.insn;
	if (pc == rp->point_pc && (rp->h_point != 0) == want_hook)
		return 0;
	if (rp->h_point) {
		uc_hook_del(rp->uc, rp->h_point);
		rp->h_point = 0;
		retranslate(rp, rp->point_pc);
	}
	rp->point_pc = pc;
	if (!want_hook)
		return 0;
	if (uc_hook_add(rp->uc, &rp->h_point, UC_HOOK_CODE, (void *)on_point, rp, pc, pc) != UC_ERR_OK) {
		rp->h_point = 0;
		return -ENOMEM;
	}
	retranslate(rp, pc);
	return 0;
}
