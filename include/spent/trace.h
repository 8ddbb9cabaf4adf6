/* spent/trace.h - the trace stream: every executed instruction and data reference, from any
 * source (a PatchWrx-style log, a CITCAT recording), to any sink (cache simulation, hit curves,
 * memory maps, lock timelines, dumps). No sink knows which source fed it.
 *
 * The stream is pulled in batches (drcachesim's reader -> simulator split): a batch holds a run
 * of instructions of possibly several threads in global order, their data references in one
 * flat array, and the events that happen between them. Arrays are owned by the source and stay
 * valid until the next spent_trace_source_next() or spent_trace_source_free().
 *
 * A sink that asks for it (spent_trace_source_want_execs) may instead get the instructions as
 * superblock executions: per execution a pointer to the superblock's instruction templates
 * (the same for every execution, never copied) and the execution's data references, the only
 * dynamic part. That spares the source writing, and the sink reading, 24 bytes per instruction.
 */
#ifndef SPENT_TRACE_H
#define SPENT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a data reference does. MODIFY is one instruction reading then writing the same bytes
 * (x86 read-modify-write, e.g. `add [mem], reg`), reported once as lackey's 'M' does. */
enum spent_trace_ref_kind {
	SPENT_TRACE_REF_READ = 1,
	SPENT_TRACE_REF_WRITE = 2,
	SPENT_TRACE_REF_MODIFY = 3,
};

struct spent_trace_ref {
	uint64_t addr;
	uint32_t size;	/* bytes */
	uint32_t kind;	/* enum spent_trace_ref_kind */
};

/* Instruction flags a source sets from its decoder, so sinks need not decode. */
enum spent_trace_insn_flag {
	SPENT_TRACE_INSN_LOCKED = 1 << 0,	/* lock prefix or implicitly locked (xchg with memory) */
	SPENT_TRACE_INSN_COND_BRANCH = 1 << 1,
	SPENT_TRACE_INSN_CALL = 1 << 2,
	SPENT_TRACE_INSN_RET = 1 << 3,
	SPENT_TRACE_INSN_INDIRECT = 1 << 4,	/* indirect jump or call */
	SPENT_TRACE_INSN_SYSCALL = 1 << 5,
	SPENT_TRACE_INSN_PAUSE = 1 << 6,	/* spin-wait hint */
	SPENT_TRACE_INSN_EXCHANGE = 1 << 7,	/* xchg with memory (an unconditional swap) */
	SPENT_TRACE_INSN_CMPXCHG = 1 << 8,	/* cmpxchg, cmpxchg8b/16b (a compare-and-swap) */
};

struct spent_trace_insn {
	uint64_t pc;
	uint32_t tid;
	uint8_t len;		/* bytes, 1..15 */
	uint8_t nrefs;		/* data references, in refs[ref0 .. ref0+nrefs) of the batch */
	uint16_t flags;		/* enum spent_trace_insn_flag */
	uint32_t ref0;
	uint32_t pid;		/* the process it ran in (0: the source knows none) */
};

enum spent_trace_event_kind {
	SPENT_TRACE_EV_SYSCALL = 1,		/* a system call returned */
	SPENT_TRACE_EV_SIGNAL,		/* asynchronous transfer: handler entered, resume_pc not executed */
	SPENT_TRACE_EV_THREAD_SWITCH,		/* the following instructions belong to to_tid */
	SPENT_TRACE_EV_THREAD_START,
	SPENT_TRACE_EV_THREAD_EXIT,
	SPENT_TRACE_EV_IMAGE_LOAD,		/* an executable image was mapped */
	SPENT_TRACE_EV_IMAGE_UNLOAD,
	SPENT_TRACE_EV_EXIT,			/* the process exited */
	SPENT_TRACE_EV_PROCESS_START,		/* a process of the tree starts its stream (pid in .pid):
					 * the command, a forked child, or an exec'd program */
	SPENT_TRACE_EV_CHILD_KILLED,		/* a wait of this process reaped a child (u.child_killed.pid)
					 * dead of a signal; the child's exit status is -1 */
};

struct spent_trace_event {
	uint32_t kind;		/* enum spent_trace_event_kind */
	uint32_t tid;		/* a thread of process pid: thread numbers restart in each process */
	uint32_t pid;		/* 0: the source knows none */
	uint64_t time_ns;	/* CLOCK_MONOTONIC of the enclosing chunk, 0 when unknown */
	/* index into the batch's insns[] this event precedes (n_insns: after the last one) */
	size_t before;
	union {
		struct { int64_t nr; uint64_t args[6]; int64_t ret; } syscall;
		struct { int32_t signo; uint64_t handler; uint64_t resume_pc; } signal;
		struct { uint32_t from_tid, to_tid; } thread_switch;
		struct {
			const char *path;	/* valid until the source is freed */
			uint64_t base;		/* load bias: runtime address = base + ELF vaddr */
			uint64_t start, end;	/* executable mapping [start, end) */
			uint8_t build_id[20];
			uint32_t build_id_len;
		} image;
		/* exit_group's status, or -1: killed by a signal (which one: the CHILD_KILLED event
		 * of the process that reaped it; `spent trace` itself for the command) */
		struct { int32_t status; } exit;
		struct { uint32_t pid; int32_t signo; int32_t core_dumped; } child_killed;
		struct {
			uint32_t ppid;
			uint32_t stream, parent_stream;	/* the log's process numbers (1: the
							 * command); parent 0: none traced */
			int forked;			/* 0: an exec'd program (or the command) */
			const char *path;		/* the executable; valid until the source is freed */
			const char *argv;		/* argc NUL-terminated strings, back to back */
			uint32_t argc;
		} process;
	} u;
};

