/* citcat/record.c - the CITCAT recorder: runs a command natively under ptrace with a seccomp
 * filter (every syscall stops it once at entry and once at exit), CPUID faulting and
 * PR_TSC_SIGSEGV (cpuid/rdtsc/rdtscp trap and are answered here), the vDSO hidden from the
 * auxiliary vector (time calls become syscalls), and writes the recording directory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "citcat/citcat.h"
#include "citcat/cpu_model.h"
#include "citcat/recdir.h"
#include "citcat/record_int.h"
#include "citcat/syscallbuf.h"
#include "citcat/syscallbuf_abi.h"
#include "core/alloc.h"
#include "core/workload.h"

#define ARCH_SET_CPUID 0x1012
#define AT_SYSINFO_EHDR_ 33
#define AT_IGNORE_ 1

/* MSG as the reason the recording failed, with ERR's cause where it is one a user can act
 * on (a full disk, a permission) rather than the kind of failure MSG already names. */
static int fail(struct cc_tracer *tr, int err, const char *msg)
{
	if (err < 0 && err != -ENOTSUP && err != -ECHILD && err != -ESRCH && err != -ENOMEM)
		snprintf(tr->err, tr->errlen, "%s: %s", msg, strerror(-err));
	else
		snprintf(tr->err, tr->errlen, "%s", msg);
	return err;
}

/* ---- traps: rdtsc / rdtscp / cpuid faulting arrive as SIGSEGV; answer and skip ---- */

/* 1 when the SIGSEGV (rdtsc, faulting cpuid) or SIGILL (a cpuid the patcher replaced by ud2;
 * PATCHED says the process still has the patched image) at REGS was a trapped instruction,
 * answered; 0 when it is a real signal. */
static int emulate_trap(struct cc_tracer *tr, pid_t pid, int sig, struct user_regs_struct *regs,
			int record, int patched)
{
	uint8_t insn[3] = { 0 };
	struct binbuf *b = &tr->w.payload;
	int err = 0;
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)regs->rip, NULL);
	if (errno)
		return 0;
	memcpy(insn, &word, 3);
	if (insn[0] != 0x0f)
		return 0;
	if (sig == SIGILL) {
		if (insn[1] != 0x0b || !patched || !tr->patcher ||
		    !cc_cpuid_patched_at(tr->patcher, regs->rip))
			return 0;	/* a real ud2 or illegal instruction */
		insn[1] = 0xa2;
	} else if (sig != SIGSEGV) {
		return 0;
	}
	if (insn[1] == 0x31 || (insn[1] == 0x01 && insn[2] == 0xf9)) {
		unsigned aux = 0;
		int p = insn[1] == 0x01;
		uint64_t v = p ? __rdtscp(&aux) : __rdtsc();
		regs->rax = v & 0xffffffffULL;
		regs->rdx = v >> 32;
		if (p)
			regs->rcx = aux;
		if (record) {
			err = binbuf_put_uvarint(b, regs->rip);
			err = err ? err : binbuf_put_uvarint(b, p ? CC_TSC_RDTSCP : CC_TSC_RDTSC);
			err = err ? err : binbuf_put_uvarint(b, v);
			err = err ? err : binbuf_put_uvarint(b, aux);
			err = err ? err : cc_writer_emit(&tr->w, CC_REC_RDTSC);
			tr->rdtsc++;
		}
		regs->rip += p ? 3 : 2;
	} else if (insn[1] == 0xa2) {
		uint64_t o[4];
		uint32_t leaf = (uint32_t)regs->rax, sub = (uint32_t)regs->rcx;
		cc_cpu_model_answer(tr->cpu_model, leaf, sub, o);
		if (record) {
			uint64_t v[7] = { regs->rip, leaf, sub, o[0], o[1], o[2], o[3] };
			for (int i = 0; i < 7 && !err; i++)
				err = binbuf_put_uvarint(b, v[i]);
			err = err ? err : cc_writer_emit(&tr->w, CC_REC_CPUID);
			tr->cpuid++;
		}
		regs->rax = o[0], regs->rbx = o[1], regs->rcx = o[2], regs->rdx = o[3];
		regs->rip += 2;
	} else {
		return 0;
	}
	if (ptrace(PTRACE_SETREGS, pid, NULL, regs) != 0)
		return -errno;
	return err ? err : 1;
}

/* ---- the exec stop: cpuid faulting, vDSO hidden, initial image ---- */

