/* citcat/cpu_model.c - the CPU the CITCAT simulator presents: cpuid answers and the register
 * state at execve.
 *
 * The recorded program sees this model's cpuid answers (the recorder traps cpuid), so it picks
 * code paths the simulator can replay. The feature words (leaf 1 ecx/edx, leaf 7 ebx/ecx/edx,
 * leaf 0x80000001 ecx/edx) are a fixed whitelist, not Unicorn's own model: Unicorn 2.0.1
 * reports features it executes wrongly (BMI1: blsi's CF; BMI2: pdep/pext/bzhi; SSE4.1:
 * dpps/dppd; SSE4.2: pcmpXstrX equal-ordered, and pcmpestri can crash it), system features no
 * user program runs (SMAP, SKINIT, AltMovCr8) and 3DNow! (no CPU left to check it against),
 * and it omits FPU, TSC, MMX and SSE3, which it executes. tests/unit/test_citcat_cpu.c runs the
 * instructions of every whitelisted feature natively and in the simulator and compares the
 * results; a feature stays out unless that test covers it (--evidence shows why the others are
 * out, and the known gaps of the features x86-64 requires).
 * The identification leaves (vendor, family, brand, cache and address-size leaves) are
 * Unicorn's own qemu64 answers: from a table of what it answers (the unit test compares every
 * entry with Unicorn's live answer), so a recording need not start a simulator only for them
 * (uc_open and 32 cpuid: about 1.3 ms of each recording's CPU); a leaf the table does not hold
 * is asked of a simulator opened then. */
#include <errno.h>
#include <stdlib.h>

#include "citcat/cpu_model.h"
#include "core/alloc.h"

#define CODE_ADDR 0x1000

static const struct cc_cpu_feature features[] = {
	{ "FPU", 1, CC_CPUID_EDX, 0 },
	{ "TSC", 1, CC_CPUID_EDX, 4 },
	{ "CX8", 1, CC_CPUID_EDX, 8 },
	{ "CMOV", 1, CC_CPUID_EDX, 15 },
	{ "CLFSH", 1, CC_CPUID_EDX, 19 },
	{ "MMX", 1, CC_CPUID_EDX, 23 },
	{ "FXSR", 1, CC_CPUID_EDX, 24 },
	{ "SSE", 1, CC_CPUID_EDX, 25 },
	{ "SSE2", 1, CC_CPUID_EDX, 26 },
	{ "SSE3", 1, CC_CPUID_ECX, 0 },
	{ "SSSE3", 1, CC_CPUID_ECX, 9 },
	{ "CX16", 1, CC_CPUID_ECX, 13 },
	{ "AES", 1, CC_CPUID_ECX, 25 },
	{ "ADX", 7, CC_CPUID_EBX, 19 },
	{ "LAHF_LM", 0x80000001, CC_CPUID_ECX, 0 },
	{ "LZCNT", 0x80000001, CC_CPUID_ECX, 5 },
	{ "RDTSCP", 0x80000001, CC_CPUID_EDX, 27 },
	{ "LM", 0x80000001, CC_CPUID_EDX, 29 },
};

/* Unicorn 2.0.1's qemu64 cpuid, before the model's feature edits: leaf, subleaf (ANY_SUB: the
 * answer does not depend on it), eax, ebx, ecx, edx. Leaves 4 and 7 depend on the subleaf; a
 * subleaf not listed is asked of the simulator. */
