/* citcat/record_syscall.c - one syscall's record: number, arguments, result, the hash of what
 * write-family calls sent out, and its effects on memory (bytes the kernel wrote into user
 * buffers, per x86-64 syscall; mapping changes of mmap/munmap/mremap/brk/madvise). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "citcat/record_int.h"
#include "core/alloc.h"

#define PAGE 4096ULL
#define PAGE_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))

/* A fixed output buffer: argument BUF receives SIZE bytes (SIZE_ARG >= 0: size from that
 * argument; RET_SIZE: the result is the byte count; RET_TIMES: result times SIZE). */
enum { SZ_FIXED, SZ_ARG, SZ_RET, SZ_RET_TIMES, SZ_ARG_TIMES };
struct out_buf {
	short nr;
	signed char buf, how, arg;
	unsigned short size;
};

static const struct out_buf out_bufs[] = {
	{ SYS_read, 1, SZ_RET, 0, 0 },
	{ SYS_pread64, 1, SZ_RET, 0, 0 },
	{ SYS_stat, 1, SZ_FIXED, 0, 144 },
	{ SYS_fstat, 1, SZ_FIXED, 0, 144 },
	{ SYS_lstat, 1, SZ_FIXED, 0, 144 },
	{ SYS_newfstatat, 2, SZ_FIXED, 0, 144 },
	{ SYS_statx, 4, SZ_FIXED, 0, 256 },
	{ SYS_getrandom, 0, SZ_RET, 0, 0 },
	{ SYS_clock_gettime, 1, SZ_FIXED, 0, 16 },
	{ SYS_clock_getres, 1, SZ_FIXED, 0, 16 },
	{ SYS_gettimeofday, 0, SZ_FIXED, 0, 16 },
	{ SYS_gettimeofday, 1, SZ_FIXED, 0, 8 },
	{ SYS_time, 0, SZ_FIXED, 0, 8 },
	{ SYS_uname, 0, SZ_FIXED, 0, 390 },
	{ SYS_sysinfo, 0, SZ_FIXED, 0, 112 },
	{ SYS_getdents64, 1, SZ_RET, 0, 0 },
	{ SYS_getdents, 1, SZ_RET, 0, 0 },
	{ SYS_rt_sigaction, 2, SZ_FIXED, 0, 32 },
	{ SYS_rt_sigprocmask, 2, SZ_ARG, 3, 0 },
	{ SYS_prlimit64, 3, SZ_FIXED, 0, 16 },
	{ SYS_getrlimit, 1, SZ_FIXED, 0, 16 },
	{ SYS_readlink, 1, SZ_RET, 0, 0 },
	{ SYS_readlinkat, 2, SZ_RET, 0, 0 },
	{ SYS_getcwd, 0, SZ_RET, 0, 0 },
	{ SYS_pipe, 0, SZ_FIXED, 0, 8 },
	{ SYS_pipe2, 0, SZ_FIXED, 0, 8 },
	{ SYS_socketpair, 3, SZ_FIXED, 0, 8 },
	{ SYS_poll, 0, SZ_ARG_TIMES, 1, 8 },
	{ SYS_ppoll, 0, SZ_ARG_TIMES, 1, 8 },
	{ SYS_wait4, 1, SZ_FIXED, 0, 4 },
	{ SYS_wait4, 3, SZ_FIXED, 0, 144 },
	{ SYS_nanosleep, 1, SZ_FIXED, 0, 16 },
	{ SYS_clock_nanosleep, 3, SZ_FIXED, 0, 16 },
	{ SYS_times, 0, SZ_FIXED, 0, 32 },
	{ SYS_getrusage, 1, SZ_FIXED, 0, 144 },
	{ SYS_sched_getaffinity, 2, SZ_RET, 0, 0 },
	{ SYS_statfs, 1, SZ_FIXED, 0, 120 },
	{ SYS_fstatfs, 1, SZ_FIXED, 0, 120 },
	{ SYS_epoll_wait, 1, SZ_RET_TIMES, 0, 12 },
	{ SYS_epoll_pwait, 1, SZ_RET_TIMES, 0, 12 },
	{ SYS_getresuid, 0, SZ_FIXED, 0, 4 },
	{ SYS_getresuid, 1, SZ_FIXED, 0, 4 },
	{ SYS_getresuid, 2, SZ_FIXED, 0, 4 },
	{ SYS_getresgid, 0, SZ_FIXED, 0, 4 },
	{ SYS_getresgid, 1, SZ_FIXED, 0, 4 },
	{ SYS_getresgid, 2, SZ_FIXED, 0, 4 },
	{ SYS_getgroups, 1, SZ_RET_TIMES, 0, 4 },
	{ SYS_recvfrom, 1, SZ_RET, 0, 0 },
	{ SYS_sigaltstack, 1, SZ_FIXED, 0, 24 },
	{ SYS_sched_getparam, 1, SZ_FIXED, 0, 4 },
	{ SYS_getitimer, 1, SZ_FIXED, 0, 32 },
	{ SYS_setitimer, 2, SZ_FIXED, 0, 32 },
	{ SYS_timerfd_gettime, 1, SZ_FIXED, 0, 32 },
	{ SYS_timerfd_settime, 3, SZ_FIXED, 0, 32 },
	{ SYS_timer_create, 2, SZ_FIXED, 0, 4 },	/* the new timer's id */
	{ SYS_timer_settime, 3, SZ_FIXED, 0, 32 },
	{ SYS_timer_gettime, 1, SZ_FIXED, 0, 32 },
	{ SYS_getxattr, 2, SZ_RET, 0, 0 },
	{ SYS_lgetxattr, 2, SZ_RET, 0, 0 },
	{ SYS_fgetxattr, 2, SZ_RET, 0, 0 },
	{ SYS_listxattr, 1, SZ_RET, 0, 0 },
	{ SYS_llistxattr, 1, SZ_RET, 0, 0 },
	{ SYS_flistxattr, 1, SZ_RET, 0, 0 },
	{ SYS_sched_getscheduler, 0, SZ_FIXED, 0, 0 },
	{ SYS_getcpu, 0, SZ_FIXED, 0, 4 },
	{ SYS_getcpu, 1, SZ_FIXED, 0, 4 },
	{ SYS_capget, 1, SZ_FIXED, 0, 24 },
	{ SYS_accept, 1, SZ_FIXED, 0, 128 },
	{ SYS_accept4, 1, SZ_FIXED, 0, 128 },
	{ SYS_getsockname, 1, SZ_FIXED, 0, 128 },
	{ SYS_getpeername, 1, SZ_FIXED, 0, 128 },
	{ SYS_accept, 2, SZ_FIXED, 0, 4 },
	{ SYS_accept4, 2, SZ_FIXED, 0, 4 },
	{ SYS_getsockname, 2, SZ_FIXED, 0, 4 },
	{ SYS_getpeername, 2, SZ_FIXED, 0, 4 },
};