/* Run one syscall in the stopped tracee at its current pc; the result in *RET. */
static int inject_syscall(struct cc_tracer *tr, const struct user_regs_struct *at, uint64_t nr,
			  uint64_t a0, uint64_t a1, int64_t *ret)
{
	pid_t pid = tr->pid;
	struct user_regs_struct r = *at;
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)at->rip, NULL);
	if (errno)
		return -errno;
	long patched = (long)(((unsigned long)word & ~0xffffUL) | 0x050fUL);
	if (ptrace(PTRACE_POKETEXT, pid, (void *)at->rip, (void *)patched))
		return -errno;
	r.rax = nr, r.orig_rax = nr, r.rdi = a0, r.rsi = a1;
	int err = ptrace(PTRACE_SETREGS, pid, NULL, &r) ? -errno : 0;
	for (int guard = 0; !err && guard < 8; guard++) {
		int st;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) || waitpid(pid, &st, __WALL) != pid) {
			err = -errno;
			break;
		}
		if (!WIFSTOPPED(st)) {
			err = -ESRCH;
			break;
		}
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0)
			break;	/* stepped past the syscall */
	}
	if (!err && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0)
		*ret = (int64_t)r.rax;
	ptrace(PTRACE_POKETEXT, pid, (void *)at->rip, (void *)word);
	if (ptrace(PTRACE_SETREGS, pid, NULL, at) && !err)
		err = -errno;
	return err;
}

/* Turn AT_SYSINFO_EHDR into AT_IGNORE so libc finds no vDSO and makes real time syscalls. */
static int hide_vdso(struct cc_tracer *tr, uint64_t sp)
{
	uint64_t v, p = sp + 8;
	int err = cc_mem_read(tr, sp, &v, 8);
	if (err)
		return err;
	p += (v + 1) * 8;	/* argv and its NULL */
	for (int i = 0; i < 1 << 16; i++, p += 8) {	/* envp */
		if ((err = cc_mem_read(tr, p, &v, 8)))
			return err;
		if (!v)
			break;
	}
	for (p += 8; ; p += 16) {
		uint64_t av[2];
		if ((err = cc_mem_read(tr, p, av, 16)))
			return err;
		if (av[0] == 0)
			return 0;
		if (av[0] == AT_SYSINFO_EHDR_) {
			av[0] = AT_IGNORE_;
			return cc_mem_write(tr, p, av, 8);
		}
	}
}

static int exec_setup(struct cc_tracer *tr, char *const *argv, enum citcat_cpuid_mode mode)
{
	char path[64];
	int st;
	struct user_regs_struct regs;
	int64_t ret = 0;
	/* run to execve's exit so the registers are those of the first user instruction */
	if (ptrace(PTRACE_SYSCALL, tr->pid, NULL, NULL) || waitpid(tr->pid, &st, __WALL) != tr->pid)
		return fail(tr, -errno, "cannot follow the program past execve");
	if (!WIFSTOPPED(st) || ptrace(PTRACE_GETREGS, tr->pid, NULL, &regs))
		return fail(tr, -ESRCH, "the program died at execve");
	snprintf(path, sizeof(path), "/proc/%d/mem", tr->pid);
	tr->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (tr->memfd < 0)
		return fail(tr, -errno, "cannot open the program's memory (/proc/PID/mem)");
	int err = 0;
	if (mode != CITCAT_CPUID_PATCH) {
		err = inject_syscall(tr, &regs, SYS_arch_prctl, ARCH_SET_CPUID, 0, &ret);
		if (!err && ret == 0)
			tr->cpuid_mode = CC_CPUID_FAULT;
		else if (mode == CITCAT_CPUID_FAULT)
			return fail(tr, err ? err : (int)ret, "cannot enable cpuid faulting (arch_prctl "
				    "ARCH_SET_CPUID): this cpu or hypervisor lacks it; use --cpuid patch");
		if (err)
			return fail(tr, err, "cannot run a syscall in the program at its exec stop");
	}
	if (tr->cpuid_mode != CC_CPUID_FAULT) {
		tr->cpuid_mode = CC_CPUID_PATCH;
		if (cc_cpuid_patcher_new(&tr->patcher))
			return fail(tr, -ENOMEM, "out of memory");
	}
	err = hide_vdso(tr, regs.rsp);
	if (err)
		return fail(tr, err, "cannot rewrite the auxiliary vector to hide the vdso");
	err = cc_capture_initial(tr, &regs, argv);
	if (err)
		return fail(tr, err, "cannot capture the initial memory image");
	/* after the capture: the recording keeps the original instructions */
	if (tr->patcher && (err = cc_cpuid_patch_range(tr->patcher, tr->pid, tr->memfd, 0, 0)))
		return fail(tr, err, "cannot patch the program's cpuid instructions");
	return 0;
}

