/* trace/log_format.h - the `spent trace` log (PatchWrx-style), version 5: every field of the
 * file, its blocks and its records. Shared by the Valgrind tool (which writes records into a
 * pipe, without libc) and the library (writer blocks, reader, reconstructor).
 *
 * FILE
 *   header (40 bytes, little-endian):
 *     0  magic[8]          "SPNTLOG\0"
 *     8  u32 version       LOG_VERSION; readers also take LOG_VERSION_LZ4 (version 4: no
 *                          CODE_SAME records) and LOG_VERSION_ZSTD (version 3: the same
 *                          records, in zstd blocks) and refuse every other version
 *    12  u32 flags         LOG_F_* below
 *    16  u64 created_ns    CLOCK_REALTIME when recording started
 *    24  u64 max_insns     --max-instructions (0: no limit); the reconstructor stops there
 *    32  u32 reserved      0
 *    36  u32 header_crc    binio_crc32 of bytes 0..35 (version 1 had no CRC: a flipped bit in
 *                          max_insns silently cut the stream)
 *   then blocks until end of file:
 *     0  u32 magic         LOG_BLOCK_MAGIC (version 3: LOG_BLOCK_MAGIC_ZSTD)
 *     4  u32 raw_len       bytes of records once decompressed (1..LOG_BLOCK_MAX)
 *     8  u32 comp_len      bytes of the compressed block that follows (1..LOG_BLOCK_COMP_MAX)
 *    12  u32 crc32         binio_crc32 of the compressed block
 *    16  u8 frame[comp_len]  one LZ4 block (version 3: one zstd frame)
 *   A block holds whole records only, so a truncated file loses at most its last block.
 *   Version 4 changed only the compressor: the recorder's CPU is what `spent trace` costs
 *   above Valgrind, and LZ4 took a third to two thirds less of it than zstd's fastest
 *   levels on real programs' records, for logs 10-20% larger where data addresses dominate
 *   and 2-4x larger where zstd found long matches (docs/trace.md). Version 5 added
 *   LOG_REC_CODE_SAME: a superblock description repeated by another process, by reference.
 *   A complete log ends with a block whose last record is LOG_REC_END; anything after that
 *   record (in its block or after it) makes the log corrupt.
 *
 * RECORDS (inside a decompressed block, 8-byte aligned)
 *   struct log_rec_hdr { u8 type; u8 flags; u16 reserved; u32 len; } then LEN payload bytes,
 *   then zero padding to a multiple of 8.
 *
 * How execution is logged. The tool instruments Valgrind superblocks (SBs: single-entry
 * straight-line runs of guest instructions with side exits). When an SB is translated it emits
 * one LOG_REC_CODE describing it as a list of ops (its instructions, its memory accesses in
 * order, its side exits, its end). Each *execution* of an SB then costs:
 *   - one control byte: the index of the exit taken (the PatchWrx branch-outcome entry; side
 *     exits are numbered 0..n-1 in order, n is the fall-through end);
 *   - one u64 target when the SB ends in an indirect jump/call/return (the PatchWrx indirect
 *     target entry);
 *   - for data addresses: one u64 base value per *root* (an IR value from which several
 *     accesses of the SB are derived by a constant offset), logged at its first use only; a
 *     constant address (globals, RIP-relative) costs nothing.
 * Control bytes and values accumulate per thread run and leave as LOG_REC_DATA chunks, each with
 * its thread and a CLOCK_MONOTONIC timestamp. Asynchronous events (signals, syscalls, thread
 * switches) happen only between chunks: the tool flushes before any of them.
 *
 * PROCESS TREES (version 3). Every process of the traced tree (each fork, vfork or clone
 * without CLONE_THREAD, and each execve, which starts a new program in the same pid) has its
 * own *stream*: a LOG_REC_PROCESS record opens it, and every record up to the next
 * LOG_REC_STREAM record belongs to the stream that record names. A stream is self-contained:
 * a forked child's tool re-sends its images and superblocks and restarts its value deltas, so
 * the reader replays each stream with its own state. Streams are interleaved in the order the
 * recorder received them, which follows the chunks' timestamps.
 */
#ifndef SPENT_TRACE_LOG_FORMAT_H
#define SPENT_TRACE_LOG_FORMAT_H

#include <stdint.h>

