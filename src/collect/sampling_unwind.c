/* collect/sampling_unwind.c - `-g dwarf`: unwind a sample's copied user stack with libdwfl's
 * CFI unwinder. One Dwfl per process (its file-backed mappings reported at their load
 * bias), rebuilt when the process maps change; registers and stack come from the sample. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <asm/perf_regs.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include "collect/sampling_int.h"

struct unw_proc {
	pid_t pid;
	Dwfl *dwfl;
	bool attached;
	struct unw_proc *next;
};

struct unwinder {
	struct unw_proc *procs;
	/* the sample being unwound */
	const uint64_t *regs;
	const uint8_t *stack;
	size_t stack_len;
	pid_t tid;
};

/* AX..SS and R8..R15: everything but the segment registers DS, ES, FS, GS */
uint64_t sampling_unwind_regs_mask(void)
{
	uint64_t all = (1ULL << PERF_REG_X86_64_MAX) - 1;
	return all & ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |
		       (1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS));
}

/* index of perf register R in the packed sample array */
static int packed(int r)
{
	uint64_t m = sampling_unwind_regs_mask();
	return __builtin_popcountll(m & ((1ULL << r) - 1));
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	uint64_t sp = u->regs[packed(PERF_REG_X86_SP)];
	if (addr < sp || addr - sp > u->stack_len || u->stack_len - (addr - sp) < 8)
		return false;
	memcpy(result, u->stack + (addr - sp), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	/* DWARF x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
	static const int order[16] = {
		PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
		PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
		PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
		PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	};
	Dwarf_Word dw[16];
	for (int i = 0; i < 16; i++)
		dw[i] = u->regs[packed(order[i])];
	dwfl_thread_state_register_pc(thread, u->regs[packed(PERF_REG_X86_IP)]);
	return dwfl_thread_state_registers(thread, 0, 16, dw);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* The unwinder reads each image's own .eh_frame only: libdwfl tries a separate debug file's
 * .debug_frame first, and those are compressed (Debian's -dbg packages), so every process's
 * new Dwfl inflated them again: zlib was a quarter of a loaded machine's samples and the
 * recorder fell behind (half of python3's samples lost through pyenv's shell scripts). */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks offline_cbs = {
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int report_map(void *ctx, uint64_t start, uint64_t end, uint64_t pgoff,
		      const struct image_info *img)
{
	Dwfl *dwfl = ctx;
	if (img->is_kernel || img->is_vdso || !img->elf_type)
		return 0;
	Dwarf_Addr base = img->elf_type == ET_EXEC ? 0 : start - pgoff;
	Dwfl_Module *have = dwfl_addrmodule(dwfl, start);
	if (have)
		return 0;	/* a second executable segment of an image already reported */
	const char *bn = strrchr(img->id.path, '/');
	dwfl_report_elf(dwfl, bn ? bn + 1 : img->id.path, img->id.path, -1, base, false);
	return 0;
}

static struct unw_proc *proc_get(struct sampling *s, pid_t pid)
{
	struct unwinder *u = s->unw;
	for (struct unw_proc *p = u->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct unw_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->dwfl = dwfl_begin(&offline_cbs);
	if (!p->dwfl) {
		free(p);
		return NULL;
	}
	dwfl_report_begin(p->dwfl);
	procmaps_foreach(s->maps, pid, report_map, p->dwfl);
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->attached = dwfl_attach_state(p->dwfl, NULL, pid, &thread_cbs, u);
	p->next = u->procs;
	u->procs = p;
	return p;
}

struct frames {
	uint64_t *ips;
	size_t n, max;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	f->ips[f->n++] = pc;
	return f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int sampling_unwind(struct sampling *s, pid_t pid, pid_t tid, const uint64_t *regs,
		    size_t nregs, const uint8_t *stack, size_t stack_len, uint64_t *ips, size_t max)
{
	if (nregs < (size_t)__builtin_popcountll(sampling_unwind_regs_mask()) || max == 0)
		return -EINVAL;
	if (!s->unw && !(s->unw = calloc(1, sizeof(*s->unw))))
		return -ENOMEM;
	struct unw_proc *p = proc_get(s, pid);
	if (!p)
		return -ENOMEM;
	if (!p->attached)
		return 0;
	s->unw->regs = regs;
	s->unw->stack = stack;
	s->unw->stack_len = stack_len;
	s->unw->tid = tid;
	struct frames f = { .ips = ips, .max = max };
	dwfl_getthread_frames(p->dwfl, tid, frame_cb, &f);
	return (int)f.n;
}

void sampling_unwind_invalidate(struct sampling *s, pid_t pid)
{
	if (!s->unw)
		return;
	for (struct unw_proc **pp = &s->unw->procs; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid) {
			struct unw_proc *p = *pp;
			*pp = p->next;
			dwfl_end(p->dwfl);
			free(p);
			return;
		}
}

void sampling_unwind_release(struct sampling *s)
{
	if (!s->unw)
		return;
	for (struct unw_proc *p = s->unw->procs, *n; p; p = n) {
		n = p->next;
		dwfl_end(p->dwfl);
		free(p);
	}
	free(s->unw);
	s->unw = NULL;
}
