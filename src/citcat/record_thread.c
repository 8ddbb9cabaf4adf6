/* citcat/record_thread.c - the recorder's threads, one running at a time (as rr does): the
 * running thread runs until it enters a syscall that may wait for another thread (then it
 * goes on in the kernel while the next thread runs), exits, or has run its time slice while
 * another is ready (preempted at its next syscall, or stopped with SIGSTOP at an exact point,
 * a POINT record); the next thread that may run is resumed, round robin, and a SWITCH record
 * says so. A blocked thread's syscall is
 * recorded when it runs again, so the stream is the order in which the program's threads
 * observed their inputs, and the replay runs them in that order in one address space. */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "citcat/record_int.h"

#define FUTEX_CMD_MASK 0x7f
/* linux/futex.h's, for the robust list the kernel cleans at a thread's exit */
#define FUTEX_WAITERS_ 0x80000000U
#define FUTEX_OWNER_DIED_ 0x40000000U
#define FUTEX_TID_MASK_ 0x3fffffffU
#define ROBUST_LIST_LIMIT_ 2048

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void cc_threads_init(struct loop_state *ls, pid_t tgid)
{
	ls->tgid = tgid;
	memset(&ls->thr[0], 0, sizeof(ls->thr[0]));
	ls->thr[0].tid = tgid;
	ls->thr[0].state = CC_THR_RUNNING;
	ls->thr[0].seen = ls->thr[0].started = 1;
	ls->nthr = 1;
	ls->nthr_total = 1;
	ls->cur = 0;
	ls->last_tid = tgid;
	ls->slice_start_ns = now_ns();
}

struct cc_thr *cc_thread_find(struct loop_state *ls, pid_t tid)
{
	for (size_t i = 0; i < ls->nthr; i++)
		if (ls->thr[i].tid == tid)
			return &ls->thr[i];
	return NULL;
}

/* A new thread in the table (not seen, not started), or NULL when it is full. */
static struct cc_thr *thread_add(struct loop_state *ls, pid_t tid)
{
	if (ls->nthr >= CC_MAX_THREADS)
		return NULL;
	struct cc_thr *t = &ls->thr[ls->nthr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = CC_THR_NEW;
	return t;
}

int cc_is_thread_of(pid_t tid, pid_t tgid)
{
	char path[64], line[128];
	int found = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int v;
		if (sscanf(line, "Tgid: %d", &v) == 1) {
			found = v == tgid;
			break;
		}
	}
	fclose(f);
	return found;
}

int cc_syscall_may_block(uint64_t nr, const uint64_t *a)
{
	switch (nr) {
	case SYS_futex: {
		uint64_t cmd = a[1] & FUTEX_CMD_MASK;
		/* FUTEX_WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2 */
		return cmd == 0 || cmd == 6 || cmd == 9 || cmd == 11 || cmd == 13;
	}
	case SYS_read: case SYS_readv: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_write: case SYS_writev: case SYS_sendto: case SYS_sendmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect:
	case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_pause:
	case SYS_wait4: case SYS_waitid: case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait:
	case SYS_sched_yield: case SYS_flock: case SYS_msgrcv: case SYS_semop:
	case SYS_semtimedop:
		return 1;
	}
	return 0;
}

static int emit_switch(struct cc_tracer *tr, pid_t tid, int reason)
{
	int err = binbuf_put_uvarint(&tr->w.payload, (uint64_t)tid);
	err = err ? err : binbuf_put_uvarint(&tr->w.payload, (uint64_t)reason);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_SWITCH);
}

/* A thread's first run: its registers (REGS) and the tid the kernel wrote for it. */
static int emit_thread_start(struct cc_tracer *tr, struct cc_thr *t)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return -errno;
	int err = cc_emit_regs(tr, &r);
	if (!err && t->set_tid)
		err = cc_emit_mem(tr, t->set_tid, 4, 0);
	t->started = 1;
	return err;
}

