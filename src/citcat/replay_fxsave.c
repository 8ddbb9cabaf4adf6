/* citcat/replay_fxsave.c - the simulator's fxsave made to store what the CPU stores.
 *
 * The CPU writes each x87 register into a 16-byte slot of the fxsave area and zeroes the
 * slot's 6 upper bytes; Unicorn 2.0.1 (QEMU 5.0's helper) writes the 10 bytes and leaves the
 * other 6 as they were, and leaves the last-opcode field (bytes 6-7) too, which the CPU
 * stores as 0 (measured on an Intel Xeon; AMD keeps it only with an x87 exception pending).
 * Under the CITCAT CPU model (no XSAVE) ld.so's lazy-binding trampoline saves the argument
 * registers with fxsave in its frame, so those bytes end up in the stack a
 * signal's POINT hashes: a timer signal inside a lazily bound call's resolution never matched
 * its point (citcat_sbuf with a 1 ms timer, about one recording in 30 on an Intel Xeon: the
 * three slots' bytes 0 on the CPU, a stale pointer's halves in the simulator).
 *
 * Every executable file mapping is scanned for byte sequences that decode as fxsave at some
 * start; each such address gets a code hook (Unicorn runs it before the instruction, and only
 * for instructions at that address), which decodes the instruction actually there, computes
 * its memory operand and zeroes those bytes before the instruction writes the rest. Code
 * written at run time (JIT) is not scanned.
 *
 * MXCSR_MASK (bytes 28-31) is the CPU's own: 0xffff on Intel Xeons, 0x2ffff on AMD EPYCs
 * (misaligned-SSE exception mask), and the simulator always stores 0xffff. Where the
 * recording CPU's differs (META's mxcsr_mask), each site also hooks the instruction after it,
 * which writes the mask once the fxsave has stored its image: on an AMD-recorded run the
 * trampoline's image left in the stack made a recorded program's output and a signal's
 * POINT unmatchable.
 * Still different: the last x87 instruction and data pointers (bytes 8-23), which the
 * simulator stores as 0, AMD as 0 unless an x87 exception is pending, and an Intel CPU as
 * the addresses of the last x87 instruction. */
#include <errno.h>

#include "citcat/replay_int.h"
#include "core/alloc.h"

#define FX_FOP_OFF 6		/* last x87 opcode: the simulator leaves it, the CPU stores 0
				 * unless an x87 exception is pending */
#define FX_SLOTS_OFF 32		/* st0/mm0 slot in the fxsave area */
#define FX_SLOT_SIZE 16
#define FX_SLOT_VALUE 10	/* bytes of the 80-bit register; the rest the CPU zeroes */
#define FX_MASK_OFF 28		/* MXCSR_MASK */
#define FX_SIM_MASK 0xffffu	/* the mask the simulator stores */

/* Unicorn's register for a 64-bit general register's Zydis id (encoding order). */
static const int gpr_by_id[16] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
	UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
	UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11,
	UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
};

/* The value of address register REG (any width) as the instruction at PC of LEN bytes sees
 * it; 0 for none. *OK = 0 for a register this code does not know. */
static uint64_t addr_reg(uc_engine *uc, ZydisRegister reg, uint64_t pc, uint32_t len, int *ok)
{
	uint64_t v = 0;
	if (reg == ZYDIS_REGISTER_NONE)
		return 0;
	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP)
		return pc + len;
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	if (ZydisRegisterGetClass(big) != ZYDIS_REGCLASS_GPR64) {
		*ok = 0;
		return 0;
	}
	uc_reg_read(uc, gpr_by_id[ZydisRegisterGetId(big) & 15], &v);
	return v;
}

/* The recording CPU's MXCSR_MASK where it is not the simulator's; 0 otherwise (and in
 * recordings made before META had it). */
static uint32_t recorded_mask(const struct citcat_replay *rp)
{
	const struct cc_recording *r = rp->rec;
	uint32_t m = r->n && r->recs[0].kind == CC_REC_META ? (uint32_t)r->recs[0].u.meta.mxcsr_mask : 0;
	return m == FX_SIM_MASK ? 0 : m;
}

