/* citcat/record_int.h - the recorder's shared state, between the ptrace loop (record.c),
 * memory/file capture (record_mem.c) and syscall effect capture (record_syscall.c). */
#ifndef SPENT_CITCAT_RECORD_INT_H
#define SPENT_CITCAT_RECORD_INT_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>

#include "citcat/cpuid_patch.h"
#include "citcat/recording.h"

struct cc_cpu_model;

struct cc_file_ident {
	uint64_t id, dev, ino, size, mtime_ns;
	uint64_t flags;		/* CC_FILE_COPY / CC_FILE_CHECK of its FILE record */
	uint8_t *content;	/* the file's bytes, read to hash it (NULL: see fd) */
	size_t content_len;	/* its size when content or fd is there, else 0 */
	int fd;			/* the cache knew its hash: the file open instead, read only where
				 * the program has its own copy of a mapped page (else -1) */
	uint64_t ctime_ns;	/* with the rest, the identity it must still have when read */
};

struct cc_tracer {
	pid_t pid;
	volatile pid_t *started_pid;	/* citcat_record_opts.started_pid */
	bool not_run;			/* the command could not be executed (not found, not runnable) */
	int memfd;			/* /proc/PID/mem of the recorded process */
	struct cc_writer w;
	struct cc_file_ident *files;
	size_t nfiles, capfiles;
	const char *dir;		/* the recording directory being written (DIR.tmp.PID) */
	int copy_files;			/* keep a copy of every mapped file in dir/files */
	uint64_t copies, copy_bytes;	/* copies written, their compressed bytes */
	uint64_t cache_hits;		/* mapped files whose hash and copy came from the cache */
	char *cache_dir;		/* filecache.h, looked up at the first file: NULL when off */
	int cache_tried;
	size_t kept_fds;		/* files kept open (cc_file_ident.fd) */
	uint64_t brk_cur;
	uint64_t syscalls, rdtsc, cpuid, unknown;
	uint64_t points;		/* signals delivered at an exact point (POINT records) */
	long first_unknown;
	uint64_t out_bytes, out_hash;
	uint64_t state_hash;		/* CC_SC_STATE of the syscall being recorded */
	struct cc_cpu_model *cpu_model;	/* answers cpuid (the simulator's CPU, cpu_model.c) */
	int cpuid_mode;			/* CC_CPUID_FAULT or CC_CPUID_PATCH, once decided */
	struct cc_cpuid_patcher *patcher;	/* CC_CPUID_PATCH: the sites replaced by ud2 */
	/* the syscall buffer (syscallbuf.c) */
	int sb_enabled;			/* the preload library may register a buffer */
	uint64_t sb_addr;		/* its buffer in the program, 0 before it registered */
	uint64_t sb_drained;		/* bytes of entries already in the recording */
	uint64_t sb_buffered;		/* SYSCALL records that came through it */
	uint64_t sb_signal_waits;	/* signals held until a buffered call's entry was complete */
	/* the parent's writable pages at the entry of a call making a child that shares its
	 * memory (record_vfork.c), and the thread making it */
	struct cc_vfork_snap *vfork;
	pid_t vfork_tid;
	char *err;
	size_t errlen;
};

#define CC_MAX_THREADS 256

enum cc_thr_state {
	CC_THR_NEW,		/* created (clone event seen), its first stop not yet */
	CC_THR_READY,		/* stopped between instructions, may run (new or preempted) */
	CC_THR_RUNNING,		/* the one thread running */
	CC_THR_BLOCKED,		/* in a syscall that may block; its exit stop not seen yet */
	CC_THR_SC_DONE,		/* that syscall returned: stopped at its exit, not recorded yet */
	CC_THR_EXITING,		/* called exit; its exit not reaped yet */
	CC_THR_SIGNALED,	/* a signal interrupted the syscall it blocked in: it waits in
				 * that signal's delivery stop, delivered when it runs again */
};

/* A thread of the recorded process (record_thread.c) */
struct cc_thr {
	pid_t tid;
	int state;		/* enum cc_thr_state */
	int seen;		/* its first stop came (a new thread may stop before its clone event) */
	int started;		/* ran: REGS recorded */
	uint64_t clear_tid;	/* CLONE_CHILD_CLEARTID / set_tid_address: zeroed at its exit */
	uint64_t set_tid;	/* CLONE_CHILD_SETTID: its tid is written there */
	uint64_t robust_head;	/* set_robust_list: the kernel cleans that list at its exit */
	int stop_sent;		/* the recorder sent it a SIGSTOP to preempt it */
	int held_sig;		/* CC_THR_SIGNALED: the signal it stopped with */
	/* the syscall it is blocked in (the loop state's, saved while others run) */
	uint64_t nr, args[6], state_hash;
	int sc_flags;
};