int cc_schedule(struct cc_tracer *tr, struct loop_state *ls)
{
	size_t n = ls->nthr, from = ls->cur >= 0 ? (size_t)ls->cur + 1 : 0;
	struct cc_thr *t = NULL;
	/* a thread that called exit is reaped before another runs: the kernel clears its tid word
	 * only on the way out, and the recording has it zero at the exit call (a pthread_join
	 * that read it still set would wait in the real run and not in the replay) */
	for (size_t k = 0; k < n; k++)
		if (ls->thr[k].state == CC_THR_EXITING && ls->thr[k].tid != ls->tgid) {
			ls->cur = -1;
			return 0;
		}
	for (size_t k = 0; k < n && !t; k++) {
		struct cc_thr *c = &ls->thr[(from + k) % n];
		if (c->state == CC_THR_READY || c->state == CC_THR_SC_DONE ||
		    c->state == CC_THR_SIGNALED)
			t = c;
	}
	ls->cur = -1;
	if (!t || ls->group_exit)
		return 0;	/* a stop will make one ready; or the process is ending */
	ls->cur = (int)(t - ls->thr);
	tr->pid = t->tid;
	int err = 0;
	if (t->tid != ls->last_tid) {
		err = emit_switch(tr, t->tid, ls->leave_reason);
		ls->last_tid = t->tid;
		ls->switches++;
	}
	if (!err && !t->started)
		err = emit_thread_start(tr, t);
	if (err)
		return err;
	ls->exit_valid = 0;
	ls->restart = 0;
	ls->slice_start_ns = now_ns();
	if (t->state == CC_THR_SC_DONE) {	/* its syscall returned meanwhile: record it now */
		t->state = CC_THR_RUNNING;
		ls->nr = t->nr;
		memcpy(ls->args, t->args, sizeof(ls->args));
		ls->sc_flags = t->sc_flags;
		tr->state_hash = t->state_hash;
		ls->in_sc = 1;
		return cc_on_syscall_exit(tr, ls);
	}
	int held = t->state == CC_THR_SIGNALED ? t->held_sig : 0;
	t->state = CC_THR_RUNNING;
	ls->in_sc = 0;
	if (held)	/* its interrupted syscall is not recorded: the frame says how it ends */
		return cc_deliver_held(tr, ls, held);
	return ptrace(PTRACE_CONT, t->tid, NULL, NULL) ? -errno : 0;
}

int cc_slice_over(const struct loop_state *ls)
{
	if (ls->cur < 0 || now_ns() - ls->slice_start_ns < ls->slice_ns)
		return 0;
	/* never inside a thread-creating clone: it returns at once, and a switch there could run
	 * the new thread (its first stop makes it ready) before the clone that creates it is
	 * recorded; the replay creates it only at that clone's return */
	if (ls->in_sc && cc_call_creates_thread(ls))
		return 0;
	/* nor inside a call that maps or unmaps: see cc_call_changes_mappings */
	if (ls->in_sc && cc_call_changes_mappings(ls))
		return 0;
	/* nor inside a vfork: every page that changes until it returns is the child's
	 * (record_vfork.c) */
	if (ls->in_sc && cc_call_shares_memory(ls))
		return 0;
	for (size_t i = 0; i < ls->nthr; i++)
		if (ls->thr[i].state == CC_THR_READY || ls->thr[i].state == CC_THR_SC_DONE ||
		    ls->thr[i].state == CC_THR_SIGNALED)
			return 1;
	return 0;
}

int cc_wait(struct cc_tracer *tr, struct loop_state *ls, pid_t *pid, int *st)
{
	if (!ls->timed_wait || ls->nthr < 2) {
		*pid = waitpid(-1, st, __WALL);
		return *pid < 0 && errno != EINTR ? -errno : (*pid < 0 ? (*pid = 0) : 0);
	}
	*pid = waitpid(-1, st, __WALL | WNOHANG);
	if (*pid != 0)
		return *pid < 0 && errno != EINTR ? -errno : (*pid < 0 ? (*pid = 0) : 0);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int64_t left = ls->cur >= 0 ? ls->slice_ns - (now_ns() - ls->slice_start_ns) : ls->slice_ns;
	struct timespec ts = { 0, left > 1000000 ? left : 1000000 };
	if (sigtimedwait(&chld, NULL, &ts) >= 0 || !cc_slice_over(ls))
		return 0;	/* a stop is waiting (or the slice is not over): collect it */
	struct cc_thr *t = &ls->thr[ls->cur];
	if (ls->in_sc)	/* a call outside the list that waits: let the others run */
		return cc_thread_block(tr, ls);
	if (!t->stop_sent) {
		t->stop_sent = 1;
		if (syscall(SYS_tgkill, ls->tgid, t->tid, SIGSTOP))
			return -errno;
	}
	return 0;
}

