/* citcat/recording.h - writing and reading the CITCAT recording stream (recording_format.h):
 * a framed-record writer for the recorder, and a validating reader that parses a whole
 * recording into typed records for the replayer. */
#ifndef SPENT_CITCAT_RECORDING_H
#define SPENT_CITCAT_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "core/binio.h"
#include "citcat/recording_format.h"

/* ---- writer ---- */
struct cc_writer {
	int fd;
	struct binbuf buf;	/* frames not yet written to fd */
	struct binbuf payload;	/* the record being built */
	uint64_t bytes;		/* total bytes written or buffered */
	int err;		/* first write error (-errno), sticky */
};

/* Start a recording stream on FD (owned by the caller): writes the header. 0 or -errno. */
int cc_writer_init(struct cc_writer *w, int fd);
/* Frame the payload built in w->payload as a record of KIND, then clear the payload. */
int cc_writer_emit(struct cc_writer *w, enum cc_rec_kind kind);
/* Write buffered frames to the file. 0 or -errno. */
int cc_writer_flush(struct cc_writer *w);
void cc_writer_release(struct cc_writer *w);

/* ---- reader ---- */
struct cc_rec {
	uint8_t kind;		/* enum cc_rec_kind */
	uint8_t deep;		/* POINT: it has the deep stack hash (version 5) */
	uint64_t off;		/* file offset of the frame */
	union {
		struct { char *cmdline, *cwd; uint64_t pid, start_ns, cpuid_mode, mxcsr_mask; } meta;
		struct { uint64_t id, dev, ino, size, mtime_ns, hash, flags; char *path; } file;
		struct { uint64_t start, len, prot, kind, file_id, offset; } map;
		struct { uint64_t addr, len; const uint8_t *bytes; } mem;
		struct { uint64_t start, len; } range;	/* UNMAP, ZERO */
		uint64_t regs[CC_NREGS];
		struct { uint64_t nr, args[6]; int64_t ret; uint64_t flags, hash, state; } sc;
		struct { uint64_t pc, leaf, subleaf, eax, ebx, ecx, edx; } cpuid;
		struct { uint64_t pc, insn, tsc, aux; } tsc;
		struct { uint64_t signo, pc; } sig;
		struct { int64_t status; uint64_t syscalls, out_bytes, out_hash; } exit;
		struct { uint64_t file_id, fd; } open;
		struct { uint64_t tid, reason; } sw;
		const uint8_t *words;	/* POINT, FPREGS: their le64 words, in the file's data */
	} u;
};

struct cc_recording {
	uint8_t *data;		/* the whole file; MEM records point into it */
	size_t len;
	struct cc_rec *recs;
	size_t n;
	size_t start_idx;	/* index of the START record */
	uint32_t version;	/* of the format */
	int truncated;		/* the stream ends without an EXIT record */
	char why[256];		/* when truncated: where and why the readable stream ends */
};

/* Parse LEN bytes (taking ownership of DATA, malloc'd) into a new recording the caller frees
 * with cc_recording_free. A stream cut short after START is not an error (truncated is set);
 * anything malformed is -EBADMSG with a message in ERR. */
int cc_recording_parse(uint8_t *data, size_t len, struct cc_recording **out, char *err, size_t errlen);
/* The CC_SC_STATE hash of a syscall at PC with the given registers. */
uint64_t cc_state_hash(uint64_t pc, uint64_t rsp, uint64_t rbp, uint64_t rbx, uint64_t r12,
		       uint64_t r13, uint64_t r14, uint64_t r15);
/* The deep stack hash of a POINT (version 5): over LEN bytes, 8 at a time (a tail is padded
 * with zeros). */
uint64_t cc_point_deep_hash(const uint8_t *p, size_t len);
/* Clear the MXCSR exception flags in the LEN stack bytes at P, which were read from address
 * ADDR, before a POINT's stack hashes: the CPU sets those sticky flags, the simulator never
 * does. In every fxsave image (a recording of VERSION 7 on), and in every 4-byte word that
 * looks like a stored MXCSR (cc_mxcsr_copy_like: VERSION 8 on). */
void cc_point_mask_mxcsr_flags(uint8_t *p, size_t len, uint64_t addr, uint32_t version);
/* 1 when V could be a stored MXCSR of a program that masks every exception. */
int cc_mxcsr_copy_like(uint64_t v);
/* Load DIR/recording (or a recording file path). 0 or -errno with a message in ERR. */
int cc_recording_load(const char *path, struct cc_recording **out, char *err, size_t errlen);
void cc_recording_free(struct cc_recording *r);
/* The FILE record with ID, or NULL. */
const struct cc_rec *cc_recording_file(const struct cc_recording *r, uint64_t id);

#endif