/* The stop loop's state. The syscall fields are the running thread's. */
struct loop_state {
	int in_sc;		/* between a syscall's entry and exit stops */
	int restart;		/* the last syscall was interrupted and will be restarted */
	uint64_t restart_nr, restart_args[6];
	struct user_regs_struct restart_regs;	/* at that -ERESTART* exit */
	uint64_t pending;	/* caught signals held back until a syscall boundary (bit sig-1) */
	int delivering;		/* the signal sent (tgkill) to deliver at this boundary */
	struct user_regs_struct at_exit;	/* registers at the last syscall-exit stop */
	int exit_valid;
	int sc_flags;
	uint64_t nr, args[6];
	uint64_t clone_flags, clone_ptid, clone_ctid;	/* of the clone being recorded */
	int done;
	int status;
	pid_t execed[64];	/* children that exec'd (their image is not the patched one) */
	size_t nexeced;
	/* threads, one running at a time (record_thread.c) */
	pid_t tgid;
	struct cc_thr thr[CC_MAX_THREADS];
	size_t nthr;
	int cur;		/* index of the running thread, -1 while none may run */
	pid_t last_tid;		/* the thread the recorded events belong to */
	int leave_reason;	/* enum cc_switch_reason of the thread that stopped running */
	int group_exit;		/* exit_group was called: no thread runs again */
	int timed_wait;		/* SIGCHLD is blocked: the loop waits with a time slice */
	int64_t slice_start_ns;	/* CLOCK_MONOTONIC when the running thread was resumed */
	int64_t slice_ns;	/* how long it runs while another thread is ready */
	uint64_t preemptions;	/* switches at an exact point (POINT) or a boundary */
	uint64_t switches;	/* SWITCH records */
	uint64_t nthr_total;	/* threads the process had, the first one included */
};

/* Whether the syscall being recorded is a clone or clone3 that creates a thread (clone_flags
 * are zero for any other call). */
static inline int cc_call_creates_thread(const struct loop_state *ls)
{
	return (ls->nr == SYS_clone || ls->nr == SYS_clone3) && (ls->clone_flags & CLONE_THREAD);
}

/* Whether the syscall being recorded changes the address space. The replay applies each
 * change at the call's recorded exit, so no other thread may run while the kernel makes it:
 * thread A's munmap of its arena's excess, still in the kernel when a slice switched to
 * thread B, let B's stack mmap land in the freed range before the munmap was recorded, and
 * the replay found B's stack unmapped (12 threads at --time-slice 0.01: 7 replays in 60). */
static inline int cc_call_changes_mappings(const struct loop_state *ls)
{
	switch (ls->nr) {
	case SYS_mmap: case SYS_munmap: case SYS_mremap: case SYS_mprotect: case SYS_brk:
	case SYS_madvise:
		return 1;
	}
	return 0;
}

/* record_mem.c */
int cc_mem_read(struct cc_tracer *tr, uint64_t addr, void *buf, size_t len);
int cc_mem_write(struct cc_tracer *tr, uint64_t addr, const void *buf, size_t len);
/* Emit MEM records for the bytes [addr, addr+len) of the tracee (skipping zero pages when
 * SKIP_ZERO). Unreadable pages are skipped. */
int cc_emit_mem(struct cc_tracer *tr, uint64_t addr, uint64_t len, int skip_zero);
/* A MEM record of the LEN bytes P, already read from the tracee at ADDR. */
int cc_emit_mem_bytes(struct cc_tracer *tr, uint64_t addr, const uint8_t *p, size_t len);
/* Register the file open as /proc/PID/fd/FD (or at PATH when FD < 0), MAPPED or only opened:
 * a FILE record the first time (with a copy in dir/files when mapped and tr->copy_files); its
 * id in *ID, 0 when it is not a regular file with stable content (a pipe, a device, /proc or
 * /sys): what the program gets from those is recorded by content only. */
int cc_file_register(struct cc_tracer *tr, int fd, const char *path, int mapped, uint64_t *id);
/* Emit a MAP of [start, start+len) from file ID at OFFSET, plus MEM for pages differing. */
int cc_emit_file_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot,
		     uint64_t id, uint64_t offset);
int cc_emit_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot, int kind);
/* The end of the mapping holding ADDR in the tracee (/proc/PID/maps), 0 when none does. */
uint64_t cc_mapping_end(struct cc_tracer *tr, uint64_t addr);
/* A REGS record with REGS. */
int cc_emit_regs(struct cc_tracer *tr, const struct user_regs_struct *regs);
int cc_emit_range(struct cc_tracer *tr, enum cc_rec_kind kind, uint64_t start, uint64_t len);
/* The initial image at the exec stop: META, REGS, every mapping; then START. */
int cc_capture_initial(struct cc_tracer *tr, const struct user_regs_struct *regs, char *const *argv);
void cc_files_release(struct cc_tracer *tr);