/* Calls whose only effect on the process is their result (or handled elsewhere). */
static const short no_out[] = {
	SYS_write, SYS_pwrite64, SYS_writev, SYS_pwritev, SYS_sendto, SYS_open, SYS_openat,
	SYS_close, SYS_lseek, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_brk, SYS_mremap,
	SYS_madvise, SYS_access, SYS_faccessat, SYS_faccessat2, SYS_getpid, SYS_getppid,
	SYS_gettid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_set_tid_address,
	SYS_set_robust_list, SYS_rseq, SYS_exit, SYS_exit_group, SYS_arch_prctl, SYS_fcntl,
	SYS_dup, SYS_dup2, SYS_dup3, SYS_unlink, SYS_unlinkat, SYS_mkdir, SYS_mkdirat,
	SYS_rename, SYS_renameat, SYS_renameat2, SYS_chdir, SYS_fchdir, SYS_ftruncate,
	SYS_fsync, SYS_fdatasync, SYS_kill, SYS_tgkill, SYS_sched_yield, SYS_futex,
	SYS_socket, SYS_connect, SYS_bind, SYS_listen, SYS_shutdown, SYS_setsockopt,
	SYS_umask, SYS_chmod, SYS_fchmod, SYS_fchmodat, SYS_setpgid, SYS_getpgrp, SYS_setsid,
	SYS_getpgid, SYS_getsid, SYS_prctl, SYS_fadvise64, SYS_fallocate, SYS_mlock,
	SYS_munlock, SYS_membarrier, SYS_sched_setaffinity, SYS_ioctl, SYS_clone, SYS_fork,
	SYS_vfork, SYS_clone3, SYS_symlink, SYS_link, SYS_utimensat, SYS_alarm, SYS_pause, SYS_flock,
	SYS_creat, SYS_truncate, SYS_eventfd2, SYS_epoll_create1, SYS_epoll_ctl,
	SYS_timerfd_create, SYS_timer_getoverrun, SYS_timer_delete, SYS_getpriority, SYS_setpriority,
	SYS_rt_sigreturn, SYS_execve, SYS_sync, SYS_syncfs, SYS_msync, SYS_sync_file_range,
	SYS_mlock2, SYS_mlockall, SYS_munlockall, SYS_chown, SYS_fchown, SYS_lchown, SYS_fchownat,
};

