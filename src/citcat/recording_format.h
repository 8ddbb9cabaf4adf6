/* citcat/recording_format.h - the on-disk CITCAT recording: every field of DIR/recording.
 *
 * A recording is a directory (mode 0700) holding DIR/recording (mode 0600: it holds every byte
 * the program read) and, unless recorded with --no-copy, DIR/files/ (mode 0700) with one copy of
 * every file the run mapped: DIR/files/<hash>.zst (mode 0600), <hash> the FILE record's content
 * hash as 16 lower-case hex digits, the content one zstd frame (several FILE records with equal
 * content share one copy). Nothing else belongs in DIR: `record` replaces an existing DIR only
 * when it holds nothing else.
 *
 * DIR/recording is a header followed by a stream of framed records in the order the recorder
 * observed them; the replayer consumes them in the same order.
 *
 * Header (16 bytes):
 *   u8[8]  magic    "SPCITCAT"
 *   le32   version  CC_VERSION (readers reject other versions)
 *   le32   flags    0 (reserved)
 *
 * Record frame:
 *   u8       kind      enum cc_rec_kind
 *   uvarint  len       payload bytes (at most CC_MAX_PAYLOAD)
 *   u8[len]  payload   fields below; all integers uvarint unless said otherwise
 *   le32     crc       CRC-32 of the kind byte and the payload
 * A frame cut short or with a bad CRC ends the readable stream: the reader reports where, and
 * replay runs up to that point then stops with a clear error (a truncated recording).
 *
 * Order: META, the initial state (REGS, FILE, MAP, MEM records describing the process at the
 * first instruction after exec), START, then the events in execution order, then EXIT. The
 * initial state holds exactly one REGS, and its rip lies in an executable MAP of the initial
 * state (the reader refuses anything else: the simulator could not start from it).
 * Events are keyed by their ordinal in the stream (no hardware instruction counter here): the
 * simulator is deterministic between events, so the Nth event the replay meets is the Nth
 * recorded. Effect records (MEM, MAP, UNMAP, ZERO, REGS) after a SYSCALL belong to it and are
 * applied when the replayed syscall returns.
 */
#ifndef SPENT_CITCAT_RECORDING_FORMAT_H
#define SPENT_CITCAT_RECORDING_FORMAT_H

#include <stdint.h>

#define CC_MAGIC "SPCITCAT"
#define CC_MAGIC_LEN 8
#define CC_VERSION 8		/* 2: FILE flags, DIR/files copies; 3: POINT, FPREGS; 4: SWITCH;
				 * 5: POINT's deep stack hash; 6: SYSCALL flag CC_SC_BUFFERED;
				 * 7: POINT's stack hashes without fxsave images' MXCSR flags;
				 * 8: nor the flags of stored MXCSR copies (stmxcsr) */
#define CC_VERSION_MIN 2	/* oldest version read (2 has no POINT/FPREGS, 3 no SWITCH, 5 no
				 * buffered syscalls) */
#define CC_POINT_WORDS_V4 (1 + CC_NREGS + 1 + 32 + 1)	/* a POINT of versions 3 and 4 */
#define CC_POINT_WORDS (CC_POINT_WORDS_V4 + 2)
/* the deep stack hash covers at most this many bytes above the CC_POINT_STACK_ABOVE ones */
#define CC_POINT_DEEP_MAX (256 * 1024)
/* MXCSR's sticky exception flags (IE DE ZE OE UE PE): the simulator never sets them (a known
 * gap, docs/citcat.md), so a POINT compares MXCSR without them, and from version 7 its stack
 * hashes are over bytes whose fxsave images have them cleared (cc_point_mask_mxcsr_flags) */
#define CC_MXCSR_EXCEPTION_FLAGS 0x3fu
#define CC_MXCSR_MASK_BITS 0x1f80u	/* the six exception masks (IM DM ZM OM UM PM) */
#define CC_POINT_STACK_BELOW 0	/* not the red zone: dead bytes there differ (fxsave) */
#define CC_POINT_STACK_ABOVE 256
#define CC_FPREGS_WORDS (2 + 32)
#define CC_HEADER_LEN 16
#define CC_FILE_NAME "recording"
#define CC_COPY_DIR "files"		/* DIR/files/<16 hex digits>.zst */
#define CC_COPY_SUFFIX ".zst"
#define CC_MAX_PAYLOAD (256u << 20)	/* one record's payload, bytes */
#define CC_MAX_PATH 4096
#define CC_NREGS 27			/* struct user_regs_struct fields, in its order */
#define CC_REG_RIP 16			/* index of rip among them */