/* Whether the syscall being recorded makes a child process that runs in the caller's memory
 * (vfork, or clone/clone3 with CLONE_VM and without CLONE_THREAD). */
static inline int cc_call_shares_memory(const struct loop_state *ls)
{
	return ls->nr == SYS_vfork || ((ls->nr == SYS_clone || ls->nr == SYS_clone3) &&
				       (ls->clone_flags & CLONE_VM) && !(ls->clone_flags & CLONE_THREAD));
}

/* record_vfork.c */
/* At the entry of such a call: keep a copy of the caller's writable pages. */
int cc_vfork_enter(struct cc_tracer *tr);
/* At its exit in the thread that made it (nothing otherwise): MEM records for the pages the
 * child changed; its buffered calls are skipped. */
int cc_vfork_effects(struct cc_tracer *tr);
void cc_vfork_release(struct cc_tracer *tr);

/* record_syscall.c */
/* The SYSCALL record alone: FLAGS with OUT_HASH takes HASH, with CC_SC_STATE tr->state_hash. */
int cc_emit_syscall(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, int flags,
		    uint64_t hash);
/* Record syscall NR with args A returning RET (at its exit stop) and its memory effects. */
int cc_syscall_record(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, int flags);

/* record_thread.c */
void cc_threads_init(struct loop_state *ls, pid_t tgid);
struct cc_thr *cc_thread_find(struct loop_state *ls, pid_t tid);
/* 1 when TID is a thread of the process TGID (its /proc status says so). */
int cc_is_thread_of(pid_t tid, pid_t tgid);
/* 1 when syscall NR with args A may wait for another thread (the running one then yields). */
int cc_syscall_may_block(uint64_t nr, const uint64_t *a);
/* Run the next thread that may run (recording a SWITCH when it is another thread than the
 * last one); none: ls->cur = -1 until a stop makes one ready. */
int cc_schedule(struct cc_tracer *tr, struct loop_state *ls);
/* A stop of a thread that is not running (or of a new one). 0 or -errno. */
int cc_other_thread_stop(struct cc_tracer *tr, struct loop_state *ls, pid_t tid, int st);
/* The exit of thread TID (not the process's). */
int cc_thread_exited(struct cc_tracer *tr, struct loop_state *ls, pid_t tid);
/* The running thread entered a syscall that may block: the next thread runs meanwhile. */
int cc_thread_block(struct cc_tracer *tr, struct loop_state *ls);
/* The running thread called exit while others remain. */
int cc_thread_exit_call(struct cc_tracer *tr, struct loop_state *ls);
/* The clone event of the running thread: TID is its new thread (flags in ls->clone_*). */
int cc_thread_cloned(struct loop_state *ls, pid_t tid);
/* The next stop (*PID 0: none yet, call again), waiting at most a time slice at a time while
 * several threads live: a running thread whose slice is over while another is ready is
 * preempted (in a syscall: switched as if it blocked; running: stopped with SIGSTOP). */
int cc_wait(struct cc_tracer *tr, struct loop_state *ls, pid_t *pid, int *st);
/* 1 when the running thread has run its time slice and another thread is ready. */
int cc_slice_over(const struct loop_state *ls);
/* The running thread's SIGSTOP from cc_wait: the switch is recorded here (POINT when it ran
 * instructions since its last syscall) unless a syscall restart is pending; else it goes on
 * (ptrace request REQ). */
int cc_thread_preempted(struct cc_tracer *tr, struct loop_state *ls, int req);
/* record.c: 1 when SIG to thread TID is one citcat places (caught, not blocked, standard),
 * -1 when it would do nothing (ignored), 0 otherwise. */
int cc_signal_placeable(pid_t tid, int sig);
/* record.c: deliver SIG to the running thread, stopped in its delivery stop, at this
 * boundary (SIGNAL, REGS, FPREGS, the frame); resumes it. */
int cc_deliver_held(struct cc_tracer *tr, struct loop_state *ls, int sig);
/* record.c: a POINT record with R (the running thread's registers at a stop); DEEP: with the
 * deep stack hash (else over no bytes). */
int cc_emit_point(struct cc_tracer *tr, const struct user_regs_struct *r, int deep);
/* record.c: the syscall-exit stop of the running thread (also for a blocked syscall the
 * scheduler resumes); resumes it. */
int cc_on_syscall_exit(struct cc_tracer *tr, struct loop_state *ls);

#endif