#define LOG_MAGIC "SPNTLOG"		/* 8 bytes with the NUL */
#define LOG_VERSION 6u
#define LOG_VERSION_NO_REAPED 5u	/* CODE_SAME records, no REAPED ones: read still */
#define LOG_VERSION_LZ4 4u		/* LZ4 blocks, no CODE_SAME records: read still */
#define LOG_VERSION_ZSTD 3u		/* zstd blocks: read still */
#define LOG_HEADER_SIZE 40u
#define LOG_HEADER_CRC_OFF 36u
#define LOG_BLOCK_MAGIC 0x344c4253u	/* "SBL4": an LZ4 block */
#define LOG_BLOCK_MAGIC_ZSTD 0x4b4c4253u	/* "SBLK": a zstd frame (version 3) */
#define LOG_BLOCK_HDR_SIZE 16u
#define LOG_BLOCK_MAX (1u << 20)	/* raw bytes per block */
#define LOG_REC_MAX (LOG_BLOCK_MAX - 64)	/* largest record */
/* The largest compressed block: LZ4's bound for a full block of incompressible bytes
 * (LZ4_COMPRESSBOUND), which is above zstd's (LOG_BLOCK_MAX + 4096, version 3). */
#define LOG_BLOCK_COMP_MAX (LOG_BLOCK_MAX + LOG_BLOCK_MAX / 255u + 16u)

enum log_file_flag {
	LOG_F_DATA = 1u << 0,		/* data addresses were recorded */
	LOG_F_START = 1u << 1,		/* recording started at --start SYMBOL */
	LOG_F_INCOMPLETE = 1u << 2,	/* the program did not run to its exit: spent trace was
					 * interrupted, the program was killed by a signal, or the
					 * tool's stream broke off; the log holds what ran till then */
};

enum log_rec_type {
	LOG_REC_CODE = 1,	/* struct log_code + n_ops struct log_op */
	LOG_REC_DATA = 2,	/* struct log_data + n_ctl bytes (padded to 8) + n_vbytes value bytes */
	LOG_REC_RESUME = 3,	/* struct log_resume: thread TID continues at PC */
	LOG_REC_IMAGE = 4,	/* struct log_image + path (path_len bytes) + n_bytes code bytes */
	LOG_REC_SYSCALL = 5,	/* struct log_syscall */
	LOG_REC_SIGNAL = 6,	/* struct log_signal */
	LOG_REC_THREAD_START = 7,	/* struct log_thread */
	LOG_REC_THREAD_EXIT = 8,	/* struct log_thread */
	LOG_REC_EXIT = 9,	/* struct log_exit */
	LOG_REC_END = 10,	/* struct log_end: the writer closed the log cleanly */
	LOG_REC_PROCESS = 11,	/* struct log_process + path + argv: a stream starts */
	LOG_REC_STREAM = 12,	/* struct log_stream: the records that follow belong to it */
	LOG_REC_CODE_SAME = 13,	/* struct log_code_same: a CODE record again (version 5) */
	LOG_REC_REAPED = 14,	/* struct log_reaped: a child was reaped dead of a signal (version 6) */
};
#define LOG_REC_LAST LOG_REC_REAPED

struct log_rec_hdr {
	uint8_t type;		/* enum log_rec_type */
	uint8_t flags;		/* 0 */
	uint16_t reserved;	/* 0 */
	uint32_t len;		/* payload bytes, not counting padding */
};

/* LOG_REC_CODE: one translated superblock. A later CODE record with the same key replaces it. */
struct log_code {
	uint64_t key;		/* guest address the SB is entered at (before any redirection) */
	uint32_t n_ops;		/* 1..LOG_CODE_MAX_OPS */
	uint32_t n_roots;	/* root slots used by the ops */
};
#define LOG_CODE_MAX_OPS 4096u

enum log_op_kind {
	LOG_OP_IMARK = 1,	/* a guest instruction: val = pc, size = length in bytes */
	LOG_OP_ACCESS = 2,	/* a data reference of the preceding IMARK, see below */
	LOG_OP_EXIT = 3,	/* side exit number ARG: when taken, control goes to val */
	LOG_OP_END = 4,		/* fall-through end: to val, or an indirect target (LOG_OPF_INDIRECT) */
};

enum log_op_flag {
	LOG_OPF_READ = 1u << 0,		/* ACCESS reads (READ|WRITE: read-modify-write, lackey's M) */
	LOG_OPF_WRITE = 1u << 1,	/* ACCESS writes */
	LOG_OPF_CONST = 1u << 2,	/* ACCESS address is val itself (no root) */
	LOG_OPF_FIRST = 1u << 3,	/* ACCESS: the u64 of root ARG is read from the stream here */
	LOG_OPF_GUARDED = 1u << 4,	/* ACCESS: a u64 guard (0 skip / 1 happens) precedes */
	LOG_OPF_INDIRECT = 1u << 5,	/* END: the target is the next u64 of the stream */
	LOG_OPF_RAW = 1u << 6,		/* the op's value is logged as is, not as a delta */
};

