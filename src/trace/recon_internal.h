/* trace/recon_internal.h - the reconstructor's state, shared by reconstruct.c (control flow,
 * data references, events), recon_sb.c (superblock descriptions), recon_proc.c (process
 * streams) and recon_image.c (recorded images: files, vDSO bytes, build-ids). */
#ifndef SPENT_TRACE_RECON_INTERNAL_H
#define SPENT_TRACE_RECON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"
#include "trace/log_format.h"
#include "trace/log_io.h"

struct decode_cache;

/* A successor cache: the SB that followed last time, valid while the table's generation is
 * unchanged (a replaced SB is freed) and the next pc is still KEY. */
struct recon_succ {
	struct recon_sb *sb;
	uint64_t key, gen;
};

/* The fast replay of a superblock (no guarded access): what running it up to one exit yields. */
struct recon_exit {
	struct recon_succ succ;	/* the SB that followed when this exit was taken */
	uint32_t n_insns, n_refs, n_sites;	/* instructions, references, values up to the exit */
	uint8_t last_nrefs;	/* references of its last instruction before the exit */
	uint64_t target;	/* where control goes (END with INDIRECT: the last site's value) */
};
#define RECON_ROOT_NONE UINT32_MAX	/* recon_site: the END target */
/* recon_acc: a constant address, roots[] of the fast replay's one root that is never set (0),
 * so every address is one add without a branch */
#define RECON_ROOT_ZERO LOG_CODE_MAX_OPS
struct recon_acc {		/* an unguarded access: address = roots[root] + off */
	uint64_t off;
	uint32_t root;
	uint16_t size;
	uint8_t kind;		/* TRACE_REF_* */
};
struct recon_site {		/* a value the superblock logs, in stream order */
	uint32_t root;		/* the root it sets, or RECON_ROOT_NONE (indirect target) */
	uint32_t raw;		/* LOG_OPF_RAW: not a delta */
};

struct recon_sb {
	struct recon_sb *next;	/* hash chain */
	uint64_t key;
	uint32_t id;		/* spent_trace_exec.block: 1, 2, ... in order of description */
	uint32_t n_ops, n_roots, n_imarks, n_sites;
	struct log_op *ops;
	/* fast replay (fast != 0): per exit (side exits 0..n_exits-1, then END) its prefix;
	 * instruction templates (tid 0, ref0 relative to the SB's first reference) and accesses */
	uint32_t fast, n_exits;
	struct recon_exit *exits;
	struct spent_trace_insn *tmpl;
	struct recon_acc *acc;
	struct recon_site *sites;
	uint64_t *last;		/* per value site: its previous value (values are deltas) */
	struct recon_succ succ;	/* the SB that followed this one last time (slow replay) */
	uint16_t *iflags;	/* per op: TRACE_INSN_* of IMARK ops */
};

struct recon_image {
	uint64_t start, len, offset;	/* executable mapping and the file offset at start */
	char *path;
	const uint8_t *bytes;	/* whole file (mapped) or the stored bytes; NULL if unreadable */
	uint64_t n_bytes;
	void *map;		/* to munmap, or NULL */
	uint8_t *owned;		/* stored bytes, or NULL */
};

struct recon_thread {
	uint32_t tid;
	uint64_t pc;		/* where its next superblock starts */
};

/* One process stream's replay state (log format v3: each process of the tree has its own
 * superblocks, images and threads). The stream being read is in recon.p; the others wait in
 * recon.procs. */
struct recon_proc {
	uint32_t stream, pid, ppid, parent_stream, flags, argc;
	char *path, *argv;	/* owned; argv: argc NUL-terminated strings */
	uint32_t argv_len;
	struct recon_sb **tab;
	size_t tab_cap, n_sb;
	uint64_t sb_gen;	/* bumped whenever a superblock record replaces (frees) another */
	struct recon_succ *prev_succ;	/* successor cache of the SB (or exit) run last in the
					 * current chunk, NULL at its start */
	struct recon_image *img;
	size_t n_img, cap_img;
	struct recon_thread *th;
	size_t n_th, cap_th;
	uint32_t last_tid;
	uint64_t cur_time;	/* the stream's clock: its last chunk or event */
	/* instructions of this process so far: --max-instructions is each process's limit (its
	 * tool instance counts its own), and a process past it replays nothing more */
	uint64_t emitted;
	int hit_max;
};

