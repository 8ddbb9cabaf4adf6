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
 * Unicorn's own qemu64 answers. */
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

struct cc_cpu_model {
	uc_engine *uc;		/* runs cpuid for the identification leaves */
};

const struct cc_cpu_feature *cc_cpu_model_features(size_t *n)
{
	*n = ARRAY_SIZE(features);
	return features;
}

int cc_cpu_model_open(struct cc_cpu_model **out)
{
	static const uint8_t cpuid_insn[] = { 0x0f, 0xa2 };
	struct cc_cpu_model *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return -ENOMEM;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &m->uc) != UC_ERR_OK) {
		free(m);
		return -ENOMEM;
	}
	if (uc_mem_map(m->uc, CODE_ADDR, 0x1000, UC_PROT_ALL) ||
	    uc_mem_write(m->uc, CODE_ADDR, cpuid_insn, sizeof(cpuid_insn))) {
		cc_cpu_model_close(m);
		return -ENOMEM;
	}
	*out = m;
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

/* The simulator's own answer to cpuid LEAF.SUB. */
static void simulator_cpuid(uc_engine *uc, uint32_t leaf, uint32_t sub, uint64_t out[4])
{
	static const int regs[4] = { UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX };
	uint64_t in[4] = { leaf, 0, sub, 0 };
	for (int i = 0; i < 4; i++)
		uc_reg_write(uc, regs[i], &in[i]);
	uc_emu_start(uc, CODE_ADDR, CODE_ADDR + 2, 0, 0);
	for (int i = 0; i < 4; i++) {
		out[i] = 0;
		uc_reg_read(uc, regs[i], &out[i]);
		out[i] &= 0xffffffffULL;
	}
}

void cc_cpu_model_answer(struct cc_cpu_model *m, uint32_t leaf, uint32_t sub, uint64_t out[4])
{
	simulator_cpuid(m->uc, leaf, sub, out);
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