/* One op, 16 bytes. ACCESS: address = value of root ARG + (int64_t)val, or val when CONST;
 * size = bytes accessed (1..LOG_ACCESS_MAX). */
struct log_op {
	uint8_t kind;		/* enum log_op_kind */
	uint8_t flags;		/* enum log_op_flag */
	uint16_t size;
	uint32_t arg;
	uint64_t val;
};
#define LOG_ACCESS_MAX 4096u

/* LOG_REC_DATA: a chunk of one thread's execution, in SB order. */
struct log_data {
	uint32_t tid;		/* thread number in creation order, 1 = the main thread */
	uint32_t n_ctl;		/* control bytes (one per SB execution) */
	uint64_t time_ns;	/* CLOCK_MONOTONIC when the chunk was flushed */
	uint32_t n_vals;	/* values (roots, guards, indirect targets) after the bytes */
	uint32_t n_vbytes;	/* bytes encoding them: one zigzag LEB128 varint per value */
};
/* Values are *site deltas*: every op that logs a value (an ACCESS with FIRST or GUARDED, an END
 * with INDIRECT) is a site, numbered within its superblock in op order; its logged value is
 * value - (the value it logged at its previous execution, 0 the first time), unless the op
 * has LOG_OPF_RAW. A GUARDED access logs its guard (raw) and then its address (a delta). A new
 * CODE record for a key starts its sites from 0 again. Loops thus log strides (0, 8, 16...),
 * one byte each. */

struct log_resume {
	uint32_t tid;
	uint32_t reserved;
	uint64_t pc;		/* the next SB this thread executes starts at pc */
	uint64_t time_ns;
};

enum log_image_flag {
	LOG_IMG_BYTES = 1u << 0,	/* the mapping's bytes follow the path (vDSO) */
	LOG_IMG_BUILD_ID = 1u << 1,	/* build_id: the file's GNU build-id (first 20 bytes) */
	LOG_IMG_CONTENT_HASH = 1u << 2,	/* build_id: the file has none; 8 bytes of FNV-64 of its
					 * content instead (log_image_identity) */
};

struct log_image {
	uint64_t start;		/* executable mapping [start, start + len) */
	uint64_t len;
	uint64_t offset;	/* file offset mapped at start */
	uint32_t flags;		/* enum log_image_flag */
	uint32_t path_len;	/* 0..4095 */
	uint32_t n_bytes;	/* LOG_IMG_BYTES: bytes stored (== len) */
	uint8_t build_id_len;	/* 0..20: the identity the recorder filled in (flags say which) */
	uint8_t build_id[20];
	uint8_t reserved[3];
};

struct log_syscall {
	uint32_t tid;
	uint32_t reserved;
	int64_t nr;
	uint64_t args[6];
	int64_t ret;		/* result, or -errno */
};

struct log_signal {
	uint32_t tid;
	int32_t signo;
	uint64_t handler;	/* first instruction of the handler */
	uint64_t resume_pc;	/* first instruction not executed because of the signal */
};

struct log_thread {
	uint32_t tid;
	uint32_t parent;	/* THREAD_START: creating thread; 0 otherwise */
	uint64_t time_ns;
};

/* A process that ended without exit_group (a fatal signal: Valgrind gives the tool's fini 0
 * then, and no tool hook names the signal) has status LOG_EXIT_KILLED. */
#define LOG_EXIT_KILLED (-1)

struct log_exit {
	int32_t status;		/* exit_group's status (0-255), or LOG_EXIT_KILLED */
	uint32_t reserved;
	uint64_t time_ns;
};

/* A wait of this process (wait4, waitid) returned child PID's status, and the child died of
 * a signal: which one its own EXIT record cannot say (and after SIGKILL it wrote none). In
 * the stream of the waiting process. */
struct log_reaped {
	uint32_t pid;
	int32_t wait_status;	/* as wait4 gives it: the signal in bits 0-6, 0x80 if core dumped */
	uint64_t time_ns;
};

enum log_process_flag {
	LOG_PROC_FORK = 1u << 0,	/* forked (or vforked, or cloned as a process) from ppid */
	LOG_PROC_EXEC = 1u << 1,	/* started by an execve: a new program, maybe the same pid */
};

/* LOG_REC_PROCESS, then path_len bytes of the executable's path, then argv_len bytes: the
 * argc arguments, each NUL-terminated. The tool fills pid to argc; stream and parent_stream
 * are numbered by the recorder (1 = the first process; 0 = no parent in the log). */