enum cc_rec_kind {
	/* str cmdline (argv joined by spaces), str cwd, pid, start time (unix ns), [cpuid mode
	 * (enum cc_cpuid_mode: how the recorder trapped cpuid; absent in older recordings)],
	 * [MXCSR_MASK: what the recording CPU's fxsave stores at bytes 28-31 (0xffff on Intel
	 * Xeons, 0x2ffff on AMD EPYCs); absent in older recordings, where the replay stores the
	 * simulator's 0xffff] */
	CC_REC_META = 1,
	/* id (>= 1, unique), str path, dev, ino, size, mtime_ns, le64 content hash (fnv64 of the
	 * whole file; 0 when flags has neither COPY nor CHECK: the content was not read), flags
	 * (enum cc_file_flag). Appears before the first MAP or OPEN that names the id; a MAP may
	 * only name a FILE with COPY or CHECK (the replay needs its bytes). The same file may have
	 * two FILE records: opened (no flags) and mapped (COPY). */
	CC_REC_FILE = 2,
	/* start, len (page multiples), prot (PROT_*), kind (enum cc_map_kind), file id (0 none),
	 * file offset. Replaces [start, start+len) with fresh memory: the file's bytes from the
	 * offset (zero past its end), or zeros. CC_MAP_BRK maps only pages not mapped yet. */
	CC_REC_MAP = 3,
	/* addr, len, u8[len] bytes: memory content (initial image pages, or bytes the kernel wrote
	 * into user memory during the preceding syscall) */
	CC_REC_MEM = 4,
	/* start, len: the range is no longer mapped */
	CC_REC_UNMAP = 5,
	/* count (= CC_NREGS), count values: struct user_regs_struct in field order (includes
	 * fs_base and gs_base). Initial registers, or registers after rt_sigreturn. */
	CC_REC_REGS = 6,
	/* no payload: the initial state is complete, events follow */
	CC_REC_START = 7,
	/* nr, a0..a5, svarint ret, flags (CC_SC_*: which way the call came, traced or buffered,
	 * and what follows), [le64 hash of the bytes the call wrote out,
	 * when CC_SC_OUT_HASH], [le64 state hash when CC_SC_STATE: fnv64 of the little-endian
	 * 64-bit rip of the syscall instruction, rsp, rbp, rbx, r12, r13, r14, r15 at entry] */
	CC_REC_SYSCALL = 8,
	/* pc, leaf (eax), subleaf (ecx), eax, ebx, ecx, edx: the values the program saw */
	CC_REC_CPUID = 9,
	/* pc, insn (1 rdtsc, 2 rdtscp), tsc value, tsc_aux (rdtscp's ecx) */
	CC_REC_RDTSC = 10,
	/* signo, pc: a signal was delivered to the program. Placed by the recorder at a syscall
	 * boundary: REGS (the handler's entry) and MEM (the frame the kernel built) follow, and the
	 * replay applies them; alone (delivered natively), the replay stops there */
	CC_REC_SIGNAL = 11,
	/* svarint wait status (as waitpid), syscalls, output bytes, le64 output hash (fnv64 over
	 * every byte written by write-family syscalls, in order) */
	CC_REC_EXIT = 12,
	/* start, len: the range reads as zeros again (madvise MADV_DONTNEED) */
	CC_REC_ZERO = 13,
	/* file id, fd: the program opened a file (identity checked before replay) */
	CC_REC_OPEN = 14,
	/* An exact point without a PMU (version 3): where an asynchronous event (a signal that
	 * arrived between syscalls) happened, as the complete user state there. CC_POINT_WORDS
	 * le64: pc, the CC_NREGS registers (struct user_regs_struct order), mxcsr, xmm0-15 (two
	 * words each, low first), then the fnv64 of the CC_POINT_STACK_BELOW + CC_POINT_STACK_ABOVE
	 * bytes around rsp; version 5 adds the deep stack hash: a length LEN and the
	 * cc_point_deep_hash of the LEN bytes from rsp + CC_POINT_STACK_ABOVE up (to the end of the
	 * stack's mapping, at most CC_POINT_DEEP_MAX), which tells apart the iterations of a loop
	 * whose progress lives in a caller's frame (openssl speed); a preemption's POINT hashes
	 * no bytes there (LEN 0); from version 7 both hashes are over the bytes with the MXCSR
	 * exception flags of fxsave images cleared, from version 8 also those of every 4-byte
	 * word that looks like a stored MXCSR (cc_point_mask_mxcsr_flags). The event
	 * (SIGNAL, REGS, FPREGS, MEM) follows; the replay delivers it at the first execution of
	 * pc whose state equals this one (docs/citcat.md: ambiguity) */
	CC_REC_POINT = 15,
	/* CC_FPREGS_WORDS le64: mxcsr, fcw, xmm0-15 (two words each, low first): the vector
	 * state after a signal delivery (the handler's) or an rt_sigreturn (the one it restored);
	 * an effect record, applied with the REGS beside it (version 3) */
	CC_REC_FPREGS = 16,
	/* tid, reason (enum cc_switch_reason): the recorder ran one thread at a time, and from
	 * here on thread TID runs (version 4). Every event belongs to the thread last switched to
	 * (the first thread, whose tid is META's pid, before any SWITCH). A thread's first SWITCH
	 * is followed by REGS (its registers at its first instruction; the rest of its state is
	 * its creator's at the clone) and MEM (bytes the kernel wrote for it: CLONE_CHILD_SETTID).
	 * Switching back to a thread blocked in a syscall completes that syscall: its SYSCALL
	 * record follows */
	CC_REC_SWITCH = 17,
	CC_REC_MAX_KIND = 17,
};