/* One execution of a superblock (a batch of executions: see spent_trace_source_want_execs). */
struct spent_trace_exec {
	/* N_INSNS instructions: pc, len, flags and nrefs as in the stream; ref0 relative to this
	 * execution's REF0; tid and pid 0 (they are the execution's). Owned by the source, valid
	 * as the batch's arrays are. */
	const struct spent_trace_insn *insns;
	uint32_t n_insns;
	/* its references: refs[ref0 .. ref0 + n_refs) of the batch, right after the previous
	 * execution's (a batch's executions' references are in stream order) */
	uint32_t ref0, n_refs;
	/* references of insns[n_insns - 1] here: fewer than its nrefs when the execution left
	 * the superblock by a side exit inside that instruction */
	uint32_t last_nrefs;
	uint32_t tid, pid;
	/* the superblock's number: the same for every execution of one superblock (insns the
	 * same array), never given to another by this source; a sink may keep what it derives
	 * from insns by it. 0: none (derive nothing). */
	uint32_t block;
	uint64_t pc_tag;	/* or'ed into every pc (spent_trace_source_select's process tag) */
};

struct spent_trace_batch {
	/* NULL in a batch of executions (execs), whose n_insns still counts the instructions */
	const struct spent_trace_insn *insns;
	size_t n_insns;
	const struct spent_trace_ref *refs;
	size_t n_refs;
	const struct spent_trace_event *events;
	size_t n_events;
	uint64_t first_index;	/* stream position of insns[0] (instructions before it) */
	uint64_t time_ns;	/* timestamp of the chunk the batch starts in, 0 when unknown */
	/* a batch of executions: the instructions in stream order, events' `before` counting
	 * instructions as with insns (NULL and 0 otherwise) */
	const struct spent_trace_exec *execs;
	size_t n_execs;
};

struct spent_trace_source;

/* The operations a source implements; spent_trace_source_new() wraps them. */
struct spent_trace_source_ops {
	const char *name;	/* "patchwrx-log", "citcat", "memory" */
	/* 1 with a batch, 0 at the end of the stream, -errno on error (the source's message
	 * is then in spent_trace_source_error()). */
	int (*next)(void *state, struct spent_trace_batch *out);
	const char *(*error)(void *state);
	void (*free)(void *state);
	/* optional: bytes of its input consumed so far and in all (see spent_trace_source_progress) */
	int (*progress)(void *state, uint64_t *done, uint64_t *total);
	/* optional: deliver batches of executions from the next batch on; 0, or -ENOTSUP */
	int (*want_execs)(void *state);
	/* optional: 1 when the stream has data references, 0 when it was made without them */
	int (*data_addresses)(void *state);
};

/* Wrap STATE with OPS into a source; the source owns STATE. NULL on ENOMEM (STATE freed). */
SPENT_API struct spent_trace_source *spent_trace_source_new(const struct spent_trace_source_ops *ops, void *state);

/*
 * Open PATH as a trace source, whatever it is: a `spent trace` log file or a
 * `spent citcat` recording directory (detected by magic). 0 or -errno; on failure, one message
 * naming PATH and saying what is wrong with it is written into ERR (ERRLEN bytes) when ERR is
 * not NULL, always (a caller prints it as it is, without adding the path).
 */
SPENT_API int spent_trace_source_open(const char *path, struct spent_trace_source **out, char *err, size_t errlen);

/*
 * A source passing on only some processes of IN's process tree: those of pid PID (0: any) whose
 * current program's file name is COMM (NULL: any; an exec changes it). With SPENT_TRACE_SELECT_TAG,
 * bits 48-63 of every pc and data address, and of an image load's base, start and end, hold
 * the process's number less one (0, 1, ... in order of first appearance: a single-process
 * trace's addresses are unchanged), so a cache model keeps the processes' address spaces
 * apart, and symbols read at an image's tagged base name that process's tagged addresses
 * (spent_trace_select_untag() strips the tag). Takes IN over (freed on failure too). 0 or
 * -ENOMEM.
 */
enum spent_trace_select_flag {
	SPENT_TRACE_SELECT_TAG = 1 << 0,
};
#define SPENT_TRACE_SELECT_TAG_SHIFT 48
SPENT_API int spent_trace_source_select(struct spent_trace_source *in, uint32_t pid, const char *comm, int flags,
			struct spent_trace_source **out);
/* ADDR (a pc or data address of a SPENT_TRACE_SELECT_TAG source) without its process tag. */
SPENT_API uint64_t spent_trace_select_untag(uint64_t addr);

SPENT_API int spent_trace_source_next(struct spent_trace_source *src, struct spent_trace_batch *out);
SPENT_API const char *spent_trace_source_error(struct spent_trace_source *src);
SPENT_API const char *spent_trace_source_name(const struct spent_trace_source *src);
/* How far SRC has read its input: bytes consumed so far (*DONE) of *TOTAL, for a progress
 * display. 0, or -ENOTSUP when the source cannot tell. */
SPENT_API int spent_trace_source_progress(struct spent_trace_source *src, uint64_t *done, uint64_t *total);
/* Ask SRC for batches of superblock executions (spent_trace_batch.execs) from the next batch
 * on, for a sink that reads both kinds. 0 when it will deliver them, -ENOTSUP when it cannot
 * (its batches keep insns). */
SPENT_API int spent_trace_source_want_execs(struct spent_trace_source *src);
/* 1 when SRC delivers data references, 0 when its input was made without them (`spent trace
 * --no-data`: a data-cache or lock study on it would read as empty), -ENOTSUP when it cannot
 * tell. */
SPENT_API int spent_trace_source_data_addresses(struct spent_trace_source *src);
SPENT_API void spent_trace_source_free(struct spent_trace_source *src);

#ifdef __cplusplus
}
#endif
#endif