static void on_fxsave_site(uc_engine *uc, uint64_t pc, uint32_t size, void *user)
{
	struct citcat_replay *rp = user;
	uint8_t code[ZYDIS_MAX_INSTRUCTION_LENGTH];
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	if (uc_mem_read(uc, pc, code, sizeof(code)) != UC_ERR_OK ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&rp->dec, code, sizeof(code), &in, ops)) ||
	    (in.mnemonic != ZYDIS_MNEMONIC_FXSAVE && in.mnemonic != ZYDIS_MNEMONIC_FXSAVE64))
		return;	/* the bytes changed since the scan */
	const ZydisDecodedOperand *m = NULL;
	for (int i = 0; i < in.operand_count && !m; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
			m = &ops[i];
	if (!m)
		return;
	int ok = 1;
	uint64_t ea = addr_reg(uc, m->mem.base, pc, in.length, &ok) +
		      addr_reg(uc, m->mem.index, pc, in.length, &ok) * (m->mem.scale ? m->mem.scale : 1) +
		      (uint64_t)m->mem.disp.value;
	if (m->mem.segment == ZYDIS_REGISTER_FS || m->mem.segment == ZYDIS_REGISTER_GS) {
		uint64_t base = 0;
		uc_reg_read(uc, m->mem.segment == ZYDIS_REGISTER_FS ? UC_X86_REG_FS_BASE :
			    UC_X86_REG_GS_BASE, &base);
		ea += base;
	}
	if (in.address_width == 32)
		ea &= 0xffffffffULL;
	if (!ok)
		return;
	static const uint8_t zero[FX_SLOT_SIZE - FX_SLOT_VALUE];
	/* unwritable: the instruction faults as on the CPU */
	uc_mem_write(uc, ea + FX_FOP_OFF, zero, 2);
	for (int i = 0; i < 8; i++)
		uc_mem_write(uc, ea + FX_SLOTS_OFF + (uint64_t)i * FX_SLOT_SIZE + FX_SLOT_VALUE, zero,
			     sizeof(zero));
	rp->fx_mask_pending = recorded_mask(rp) != 0;
	rp->fx_mask_thr = rp->cur_thr;
	rp->fx_mask_pc = pc + in.length;
	rp->fx_mask_ea = ea;
}

/* The instruction after an fxsave site: the fxsave has stored its image, with the
 * simulator's mask; the recording CPU's goes in its place. */
static void after_fxsave_site(uc_engine *uc, uint64_t pc, uint32_t size, void *user)
{
	struct citcat_replay *rp = user;
	if (!rp->fx_mask_pending || pc != rp->fx_mask_pc || rp->cur_thr != rp->fx_mask_thr)
		return;	/* reached another way, or another thread's */
	rp->fx_mask_pending = 0;
	uint32_t mask = recorded_mask(rp);
	uint8_t le[4] = { (uint8_t)mask, (uint8_t)(mask >> 8), (uint8_t)(mask >> 16),
			  (uint8_t)(mask >> 24) };
	uc_mem_write(uc, rp->fx_mask_ea + FX_MASK_OFF, le, sizeof(le));
}

static int site_known(const struct citcat_replay *rp, uint64_t pc)
{
	for (size_t i = 0; i < rp->fx_n; i++)
		if (rp->fx_sites[i] == pc)
			return 1;
	return 0;
}

int cc_replay_fxsave_scan(struct citcat_replay *rp, uint64_t start, const uint8_t *code,
			  uint64_t len)
{
	/* fxsave is [prefixes] [REX] 0f ae /0 with a memory operand: find the 0f ae, then try
	 * the starts a few prefix bytes before it */
	for (uint64_t p = 0; p + 2 < len; p++) {
		if (code[p] != 0x0f || code[p + 1] != 0xae || (code[p + 2] & 0x38) ||
		    (code[p + 2] & 0xc0) == 0xc0)
			continue;
		for (uint64_t back = 0; back <= 4 && back <= p; back++) {
			uint64_t s = p - back;
			ZydisDecodedInstruction in;
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rp->dec, NULL, code + s,
									len - s, &in)) ||
			    (in.mnemonic != ZYDIS_MNEMONIC_FXSAVE &&
			     in.mnemonic != ZYDIS_MNEMONIC_FXSAVE64) || site_known(rp, start + s))
				continue;
			if (ALLOC_GROW(rp->fx_sites, rp->fx_n + 1, rp->fx_cap))
				return -ENOMEM;
			rp->fx_sites[rp->fx_n++] = start + s;
			uc_hook h;
			uint64_t next = start + s + in.length;
			if (uc_hook_add(rp->uc, &h, UC_HOOK_CODE, (void *)on_fxsave_site, rp, start + s,
					start + s) != UC_ERR_OK ||
			    (recorded_mask(rp) &&
			     uc_hook_add(rp->uc, &h, UC_HOOK_CODE, (void *)after_fxsave_site, rp, next,
					 next) != UC_ERR_OK))
				return -ENOMEM;
		}
	}
	return 0;
}