static int emit_effects_table(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret)
{
	int known = 0, err = 0;
	for (size_t i = 0; i < ARRAY_SIZE(out_bufs) && !err; i++) {
		const struct out_buf *o = &out_bufs[i];
		if ((uint64_t)o->nr != nr)
			continue;
		known = 1;
		uint64_t addr = a[o->buf], len = 0;
		switch (o->how) {
		case SZ_FIXED: len = o->size; break;
		case SZ_ARG: len = a[o->arg]; break;
		case SZ_RET: len = ret > 0 ? (uint64_t)ret : 0; break;
		case SZ_RET_TIMES: len = ret > 0 ? (uint64_t)ret * o->size : 0; break;
		case SZ_ARG_TIMES: len = a[o->arg] * o->size; break;
		}
		if (nr == SYS_time && ret >= 0 && addr) /* time(2) stores even without a buffer */
			len = 8;
		if (ret < 0 || !addr || !len || len > (1ULL << 30))
			continue;
		err = cc_emit_mem(tr, addr, len, 0);
	}
	for (size_t i = 0; !known && i < ARRAY_SIZE(no_out); i++)
		known = (uint64_t)no_out[i] == nr;
	if (!known) {
		if (!tr->unknown++)
			tr->first_unknown = (long)nr;
	}
	return err;
}

static int emit_readv(struct cc_tracer *tr, const uint64_t *a, int64_t ret)
{
	uint64_t left = ret > 0 ? (uint64_t)ret : 0;
	for (uint64_t i = 0; i < a[2] && left; i++) {
		uint64_t iov[2];
		int err = cc_mem_read(tr, a[1] + i * 16, iov, sizeof(iov));
		if (err)
			return err;
		uint64_t n = iov[1] < left ? iov[1] : left;
		if (n && (err = cc_emit_mem(tr, iov[0], n, 0)))
			return err;
		left -= n;
	}
	return 0;
}

static int emit_mapping_effects(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret)
{
	uint64_t start = (uint64_t)ret;
	if (ret < 0 && nr != SYS_brk)
		return 0;
	switch (nr) {
	case SYS_mmap:
		if (!(a[3] & MAP_ANONYMOUS) && (int)a[4] >= 0) {
			uint64_t id = 0;
			int err = cc_file_register(tr, (int)a[4], NULL, 1, &id);
			if (err)
				return err;
			if (id)
				return cc_emit_file_map(tr, start, PAGE_UP(a[1]), a[2], id, a[5]);
			err = cc_emit_map(tr, start, PAGE_UP(a[1]), a[2], CC_MAP_ANON);
			return err ? err : cc_emit_mem(tr, start, PAGE_UP(a[1]), 1);
		}
		return cc_emit_map(tr, start, PAGE_UP(a[1]), a[2], CC_MAP_ANON);
	case SYS_munmap:
		return cc_emit_range(tr, CC_REC_UNMAP, a[0] & ~(PAGE - 1), PAGE_UP(a[1] + (a[0] & (PAGE - 1))));
	case SYS_mremap: {
		int err = cc_emit_range(tr, CC_REC_UNMAP, a[0], PAGE_UP(a[1]));
		err = err ? err : cc_emit_map(tr, start, PAGE_UP(a[2]), 3, CC_MAP_ANON);
		return err ? err : cc_emit_mem(tr, start, PAGE_UP(a[2]), 1);
	}
	case SYS_madvise:
		if (a[2] == MADV_DONTNEED)
			return cc_emit_range(tr, CC_REC_ZERO, a[0], PAGE_UP(a[1]));
		return 0;
	case SYS_brk: {
		uint64_t cur = tr->brk_cur, now = (uint64_t)ret;
		tr->brk_cur = now;
		if (!cur || PAGE_UP(now) == PAGE_UP(cur))
			return 0;
		if (now > cur)
			return cc_emit_map(tr, PAGE_UP(cur), PAGE_UP(now) - PAGE_UP(cur), 3, CC_MAP_BRK);
		return cc_emit_range(tr, CC_REC_UNMAP, PAGE_UP(now), PAGE_UP(cur) - PAGE_UP(now));
	}
	}
	return 0;
}

/* select and pselect6: the fd sets the kernel rewrote (on success: nfds bits each, in whole
 * 8-byte words) and the timeout it updates with the time left, also when a signal cut the
 * wait short (make -j waits for its jobs in pselect6 and is woken by SIGCHLD). */
static int emit_select(struct cc_tracer *tr, const uint64_t *a, int64_t ret)
{
	int64_t nfds = (int64_t)a[0];
	int err = 0;
	if (ret >= 0 && nfds > 0 && nfds <= (1 << 20)) {
		uint64_t len = (uint64_t)(nfds + 63) / 64 * 8;
		for (int i = 1; i <= 3 && !err; i++)
			if (a[i])
				err = cc_emit_mem(tr, a[i], len, 0);
	}
	if (!err && a[4] && (ret >= 0 || ret == -EINTR))
		err = cc_emit_mem(tr, a[4], 16, 0);	/* struct timeval / timespec */
	return err;
}