struct log_process {
	uint32_t pid;
	uint32_t ppid;
	uint64_t time_ns;
	uint32_t flags;		/* enum log_process_flag; 0: the traced command itself */
	uint32_t path_len;	/* 0..4095 */
	uint32_t argv_len;
	uint32_t argc;
	uint32_t stream;
	uint32_t parent_stream;	/* the stream of ppid when the process started (fork) or of
				 * the program it replaced (exec) */
};

struct log_stream {
	uint32_t stream;
	uint32_t reserved;
};

/* LOG_REC_CODE_SAME (version 5, written by the recorder only): the current stream describes a
 * superblock exactly as an earlier CODE record did (same payload, byte for byte), read as if
 * that record stood here. Every process of a tree describes again each superblock it runs
 * (its own Valgrind translates afresh), and the short programs of a shell script run the
 * same loader and libc start-up: their CODE records were 78% of a loop of /bin/true's log. */
struct log_code_same {
	uint32_t index;		/* of the earlier CODE record, counting the log's CODE records from 0 */
	uint32_t reserved;	/* 0 */
};
/* The CODE records a CODE_SAME may name: in log order, each one whose payload still fits in
 * this many bytes with those taken before it (writer and readers keep the same copies). */
#define LOG_CODE_SAME_MAX_BYTES (256u << 20)

/* The tool -> recorder transport (not in the file): every tool instance of the tree writes to
 * the one FIFO in frames of at most LOG_FRAME_MAX bytes (so each write is atomic: PIPE_BUF),
 * a struct log_frame then len bytes of that process's record stream. */
struct log_frame {
	uint32_t pid;
	uint32_t len;
};
#define LOG_FRAME_MAX 4096u

/* LOG_PIPE_PROGRESS records travel in frames only, never in a log: a tool instance's
 * instruction count so far (a lower bound: each superblock execution counts the instructions
 * before its first side exit), sent a few times per second for `spent trace`'s progress line.
 * The collector consumes them; a reader never sees the type. */
#define LOG_PIPE_PROGRESS 64u
struct log_progress {
	uint64_t instructions;
};

/* LOG_PIPE_EXEC, frames only as LOG_PIPE_PROGRESS: sent by a tool instance just before its
 * process's execve. FOLLOWED 1: the exec'd program gets a tool instance of its own (a new
 * stream of the same pid; between the two nobody may hold the FIFO open); 0: it runs untraced
 * (--no-children), and the stream ends here without an exit record. */
#define LOG_PIPE_EXEC 65u
struct log_exec_note {
	uint32_t followed;
	uint32_t reserved;
};

/* The shared ring (frames only, like LOG_PIPE_PROGRESS): with --spent-ring-dir, a tool
 * instance puts its records in a file of that directory it maps shared with the recorder, and
 * the FIFO carries only small notes saying where, in arrival order as before. A pipe copies
 * every byte twice in the kernel (12-14% of a traced tree's CPU, measured on python3 and
 * bzip2); the ring copies none. The file: a struct log_ring_hdr page, then LOG_RING_BYTES of
 * records. Positions are virtual (they only grow); byte v of the stream is at data offset
 * v % LOG_RING_BYTES, and no chunk wraps around the end.
 * LOG_PIPE_RING: from here on, this process's records are in the ring file NAME (name_len
 * bytes after the struct: no '/', at most LOG_RING_NAME_MAX), which the recorder maps and
 * removes. A new note (an exec'd program's tool instance) replaces the ring before it.
 * LOG_PIPE_RING_DATA: whole records, LEN bytes at virtual position VPOS. Once they are in the
 * log the recorder moves the header's TAIL past them (the tool reuses space below TAIL only)
 * and wakes the tool if it WAITS for room (a futex on SEQ, which the recorder increments). */
#define LOG_PIPE_RING 66u
#define LOG_PIPE_RING_DATA 67u
#define LOG_RING_HDR_BYTES 4096u
#define LOG_RING_BYTES (16u << 20)
#define LOG_RING_FILE_BYTES ((uint64_t)LOG_RING_HDR_BYTES + LOG_RING_BYTES)	/* the whole file */
#define LOG_RING_NAME_MAX 64u
struct log_ring_open {
	uint32_t ring_bytes;	/* LOG_RING_BYTES: the recorder refuses another size */
	uint32_t name_len;
};
struct log_ring_data {
	uint64_t vpos;
	uint32_t len;
	uint32_t reserved;
};
struct log_ring_hdr {
	uint64_t tail;		/* recorder: records before this virtual position are in the log */
	uint32_t waits;		/* tool: 1 while it waits for room */
	uint32_t seq;		/* recorder: incremented at each wake (the futex word) */
};

struct log_end {
	uint64_t n_records;	/* records in the log, END excluded */
};

#endif