/* ---- the stop loop ---- */

/* CC_CPUID_PATCH: code that became executable in a recorded mmap/mprotect has its cpuid sites
 * patched, after the syscall's record holds the original bytes. */
static int patch_new_code(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret)
{
	uint64_t start, len;
	if (ret < 0)
		return 0;
	if (nr == SYS_mmap && (a[2] & PROT_EXEC))
		start = (uint64_t)ret, len = a[1];
	else if ((nr == SYS_mprotect || nr == SYS_pkey_mprotect) && (a[2] & PROT_EXEC))
		start = a[0], len = a[1];
	else if (nr == SYS_mremap)
		start = (uint64_t)ret, len = a[2];
	else
		return 0;
	int err = len ? cc_cpuid_patch_range(tr->patcher, tr->pid, tr->memfd, start, len) : 0;
	return err ? fail(tr, err, "cannot patch the cpuid instructions of new code") : 0;
}

static int emit_exit(struct cc_tracer *tr, int status);

static int emit_signal(struct cc_tracer *tr, int sig, uint64_t pc)
{
	int err = binbuf_put_uvarint(&tr->w.payload, (uint64_t)sig);
	err = err ? err : binbuf_put_uvarint(&tr->w.payload, pc);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_SIGNAL);
}

/* 1 when SIG would do nothing to the process (ignored, or default-ignore and not caught);
 * *CAUGHT: a handler is installed, *BLOCKED: it is in the signal mask. */
static int signal_state(pid_t pid, int sig, int *caught, int *blocked)
{
	char path[64], line[256];
	unsigned long long ign = 0, cgt = 0, blk = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "SigIgn: %llx", &ign);
		sscanf(line, "SigCgt: %llx", &cgt);
		sscanf(line, "SigBlk: %llx", &blk);
	}
	fclose(f);
	unsigned long long bit = 1ULL << (sig - 1);
	*caught = !!(cgt & bit);
	*blocked = !!(blk & bit);
	if (ign & bit)
		return 1;
	int dfl_ign = sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
	return dfl_ign && !(cgt & bit);
}

/* FPREGS: the vector state of the stopped program (mxcsr, fcw, xmm0-15). */
static int emit_fpregs(struct cc_tracer *tr)
{
	struct user_fpregs_struct f;
	if (ptrace(PTRACE_GETFPREGS, tr->pid, NULL, &f))
		return -errno;
	int err = binbuf_put_le64(&tr->w.payload, f.mxcsr);
	err = err ? err : binbuf_put_le64(&tr->w.payload, f.cwd);
	const uint64_t *x = (const uint64_t *)f.xmm_space;
	for (int i = 0; i < 32 && !err; i++)
		err = binbuf_put_le64(&tr->w.payload, x[i]);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_FPREGS);
}

/* At a signal-delivery stop: let the kernel build the handler frame (single-step with the
 * signal stops at the handler's first instruction) and record the handler entry: SIGNAL, then
 * REGS, FPREGS and the frame's bytes (from the handler's rsp up to OLD_SP, the interrupted
 * stack pointer). Either no instruction ran since the last syscall returned (a boundary the
 * replay knows) or a POINT was just emitted. */
static int deliver_now(struct cc_tracer *tr, struct loop_state *ls, int sig, uint64_t old_sp)
{
	struct user_regs_struct r;
	int st;
	pid_t pid = tr->pid;
	ls->pending &= ~(1ULL << (sig - 1));
	ls->delivering = 0;
	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig) || waitpid(pid, &st, __WALL) != pid)
		return fail(tr, -errno, "lost the program while delivering a signal");
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		ls->done = 1;
		ls->status = st;
		return emit_exit(tr, st);
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -errno;
	uint64_t lo = r.rsp, hi = old_sp > lo && old_sp - lo <= (64u << 10) ? old_sp : lo + (16u << 10);
	int err = emit_signal(tr, sig, r.rip);
	err = err ? err : cc_emit_regs(tr, &r);
	err = err ? err : emit_fpregs(tr);
	err = err ? err : cc_emit_mem(tr, lo, hi - lo, 0);
	ls->exit_valid = 0;
	return err ? err : (ptrace(PTRACE_CONT, pid, NULL, NULL) ? -errno : 0);
}