#define ANY_SUB 0xffffffffu
static const struct {
	uint32_t leaf, sub, r[4];
} qemu64[] = {
	{ 0, ANY_SUB, { 0xd, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x1, ANY_SUB, { 0x663, 0x800, 0x2182200, 0x7088100 } },
	{ 0x2, ANY_SUB, { 0x1, 0, 0, 0x2c307d } },
	{ 0x3, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x4, 0, { 0x121, 0x1c0003f, 0x3f, 0x1 } },
	{ 0x4, 1, { 0x122, 0x1c0003f, 0x3f, 0x1 } },
	{ 0x4, 2, { 0x143, 0x3c0003f, 0xfff, 0x1 } },
	{ 0x4, 3, { 0, 0, 0, 0 } },
	{ 0x5, ANY_SUB, { 0, 0, 0x3, 0 } },
	{ 0x6, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x7, 0, { 0, 0x180108, 0, 0 } },
	{ 0x7, 1, { 0, 0, 0, 0 } },
	{ 0x8, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x9, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0xa, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0xb, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0xc, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0xd, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x80000000, ANY_SUB, { 0x8000000a, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000001, ANY_SUB, { 0x663, 0, 0x1031, 0xa8000000 } },
	{ 0x80000002, ANY_SUB, { 0x554d4551, 0x72695620, 0x6c617574, 0x55504320 } },
	{ 0x80000003, ANY_SUB, { 0x72657620, 0x6e6f6973, 0x352e3220, 0x2b } },
	{ 0x80000004, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x80000005, ANY_SUB, { 0x1ff01ff, 0x1ff01ff, 0x40020140, 0x40020140 } },
	{ 0x80000006, ANY_SUB, { 0, 0x42004200, 0x2008140, 0 } },
	{ 0x80000007, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x80000008, ANY_SUB, { 0x3028, 0, 0, 0 } },
	{ 0x80000009, ANY_SUB, { 0, 0, 0, 0 } },
	{ 0x8000000a, ANY_SUB, { 0, 0, 0, 0 } },
};

struct cc_cpu_model {
	uc_engine *uc;		/* runs cpuid for leaves the table lacks; opened at the first */
};

const struct cc_cpu_feature *cc_cpu_model_features(size_t *n)
{
	*n = ARRAY_SIZE(features);
	return features;
}

int cc_cpu_model_open(struct cc_cpu_model **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* The simulator that answers leaves the table lacks. 0 or -ENOMEM. */
static int open_simulator(struct cc_cpu_model *m)
{
	static const uint8_t cpuid_insn[] = { 0x0f, 0xa2 };
	if (m->uc)
		return 0;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &m->uc) != UC_ERR_OK) {
		m->uc = NULL;
		return -ENOMEM;
	}
	if (uc_mem_map(m->uc, CODE_ADDR, 0x1000, UC_PROT_ALL) ||
	    uc_mem_write(m->uc, CODE_ADDR, cpuid_insn, sizeof(cpuid_insn))) {
		uc_close(m->uc);
		m->uc = NULL;
		return -ENOMEM;
	}
	return 0;
}

void cc_cpu_model_close(struct cc_cpu_model *m)
{
	if (!m)
		return;
	if (m->uc)
		uc_close(m->uc);
	free(m);
}

/* The simulator's own answer to cpuid LEAF.SUB, run now (all zero if it cannot start). */
void cc_cpu_model_simulator_cpuid(struct cc_cpu_model *m, uint32_t leaf, uint32_t sub,
				  uint64_t out[4])
{
	static const int regs[4] = { UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX };
	uint64_t in[4] = { leaf, 0, sub, 0 };
	uc_engine *uc;
	out[0] = out[1] = out[2] = out[3] = 0;
	if (open_simulator(m))
		return;
	uc = m->uc;
	for (int i = 0; i < 4; i++)
		uc_reg_write(uc, regs[i], &in[i]);
	uc_emu_start(uc, CODE_ADDR, CODE_ADDR + 2, 0, 0);
	for (int i = 0; i < 4; i++) {
		out[i] = 0;
		uc_reg_read(uc, regs[i], &out[i]);
		out[i] &= 0xffffffffULL;
	}
}

/* The same answer from the table; 0 when it lacks LEAF.SUB. */
static int table_cpuid(uint32_t leaf, uint32_t sub, uint64_t out[4])
{
	for (size_t i = 0; i < ARRAY_SIZE(qemu64); i++) {
		if (qemu64[i].leaf != leaf || (qemu64[i].sub != ANY_SUB && qemu64[i].sub != sub))
			continue;
		for (int r = 0; r < 4; r++)
			out[r] = qemu64[i].r[r];
		return 1;
	}
	return 0;
}

size_t cc_cpu_model_table(size_t i, uint32_t *leaf, uint32_t *sub, uint64_t out[4])
{
	if (i < ARRAY_SIZE(qemu64)) {
		*leaf = qemu64[i].leaf, *sub = qemu64[i].sub;
		for (int r = 0; r < 4; r++)
			out[r] = qemu64[i].r[r];
	}
	return ARRAY_SIZE(qemu64);
}

void cc_cpu_model_answer(struct cc_cpu_model *m, uint32_t leaf, uint32_t sub, uint64_t out[4])
{
	if (!table_cpuid(leaf, sub, out))
		cc_cpu_model_simulator_cpuid(m, leaf, sub, out);
	if (leaf == 1)
		out[CC_CPUID_ECX] = out[CC_CPUID_EDX] = 0;
	if (leaf == 7)	/* eax 0: no subleaf beyond 0 */
		out[CC_CPUID_EAX] = out[CC_CPUID_EBX] = out[CC_CPUID_ECX] = out[CC_CPUID_EDX] = 0;
	if (leaf == 0x80000001)
		out[CC_CPUID_EBX] = out[CC_CPUID_ECX] = out[CC_CPUID_EDX] = 0;
	if (leaf == 0xd)	/* no XSAVE state components */
		out[CC_CPUID_EAX] = out[CC_CPUID_EBX] = out[CC_CPUID_ECX] = out[CC_CPUID_EDX] = 0;
	if (sub != 0 && leaf == 7)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (features[i].leaf == leaf)
			out[features[i].reg] |= 1ULL << features[i].bit;
}

int cc_cpu_model_execve_state(uc_engine *uc)
{
	/* what Linux's execve leaves (PTRACE_GETFPREGS at the exec stop: cwd 0x37f, mxcsr
	 * 0x1f80, ftw 0 = all empty); the full tag word 0xffff marks all 8 registers empty */
	uint64_t cr4 = 0;
	uint16_t fcw = 0x37f, ftw = 0xffff, fsw = 0;
	uint32_t mxcsr = 0x1f80;
	if (uc_reg_read(uc, UC_X86_REG_CR4, &cr4))
		return -EINVAL;
	cr4 |= (1ULL << 9) | (1ULL << 10);	/* OSFXSR, OSXMMEXCPT */
	if (uc_reg_write(uc, UC_X86_REG_CR4, &cr4) || uc_reg_write(uc, UC_X86_REG_FPCW, &fcw) ||
	    uc_reg_write(uc, UC_X86_REG_FPTAG, &ftw) || uc_reg_write(uc, UC_X86_REG_FPSW, &fsw) ||
	    uc_reg_write(uc, UC_X86_REG_MXCSR, &mxcsr))
		return -EINVAL;
	return 0;
}