/* The ioctls libc itself issues (isatty, terminal size, bytes ready). */
static int emit_ioctl(struct cc_tracer *tr, const uint64_t *a, int64_t ret)
{
	uint64_t len = 0;
	if (ret < 0 || !a[2])
		return 0;
	switch (a[1]) {
	case 0x5401: len = 36; break;	/* TCGETS: struct termios */
	case 0x5413: len = 8; break;	/* TIOCGWINSZ: struct winsize */
	case 0x541B: len = 4; break;	/* FIONREAD: int */
	case 0x540F: len = 4; break;	/* TIOCGPGRP: pid_t */
	default:
		if (!tr->unknown++)
			tr->first_unknown = SYS_ioctl;
		return 0;
	}
	return cc_emit_mem(tr, a[2], len, 0);
}

/* Hash of the bytes a write-family call sent (its first RET bytes); 0 when not one. */
static int out_hash(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, uint64_t *h)
{
	uint64_t iov1[2] = { a[1], ret > 0 ? (uint64_t)ret : 0 };
	uint64_t iovp = 0, niov = 1, left = iov1[1];
	if (nr == SYS_writev || nr == SYS_pwritev || nr == SYS_pwritev2)
		iovp = a[1], niov = a[2];
	else if (nr != SYS_write && nr != SYS_pwrite64 && nr != SYS_sendto)
		return 0;
	*h = BINIO_FNV64_INIT;
	for (uint64_t i = 0; i < niov && left; i++) {
		uint64_t iov[2] = { iov1[0], iov1[1] };
		if (iovp && cc_mem_read(tr, iovp + i * 16, iov, sizeof(iov)))
			return -EFAULT;
		uint64_t n = iov[1] < left ? iov[1] : left;
		uint8_t *buf = malloc(n ? n : 1);
		if (!buf)
			return -ENOMEM;
		if (n && cc_mem_read(tr, iov[0], buf, n)) {
			free(buf);
			return -EFAULT;
		}
		*h = binio_fnv64(*h, buf, n);
		tr->out_hash = binio_fnv64(tr->out_hash, buf, n);
		free(buf);
		left -= n;
	}
	tr->out_bytes += ret > 0 ? (uint64_t)ret : 0;
	return 1;
}

int cc_emit_syscall(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, int flags,
		    uint64_t hash)
{
	struct binbuf *b = &tr->w.payload;
	int err = binbuf_put_uvarint(b, nr);
	for (int i = 0; i < 6 && !err; i++)
		err = binbuf_put_uvarint(b, a[i]);
	err = err ? err : binbuf_put_svarint(b, ret);
	err = err ? err : binbuf_put_uvarint(b, (uint64_t)flags);
	if (!err && (flags & CC_SC_OUT_HASH))
		err = binbuf_put_le64(b, hash);
	if (!err && (flags & CC_SC_STATE))
		err = binbuf_put_le64(b, tr->state_hash);
	err = err ? err : cc_writer_emit(&tr->w, CC_REC_SYSCALL);
	tr->syscalls++;
	return err;
}

int cc_syscall_record(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, int flags)
{
	uint64_t h = 0;
	int err = out_hash(tr, nr, a, ret, &h);
	if (err < 0)
		return err;
	if (err > 0)
		flags |= CC_SC_OUT_HASH;
	flags |= CC_SC_STATE;
	struct binbuf *b = &tr->w.payload;
	err = cc_emit_syscall(tr, nr, a, ret, flags, h);
	if (err || (flags & CC_SC_SKIPPED))
		return err;
	if (nr == SYS_readv || nr == SYS_preadv || nr == SYS_preadv2)
		err = emit_readv(tr, a, ret);
	else if (nr == SYS_ioctl)
		err = emit_ioctl(tr, a, ret);
	else if (nr == SYS_select || nr == SYS_pselect6)
		err = emit_select(tr, a, ret);
	else
		err = emit_effects_table(tr, nr, a, ret);
	err = err ? err : emit_mapping_effects(tr, nr, a, ret);
	if (!err && ret >= 0 && (nr == SYS_openat || nr == SYS_open) &&
	    ((nr == SYS_openat ? a[2] : a[1]) & O_ACCMODE) == O_RDONLY) {
		uint64_t id = 0;
		err = cc_file_register(tr, (int)ret, NULL, 0, &id);
		if (!err && id) {
			err = binbuf_put_uvarint(b, id);
			err = err ? err : binbuf_put_uvarint(b, (uint64_t)ret);
			err = err ? err : cc_writer_emit(&tr->w, CC_REC_OPEN);
		}
	}
	return err;
}