int cc_signal_placeable(pid_t tid, int sig)
{
	int caught = 0, blocked = 0;
	if (signal_state(tid, sig, &caught, &blocked))
		return -1;
	return caught && !blocked && sig < SIGRTMIN;
}

int cc_deliver_held(struct cc_tracer *tr, struct loop_state *ls, int sig)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tr->pid, NULL, &r))
		return -errno;
	return deliver_now(tr, ls, sig, r.rsp);
}

static int on_syscall_entry(struct cc_tracer *tr, struct loop_state *ls, struct user_regs_struct *r)
{
	uint64_t a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
	ls->nr = r->orig_rax;
	memcpy(ls->args, a, sizeof(a));
	ls->sc_flags = 0;
	if (!ls->restart || ls->nr != SYS_restart_syscall)	/* rip is past the syscall insn */
		tr->state_hash = cc_state_hash(r->rip - 2, r->rsp, r->rbp, r->rbx, r->r12, r->r13,
					       r->r14, r->r15);
	if (ls->restart && ls->nr == SYS_restart_syscall) {
		/* the program executed one syscall; the kernel restarts it behind its back */
		ls->nr = ls->restart_nr;
		memcpy(ls->args, ls->restart_args, sizeof(ls->args));
	}
	ls->restart = 0;
	if (ls->nr == SYS_exit || ls->nr == SYS_exit_group) {
		int err = cc_syscall_record(tr, ls->nr, a, 0, 0);
		if (!err && ls->nr == SYS_exit && ls->nthr > 1)
			return cc_thread_exit_call(tr, ls);
		ls->group_exit = 1;
		return err ? err : (ptrace(PTRACE_CONT, tr->pid, NULL, NULL) ? -errno : 0);
	}
	ls->clone_flags = ls->clone_ptid = ls->clone_ctid = 0;
	if (ls->nr == SYS_clone) {
		ls->clone_flags = a[0], ls->clone_ptid = a[2], ls->clone_ctid = a[3];
	} else if (ls->nr == SYS_clone3) {
		uint64_t ca[4] = { 0, 0, 0, 0 };	/* flags, pidfd, child_tid, parent_tid */
		if (cc_mem_read(tr, a[0], ca, sizeof(ca)) == 0)
			ls->clone_flags = ca[0], ls->clone_ctid = ca[2], ls->clone_ptid = ca[3];
	}
	if (cc_call_creates_thread(ls) && ls->nthr >= CC_MAX_THREADS)
		return fail(tr, -ENOTSUP, "the program creates more threads than citcat records");
	int err = cc_call_shares_memory(ls) ? cc_vfork_enter(tr) : 0;
	if (err)
		return err;
	if (ls->nr == SYS_set_tid_address && ls->cur >= 0)
		ls->thr[ls->cur].clear_tid = a[0];
	if (ls->nr == SYS_set_robust_list && ls->cur >= 0)
		ls->thr[ls->cur].robust_head = a[0];
	if (ls->nr == SYS_execve || ls->nr == SYS_execveat)
		return fail(tr, -ENOTSUP, "the program calls execve: a citcat recording covers one "
			    "program image; record the new program directly");
	int64_t answer = -ENOSYS;
	if (ls->nr == CC_SB_NR_REGISTER)	/* the syscall buffer library (syscallbuf.c) */
		err = ls->nthr > 1 ? 0 : cc_sb_register(tr, ls->args, &answer);
	else if (ls->nr == CC_SB_NR_FLUSH)
		err = (answer = 0, cc_sb_flush(tr));
	if (err)
		return err;
	if (ls->nr == SYS_rseq || ls->nr == CC_SB_NR_REGISTER || ls->nr == CC_SB_NR_FLUSH) {
		/* refuse rseq: the kernel would write the cpu number behind the replay's back;
		 * answer the syscall buffer's calls */
		r->orig_rax = (unsigned long long)-1;
		r->rax = (unsigned long long)answer;
		if (ptrace(PTRACE_SETREGS, tr->pid, NULL, r))
			return -errno;
		ls->sc_flags = CC_SC_SKIPPED;
	}
	ls->in_sc = 1;
	if (ptrace(PTRACE_SYSCALL, tr->pid, NULL, NULL))
		return -errno;
	if (ls->nthr > 1 && (cc_syscall_may_block(ls->nr, ls->args) || cc_slice_over(ls)))
		return cc_thread_block(tr, ls);
	return 0;
}

/* The recorded effects of a thread-creating clone: the kernel wrote the new tid at
 * parent_tid (CLONE_PARENT_SETTID) before returning. */