int cc_thread_preempted(struct cc_tracer *tr, struct loop_state *ls, int req)
{
	struct cc_thr *t = &ls->thr[ls->cur];
	struct user_regs_struct r;
	t->stop_sent = 0;
	if (ls->in_sc || ls->restart || ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return ptrace(req, t->tid, NULL, NULL) ? -errno : 0;	/* on; later again */
	/* no instruction ran since the syscall returned: the switch is at that boundary, which
	 * the replay knows; else at this exact point */
	/* without the deep stack hash: dead bytes of callers' frames can differ in the replay
	 * (the simulator's fxsave leaves bytes the CPU zeroes), so a preemption point in
	 * python3 was never matched; preemptions are frequent, signals rare */
	int err = ls->exit_valid && !memcmp(&r, &ls->at_exit, sizeof(r)) ? 0 :
		  cc_emit_point(tr, &r, 0);
	if (err)
		return err;
	ls->preemptions++;
	t->state = CC_THR_READY;
	ls->exit_valid = 0;
	ls->leave_reason = CC_SWITCH_HERE;
	return cc_schedule(tr, ls);
}

int cc_other_thread_stop(struct cc_tracer *tr, struct loop_state *ls, pid_t tid, int st)
{
	struct cc_thr *t = cc_thread_find(ls, tid);
	int sig = WSTOPSIG(st), ev = st >> 16;
	if (!t && !(t = thread_add(ls, tid))) {	/* stopped before its creator's clone event */
		snprintf(tr->err, tr->errlen, "the program creates more threads than citcat "
			 "records (%d)", CC_MAX_THREADS);
		return -ENOTSUP;
	}
	if (t->state == CC_THR_NEW && !t->seen && sig == SIGSTOP && !ev) {
		t->seen = 1;	/* its first stop: it has run no instruction yet */
		t->state = CC_THR_READY;
		ls->nthr_total++;
		return ls->cur < 0 ? cc_schedule(tr, ls) : 0;
	}
	if (t->state == CC_THR_BLOCKED && ev == PTRACE_EVENT_SECCOMP)
		/* restarted after a signal stop interrupted it: still the same wait */
		return ptrace(PTRACE_SYSCALL, tid, NULL, NULL) ? -errno : 0;
	if (t->state == CC_THR_BLOCKED && sig == (SIGTRAP | 0x80)) {
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r))
			return -errno;
		int64_t ret = (int64_t)r.rax;
		if (ret <= -512 && ret >= -516)	/* -ERESTART*: it will restart the same call */
			return ptrace(PTRACE_CONT, tid, NULL, NULL) ? -errno : 0;
		t->state = CC_THR_SC_DONE;
		return ls->cur < 0 ? cc_schedule(tr, ls) : 0;
	}
	if (ev || sig == SIGTRAP)
		return ptrace(PTRACE_CONT, tid, NULL, NULL) ? -errno : 0;
	if (sig == SIGSTOP && t->stop_sent) {	/* a preemption that came after it blocked */
		t->stop_sent = 0;
		return ptrace(PTRACE_CONT, tid, NULL, NULL) ? -errno : 0;
	}
	int placeable = t->state == CC_THR_BLOCKED && sig != SIGSTOP ? cc_signal_placeable(tid, sig) : 0;
	if (placeable > 0) {
		/* a signal interrupted its wait (the kernel made the syscall -ERESTART* or -EINTR):
		 * it stays in this delivery stop, and the signal is delivered when it runs, at
		 * that syscall's boundary, with the kernel's own restart or EINTR handling */
		t->state = CC_THR_SIGNALED;
		t->held_sig = sig;
		return ls->cur < 0 ? cc_schedule(tr, ls) : 0;
	}
	if (placeable < 0)	/* ignored: it does nothing (the wait restarts) */
		return ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) ? -errno : 0;
	snprintf(tr->err, tr->errlen, "thread %d received signal %d while another thread ran: "
		 "citcat records signals to the running thread only", (int)tid, sig);
	return -ENOTSUP;
}

int cc_thread_exited(struct cc_tracer *tr, struct loop_state *ls, pid_t tid)
{
	struct cc_thr *t = cc_thread_find(ls, tid);
	size_t i = (size_t)(t - ls->thr);
	int was_exiting = t->state == CC_THR_EXITING;
	memmove(t, t + 1, (ls->nthr - i - 1) * sizeof(*t));
	ls->nthr--;
	if (ls->cur == (int)i)	/* killed with the process (exit_group, a fatal signal) */
		ls->cur = -1;
	else if (ls->cur > (int)i)
		ls->cur--;
	return was_exiting && ls->cur < 0 ? cc_schedule(tr, ls) : 0;
}

/* The running thread enters a syscall that may wait for another thread: it goes on in the
 * kernel while the next thread runs; its result is recorded when it runs again. */
