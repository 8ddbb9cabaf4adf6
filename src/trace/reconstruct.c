/* trace/reconstruct.c - the PatchWrx reconstructor: a trace source that follows a `spent trace`
 * log (superblock descriptions, one control byte per superblock execution, indirect targets,
 * data-address roots) over the recorded binaries, and yields every executed instruction with
 * its data references and the events between them, thread by thread in chunk order. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/decode.h"
#include "trace/log_io.h"
#include "trace/recon_internal.h"
#include "trace/source_formats.h"

/* small enough that a batch stays in the L1/L2 cache between the source and its sink */
#define BATCH_INSNS 2048u
#define BATCH_EVENTS 4096u

int recon_fail(struct recon *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return err;
}

static struct recon_thread *thread_get(struct recon *r, uint32_t tid)
{
	for (size_t i = 0; i < r->p.n_th; i++)
		if (r->p.th[i].tid == tid)
			return &r->p.th[i];
	if (ALLOC_GROW(r->p.th, r->p.n_th + 1, r->p.cap_th))
		return NULL;
	struct recon_thread *t = &r->p.th[r->p.n_th++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

struct spent_trace_event *recon_event_push(struct recon *r, uint32_t kind, uint32_t tid)
{
	if (ALLOC_GROW(r->evs, r->n_evs + 1, r->cap_evs) < 0)
		return NULL;
	struct spent_trace_event *e = &r->evs[r->n_evs++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->tid = tid;
	e->pid = r->p.pid;
	e->time_ns = r->p.cur_time;
	e->before = r->n_insns;
	return e;
}

static uint64_t site_value(struct recon_sb *sb, uint32_t site, const struct log_op *o, uint64_t v)
{
	if (o->flags & LOG_OPF_RAW)
		return v;
	v += sb->last[site];
	sb->last[site] = v;
	return v;
}

/* A template copied as three words: pc; tid (0 in the template) with len, nrefs and flags;
 * ref0 with the zero padding after it. */
_Static_assert(sizeof(struct spent_trace_insn) == 24 && offsetof(struct spent_trace_insn, tid) == 8 &&
	       offsetof(struct spent_trace_insn, ref0) == 16 && offsetof(struct spent_trace_insn, pid) == 20,
	       "trace_insn layout");
static inline void insn_from_template(struct spent_trace_insn *out, const struct spent_trace_insn *tm,
				      uint32_t tid, uint64_t pid_rbase)
{
	/* three scalar words: a 16-byte vector copy patched in memory stalls store forwarding */
	const char *src = (const char *)tm;
	char *dst = (char *)out;
	uint64_t w0, w1, w2;
	memcpy(&w0, src, 8);
	memcpy(&w1, src + 8, 8);
	memcpy(&w2, src + 16, 8);
	w1 |= tid;
	w2 += pid_rbase;	/* ref0 + rbase stays below 2^32; the template's pid is 0 */
	memcpy(dst, &w0, 8);
	memcpy(dst + 8, &w1, 8);
	memcpy(dst + 16, &w2, 8);
}

/* N instructions from templates TM; out of line, so that its few registers are not spilled by
 * the replay loop around it (which has a dozen cursors live). */
static __attribute__((noinline)) void insns_from_templates(struct spent_trace_insn *restrict out,
							   const struct spent_trace_insn *restrict tm,
							   uint32_t n, uint32_t tid, uint64_t pid_rbase)
{
	for (uint32_t k = 0; k < n; k++)
		insn_from_template(&out[k], &tm[k], tid, pid_rbase);
}

/* An execution of N instructions of the templates of SB (NULL: the slow replay's,
 * insns[SLOW0..), pointed to at the batch's end, .block holding SLOW0 until then) whose
 * references start at REF0 (batches of executions). */
static inline void push_exec(struct recon *r, const struct recon_sb *sb, uint32_t n,
			     uint32_t ref0, uint32_t n_refs, uint32_t tid, uint32_t last_nrefs, size_t slow0)
{
	const struct spent_trace_insn *tm = sb ? sb->tmpl : NULL;
	struct spent_trace_exec *x = &r->execs[r->n_execs++];
	x->insns = tm;
	x->n_insns = n;
	x->ref0 = ref0;
	x->n_refs = n_refs;
	x->tid = tid;
	x->pid = r->p.pid;
	x->pc_tag = 0;
	x->last_nrefs = last_nrefs;
	x->block = sb ? sb->id : (uint32_t)slow0;
	r->n_slow_execs += tm == NULL;
}

/* Run superblock SB up to exit X (whose prefix has no guarded access) for thread T: the
 * instructions are copies of its templates, the references follow from its sites' values. */
static int run_fast(struct recon *r, struct recon_thread *t, struct recon_sb *sb,
		    const struct recon_exit *x)
{
	if (r->d_nvals - r->d_vi < x->n_sites)
		return recon_fail(r, -EBADMSG, "corrupt log: chunk of thread %u ends inside the superblock at "
			     "0x%llx (block at byte %llu)", t->tid, (unsigned long long)sb->key,
			     (unsigned long long)r->d_block);
	const uint64_t *restrict v = r->vals + r->d_vi;
	const struct recon_site *restrict site = sb->sites;
	uint64_t *restrict last = sb->last, *restrict roots = r->roots;
	uint64_t target = x->target;
	uint32_t n = x->n_sites;
	r->d_vi += n;
	for (uint32_t s = 0; s < n; s++) {
		uint64_t val = v[s];
		if (!site[s].raw) {
			val += last[s];
			last[s] = val;
		}
		if (site[s].root == RECON_ROOT_NONE)
			target = val;
		else
			roots[site[s].root] = val;
	}
	uint32_t rbase = (uint32_t)r->n_refs, tid = t->tid;
	const struct spent_trace_insn *restrict tm = sb->tmpl;
	struct spent_trace_insn *in = r->insns + r->n_insns;
	n = x->n_insns;
	uint64_t pid_rbase = (uint64_t)r->p.pid << 32 | rbase;
	if (r->want_execs) {
		push_exec(r, sb, n, rbase, x->n_refs, tid, x->last_nrefs, 0);
	} else {
		for (uint32_t k = 0; k < n; k++)
			insn_from_template(&in[k], &tm[k], tid, pid_rbase);
		in[n - 1].nrefs = x->last_nrefs;
	}
	const struct recon_acc *restrict a = sb->acc;
	struct spent_trace_ref *restrict rf = r->refs + r->n_refs;
	n = x->n_refs;
	for (uint32_t k = 0; k < n; k++) {
		rf[k].addr = roots[a[k].root] + a[k].off;
		rf[k].size = a[k].size;
		rf[k].kind = a[k].kind;
	}
	r->n_insns += x->n_insns;
	r->n_refs += n;
	r->n_refs_total += n;
	r->emitted += x->n_insns;
	r->p.emitted += x->n_insns;
	t->pc = target;
	return 0;
}

static int slow_replay(struct recon *r, struct recon_thread *t, struct recon_sb *sb, uint8_t e,
		       size_t *wc, size_t w0, uint32_t rbase);

/* Run one superblock execution of thread T whose exit byte is E. */
static int run_sb(struct recon *r, struct recon_thread *t, uint8_t e)
{
	struct recon_succ *prev = r->p.prev_succ;
	struct recon_sb *sb;
	if (prev && prev->gen == r->p.sb_gen && prev->key == t->pc && prev->sb) {
		sb = prev->sb;
	} else {
		sb = recon_sb_find(r, t->pc);
		if (prev) {
			prev->sb = sb;
			prev->key = t->pc;
			prev->gen = r->p.sb_gen;
		}
	}
	if (!sb)
		return recon_fail(r, -EBADMSG, "corrupt log: thread %u enters 0x%llx, which no superblock record "
			     "describes (chunk in block at byte %llu)", t->tid,
			     (unsigned long long)t->pc, (unsigned long long)r->d_block);
	/* where the slow replay writes its instructions: after the batch's (a batch of
	 * executions: after the slow replay's earlier ones, references relative to its own) */
	size_t *wc = r->want_execs ? &r->n_slow : &r->n_insns, w0 = *wc;
	uint32_t rbase = r->want_execs ? (uint32_t)r->n_refs : 0;
	if ((*wc + sb->n_imarks > r->cap_insns &&
	     ALLOC_GROW(r->insns, *wc + sb->n_imarks, r->cap_insns) < 0) ||
	    (r->n_refs + sb->n_ops > r->cap_refs &&
	     ALLOC_GROW(r->refs, r->n_refs + sb->n_ops, r->cap_refs) < 0))
		return -ENOMEM;
	if (sb->fast && e <= sb->n_exits &&
	    (!r->max_insns || r->p.emitted + sb->exits[e].n_insns <= r->max_insns)) {
		r->p.prev_succ = &sb->exits[e].succ;
		return run_fast(r, t, sb, &sb->exits[e]);
	}
	r->p.prev_succ = &sb->succ;
	int err = slow_replay(r, t, sb, e, wc, w0, rbase);
	if (r->want_execs && *wc > w0)
		push_exec(r, NULL, (uint32_t)(*wc - w0), rbase, (uint32_t)r->n_refs - rbase, t->tid,
			  r->insns[*wc - 1].nrefs, w0);
	return err;
}

/* Interpret superblock SB op by op for thread T up to exit E, writing its instructions at
 * insns[*WC] on (references relative to RBASE). */
static int slow_replay(struct recon *r, struct recon_thread *t, struct recon_sb *sb, uint8_t e,
		       size_t *wc, size_t w0, uint32_t rbase)
{
	uint32_t site = 0;
	for (uint32_t i = 0; i < sb->n_ops; i++) {
		const struct log_op *o = &sb->ops[i];
		if (o->kind == LOG_OP_IMARK) {
			if (r->max_insns && r->p.emitted == r->max_insns) {
				r->p.hit_max = 1;
				return 0;
			}
			struct spent_trace_insn *in = &r->insns[(*wc)++];
			in->pc = o->val;
			in->tid = r->want_execs ? 0 : t->tid;
			in->pid = r->want_execs ? 0 : r->p.pid;
			in->len = (uint8_t)o->size;
			in->nrefs = 0;
			in->flags = sb->iflags[i];
			in->ref0 = (uint32_t)r->n_refs - rbase;
			r->n_insns += r->want_execs;
			r->emitted++;
			r->p.emitted++;
		} else if (o->kind == LOG_OP_ACCESS) {
			uint64_t addr, guard = 1;
			if (o->flags & LOG_OPF_GUARDED) {
				if (r->d_nvals - r->d_vi < 2)
					goto short_vals;
				guard = r->vals[r->d_vi++];
				r->roots[o->arg] = site_value(sb, site++, o, r->vals[r->d_vi++]);
			} else if ((o->flags & LOG_OPF_FIRST) && !(o->flags & LOG_OPF_CONST)) {
				if (r->d_vi == r->d_nvals)
					goto short_vals;
				r->roots[o->arg] = site_value(sb, site++, o, r->vals[r->d_vi++]);
			}
			addr = (o->flags & LOG_OPF_CONST) ? o->val : r->roots[o->arg] + o->val;
			if (!guard || *wc == w0)
				continue;
			struct spent_trace_ref *rf = &r->refs[r->n_refs++];
			rf->addr = addr;
			rf->size = o->size;
			rf->kind = (o->flags & LOG_OPF_READ) && (o->flags & LOG_OPF_WRITE) ? SPENT_TRACE_REF_MODIFY :
				   (o->flags & LOG_OPF_WRITE) ? SPENT_TRACE_REF_WRITE : SPENT_TRACE_REF_READ;
			r->insns[*wc - 1].nrefs++;
			r->n_refs_total++;
		} else if (o->kind == LOG_OP_EXIT) {
			if (o->arg == e) {
				t->pc = o->val;
				return 0;
			}
		} else {	/* END */
			if (o->arg != e)
				return recon_fail(r, -EBADMSG, "corrupt log: exit %u of the superblock at 0x%llx does "
					     "not exist (chunk in block at byte %llu)", e,
					     (unsigned long long)sb->key, (unsigned long long)r->d_block);
			if (o->flags & LOG_OPF_INDIRECT) {
				if (r->d_vi == r->d_nvals)
					goto short_vals;
				t->pc = site_value(sb, site++, o, r->vals[r->d_vi++]);
			} else {
				t->pc = o->val;
			}
		}
	}
	return 0;
short_vals:
	return recon_fail(r, -EBADMSG, "corrupt log: chunk of thread %u ends inside the superblock at 0x%llx "
		     "(block at byte %llu)", t->tid, (unsigned long long)sb->key,
		     (unsigned long long)r->d_block);
}

/* Continue the current DATA chunk until it ends or the batch is full. */
/* Replay the chunk's superblock executions while each can take the template path, with the
 * cursors in locals; stops at the first that cannot (unknown, guarded, short of values or of
 * batch room, a bad exit) and leaves it to run_sb, which reports or handles it. Not used with
 * an instruction limit. Returns the executions replayed. */
static uint32_t run_templates(struct recon *r, struct recon_thread *t)
{
	const uint8_t *ctl = r->d_ctl;
	const uint64_t *vals = r->vals;
	uint64_t *restrict roots = r->roots;
	struct spent_trace_insn *restrict insns = r->insns;
	struct spent_trace_ref *restrict refs = r->refs;
	struct recon_succ *prev = r->p.prev_succ;
	size_t ni = r->n_insns, nr = r->n_refs, nr0 = nr, cap_refs = r->cap_refs;
	uint64_t vi = r->d_vi, nv = r->d_nvals, pc = t->pc, gen = r->p.sb_gen, ni0 = ni;
	uint32_t ci = r->d_ci, ci0 = ci, nctl = r->d_nctl, tid = t->tid;
	const uint64_t pid_hi = (uint64_t)r->p.pid << 32;
	const int execs = r->want_execs;

	while (ci < nctl && ni < BATCH_INSNS) {
		struct recon_sb *sb;
		uint8_t e = ctl[ci];
		if (prev && prev->gen == gen && prev->key == pc && prev->sb) {
			sb = prev->sb;
		} else {
			sb = recon_sb_find(r, pc);
			if (prev) {
				prev->sb = sb;
				prev->key = pc;
				prev->gen = gen;
			}
		}
		if (!sb || !sb->fast || e > sb->n_exits || nr + sb->n_ops > cap_refs ||
		    nv - vi < sb->exits[e].n_sites)
			break;
		struct recon_exit *x = &sb->exits[e];
		/* the superblock that followed this exit last time nearly always follows again: its
		 * header and hot state (recon_sb.c puts them together) start coming into the
		 * host's caches while this one is replayed, instead of one dependent miss after
		 * another along the chain */
		const char *nsb = (const char *)x->succ.sb;
		__builtin_prefetch(nsb);
		__builtin_prefetch(nsb + 64);
		__builtin_prefetch(nsb + 128);
		__builtin_prefetch(nsb + 192);
		const struct recon_site *site = sb->sites;
		uint64_t *last = sb->last, target = x->target;
		for (uint32_t s = 0; s < x->n_sites; s++) {
			uint64_t v = vals[vi++];
			if (!site[s].raw) {
				v += last[s];
				last[s] = v;
			}
			if (site[s].root == RECON_ROOT_NONE)
				target = v;
			else
				roots[site[s].root] = v;
		}
		const struct spent_trace_insn *tm = sb->tmpl;
		if (execs) {
			push_exec(r, sb, x->n_insns, (uint32_t)nr, x->n_refs, tid, x->last_nrefs, 0);
			ni += x->n_insns;
		} else {
			insns_from_templates(insns + ni, tm, x->n_insns, tid, pid_hi | nr);
			ni += x->n_insns;
			insns[ni - 1].nrefs = x->last_nrefs;
		}
		const struct recon_acc *a = sb->acc;
		for (uint32_t k = 0; k < x->n_refs; k++, nr++) {
			refs[nr].addr = roots[a[k].root] + a[k].off;
			refs[nr].size = a[k].size;
			refs[nr].kind = a[k].kind;
		}
		pc = target;
		prev = &x->succ;
		ci++;
	}
	r->emitted += ni - ni0;
	r->p.emitted += ni - ni0;
	r->n_refs_total += nr - nr0;
	r->n_insns = ni;
	r->n_refs = nr;
	r->d_vi = vi;
	r->d_ci = ci;
	t->pc = pc;
	r->p.prev_succ = prev;
	return ci - ci0;
}

static int run_data(struct recon *r)
{
	struct recon_thread *t = thread_get(r, r->d_tid);
	if (!t)
		return -ENOMEM;
	/* room for a whole batch and its last superblock, so the template loop needs no checks */
	if (ALLOC_GROW(r->insns, BATCH_INSNS + LOG_CODE_MAX_OPS, r->cap_insns) < 0 ||
	    ALLOC_GROW(r->refs, BATCH_INSNS + LOG_CODE_MAX_OPS, r->cap_refs) < 0 ||
	    (r->want_execs && ALLOC_GROW(r->execs, BATCH_INSNS + LOG_CODE_MAX_OPS, r->cap_execs) < 0))
		return -ENOMEM;
	while (r->d_ci < r->d_nctl && r->n_insns < BATCH_INSNS && !r->p.hit_max) {
		if (!r->max_insns && run_templates(r, t) > 0)
			continue;
		int err = run_sb(r, t, r->d_ctl[r->d_ci]);
		if (err < 0)
			return err;
		r->d_ci++;
	}
	if (r->d_ci == r->d_nctl || r->p.hit_max)
		r->in_data = 0;
	return 0;
}

/* N zigzag varints from P (exactly LEN bytes) into OUT; -1 when malformed. */
static int decode_vals(const uint8_t *p, size_t len, uint64_t *out, size_t n)
{
	const uint8_t *end = p + len;
	for (size_t i = 0; i < n; i++) {
		uint64_t z = 0;
		unsigned shift = 0;
		for (;;) {
			if (p == end || shift > 63)
				return -1;
			uint8_t b = *p++;
			z |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
			shift += 7;
		}
		out[i] = (z >> 1) ^ (0 - (z & 1));
	}
	return p == end ? 0 : -1;
}

static int on_data(struct recon *r, const struct log_record *rec)
{
	struct log_data d;
	if (rec->len < sizeof(d))
		goto bad;
	memcpy(&d, rec->payload, sizeof(d));
	size_t pad = ((size_t)d.n_ctl + 7u) & ~(size_t)7u;
	if (d.n_vals > LOG_REC_MAX || rec->len != sizeof(d) + pad + (size_t)d.n_vbytes)
		goto bad;
	if (ALLOC_GROW(r->vals, d.n_vals + 1, r->cap_vals) < 0)
		return -ENOMEM;
	if (decode_vals(rec->payload + sizeof(d) + pad, d.n_vbytes, r->vals, d.n_vals) < 0)
		goto bad;
	r->p.cur_time = d.time_ns;
	if (r->p.last_tid && r->p.last_tid != d.tid) {
		struct spent_trace_event *e = recon_event_push(r, SPENT_TRACE_EV_THREAD_SWITCH, d.tid);
		if (!e)
			return -ENOMEM;
		e->u.thread_switch.from_tid = r->p.last_tid;
		e->u.thread_switch.to_tid = d.tid;
	}
	r->p.last_tid = d.tid;
	r->p.cur_time = d.time_ns;
	r->in_data = !r->p.hit_max;	/* a process past --max-instructions replays no more */
	r->p.prev_succ = NULL;
	r->d_tid = d.tid;
	r->d_ctl = rec->payload + sizeof(d);
	r->d_nctl = d.n_ctl;
	r->d_ci = 0;
	r->d_nvals = d.n_vals;
	r->d_vi = 0;
	r->d_block = rec->block_offset;
	r->n_chunks++;
	return 0;
bad:
	return recon_fail(r, -EBADMSG, "corrupt log: chunk record with bad sizes in block at byte %llu",
		     (unsigned long long)rec->block_offset);
}

static int on_event(struct recon *r, const struct log_record *rec)
{
	struct spent_trace_event *e;
	switch (rec->type) {
	case LOG_REC_RESUME: {
		struct log_resume x;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		struct recon_thread *t = thread_get(r, x.tid);
		if (!t)
			return -ENOMEM;
		t->pc = x.pc;
		if (x.time_ns)
			r->p.cur_time = x.time_ns;
		return 0;
	}
	case LOG_REC_SYSCALL: {
		struct log_syscall x;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		if (!(e = recon_event_push(r, SPENT_TRACE_EV_SYSCALL, x.tid)))
			return -ENOMEM;
		e->u.syscall.nr = x.nr;
		memcpy(e->u.syscall.args, x.args, sizeof(x.args));
		e->u.syscall.ret = x.ret;
		return 0;
	}
	case LOG_REC_SIGNAL: {
		struct log_signal x;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		if (!(e = recon_event_push(r, SPENT_TRACE_EV_SIGNAL, x.tid)))
			return -ENOMEM;
		e->u.signal.signo = x.signo;
		e->u.signal.handler = x.handler;
		e->u.signal.resume_pc = x.resume_pc;
		return 0;
	}
	case LOG_REC_THREAD_START:
	case LOG_REC_THREAD_EXIT: {
		struct log_thread x;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		if (x.time_ns)
			r->p.cur_time = x.time_ns;
		e = recon_event_push(r, rec->type == LOG_REC_THREAD_START ? SPENT_TRACE_EV_THREAD_START :
				  SPENT_TRACE_EV_THREAD_EXIT, x.tid);
		if (!e)
			return -ENOMEM;
		return 0;
	}
	case LOG_REC_EXIT: {
		struct log_exit x;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		if (x.time_ns)
			r->p.cur_time = x.time_ns;
		if (!(e = recon_event_push(r, SPENT_TRACE_EV_EXIT, r->p.last_tid)))
			return -ENOMEM;
		e->u.exit.status = x.status;
		return 0;
	}
	case LOG_REC_REAPED: {
		struct log_reaped x;
		int sig;
		if (rec->len != sizeof(x))
			break;
		memcpy(&x, rec->payload, sizeof(x));
		if (!x.pid || (sig = x.wait_status & 0x7f) == 0 || sig == 0x7f)
			break;	/* not a death by a signal: no tool writes it */
		if (x.time_ns)
			r->p.cur_time = x.time_ns;
		if (!(e = recon_event_push(r, SPENT_TRACE_EV_CHILD_KILLED, r->p.last_tid)))
			return -ENOMEM;
		e->u.child_killed.pid = x.pid;
		e->u.child_killed.signo = sig;
		e->u.child_killed.core_dumped = (x.wait_status & 0x80) != 0;
		return 0;
	}
	default:
		break;
	}
	return recon_fail(r, -EBADMSG, "corrupt log: record of type %u has %u bytes (block at byte %llu)",
		     rec->type, rec->len, (unsigned long long)rec->block_offset);
}

static int on_record(struct recon *r, const struct log_record *rec)
{
	switch (rec->type) {
	case LOG_REC_PROCESS:
		return recon_on_process(r, rec);
	case LOG_REC_STREAM:
		return recon_on_stream(r, rec);
	case LOG_REC_CODE:
		if (r->keep_codes) {
			int err = recon_keep_code(r, rec);
			if (err < 0)
				return err;
		}
		return recon_on_code(r, rec);
	case LOG_REC_CODE_SAME:
		return recon_on_code_same(r, rec);
	case LOG_REC_DATA:
		return on_data(r, rec);
	case LOG_REC_IMAGE:
		return recon_on_image(r, rec);
	default:
		return on_event(r, rec);
	}
}

static void free_dead(struct recon *r)
{
	for (struct recon_sb *s = r->dead, *nx; s; s = nx) {
		nx = s->next;
		free(s);
	}
	r->dead = NULL;
}

static int recon_next(void *state, struct spent_trace_batch *out)
{
	struct recon *r = state;
	int err = 0;

	memset(out, 0, sizeof(*out));
	r->n_insns = r->n_refs = r->n_evs = r->n_execs = r->n_slow = r->n_slow_execs = 0;
	free_dead(r);
	if (r->finished)
		return r->err;
	out->first_index = r->emitted;
	out->time_ns = r->p.cur_time;
	while (r->n_insns < BATCH_INSNS && r->n_evs < BATCH_EVENTS) {
		struct log_record rec;
		if (r->in_data) {
			err = run_data(r);
		} else {
			int rc = log_reader_next(r->rd, &rec);
			if (rc == 0) {
				r->finished = 1;
				break;
			}
			if (rc < 0) {
				snprintf(r->msg, sizeof(r->msg), "%s", log_reader_error(r->rd));
				err = rc;
			} else {
				err = on_record(r, &rec);
			}
		}
		if (err < 0)
			break;
	}
	if (err < 0) {
		r->finished = 1;
		r->err = err;
	}
	out->insns = r->insns;
	out->n_insns = r->n_insns;
	if (r->want_execs) {
		/* the slow replay's instructions stay put from here on */
		for (size_t i = 0; r->n_slow_execs && i < r->n_execs; i++)
			if (!r->execs[i].insns) {
				r->execs[i].insns = r->insns + r->execs[i].block;
				r->execs[i].block = 0;
				r->n_slow_execs--;
			}
		out->insns = NULL;
		out->execs = r->execs;
		out->n_execs = r->n_execs;
	}
	out->refs = r->refs;
	out->n_refs = r->n_refs;
	out->events = r->evs;
	out->n_events = r->n_evs;
	if (r->n_insns || r->n_evs)
		return 1;
	return r->finished ? r->err : 1;
}

static const char *recon_error(void *state)
{
	struct recon *r = state;
	return r->msg;
}

static void recon_free(void *state)
{
	struct recon *r = state;
	if (!r)
		return;
	recon_proc_release(r);
	for (size_t i = 0; i < r->n_procs; i++) {
		r->p = r->procs[i];
		recon_proc_release(r);
	}
	free_dead(r);
	free(r->execs);
	free(r->procs);
	free(r->vals);
	free(r->insns);
	free(r->refs);
	free(r->evs);
	free(r->code_copies.bytes);
	free(r->codes);
	decode_cache_free(r->dc);
	log_reader_free(r->rd);
	free(r);
}

static int recon_progress(void *state, uint64_t *done, uint64_t *total)
{
	struct recon *r = state;
	*done = log_reader_pos(r->rd);
	*total = log_reader_size(r->rd);
	return 0;
}

static int recon_want_execs(void *state)
{
	struct recon *r = state;
	r->want_execs = 1;
	return 0;
}

static int recon_data_addresses(void *state)
{
	const struct recon *r = state;
	return (log_reader_flags(r->rd) & LOG_F_DATA) != 0;
}

static const struct spent_trace_source_ops recon_ops = {
	.name = "patchwrx-log",
	.data_addresses = recon_data_addresses,
	.want_execs = recon_want_execs,
	.next = recon_next,
	.error = recon_error,
	.free = recon_free,
	.progress = recon_progress,
};

static int open_reader(struct log_reader *rd, struct spent_trace_source **out)
{
	struct recon *r = calloc(1, sizeof(*r));
	*out = NULL;
	if (!r) {
		log_reader_free(rd);
		return -ENOMEM;
	}
	r->rd = rd;
	r->dc = decode_cache_new();
	if (!r->dc) {
		recon_free(r);
		return -ENOMEM;
	}
	r->max_insns = log_reader_max_insns(rd);
	r->keep_codes = log_reader_version(rd) >= LOG_VERSION_NO_REAPED;	/* CODE_SAME since 5 */
	*out = spent_trace_source_new(&recon_ops, r);
	return *out ? 0 : -ENOMEM;
}

int trace_log_open_source(const char *path, struct spent_trace_source **out, char *err, size_t errlen)
{
	struct log_reader *rd;
	int e = log_reader_new_file(path, &rd, err, errlen);
	if (e < 0)
		return e;
	return open_reader(rd, out);
}

int trace_log_open_mem(const uint8_t *data, size_t len, struct spent_trace_source **out, char *err,
		       size_t errlen)
{
	struct log_reader *rd;
	int e = log_reader_new_mem(data, len, &rd, err, errlen);
	if (e < 0)
		return e;
	return open_reader(rd, out);
}