static int clone_effects(struct cc_tracer *tr, struct loop_state *ls, int64_t ret)
{
	if (!cc_call_creates_thread(ls) || ret <= 0 || !(ls->clone_flags & CLONE_PARENT_SETTID) ||
	    !ls->clone_ptid)
		return 0;
	return cc_emit_mem(tr, ls->clone_ptid, 4, 0);
}

int cc_on_syscall_exit(struct cc_tracer *tr, struct loop_state *ls)
{
	struct user_regs_struct r;
	pid_t pid = tr->pid;
	int err;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -errno;
	ls->in_sc = 0;
	int64_t ret = (int64_t)r.rax;
	if (ret <= -512 && ret >= -516) {
		/* -ERESTART*: interrupted by a signal stop; the program never sees this
		 * value: the call is restarted (recorded then) or fails with EINTR after a
		 * handler (a SIGNAL event, where replay stops) */
		ls->restart = 1;
		ls->restart_nr = ls->nr;
		memcpy(ls->restart_args, ls->args, sizeof(ls->args));
		ls->restart_regs = r;
		return ptrace(PTRACE_CONT, pid, NULL, NULL) ? -errno : 0;
	}
	err = cc_syscall_record(tr, ls->nr, ls->args, ret, ls->sc_flags);
	err = err ? err : clone_effects(tr, ls, ret);
	err = err ? err : cc_vfork_effects(tr);
	if (!err && ls->nr == CC_SB_NR_FLUSH)
		err = cc_sb_flush_effects(tr);
	if (!err && ls->nr == SYS_rt_sigreturn)	/* the state the kernel restored */
		err = cc_emit_regs(tr, &r);
	if (!err && ls->nr == SYS_rt_sigreturn)
		err = emit_fpregs(tr);
	if (!err && tr->patcher)
		err = patch_new_code(tr, ls->nr, ls->args, ret);
	if (err)
		return err;
	ls->at_exit = r;
	ls->exit_valid = 1;
	for (int s = 1; s < 64 && ls->pending && !ls->delivering; s++) {
		int caught = 0, blocked = 0;
		if (!(ls->pending & (1ULL << (s - 1))))
			continue;
		signal_state(pid, s, &caught, &blocked);
		if (!blocked) {	/* raise it again: delivered before any instruction runs */
			ls->delivering = s;
			syscall(SYS_tgkill, ls->tgid, pid, s);
		}
	}
	return ptrace(PTRACE_CONT, pid, NULL, NULL) ? -errno : 0;
}