struct recon {
	struct log_reader *rd;
	struct decode_cache *dc;
	struct recon_proc p;
	struct recon_proc *procs;	/* every stream but the current one, by stream number */
	size_t n_procs;
	/* the DATA chunk being replayed */
	int in_data;
	uint32_t d_tid, d_nctl, d_ci;
	const uint8_t *d_ctl;
	uint64_t *vals;		/* the chunk's values, decoded (still site deltas) */
	size_t cap_vals;
	uint64_t d_nvals, d_vi, d_block;
	/* the batch being built */
	struct spent_trace_insn *insns;
	size_t n_insns, cap_insns;
	struct spent_trace_ref *refs;
	size_t n_refs, cap_refs;
	struct spent_trace_event *evs;
	size_t n_evs, cap_evs;
	/* batches of executions (want_execs): the executions, and the instructions the slow
	 * replay writes (insns[0 .. n_slow), pointed to by their executions at the batch's end;
	 * n_insns then counts every instruction of the batch) */
	int want_execs;
	struct spent_trace_exec *execs;
	size_t n_execs, cap_execs, n_slow, n_slow_execs;
	/* superblocks replaced during the batch: its executions may point to their templates,
	 * so they are freed when the next batch starts */
	struct recon_sb *dead;
	uint32_t n_sb_ids;	/* superblock numbers given */
	/* version 5: the CODE records' payloads (codes[i]: the i-th CODE record's in
	 * code_copies; off UINT64_MAX: not kept, as the writer did not), for the CODE_SAME records
	 * naming them */
	int keep_codes;
	struct log_code_copies code_copies;
	struct recon_code {
		uint64_t off;
		uint32_t len;
	} *codes;
	size_t n_codes, cap_codes;
	/* totals */
	uint64_t emitted, n_refs_total, n_chunks, decode_mismatches, max_insns;
	int finished, err;
	char msg[400];
	uint64_t roots[LOG_CODE_MAX_OPS + 1];	/* and RECON_ROOT_ZERO */
};

/* Set r->msg from FMT; returns ERR. */
int recon_fail(struct recon *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* LOG_REC_CODE (recon_sb.c): check the superblock, decode its instructions' flags, compile its
 * per-exit templates, and insert it (replacing an older one with its key). */
int recon_on_code(struct recon *r, const struct log_record *rec);
/* A version 5 CODE record: keep its payload for the CODE_SAME records that may name it. */
int recon_keep_code(struct recon *r, const struct log_record *rec);
/* LOG_REC_CODE_SAME: the CODE record it names, again. */
int recon_on_code_same(struct recon *r, const struct log_record *rec);

/* The superblock table: open hashing by key, chains through recon_sb.next. */
static inline size_t recon_sb_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

static inline struct recon_sb *recon_sb_find(struct recon *r, uint64_t key)
{
	if (!r->p.tab)
		return NULL;
	for (struct recon_sb *s = r->p.tab[recon_sb_slot(key, r->p.tab_cap)]; s; s = s->next)
		if (s->key == key)
			return s;
	return NULL;
}


/* An event of the current stream before the batch's next instruction; NULL on ENOMEM. */
struct spent_trace_event *recon_event_push(struct recon *r, uint32_t kind, uint32_t tid);

/* Process streams (recon_proc.c): LOG_REC_PROCESS opens one, LOG_REC_STREAM switches to one;
 * recon_proc_release frees the current one's superblocks, images and threads. */
int recon_on_process(struct recon *r, const struct log_record *rec);
int recon_on_stream(struct recon *r, const struct log_record *rec);
void recon_proc_release(struct recon *r);

/* LOG_REC_IMAGE: map the file (or keep the stored bytes), check its build-id, emit the event. */
int recon_on_image(struct recon *r, const struct log_record *rec);
void recon_images_release(struct recon *r);

#endif
