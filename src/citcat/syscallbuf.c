/* citcat/syscallbuf.c - the recorder's side of the syscall buffer (syscallbuf_abi.h): the
 * seccomp filter that lets the preload library's untraced instruction through for the calls
 * the buffer takes, the library's REGISTER and FLUSH calls, draining the buffer into the
 * recording (each entry becomes a SYSCALL record flagged CC_SC_BUFFERED plus the MEM of the
 * bytes the kernel wrote) and stepping the program out of the buffer's busy region before a
 * signal is recorded. The buffer is program memory, read through /proc/PID/mem at a stop. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "citcat/record_int.h"
#include "citcat/syscallbuf.h"
#include "citcat/syscallbuf_abi.h"

static const uint16_t buffered_nrs[] = {
	CC_SB_READ, CC_SB_WRITE, CC_SB_CLOSE, CC_SB_LSEEK, CC_SB_FCNTL, CC_SB_PREAD64, CC_SB_READLINK,
	CC_SB_GETXATTR, CC_SB_LGETXATTR, CC_SB_FGETXATTR, CC_SB_LISTXATTR, CC_SB_LLISTXATTR,
	CC_SB_GETDENTS64, CC_SB_OPENAT, CC_SB_NEWFSTATAT, CC_SB_READLINKAT, CC_SB_STATX,
};

#define NBUF (sizeof(buffered_nrs) / sizeof(buffered_nrs[0]))

int cc_sb_install_filter(int with_buffer)
{
	/* ip == CC_SB_UNTRACED_IP and nr one the buffer takes: allow; anything else: trace */
	struct sock_filter f[8 + NBUF];
	size_t n = 0;
	const uint32_t ip = offsetof(struct seccomp_data, instruction_pointer);
	if (with_buffer) {
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ip);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)CC_SB_UNTRACED_IP, 0, 3 + NBUF);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ip + 4);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)(CC_SB_UNTRACED_IP >> 32), 0, 1 + NBUF);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, nr));
		for (size_t i = 0; i < NBUF; i++)	/* a match jumps to the ALLOW below the list */
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      buffered_nrs[i], (uint8_t)(NBUF - i), 0);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	} else {
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
	}
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int sb_fail(struct cc_tracer *tr, uint64_t off, const char *why)
{
	snprintf(tr->err, tr->errlen, "the syscall buffer at %#llx holds a malformed entry at "
		 "offset %llu: %s", (unsigned long long)tr->sb_addr,
		 (unsigned long long)(CC_SB_HDR + off), why);
	return -EBADMSG;
}

int cc_sb_register(struct cc_tracer *tr, const uint64_t *a, int64_t *ret)
{
	uint64_t magic = 0;
	*ret = -ENOSYS;
	if (!tr->sb_enabled)
		return 0;	/* recorded with --no-syscallbuf: the library stays out of the way */
	if (tr->sb_addr) {
		*ret = -EBUSY;	/* one buffer per process */
		return 0;
	}
	if (a[1] != CC_SB_SIZE || a[2] != CC_SB_VERSION || (a[0] & 7) ||
	    cc_mem_read(tr, a[0], &magic, 8) || magic != CC_SB_MAGIC) {
		*ret = -EINVAL;
		return 0;
	}
	tr->sb_addr = a[0];
	tr->sb_drained = 0;
	*ret = 0;
	return 0;
}

/* One entry at P (AVAIL bytes) -> SYSCALL + MEM records; its size in *SIZE. */
static int emit_entry(struct cc_tracer *tr, const uint8_t *p, uint64_t avail, uint64_t off,
		      uint64_t *size)
{
	uint64_t h[9], max, addr, len;
	if (avail < CC_SB_ENTRY_HDR)
		return sb_fail(tr, off, "cut short inside its header");
	memcpy(h, p, sizeof(h));
	int kind = cc_sb_output(h[0], h + 1, (int64_t)h[7], &max, &addr, &len);
	if (kind < 0) {
		char why[96];
		snprintf(why, sizeof(why), "syscall %llu is not one the buffer takes",
			 (unsigned long long)h[0]);
		return sb_fail(tr, off, why);
	}
	if (h[8] != len || len > max || len > CC_SB_MAX_DATA)
		return sb_fail(tr, off, "its data length does not match the call's result");
	uint64_t padded = (len + 7) & ~7ULL;
	if (avail - CC_SB_ENTRY_HDR < padded)
		return sb_fail(tr, off, "cut short inside its data");
	const uint8_t *data = p + CC_SB_ENTRY_HDR;
	uint64_t hash = 0;
	int flags = CC_SC_BUFFERED;
	if (kind == CC_SB_DATA_SENT) {
		hash = binio_fnv64(BINIO_FNV64_INIT, data, len);
		tr->out_hash = binio_fnv64(tr->out_hash, data, len);
		tr->out_bytes += len;
		flags |= CC_SC_OUT_HASH;
	}
	int err = cc_emit_syscall(tr, h[0], h + 1, (int64_t)h[7], flags, hash);
	if (!err && kind == CC_SB_DATA_OUT && len)
		err = cc_emit_mem_bytes(tr, addr, data, len);
	tr->sb_buffered++;
	*size = CC_SB_ENTRY_HDR + padded;
	return err;
}

