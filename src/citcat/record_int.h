/* citcat/record_int.h - the recorder's shared state, between the ptrace loop (record.c),
 * memory/file capture (record_mem.c) and syscall effect capture (record_syscall.c). */
#ifndef SPENT_CITCAT_RECORD_INT_H
#define SPENT_CITCAT_RECORD_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "citcat/cpuid_patch.h"
#include "citcat/recording.h"

struct cc_cpu_model;

struct cc_file_ident {
	uint64_t id, dev, ino, size, mtime_ns;
	uint64_t flags;		/* CC_FILE_COPY / CC_FILE_CHECK of its FILE record */
	uint8_t *content;	/* cached bytes for mapped files (NULL until needed) */
	size_t content_len;
};

struct cc_tracer {
	pid_t pid;
	int memfd;			/* /proc/PID/mem of the recorded process */
	struct cc_writer w;
	struct cc_file_ident *files;
	size_t nfiles;
	const char *dir;		/* the recording directory being written (DIR.tmp.PID) */
	int copy_files;			/* keep a copy of every mapped file in dir/files */
	uint64_t copies, copy_bytes;	/* copies written, their compressed bytes */
	uint64_t brk_cur;
	uint64_t syscalls, rdtsc, cpuid, unknown;
	uint64_t points;		/* signals delivered at an exact point (POINT records) */
	long first_unknown;
	uint64_t out_bytes, out_hash;
	uint64_t state_hash;		/* CC_SC_STATE of the syscall being recorded */
	struct cc_cpu_model *cpu_model;	/* answers cpuid (the simulator's CPU, cpu_model.c) */
	int cpuid_mode;			/* CC_CPUID_FAULT or CC_CPUID_PATCH, once decided */
	struct cc_cpuid_patcher *patcher;	/* CC_CPUID_PATCH: the sites replaced by ud2 */
	char *err;
	size_t errlen;
};

/* record_mem.c */
int cc_mem_read(struct cc_tracer *tr, uint64_t addr, void *buf, size_t len);
int cc_mem_write(struct cc_tracer *tr, uint64_t addr, const void *buf, size_t len);
/* Emit MEM records for the bytes [addr, addr+len) of the tracee (skipping zero pages when
 * SKIP_ZERO). Unreadable pages are skipped. */
int cc_emit_mem(struct cc_tracer *tr, uint64_t addr, uint64_t len, int skip_zero);
/* Register the file open as /proc/PID/fd/FD (or at PATH when FD < 0), MAPPED or only opened:
 * a FILE record the first time (with a copy in dir/files when mapped and tr->copy_files); its
 * id in *ID, 0 when it is not a regular file with stable content (a pipe, a device, /proc or
 * /sys): what the program gets from those is recorded by content only. */
int cc_file_register(struct cc_tracer *tr, int fd, const char *path, int mapped, uint64_t *id);
/* Emit a MAP of [start, start+len) from file ID at OFFSET, plus MEM for pages differing. */
int cc_emit_file_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot,
		     uint64_t id, uint64_t offset);
int cc_emit_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot, int kind);
/* A REGS record with REGS. */
int cc_emit_regs(struct cc_tracer *tr, const struct user_regs_struct *regs);
int cc_emit_range(struct cc_tracer *tr, enum cc_rec_kind kind, uint64_t start, uint64_t len);
/* The initial image at the exec stop: META, REGS, every mapping; then START. */
int cc_capture_initial(struct cc_tracer *tr, const struct user_regs_struct *regs, char *const *argv);
void cc_files_release(struct cc_tracer *tr);

/* record_syscall.c */
/* Record syscall NR with args A returning RET (at its exit stop) and its memory effects. */
int cc_syscall_record(struct cc_tracer *tr, uint64_t nr, const uint64_t *a, int64_t ret, int flags);

#endif