int cc_thread_block(struct cc_tracer *tr, struct loop_state *ls)
{
	struct cc_thr *t = &ls->thr[ls->cur];
	t->state = CC_THR_BLOCKED;
	t->nr = ls->nr;
	memcpy(t->args, ls->args, sizeof(t->args));
	t->sc_flags = ls->sc_flags;
	t->state_hash = tr->state_hash;
	ls->in_sc = 0;
	ls->exit_valid = 0;
	ls->leave_reason = CC_SWITCH_SYSCALL;
	return cc_schedule(tr, ls);
}

/* The kernel's clean-up of thread T's robust futex list at its exit (exit_robust_list): each
 * futex word of the list (and the op pending) that T owns becomes FUTEX_OWNER_DIED, keeping
 * FUTEX_WAITERS; a waiter is woken, and the next lock returns EOWNERDEAD. Nothing the thread
 * executes writes it, so the words are recorded as MEM effects of its exit, computed from the
 * list as it is at the exit call (every other thread is stopped or inside the kernel). */
static int emit_robust_deaths(struct cc_tracer *tr, const struct cc_thr *t)
{
	uint64_t head[3];	/* struct robust_list_head: next, futex_offset, list_op_pending */
	if (!t->robust_head || cc_mem_read(tr, t->robust_head, head, sizeof(head)))
		return 0;	/* none, or unreadable: the kernel skips it as well */
	uint64_t entry = head[0], pending = head[2];
	int err = 0;
	for (int n = 0; n <= ROBUST_LIST_LIMIT_ && !err; n++) {
		int last = entry == t->robust_head || n == ROBUST_LIST_LIMIT_;
		uint64_t e = last ? pending : entry;	/* the list, then the pending op */
		if (last && (!e || e == t->robust_head))
			break;
		uint64_t next = 0;
		if (!last && cc_mem_read(tr, entry, &next, sizeof(next)))
			break;	/* a faulting list ends the kernel's walk too */
		uint32_t word;
		uint64_t uaddr = (e & ~1ULL) + head[1];	/* bit 0 of an entry marks a PI futex */
		if ((last || e != pending) && !cc_mem_read(tr, uaddr, &word, sizeof(word)) &&
		    (word & FUTEX_TID_MASK_) == (uint32_t)t->tid) {
			word = (word & FUTEX_WAITERS_) | FUTEX_OWNER_DIED_;
			err = binbuf_put_uvarint(&tr->w.payload, uaddr);
			err = err ? err : binbuf_put_uvarint(&tr->w.payload, sizeof(word));
			err = err ? err : binbuf_put(&tr->w.payload, &word, sizeof(word));
			err = err ? err : cc_writer_emit(&tr->w, CC_REC_MEM);
		}
		if (last)
			break;
		entry = next;
	}
	return err;
}

/* The running thread calls exit (others remain): the kernel zeroes its clear_child_tid word
 * (and wakes a futex there) as it goes, recorded as an effect of the call, as is its robust
 * list's clean-up. The next thread runs once the exit is reaped, when that word is zero in
 * the real process too. */
int cc_thread_exit_call(struct cc_tracer *tr, struct loop_state *ls)
{
	struct cc_thr *t = &ls->thr[ls->cur];
	uint32_t zero = 0;
	int err = 0;
	if (t->clear_tid) {
		err = binbuf_put_uvarint(&tr->w.payload, t->clear_tid);
		err = err ? err : binbuf_put_uvarint(&tr->w.payload, sizeof(zero));
		err = err ? err : binbuf_put(&tr->w.payload, &zero, sizeof(zero));
		err = err ? err : cc_writer_emit(&tr->w, CC_REC_MEM);
	}
	err = err ? err : emit_robust_deaths(tr, t);
	if (err)
		return err;
	t->state = CC_THR_EXITING;
	ls->cur = -1;
	ls->exit_valid = 0;
	ls->leave_reason = CC_SWITCH_HERE;
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return -errno;
	return t->tid == ls->tgid ? cc_schedule(tr, ls) : 0;	/* a leader is reaped last */
}

int cc_thread_cloned(struct loop_state *ls, pid_t tid)
{
	struct cc_thr *t = cc_thread_find(ls, tid);
	if (!t && !(t = thread_add(ls, tid)))	/* its first stop is still to come */
		return -ENOTSUP;	/* not reached: clone entry checks the room */
	if (ls->clone_flags & CLONE_CHILD_CLEARTID)
		t->clear_tid = ls->clone_ctid;
	if (ls->clone_flags & CLONE_CHILD_SETTID)
		t->set_tid = ls->clone_ctid;
	return 0;
}
