/* spent/trace.h - the trace stream: every executed instruction and data reference, from any
 * source (a PatchWrx-style log, a CITCAT recording), to any sink (cache simulation, hit curves,
 * memory maps, lock timelines, dumps). No sink knows which source fed it.
 *
 * The stream is pulled in batches (drcachesim's reader -> simulator split): a batch holds a run
 * of instructions of possibly several threads in global order, their data references in one
 * flat array, and the events that happen between them. Arrays are owned by the source and stay
 * valid until the next trace_source_next() or trace_source_free().
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
enum trace_ref_kind {
	TRACE_REF_READ = 1,
	TRACE_REF_WRITE = 2,
	TRACE_REF_MODIFY = 3,
};

struct trace_ref {
	uint64_t addr;
	uint32_t size;	/* bytes */
	uint32_t kind;	/* enum trace_ref_kind */
};

/* Instruction flags a source sets from its decoder, so sinks need not decode. */
enum trace_insn_flag {
	TRACE_INSN_LOCKED = 1 << 0,	/* lock prefix or implicitly locked (xchg with memory) */
	TRACE_INSN_COND_BRANCH = 1 << 1,
	TRACE_INSN_CALL = 1 << 2,
	TRACE_INSN_RET = 1 << 3,
	TRACE_INSN_INDIRECT = 1 << 4,	/* indirect jump or call */
	TRACE_INSN_SYSCALL = 1 << 5,
	TRACE_INSN_PAUSE = 1 << 6,	/* spin-wait hint */
};

struct trace_insn {
	uint64_t pc;
	uint32_t tid;
	uint8_t len;		/* bytes, 1..15 */
	uint8_t nrefs;		/* data references, in refs[ref0 .. ref0+nrefs) of the batch */
	uint16_t flags;		/* enum trace_insn_flag */
	uint32_t ref0;
	uint32_t pid;		/* the process it ran in (0: the source knows none) */
};

enum trace_event_kind {
	TRACE_EV_SYSCALL = 1,		/* a system call returned */
	TRACE_EV_SIGNAL,		/* asynchronous transfer: handler entered, resume_pc not executed */
	TRACE_EV_THREAD_SWITCH,		/* the following instructions belong to to_tid */
	TRACE_EV_THREAD_START,
	TRACE_EV_THREAD_EXIT,
	TRACE_EV_IMAGE_LOAD,		/* an executable image was mapped */
	TRACE_EV_IMAGE_UNLOAD,
	TRACE_EV_EXIT,			/* the process exited */
	TRACE_EV_PROCESS_START,		/* a process of the tree starts its stream (pid in .pid):
					 * the command, a forked child, or an exec'd program */
};

struct trace_event {
	uint32_t kind;		/* enum trace_event_kind */
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
		struct { int32_t status; } exit;
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

struct trace_batch {
	const struct trace_insn *insns;
	size_t n_insns;
	const struct trace_ref *refs;
	size_t n_refs;
	const struct trace_event *events;
	size_t n_events;
	uint64_t first_index;	/* stream position of insns[0] (instructions before it) */
	uint64_t time_ns;	/* timestamp of the chunk the batch starts in, 0 when unknown */
};

struct trace_source;

/* The operations a source implements; trace_source_new() wraps them. */
struct trace_source_ops {
	const char *name;	/* "patchwrx-log", "citcat", "memory" */
	/* 1 with a batch, 0 at the end of the stream, -errno on error (the source's message
	 * is then in trace_source_error()). */
	int (*next)(void *state, struct trace_batch *out);
	const char *(*error)(void *state);
	void (*free)(void *state);
	/* optional: bytes of its input consumed so far and in all (see trace_source_progress) */
	int (*progress)(void *state, uint64_t *done, uint64_t *total);
};

/* Wrap STATE with OPS into a source; the source owns STATE. NULL on ENOMEM (STATE freed). */
SPENT_API struct trace_source *trace_source_new(const struct trace_source_ops *ops, void *state);

/*
 * Open PATH as a trace source, whatever it is: a `spent trace` log file or a
 * `spent citcat` recording directory (detected by magic). 0 or -errno; on failure, a message
 * saying what and where is written into ERR (ERRLEN bytes) when ERR is not NULL.
 */
SPENT_API int trace_source_open(const char *path, struct trace_source **out, char *err, size_t errlen);

/*
 * A source passing on only some processes of IN's process tree: those of pid PID (0: any) whose
 * current program's file name is COMM (NULL: any; an exec changes it). With TRACE_SELECT_TAG,
 * bits 48-63 of every pc and data address hold the process's number less one (0, 1, ... in
 * order of first appearance: a single-process trace's addresses are unchanged), so a cache
 * model keeps the processes' address spaces apart (sinks that name addresses strip the tag
 * with trace_select_untag()). Takes IN over (freed on failure too). 0 or -ENOMEM.
 */
enum trace_select_flag {
	TRACE_SELECT_TAG = 1 << 0,
};
#define TRACE_SELECT_TAG_SHIFT 48
SPENT_API int trace_source_select(struct trace_source *in, uint32_t pid, const char *comm, int flags,
			struct trace_source **out);
/* ADDR (a pc or data address of a TRACE_SELECT_TAG source) without its process tag. */
SPENT_API uint64_t trace_select_untag(uint64_t addr);

SPENT_API int trace_source_next(struct trace_source *src, struct trace_batch *out);
SPENT_API const char *trace_source_error(struct trace_source *src);
SPENT_API const char *trace_source_name(const struct trace_source *src);
/* How far SRC has read its input: bytes consumed so far (*DONE) of *TOTAL, for a progress
 * display. 0, or -ENOTSUP when the source cannot tell. */
SPENT_API int trace_source_progress(struct trace_source *src, uint64_t *done, uint64_t *total);
SPENT_API void trace_source_free(struct trace_source *src);

#ifdef __cplusplus
}
#endif
#endif