int cc_sb_drain(struct cc_tracer *tr)
{
	uint64_t hdr[4];
	if (!tr->sb_addr)
		return 0;
	if (cc_mem_read(tr, tr->sb_addr, hdr, sizeof(hdr))) {
		snprintf(tr->err, tr->errlen, "cannot read the syscall buffer at %#llx",
			 (unsigned long long)tr->sb_addr);
		return -EFAULT;
	}
	uint64_t used = hdr[1];
	if (hdr[0] != CC_SB_MAGIC)
		return sb_fail(tr, 0, "its header was overwritten");
	if (used > CC_SB_SIZE - CC_SB_HDR || (used & 7) || used < tr->sb_drained)
		return sb_fail(tr, tr->sb_drained, "its used size is out of bounds");
	if (used == tr->sb_drained)
		return 0;
	uint64_t n = used - tr->sb_drained;
	uint8_t *buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	int err = cc_mem_read(tr, tr->sb_addr + CC_SB_HDR + tr->sb_drained, buf, n);
	if (err)
		snprintf(tr->err, tr->errlen, "cannot read the syscall buffer at %#llx",
			 (unsigned long long)tr->sb_addr);
	for (uint64_t off = 0, size = 0; !err && off < n; off += size)
		err = emit_entry(tr, buf + off, n - off, tr->sb_drained + off, &size);
	free(buf);
	if (!err)
		tr->sb_drained = used;
	return err;
}

int cc_sb_flush(struct cc_tracer *tr)
{
	static const uint64_t zero;
	int err = cc_sb_drain(tr);
	/* emptied here, while the program is stopped: see flush() in preload/syscallbuf.c */
	err = err ? err : cc_mem_write(tr, tr->sb_addr + CC_SB_USED_OFF, &zero, sizeof(zero));
	if (!err)
		tr->sb_drained = 0;
	return err;
}

int cc_sb_flush_effects(struct cc_tracer *tr)
{
	if (!tr->sb_addr)
		return 0;
	return cc_emit_mem(tr, tr->sb_addr + CC_SB_USED_OFF, sizeof(uint64_t), 0);
}

int cc_sb_leave_busy(struct cc_tracer *tr, pid_t pid, int *exited)
{
	uint64_t hdr[4];
	uint64_t held = 0;
	int err = 0;
	*exited = 0;
	if (!tr->sb_addr)
		return 0;
	for (long steps = 0; ; steps++) {
		if (cc_mem_read(tr, tr->sb_addr, hdr, sizeof(hdr)))
			return -EFAULT;
		if (!hdr[2]) {
			tr->sb_signal_waits += steps > 0;
			break;
		}
		if (steps > (1L << 22)) {
			snprintf(tr->err, tr->errlen, "the program stays inside the syscall buffer's "
				 "busy region (over %ld instructions)", steps);
			return -ETIMEDOUT;
		}
		int st;
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) || waitpid(pid, &st, __WALL) != pid)
			return -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*exited = st;
			return 0;
		}
		int sig = WIFSTOPPED(st) ? WSTOPSIG(st) : 0;
		if (sig && sig != SIGTRAP && (st >> 16) == 0 && sig < 64)
			held |= 1ULL << (sig - 1);	/* raised again once out */
	}
	for (int s = 1; s < 64 && held && !err; s++)
		if (held & (1ULL << (s - 1)))
			err = syscall(SYS_tgkill, tr->pid, pid, s) ? -errno : 0;
	return err;
}