/* A stop of the running thread; resumes it. */
static int on_main_stop(struct cc_tracer *tr, struct loop_state *ls, int st)
{
	struct user_regs_struct r;
	int sig = WSTOPSIG(st), ev = st >> 16, err;
	pid_t pid = tr->pid;
	/* the buffered calls made since the last stop come before anything this stop records */
	if (!(sig == (SIGTRAP | 0x80) && ls->in_sc) && (err = cc_sb_drain(tr)))
		return err;
	if (ev == PTRACE_EVENT_SECCOMP) {
		if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
			return -errno;
		ls->exit_valid = 0;
		return on_syscall_entry(tr, ls, &r);
	}
	if (sig == (SIGTRAP | 0x80) && ls->in_sc)
		return cc_on_syscall_exit(tr, ls);
	int req = ls->in_sc ? PTRACE_SYSCALL : PTRACE_CONT;
	if (ev == PTRACE_EVENT_CLONE && (ls->clone_flags & CLONE_THREAD)) {
		unsigned long tid = 0;
		if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &tid))
			return -errno;
		if ((err = cc_thread_cloned(ls, (pid_t)tid)))
			return fail(tr, err, "the program creates more threads than citcat records");
	}
	if (ev || sig == SIGTRAP || (sig | 0x80) == (SIGTRAP | 0x80))
		return ptrace(req, pid, NULL, NULL) ? -errno : 0;
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) != 0)	/* group-stop */
		return ptrace(PTRACE_LISTEN, pid, NULL, NULL) ? -errno : 0;
	if ((sig == SIGSEGV || sig == SIGILL) && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0) {
		err = emulate_trap(tr, pid, sig, &r, 1, 1);
		if (err < 0)
			return err;
		if (err > 0)
			return ptrace(req, pid, NULL, NULL) ? -errno : 0;
	}
	if (tr->sb_addr && !ls->in_sc) {
		/* a signal inside the buffer's busy region: finish the entry first */
		int exited = 0;
		err = cc_sb_leave_busy(tr, pid, &exited);
		err = err ? err : cc_sb_drain(tr);
		if (err)
			return err;
		if (exited) {
			ls->done = 1;
			ls->status = exited;
			return emit_exit(tr, exited);
		}
	}
	if (sig == SIGSTOP && ls->thr[ls->cur].stop_sent)	/* the recorder's preemption */
		return cc_thread_preempted(tr, ls, req);
	if (ls->delivering == sig)
		return deliver_now(tr, ls, sig, ls->at_exit.rsp);
	int caught = 0, blocked = 0;
	if (signal_state(pid, sig, &caught, &blocked))
		return ptrace(req, pid, NULL, (void *)(long)sig) ? -errno : 0;
	if (caught && !blocked && sig < SIGRTMIN && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0) {
		/* held back (a standard signal already held merges, as the kernel's would) */
		ls->pending |= 1ULL << (sig - 1);
		/* the stop of the signal that just interrupted a wait (select, poll, pselect6,
		 * nanosleep...: -ERESTARTNOHAND or -ERESTART_RESTARTBLOCK, which a handler turns
		 * into -EINTR; make -j is woken from pselect6 by SIGCHLD): nothing ran since, so
		 * the call ends here with EINTR and the signal is delivered at its boundary. It
		 * was taken for an exact point after the syscall, which the replay, still at the
		 * syscall, never reaches. */
		if (ls->restart && !memcmp(&r, &ls->restart_regs, sizeof(r)) &&
		    ((int64_t)r.rax == -514 || (int64_t)r.rax == -516)) {
			ls->restart = 0;
			err = cc_syscall_record(tr, ls->restart_nr, ls->restart_args, -EINTR, ls->sc_flags);
			return err ? err : deliver_now(tr, ls, sig, r.rsp);
		}
		/* no instruction ran since the last syscall returned: this is a boundary */
		if (ls->exit_valid && !memcmp(&r, &ls->at_exit, sizeof(r)))
			return deliver_now(tr, ls, sig, ls->at_exit.rsp);
		/* instructions ran since: the program is stopped at an exact point between two
		 * instructions; record it and deliver the signal there, at its real moment */
		if (!ls->in_sc) {
			tr->points++;
			return (err = cc_emit_point(tr, &r, 1)) ? err : deliver_now(tr, ls, sig, r.rsp);
		}
		return ptrace(req, pid, NULL, NULL) ? -errno : 0;
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0 && (err = emit_signal(tr, sig, r.rip)))
		return err;
	return ptrace(req, pid, NULL, (void *)(long)sig) ? -errno : 0;
}

/* A stop of an unrecorded child (fork): answer its traps, let everything else through. A
 * child that exec'd no longer has the patched image: its SIGILLs are its own. */
static void on_child_stop(struct cc_tracer *tr, struct loop_state *ls, pid_t pid, int st)
{
	int sig = WSTOPSIG(st);
	struct user_regs_struct r;
	if ((st >> 16) == PTRACE_EVENT_EXEC && ls->nexeced < ARRAY_SIZE(ls->execed))
		ls->execed[ls->nexeced++] = pid;
	if ((st >> 16) || sig == SIGTRAP || sig == (SIGTRAP | 0x80) || sig == SIGSTOP) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return;
	}
	int patched = 1;
	for (size_t i = 0; i < ls->nexeced; i++)
		patched = patched && ls->execed[i] != pid;
	if ((sig == SIGSEGV || sig == SIGILL) && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0 &&
	    emulate_trap(tr, pid, sig, &r, 0, patched) > 0) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return;
	}
	ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
}

static int emit_exit(struct cc_tracer *tr, int status)
{
	struct binbuf *b = &tr->w.payload;
	int err = binbuf_put_svarint(b, status);
	err = err ? err : binbuf_put_uvarint(b, tr->syscalls);
	err = err ? err : binbuf_put_uvarint(b, tr->out_bytes);
	err = err ? err : binbuf_put_le64(b, tr->out_hash);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_EXIT);
}