enum cc_switch_reason {
	/* the running thread blocks in the syscall it executes next (futex wait, read, ...);
	 * the switch happens at that syscall's entry, its result comes when it runs again */
	CC_SWITCH_SYSCALL = 0,
	/* the switch happens right here: after the previous event (a thread's exit, a syscall
	 * boundary) or at the exact point of the POINT record before it (a preemption) */
	CC_SWITCH_HERE = 1,
	CC_SWITCH_MAX_REASON = 1,
};

enum cc_file_flag {
	/* DIR/files/<hash>.zst holds the content: the replay reads the copy (its size and hash
	 * must equal the record's), never the path */
	CC_FILE_COPY = 1 << 0,
	/* the replay reads the path and refuses to start unless size and hash are equal (the
	 * --no-copy recordings: files mapped or opened read-only) */
	CC_FILE_CHECK = 1 << 1,
	/* neither: a file only opened read-only in a recording with copies. Its bytes are in the
	 * read records; the FILE + OPEN records only say which file it was */
	CC_FILE_ALL = 3,
};

enum cc_map_kind {
	CC_MAP_ANON = 0,
	CC_MAP_FILE = 1,
	CC_MAP_STACK = 2,
	CC_MAP_VDSO = 3,
	CC_MAP_BRK = 4,
	CC_MAP_MAX_KIND = 4,
};

enum cc_syscall_flag {
	CC_SC_OUT_HASH = 1 << 0,	/* a write-family call: the hash of its bytes follows */
	CC_SC_SKIPPED = 1 << 1,		/* the recorder refused the call (e.g. rseq -> -ENOSYS) */
	CC_SC_STATE = 1 << 2,		/* a hash of the callee-saved registers follows */
	/* (version 6) the call came through the syscall buffer, not a ptrace stop: the program
	 * made it from the untraced instruction at CC_SB_UNTRACED_IP - 2 (syscallbuf_abi.h), and
	 * the recorder took it from the buffer later, so no CC_SC_STATE (the registers were never
	 * seen) and never CC_SC_SKIPPED. Its MEM effects follow like any call's */
	CC_SC_BUFFERED = 1 << 3,
	CC_SC_ALL = 15,
};

/* How the recorder made the program's cpuid instructions trap (the META record says which). */
enum cc_cpuid_mode {
	CC_CPUID_UNKNOWN = 0,	/* a recording from before the field existed */
	CC_CPUID_FAULT = 1,	/* the CPU's CPUID faulting (arch_prctl ARCH_SET_CPUID): SIGSEGV */
	CC_CPUID_PATCH = 2,	/* software: confirmed cpuid sites overwritten with ud2: SIGILL */
};

enum cc_tsc_insn {
	CC_TSC_RDTSC = 1,
	CC_TSC_RDTSCP = 2,
};

#endif
