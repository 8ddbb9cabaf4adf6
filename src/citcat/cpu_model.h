/* citcat/cpu_model.h - the CPU the CITCAT simulator presents to a recorded program: the cpuid
 * answers (a fixed whitelist of features whose instructions the simulator executes like real
 * hardware, verified by tests/unit/test_citcat_cpu.c) and the register state a real execve
 * leaves behind (x87/SSE control), which the replay starts from. */
#ifndef SPENT_CITCAT_CPU_MODEL_H
#define SPENT_CITCAT_CPU_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

/* The cpuid output registers, as indices into an answer's out[4]. */
enum cc_cpuid_reg { CC_CPUID_EAX, CC_CPUID_EBX, CC_CPUID_ECX, CC_CPUID_EDX };

/* One feature bit the model claims: cpuid LEAF (subleaf 0) register REG, bit BIT. */
struct cc_cpu_feature {
	const char *name;
	uint32_t leaf;
	uint8_t reg;		/* enum cc_cpuid_reg */
	uint8_t bit;
};

/* The claimed features, in a fixed order. */
const struct cc_cpu_feature *cc_cpu_model_features(size_t *n);

struct cc_cpu_model;

/* The model; identification leaves come from the simulator's own CPU (Unicorn), through a
 * table of its answers. 0 or -ENOMEM. */
int cc_cpu_model_open(struct cc_cpu_model **out);
/* Unicorn's own answer to cpuid LEAF.SUB, asked of a simulator (what the table must equal). */
void cc_cpu_model_simulator_cpuid(struct cc_cpu_model *m, uint32_t leaf, uint32_t sub,
				  uint64_t out[4]);
/* The table's entry I: its leaf, subleaf (0xffffffff: any) and the answer it holds for
 * Unicorn (before the model's feature edits). Returns the entry count. */
size_t cc_cpu_model_table(size_t i, uint32_t *leaf, uint32_t *sub, uint64_t out[4]);
/* What cpuid LEAF.SUB answers on the model: eax, ebx, ecx, edx in OUT (32-bit values). */
void cc_cpu_model_answer(struct cc_cpu_model *m, uint32_t leaf, uint32_t sub, uint64_t out[4]);
void cc_cpu_model_close(struct cc_cpu_model *m);

/* Put the simulator UC in the state a real execve leaves the x87/SSE unit in: CR4.OSFXSR and
 * OSXMMEXCPT set (so fxsave/fxrstor include the xmm registers), FCW 0x37f, MXCSR 0x1f80, all
 * x87 registers empty. Unicorn starts with all of them zero. 0 or -EINVAL. */
int cc_cpu_model_execve_state(uc_engine *uc);

#endif