static int trace_loop(struct cc_tracer *tr, struct loop_state *ls)
{
	int err = 0;
	while (!ls->done) {
		int st;
		pid_t pid;
		if ((err = cc_wait(tr, ls, &pid, &st)))
			return tr->err[0] ? err : fail(tr, err, "lost the program (waitpid failed)");
		if (pid == 0)
			continue;
		struct cc_thr *t = cc_thread_find(ls, pid);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (pid == ls->tgid) {
				ls->done = 1;
				ls->status = st;
				err = emit_exit(tr, st);
				break;
			}
			if (t && (err = cc_thread_exited(tr, ls, pid)))
				break;
			continue;
		}
		if (!t || ls->cur < 0 || ls->thr[ls->cur].tid != pid) {
			if (!t && !cc_is_thread_of(pid, ls->tgid)) {	/* a fork child */
				if (WIFSTOPPED(st))
					on_child_stop(tr, ls, pid, st);
				continue;
			}
			if ((err = cc_other_thread_stop(tr, ls, pid, st)))
				break;
			continue;
		}
		err = on_main_stop(tr, ls, st);
		if (err) {
			if (!tr->err[0])
				snprintf(tr->err, tr->errlen, "recording failed: %s", strerror(-err));
			break;
		}
	}
	return err;
}

/* ---- starting the program ---- */

/* LD_PRELOAD with the syscall buffer library LIB first (the library takes itself out of the
 * variable at load, so the program sees the value it was given). 0 or -1 with errno. */
static int preload_env(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
	char *v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s%s%s", lib, old && *old ? " " : "", old ? old : "");
	int r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* In the child before exec: traced, stopped for the tracer, TSC reads trapping, every
 * syscall a seccomp trace stop but the syscall buffer's untraced calls (ARG: the buffer's
 * preload library, NULL for none). 0 or a positive errno. */
static int child_setup(void *arg)
{
	const char *lib = arg;
	if (lib && preload_env(lib))
		return errno;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP) ||
	    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || cc_sb_install_filter(lib != NULL))
		return errno;
	return 0;
}

/* Fork the program stopped before its execve; 0 with tr->pid set, or -errno. */
static int start_program(struct cc_tracer *tr, char *const *argv, const char *sb_lib)
{
	const struct workload_opts wo = { .setup = child_setup, .setup_arg = (void *)sb_lib };
	struct workload w;
	int st, e = workload_spawn(&w, argv, &wo);
	if (e)
		return fail(tr, e, "cannot fork");
	pid_t pid = tr->pid = w.pid;
	if (tr->started_pid)
		*tr->started_pid = pid;
	if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st)) {
		close(w.err_fd);
		return fail(tr, -ECHILD, "the program did not start");
	}
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD |
		    PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	for (;;) {	/* until the exec event; syscalls before it are the launcher's */
		if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st))
			break;
		if ((st >> 16) == PTRACE_EVENT_EXEC) {
			close(w.err_fd);
			return 0;
		}
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	if (!(e = workload_start(&w)))
		e = -ECHILD;
	snprintf(tr->err, tr->errlen, "cannot run '%s': %s", argv[0], strerror(-e));
	tr->not_run = true;
	return e;
}

/* ---- the recording directory ---- */

/* Put the finished TMP directory at OUT. An existing OUT is replaced only when it is a
 * recording holding nothing but its own files (recdir.c): swapped with TMP in one rename, so
 * OUT always names a whole recording, then removed from where TMP was. */
static int publish_dir(struct cc_tracer *tr, const char *tmp, const char *out)
{
	struct stat st;
	if (lstat(out, &st) != 0) {
		if (errno != ENOENT)
			return fail(tr, -errno, "cannot look at the output directory");
		return rename(tmp, out) ? fail(tr, -errno, "cannot rename the recording into place") : 0;
	}
	if (!S_ISDIR(st.st_mode) || citcat_probe(out) != 1)
		return fail(tr, -EEXIST, "output exists and is not a citcat recording: "
			    "choose another -o");
	int own = cc_recdir_only_own(out);
	if (own < 0)
		return fail(tr, own, "cannot read the old recording directory");
	if (!own)
		return fail(tr, -EEXIST, "output is a citcat recording but holds other files too: "
			    "move them or choose another -o");
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
		cc_recdir_remove(tmp);	/* the old recording, now at TMP */
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)	/* no atomic exchange on this file system */
		return fail(tr, -errno, "cannot rename the recording into place");
	int err = cc_recdir_remove(out);
	if (err)
		return fail(tr, err, "cannot remove the old recording");
	return rename(tmp, out) ? fail(tr, -errno, "cannot rename the recording into place") : 0;
}

static void remove_tmp(const char *tmp)
{
	cc_recdir_remove(tmp);
}

static int record_into(struct cc_tracer *tr, const struct citcat_record_opts *o, int fd,
		       struct loop_state *ls)
{
	int err = cc_writer_init(&tr->w, fd);
	err = err ? err : cc_cpu_model_open(&tr->cpu_model);
	if (err)
		return fail(tr, err, "out of memory");
	tr->sb_enabled = o->syscallbuf_lib != NULL;
	err = start_program(tr, o->argv, o->syscallbuf_lib);
	if (err)
		return err;
	err = exec_setup(tr, o->argv, o->cpuid);
	if (!err && ptrace(PTRACE_CONT, tr->pid, NULL, NULL))
		err = fail(tr, -errno, "cannot resume the program");
	cc_threads_init(ls, tr->pid);
	ls->slice_ns = o->time_slice_ns > 0 ? o->time_slice_ns : CITCAT_TIME_SLICE_MS * 1000000LL;
	/* the time slices wait for SIGCHLD with a timeout (blocked after the fork: the program
	 * does not inherit the mask) */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int masked = !err && sigprocmask(SIG_BLOCK, &chld, &old) == 0;
	ls->timed_wait = masked;
	if (!err)
		err = trace_loop(tr, ls);
	if (masked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (!err && cc_writer_flush(&tr->w))
		err = fail(tr, tr->w.err, "cannot write the recording");
	if (!err && fsync(fd))
		err = fail(tr, -errno, "cannot write the recording");
	return err;
}

int citcat_record(const struct citcat_record_opts *o, struct citcat_record_result *res,
		  char *errbuf, size_t errlen)
{
	struct cc_tracer tr;
	struct loop_state ls;
	char tmp[CC_MAX_PATH], file[CC_MAX_PATH + 32];
	int fd = -1, err;
	memset(&tr, 0, sizeof(tr));
	memset(&ls, 0, sizeof(ls));
	memset(res, 0, sizeof(*res));
	tr.memfd = -1;
	tr.err = errbuf;
	tr.errlen = errlen;
	tr.out_hash = BINIO_FNV64_INIT;
	errbuf[0] = 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", o->out_dir, (int)getpid());
	tr.dir = tmp;
	tr.copy_files = !o->no_copy;
	tr.started_pid = o->started_pid;
	snprintf(file, sizeof(file), "%s/%s", tmp, CC_FILE_NAME);
	/* before the program runs: what publish_dir would refuse at the end (it was checked only
	 * after the run, which was then lost) */
	if ((err = cc_recdir_check_out(o->out_dir, errbuf, errlen)))
		goto out;
	if (mkdir(tmp, 0700)) {
		err = -errno;
		snprintf(tr.err, tr.errlen, "cannot create the recording directory '%s': %s", tmp,
			 strerror(-err));
		goto out;
	}
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = fail(&tr, -errno, "cannot create the recording file");
		goto out;
	}
	err = record_into(&tr, o, fd, &ls);
	res->not_run = tr.not_run;
	if (!err)
		err = publish_dir(&tr, tmp, o->out_dir);
out:
	if (err && tr.pid > 0 && !ls.done) {
		kill(tr.pid, SIGKILL);
		while (waitpid(-1, NULL, __WALL) > 0)
			;
	}
	if (fd >= 0)
		close(fd);
	if (err)
		remove_tmp(tmp);
	res->wait_status = ls.status;
	res->syscalls = tr.syscalls;
	res->buffered_syscalls = tr.sb_buffered;
	res->buffered_signal_waits = tr.sb_signal_waits;
	res->rdtsc = tr.rdtsc;
	res->cpuid = tr.cpuid;
	res->signal_points = tr.points;
	res->threads = ls.nthr_total;
	res->switches = ls.switches;
	res->preemptions = ls.preemptions;
	res->cpuid_mode = (enum citcat_cpuid_mode)tr.cpuid_mode;
	const char *uf = NULL;
	cc_cpuid_patch_counts(tr.patcher, &res->cpuid_patched, &res->cpuid_unconfirmed, &uf);
	snprintf(res->cpuid_unconfirmed_file, sizeof(res->cpuid_unconfirmed_file), "%s", uf ? uf : "");
	cc_cpuid_patcher_free(tr.patcher);
	res->bytes = tr.w.bytes;
	res->copies = tr.copies;
	res->copy_bytes = tr.copy_bytes;
	res->unknown_syscalls = tr.unknown;
	res->first_unknown_nr = tr.first_unknown;
	if (tr.memfd >= 0)
		close(tr.memfd);
	cc_cpu_model_close(tr.cpu_model);
	cc_writer_release(&tr.w);
	cc_files_release(&tr);
	cc_vfork_release(&tr);
	return err;
}
