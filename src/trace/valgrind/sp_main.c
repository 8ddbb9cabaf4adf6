/* trace/valgrind/sp_main.c - the `spent` Valgrind tool: the PatchWrx patcher. It instruments
 * each superblock to log one control byte per execution (exit taken), indirect targets and
 * data-address roots into per-run buffers, describes each superblock once (LOG_REC_CODE), and
 * sends records (src/trace/log_format.h) through the pipe fd given by `spent trace`. No libc. */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_vki.h"

#include "pub_tool_vkiscnums.h"

#include "trace/log_format.h"
#include "trace/valgrind/sp_tool.h"


/* ---- options ---- */
static Long clo_fd = -1;
static const HChar *clo_pipe = NULL;
static const HChar *clo_ring_dir = NULL;
static Bool clo_children = True;
static Bool clo_data = True;
static const HChar *clo_start = NULL;
static Long clo_max = 0;
static Bool clo_progress = False;

/* ---- runtime buffers, written by instrumented code ---- */
/* Buffer invariant: free value slots >= SMALL_VALS * free control bytes. A superblock logging
 * at most SMALL_VALS values (nearly all) then only checks that one control byte is free; the
 * others also check for their values plus the room the invariant keeps.
 * Every superblock checks: Valgrind's scheduling quantum does not bound the executions
 * between flushes, since only backward jumps pass an event check (forward chained jumps
 * enter a translation past it); gzip ran 262144 superblocks between two flushes. */
#define CTL_SZ (1u << 14)
#define SMALL_VALS 8u
#define VAL_N (2u * SMALL_VALS * CTL_SZ)
static UChar ctl_buf[CTL_SZ];
static ULong val_buf[VAL_N];
static UChar *ctl_ptr = ctl_buf;
static ULong *val_ptr = val_buf;
static ULong insn_lower_bound;	/* instructions executed, lower bound (--max, progress) */
/* A progress note (LOG_PIPE_PROGRESS) goes to the recorder at most this often. */
#define PROGRESS_NS 200000000ull
static ULong progress_last_ns;
/* each value-logging site's previous value: values are logged as deltas from it */
#define SITE_N (1u << 20)
static ULong site_last[SITE_N];
static UInt next_site;

static ThreadId cur_tid;

/* Valgrind reuses thread slots; the log numbers threads 1, 2, ... in creation order instead. */
#define SP_MAX_TID 4096
static UInt uid_of[SP_MAX_TID] = { [1] = 1 };
static UInt next_uid = 1;

static UInt uid(ThreadId tid)
{
	return tid < SP_MAX_TID ? uid_of[tid] : 0;
}
static Bool logging = True;
static Bool started;		/* --start reached */
static Bool stopped;		/* --max reached: nothing more is recorded */
static UInt live_threads;	/* threads created and not exited (the main one included) */

/* Zigzag LEB128 of the N values at V into Q; returns the end. Most values are small deltas
 * (strides, repeated targets): one byte, the well-predicted branch. (A branchless 8-byte
 * spread of the 7-bit groups measured 2.5x slower here.) */
static UChar *encode_vals(UChar *q, const ULong *v, UInt n)
{
	for (UInt i = 0; i < n; i++) {
		ULong z = (v[i] << 1) ^ (ULong)((Long)v[i] >> 63);
		if (LIKELY(z < 0x80)) {
			*q++ = (UChar)z;
			continue;
		}
		do {
			*q++ = (UChar)(z | 0x80);
			z >>= 7;
		} while (z >= 0x80);
		*q++ = (UChar)z;
	}
	return q;
}

/* The instruction count so far, sent now with everything buffered: the recorder shows it. */
static void send_progress(ULong now)
{
	progress_last_ns = now;
	struct log_progress *pr = (struct log_progress *)sp_rec_begin(LOG_PIPE_PROGRESS, sizeof(*pr));
	pr->instructions = insn_lower_bound;
	sp_out_write();
}

/* Send the current thread's control bytes and values as one DATA chunk (or drop them while
 * not logging). Called at superblock boundaries only. The record is built in place in
 * sp_out_buf, its length fixed once the varints are encoded. */
static void flush_data(void)
{
	UInt n_ctl = (UInt)(ctl_ptr - ctl_buf);
	UInt n_vals = (UInt)(val_ptr - val_buf);
	if (n_ctl == 0 && n_vals == 0)
		return;
	if (logging && cur_tid != 0) {
		UInt pad = (n_ctl + 7u) & ~7u;
		SizeT most = sizeof(struct log_rec_hdr) + sizeof(struct log_data) + pad +
			     (SizeT)n_vals * 10u + 16u;
		tl_assert(most <= OUT_SZ);
		if (sp_out_used + most > OUT_SZ)
			sp_out_write();
		struct log_rec_hdr *h = (struct log_rec_hdr *)(sp_out_buf + sp_out_used);
		UChar *p = sp_out_buf + sp_out_used + sizeof(*h);
		struct log_data *d = (struct log_data *)p;
		UChar *ctl = p + sizeof(*d);
		VG_(memcpy)(ctl, ctl_buf, n_ctl);
		VG_(memset)(ctl + n_ctl, 0, pad - n_ctl);
		UChar *end = encode_vals(ctl + pad, val_buf, n_vals);
		UInt nb = (UInt)(end - (ctl + pad));
		UInt len = (UInt)sizeof(*d) + pad + nb;
		VG_(memset)(end, 0, ((len + 7u) & ~7u) - len);
		h->type = LOG_REC_DATA;
		h->flags = 0;
		h->reserved = 0;
		h->len = len;
		d->tid = uid(cur_tid);
		d->n_ctl = n_ctl;
		d->time_ns = sp_now_ns();
		d->n_vals = n_vals;
		d->n_vbytes = nb;
		sp_out_used += sizeof(*h) + ((len + 7u) & ~7u);
		sp_n_records++;
		if (clo_progress && d->time_ns - progress_last_ns >= PROGRESS_NS)
			send_progress(d->time_ns);
	}
	ctl_ptr = ctl_buf;
	val_ptr = val_buf;
}

static VG_REGPARM(0) void sp_flush(void)
{
	flush_data();
}

void sp_flush_data(void)
{
	flush_data();
}

static void emit_resume(ThreadId tid, Addr pc)
{
	if (!logging)
		return;
	struct log_resume *r = (struct log_resume *)sp_rec_begin(LOG_REC_RESUME, sizeof(*r));
	r->tid = uid(tid);
	r->pc = pc;
	r->time_ns = sp_now_ns();
}

static VG_REGPARM(1) void sp_start(HWord pc)
{
	if (started)
		return;
	started = True;
	VG_(memset)(site_last, 0, sizeof(site_last));	/* the reader's deltas start from 0 */
	ctl_ptr = ctl_buf;
	val_ptr = val_buf;
	logging = True;
	emit_resume(cur_tid, pc);
}

static VG_REGPARM(0) void sp_stop(void)
{
	flush_data();
	logging = False;
	stopped = True;
}

/* ---- instrumentation ---- */

/* What the instrumenter knows about one superblock while it walks it. */
struct sb_plan {
	IRSB *out;
	IRTemp ctl0, val0;	/* ctl_ptr and val_ptr at SB entry (after any flush) */
	UInt n_vals;		/* values this SB writes before the current point */
	UInt vals_stored;	/* n_vals when val_ptr was last stored */
	struct log_op *ops;
	UInt n_ops, cap;
	Int *root_of;		/* temp -> root temp */
	Long *off_of;		/* temp -> offset from its root */
	Int *slot_of;		/* root temp -> slot, -1 before its first use */
	UInt n_roots;
	UInt n_exits;
	/* lackey's event list, to merge a read and a write into one modify the same way */
	Int ev_used;
	Int last_access;	/* op index of the last event when it was an unguarded read */
	IRExpr *last_atom;
	Int last_size;
};

static struct log_op *plan_op(struct sb_plan *p, UInt kind)
{
	if (p->n_ops == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		tl_assert(p->cap <= LOG_CODE_MAX_OPS * 2);
		p->ops = VG_(realloc)("sp.ops", p->ops, p->cap * sizeof(struct log_op));
	}
	struct log_op *op = &p->ops[p->n_ops++];
	VG_(memset)(op, 0, sizeof(*op));
	op->kind = (UChar)kind;
	return op;
}

static IRTemp emit_load_ptr(IRSB *sb, void *addr)
{
	IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)addr))));
	return t;
}

/* The k-th value of this SB execution goes to val0 + 8k; val_ptr moves once, at the exit. */
static void emit_val(struct sb_plan *p, IRExpr *e)
{
	tl_assert(p->val0 != IRTemp_INVALID);	/* sb_bounds counted no value */
	IRTemp a = newIRTemp(p->out->tyenv, Ity_I64);
	addStmtToIRSB(p->out, IRStmt_WrTmp(a, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(p->val0),
							   IRExpr_Const(IRConst_U64(8ull * p->n_vals)))));
	addStmtToIRSB(p->out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(a), e));
	p->n_vals++;
}

/* Log E (I64 atom) as a delta from the value this site logged last; sets LOG_OPF_RAW on OP
 * when the site table is full. */
static void emit_site_val(struct sb_plan *p, IRExpr *e, struct log_op *op)
{
	IRSB *sb = p->out;
	if (next_site >= SITE_N) {
		op->flags |= LOG_OPF_RAW;
		emit_val(p, e);
		return;
	}
	HWord slot = (HWord)&site_last[next_site++];
	IRTemp prev = emit_load_ptr(sb, (void *)slot);
	addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord(slot), e));
	IRTemp d = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(d, IRExpr_Binop(Iop_Sub64, e, IRExpr_RdTmp(prev))));
	emit_val(p, IRExpr_RdTmp(d));
}

static IRExpr *widen_guard(IRSB *sb, IRExpr *guard)
{
	IRTemp g = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(g, IRExpr_Unop(Iop_1Uto64, guard)));
	return IRExpr_RdTmp(g);
}

/* Exit IDX: its number goes to ctl0 and ctl_ptr/val_ptr move past this execution's bytes, all
 * with plain stores, before the exit: when the exit is not taken, the next exit (or the end)
 * overwrites the byte and val_ptr, so the one taken wins. No guarded stores (each a branch
 * in the generated code); ctl_ptr is stored once (at the first exit), val_ptr only when this
 * exit's value count differs from the previous exit's. */
static void emit_ctl(struct sb_plan *p, UInt idx)
{
	IRSB *sb = p->out;
	addStmtToIRSB(sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(p->ctl0), IRExpr_Const(IRConst_U8((UChar)idx))));
	if (idx == 0) {
		IRTemp c1 = newIRTemp(sb->tyenv, Ity_I64);
		addStmtToIRSB(sb, IRStmt_WrTmp(c1, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(p->ctl0),
								IRExpr_Const(IRConst_U64(1)))));
		addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&ctl_ptr), IRExpr_RdTmp(c1)));
	}
	if (p->val0 != IRTemp_INVALID && (idx == 0 || p->n_vals != p->vals_stored)) {
		IRTemp v1 = newIRTemp(sb->tyenv, Ity_I64);
		addStmtToIRSB(sb, IRStmt_WrTmp(v1, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(p->val0),
								IRExpr_Const(IRConst_U64(8ull * p->n_vals)))));
		addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&val_ptr), IRExpr_RdTmp(v1)));
		p->vals_stored = p->n_vals;
	}
}

/* One data reference (lackey's Dr/Dw event) at address atom ADDR. */
static void plan_access(struct sb_plan *p, Bool write, IRExpr *addr, Int size, IRExpr *guard)
{
	if (!clo_data)
		return;
	if (write && !guard && p->ev_used > 0 && p->last_access >= 0 && p->last_size == size &&
	    eqIRAtom(p->last_atom, addr)) {
		p->ops[p->last_access].flags |= LOG_OPF_WRITE;
		p->last_access = -1;
		return;
	}
	p->ev_used++;
	struct log_op *op = plan_op(p, LOG_OP_ACCESS);
	op->flags = write ? LOG_OPF_WRITE : LOG_OPF_READ;
	op->size = (UShort)(size > (Int)LOG_ACCESS_MAX ? (Int)LOG_ACCESS_MAX : size);
	Int idx = (Int)(op - p->ops);
	if (addr->tag == Iex_Const) {
		op->flags |= LOG_OPF_CONST;
		op->val = addr->Iex.Const.con->Ico.U64;
	} else if (guard) {
		/* a guarded access logs its guard and its own full address */
		op->flags |= LOG_OPF_GUARDED | LOG_OPF_FIRST;
		op->arg = p->n_roots++;
		emit_val(p, widen_guard(p->out, guard));
		emit_site_val(p, addr, op);
	} else {
		IRTemp t = addr->Iex.RdTmp.tmp;
		Int r = p->root_of[t];
		op->val = (ULong)p->off_of[t];
		if (p->slot_of[r] < 0) {
			p->slot_of[r] = (Int)p->n_roots++;
			op->flags |= LOG_OPF_FIRST;
			emit_site_val(p, IRExpr_RdTmp(r), op);
		}
		op->arg = (UInt)p->slot_of[r];
	}
	p->last_access = (!write && !guard) ? idx : -1;
	p->last_atom = addr;
	p->last_size = size;
}

/* Follow t = u + c / u - c / u so accesses share the root u. */
static void plan_wrtmp(struct sb_plan *p, IRTemp t, IRExpr *e)
{
	if (e->tag == Iex_RdTmp) {
		p->root_of[t] = p->root_of[e->Iex.RdTmp.tmp];
		p->off_of[t] = p->off_of[e->Iex.RdTmp.tmp];
		return;
	}
	if (e->tag != Iex_Binop || (e->Iex.Binop.op != Iop_Add64 && e->Iex.Binop.op != Iop_Sub64))
		return;
	IRExpr *a = e->Iex.Binop.arg1, *b = e->Iex.Binop.arg2;
	Bool sub = e->Iex.Binop.op == Iop_Sub64;
	if (!sub && a->tag == Iex_Const && b->tag == Iex_RdTmp) {
		IRExpr *x = a; a = b; b = x;
	}
	if (a->tag != Iex_RdTmp || b->tag != Iex_Const || b->Iex.Const.con->tag != Ico_U64)
		return;
	Long c = (Long)b->Iex.Const.con->Ico.U64;
	p->root_of[t] = p->root_of[a->Iex.RdTmp.tmp];
	p->off_of[t] = p->off_of[a->Iex.RdTmp.tmp] + (sub ? -c : c);
}

static void plan_stmt(struct sb_plan *p, IRTypeEnv *tyenv, IRStmt *st)
{
	switch (st->tag) {
	case Ist_IMark: {
		struct log_op *op = plan_op(p, LOG_OP_IMARK);
		op->val = st->Ist.IMark.addr;
		op->size = (UShort)st->Ist.IMark.len;
		p->ev_used++;
		p->last_access = -1;
		break;
	}
	case Ist_WrTmp:
		if (st->Ist.WrTmp.data->tag == Iex_Load)
			plan_access(p, False, st->Ist.WrTmp.data->Iex.Load.addr,
				    sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty), NULL);
		else
			plan_wrtmp(p, st->Ist.WrTmp.tmp, st->Ist.WrTmp.data);
		break;
	case Ist_Store:
		plan_access(p, True, st->Ist.Store.addr,
			    sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), NULL);
		break;
	case Ist_StoreG: {
		IRStoreG *sg = st->Ist.StoreG.details;
		plan_access(p, True, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->guard);
		break;
	}
	case Ist_LoadG: {
		IRLoadG *lg = st->Ist.LoadG.details;
		IRType ty = Ity_INVALID, wide = Ity_INVALID;
		typeOfIRLoadGOp(lg->cvt, &wide, &ty);
		plan_access(p, False, lg->addr, sizeofIRType(ty), lg->guard);
		break;
	}
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;
		if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
			plan_access(p, False, d->mAddr, d->mSize, NULL);
		if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
			plan_access(p, True, d->mAddr, d->mSize, NULL);
		break;
	}
	case Ist_CAS: {
		IRCAS *cas = st->Ist.CAS.details;
		Int sz = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
		if (cas->dataHi)
			sz *= 2;
		plan_access(p, False, cas->addr, sz, NULL);
		plan_access(p, True, cas->addr, sz, NULL);
		break;
	}
	case Ist_LLSC:
		if (st->Ist.LLSC.storedata == NULL)
			plan_access(p, False, st->Ist.LLSC.addr,
				    sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), NULL);
		else
			plan_access(p, True, st->Ist.LLSC.addr,
				    sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)), NULL);
		break;
	case Ist_Exit: {
		struct log_op *op = plan_op(p, LOG_OP_EXIT);
		op->arg = p->n_exits;
		op->val = st->Ist.Exit.dst->Ico.U64;
		emit_ctl(p, p->n_exits);
		p->n_exits++;
		p->ev_used = 0;	/* lackey flushes its events before every exit */
		p->last_access = -1;
		break;
	}
	default:
		break;
	}
}

/* Upper bound of u64 values one execution can log, the instructions it surely executes
 * (those before its first side exit) and all of them (an execution that takes no side exit). */
static void sb_bounds(IRSB *sb, UInt *vals, UInt *min_insns, UInt *all_insns)
{
	UInt v = sb->next->tag == Iex_Const ? 0 : 1, n = 0, all = 0;
	Bool exited = False;
	for (Int i = 0; i < sb->stmts_used; i++) {
		IRStmt *st = sb->stmts[i];
		all += st->tag == Ist_IMark;
		if (st->tag == Ist_IMark && !exited)
			n++;
		else if (st->tag == Ist_Exit)
			exited = True;
		else if (!clo_data)
			continue;
		else if (st->tag == Ist_Store)
			v += st->Ist.Store.addr->tag != Iex_Const;
		else if (st->tag == Ist_WrTmp && st->Ist.WrTmp.data->tag == Iex_Load)
			v += st->Ist.WrTmp.data->Iex.Load.addr->tag != Iex_Const;
		else if (st->tag == Ist_CAS || st->tag == Ist_LLSC || st->tag == Ist_Dirty ||
			 st->tag == Ist_StoreG || st->tag == Ist_LoadG)
			v += 2;
	}
	*vals = v;
	*min_insns = n;
	*all_insns = all;
}

/* Count the SB's instructions (progress notes, --max); stop at --max. */
static void emit_insn_count(IRSB *out, UInt min_insns);

/* Flush when fewer than the SB's worst case remains. */
static void emit_entry_checks(struct sb_plan *p, UInt need_vals, UInt min_insns)
{
	IRSB *out = p->out;
	IRTemp c = emit_load_ptr(out, &ctl_ptr);
	IRTemp g = newIRTemp(out->tyenv, Ity_I1);
	HWord ctl_lim = (HWord)&ctl_buf[CTL_SZ - 1];
	IRExpr *gc = IRExpr_Binop(Iop_CmpLT64U, mkIRExpr_HWord(ctl_lim), IRExpr_RdTmp(c));
	if (need_vals > SMALL_VALS) {
		IRTemp v = emit_load_ptr(out, &val_ptr);
		IRTemp g1 = newIRTemp(out->tyenv, Ity_I1), g2 = newIRTemp(out->tyenv, Ity_I1);
		HWord val_lim = (HWord)&val_buf[VAL_N - need_vals - SMALL_VALS * CTL_SZ];
		addStmtToIRSB(out, IRStmt_WrTmp(g1, gc));
		addStmtToIRSB(out, IRStmt_WrTmp(g2, IRExpr_Binop(Iop_CmpLT64U, mkIRExpr_HWord(val_lim),
								 IRExpr_RdTmp(v))));
		gc = IRExpr_Binop(Iop_Or1, IRExpr_RdTmp(g1), IRExpr_RdTmp(g2));
	}
	addStmtToIRSB(out, IRStmt_WrTmp(g, gc));
	IRDirty *di = unsafeIRDirty_0_N(0, "sp_flush", VG_(fnptr_to_fnentry)(sp_flush), mkIRExprVec_0());
	di->guard = IRExpr_RdTmp(g);
	addStmtToIRSB(out, IRStmt_Dirty(di));
	if (clo_progress || clo_max > 0)
		emit_insn_count(out, min_insns);
	p->ctl0 = emit_load_ptr(out, &ctl_ptr);
	p->val0 = need_vals ? emit_load_ptr(out, &val_ptr) : IRTemp_INVALID;
}

/* insn_lower_bound += N; returns the value before */
static IRTemp emit_insn_add(IRSB *out, UInt n)
{
	IRTemp v = emit_load_ptr(out, &insn_lower_bound);
	IRTemp v2 = newIRTemp(out->tyenv, Ity_I64);
	addStmtToIRSB(out, IRStmt_WrTmp(v2, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(v), IRExpr_Const(IRConst_U64(n)))));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&insn_lower_bound), IRExpr_RdTmp(v2)));
	return v;
}

static void emit_insn_count(IRSB *out, UInt min_insns)
{
	IRDirty *di;
	IRTemp n = emit_insn_add(out, min_insns);
	IRTemp gm = newIRTemp(out->tyenv, Ity_I1);
	if (clo_max <= 0)
		return;
	addStmtToIRSB(out, IRStmt_WrTmp(gm, IRExpr_Binop(Iop_CmpLE64U, IRExpr_Const(IRConst_U64((ULong)clo_max)), IRExpr_RdTmp(n))));
	di = unsafeIRDirty_0_N(0, "sp_stop", VG_(fnptr_to_fnentry)(sp_stop), mkIRExprVec_0());
	di->guard = IRExpr_RdTmp(gm);
	addStmtToIRSB(out, IRStmt_Dirty(di));
}

static void emit_code_record(Addr key, struct sb_plan *p)
{
	/* a retranslation replaces the description the buffered executions were made with: they
	 * leave first. A new superblock has not run yet, so its description may come before
	 * executions buffered earlier (each new translation flushed them: a loop of /bin/true
	 * logged a DATA and a RESUME record per superblock of its start-up) */
	if (sp_code_known(key))
		flush_data();
	/* past --max nothing is written, but the description is kept: a child forked later
	 * records its own instructions through this translation (sp_fork_child_reset) */
	if (stopped && clo_max <= 0)
		return;
	tl_assert(p->n_ops <= LOG_CODE_MAX_OPS);
	UInt len = (UInt)(sizeof(struct log_code) + p->n_ops * sizeof(struct log_op));
	UChar *b = stopped ? VG_(malloc)("sp.code.kept", len) : sp_rec_begin(LOG_REC_CODE, len);
	struct log_code *c = (struct log_code *)b;
	c->key = key;
	c->n_ops = p->n_ops;
	c->n_roots = p->n_roots;
	VG_(memcpy)(b + sizeof(*c), p->ops, p->n_ops * sizeof(struct log_op));
	sp_code_keep(key, b, len);
	if (stopped)
		VG_(free)(b);
}

static Bool is_start_symbol(Addr a)
{
	const HChar *name;
	if (!clo_start || started)
		return False;
	return VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &name) &&
	       VG_(strcmp)(name, clo_start) == 0;
}

static IRSB *sp_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			   const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
			   IRType gWordTy, IRType hWordTy)
{
	struct sb_plan p;
	Int i = 0;
	IRSB *out = deepCopyIRSBExceptStmts(in);
	Int nt = in->tyenv->types_used;

	VG_(memset)(&p, 0, sizeof(p));
	p.out = out;
	p.last_access = -1;
	p.root_of = VG_(malloc)("sp.root", (nt + 1) * sizeof(Int));
	p.off_of = VG_(malloc)("sp.off", (nt + 1) * sizeof(Long));
	p.slot_of = VG_(malloc)("sp.slot", (nt + 1) * sizeof(Int));
	for (Int t = 0; t < nt; t++) {
		p.root_of[t] = t;
		p.off_of[t] = 0;
		p.slot_of[t] = -1;
	}
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark)
		addStmtToIRSB(out, in->stmts[i++]);
	if (i < in->stmts_used && is_start_symbol(in->stmts[i]->Ist.IMark.addr)) {
		IRDirty *di = unsafeIRDirty_0_N(1, "sp_start", VG_(fnptr_to_fnentry)(sp_start),
						mkIRExprVec_1(mkIRExpr_HWord((HWord)closure->nraddr)));
		addStmtToIRSB(out, IRStmt_Dirty(di));
	}
	UInt need_vals, min_insns, all_insns;
	sb_bounds(in, &need_vals, &min_insns, &all_insns);
	tl_assert(need_vals <= SMALL_VALS * CTL_SZ);
	emit_entry_checks(&p, need_vals, min_insns);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (!st || st->tag == Ist_NoOp)
			continue;
		plan_stmt(&p, in->tyenv, st);
		addStmtToIRSB(out, st);
	}
	/* an execution that took no side exit ran them all: counted here, where only it comes
	 * (VEX unrolls a small loop into one superblock with a side exit per copy, and the
	 * entry's count alone made --max stop 3-4x late on such loops) */
	if ((clo_progress || clo_max > 0) && all_insns > min_insns)
		emit_insn_add(out, all_insns - min_insns);
	struct log_op *end = plan_op(&p, LOG_OP_END);
	end->arg = p.n_exits;
	if (in->next->tag == Iex_Const) {
		end->val = in->next->Iex.Const.con->Ico.U64;
	} else {
		end->flags |= LOG_OPF_INDIRECT;
		emit_site_val(&p, in->next, end);
	}
	emit_ctl(&p, p.n_exits);
	tl_assert(p.n_exits < 255 && p.n_vals <= need_vals);
	emit_code_record(closure->nraddr, &p);
	VG_(free)(p.ops);
	VG_(free)(p.root_of);
	VG_(free)(p.off_of);
	VG_(free)(p.slot_of);
	return out;
}

/* ---- events ---- */

/* A forked child's stream starts afresh: its executable mappings (sp_image.c) and the
 * superblocks it inherited are described again, its value sites restart from 0 (as a reader's fresh
 * superblocks do), and its one thread is thread 1 of the new stream. Translations cannot be
 * discarded here (Valgrind forbids it inside the fork): the inherited ones stay, and sp_proc.c
 * kept a copy of each one's description. */
void sp_fork_child_reset(ThreadId tid)
{
	/* --max is each process's: a child forked after its parent reached it records its own */
	if (stopped && clo_max > 0) {
		stopped = False;
		logging = !clo_start || started;
	}
	live_threads = 1;
	sp_images_resend();
	sp_code_resend();
	VG_(memset)(site_last, 0, sizeof(site_last));	/* the slots stay the translations' */
	insn_lower_bound = 0;
	VG_(memset)(uid_of, 0, sizeof(uid_of));
	next_uid = 1;
	if (tid < SP_MAX_TID)
		uid_of[tid] = 1;
	cur_tid = tid;
	if (!stopped) {
		struct log_thread *t = (struct log_thread *)sp_rec_begin(LOG_REC_THREAD_START, sizeof(*t));
		t->tid = 1;
		t->parent = 0;
		t->time_ns = sp_now_ns();
	}
	emit_resume(tid, VG_(get_IP)(tid));
}

Bool sp_is_stopped(void)
{
	return stopped;
}

void sp_stop_logging(void)
{
	logging = False;
	stopped = True;
}

static Int exit_status = -1;	/* from exit_group, -1 before it */

static Bool must_resume = True;	/* since the thread last stopped, its pc may have moved */

static void sp_pre_syscall(ThreadId tid, UInt nr, UWord *args, UInt nargs)
{
	/* what ran before the call leaves before what the call logs (images it maps, threads
	 * it creates, its SYSCALL record) */
	flush_data();
	must_resume = True;
	/* the status the process exits with (Valgrind gives a forked child's fini 0): from
	 * exit_group, or from exit when the calling thread is the last one */
	if ((nr == __NR_exit_group || (nr == __NR_exit && live_threads <= 1)) && nargs > 0)
		exit_status = (Int)(args[0] & 0xff);
	/* execve replaces this tool instance: what it buffered leaves first, then a note that
	 * says whether a new instance follows (the recorder waits for it across the gap) */
	if (nr == __NR_execve || nr == __NR_execveat) {
		struct log_exec_note *x = (struct log_exec_note *)sp_rec_begin(LOG_PIPE_EXEC, sizeof(*x));
		x->followed = clo_children ? 1 : 0;
		x->reserved = 0;
		sp_out_write();
	}
}

/* A wait that reaped a child dead of a signal (wait4's status, waitid's siginfo): the child's
 * own EXIT record says only "killed" (no tool hook names a fatal signal, and SIGKILL leaves
 * none at all); its parent's wait knows which, as the shell's $? does. */
static void note_reaped(UInt nr, UWord *args, UInt nargs, SysRes res)
{
	Int pid = 0, st = 0;
	if (sr_isError(res))
		return;
	if (nr == __NR_wait4 && nargs >= 2 && (Long)sr_Res(res) > 0 && args[1] &&
	    VG_(am_is_valid_for_client)(args[1], sizeof(Int), VKI_PROT_READ)) {
		pid = (Int)sr_Res(res);
		st = *(const Int *)args[1];
	} else if (nr == __NR_waitid && nargs >= 3 && args[2] &&
		   VG_(am_is_valid_for_client)(args[2], 7 * sizeof(Int), VKI_PROT_READ)) {
		/* x86-64 siginfo_t: si_code at 8; si_pid at 16, si_status at 24 (CLD_KILLED 2,
		 * CLD_DUMPED 3: si_status is the signal) */
		const Int *si = (const Int *)args[2];
		if (si[2] != 2 && si[2] != 3)
			return;
		pid = si[4];
		st = (si[6] & 0x7f) | (si[2] == 3 ? 0x80 : 0);
	}
	Int sig = st & 0x7f;
	if (pid <= 0 || sig == 0 || sig == 0x7f)	/* exited, or only stopped */
		return;
	struct log_reaped *r = (struct log_reaped *)sp_rec_begin(LOG_REC_REAPED, sizeof(*r));
	r->pid = (UInt)pid;
	r->wait_status = st;
	r->time_ns = sp_now_ns();
}

static void sp_post_syscall(ThreadId tid, UInt nr, UWord *args, UInt nargs, SysRes res)
{
	if (!logging)
		return;
	flush_data();
	struct log_syscall *s = (struct log_syscall *)sp_rec_begin(LOG_REC_SYSCALL, sizeof(*s));
	s->tid = uid(tid);
	s->nr = nr;
	for (UInt k = 0; k < 6 && k < nargs; k++)
		s->args[k] = args[k];
	s->ret = sr_isError(res) ? -(Long)sr_Err(res) : (Long)sr_Res(res);
	if (nr == __NR_wait4 || nr == __NR_waitid)
		note_reaped(nr, args, nargs, res);
}

static Addr sig_resume_pc[SP_MAX_TID];

/* A signal is logged when its thread resumes at the handler (the next start_client_code):
 * pre_deliver knows the interrupted pc, only the resumed thread's pc is the handler. */
static Int sig_pending[SP_MAX_TID];

static void sp_pre_deliver_signal(ThreadId tid, Int signo, Bool alt)
{
	flush_data();
	must_resume = True;
	if (tid < SP_MAX_TID) {
		sig_resume_pc[tid] = VG_(get_IP)(tid);
		sig_pending[tid] = signo;
	}
}

static void emit_pending_signal(ThreadId tid, Addr handler)
{
	if (tid >= SP_MAX_TID || !sig_pending[tid])
		return;
	Int signo = sig_pending[tid];
	sig_pending[tid] = 0;
	if (!logging)
		return;
	struct log_signal *s = (struct log_signal *)sp_rec_begin(LOG_REC_SIGNAL, sizeof(*s));
	s->tid = uid(tid);
	s->signo = signo;
	s->handler = handler;
	s->resume_pc = sig_resume_pc[tid];
}

/* The thread that last left the client code, and its pc then. Valgrind leaves it to translate
 * a superblock or at the end of a time slice, and most often the same thread goes on where it
 * stopped: the buffered chunk stays open and no RESUME is needed (the reconstructor's pc is
 * that one). Another thread, a syscall or a signal in between, or a moved pc, closes the chunk
 * (flush_data names cur_tid, whose executions it holds) and says where the thread resumes. */
static ThreadId stop_tid;
static Addr stop_pc;

static void sp_start_client_code(ThreadId tid, ULong blocks)
{
	Addr pc = VG_(get_IP)(tid);
	if (tid != cur_tid)
		flush_data();
	cur_tid = tid;
	emit_pending_signal(tid, pc);
	if (must_resume || tid != stop_tid || pc != stop_pc)
		emit_resume(tid, pc);
	must_resume = False;
}

static void sp_stop_client_code(ThreadId tid, ULong blocks)
{
	stop_tid = tid;
	stop_pc = VG_(get_IP)(tid);
}

static void sp_thread_create(ThreadId parent, ThreadId child)
{
	flush_data();
	live_threads++;
	if (child < SP_MAX_TID)	/* the main thread is announced with no parent */
		uid_of[child] = parent == 0 ? 1 : ++next_uid;
	if (stopped)
		return;
	struct log_thread *t = (struct log_thread *)sp_rec_begin(LOG_REC_THREAD_START, sizeof(*t));
	t->tid = uid(child);
	t->parent = uid(parent);
	t->time_ns = sp_now_ns();
}

static void sp_thread_exit(ThreadId tid)
{
	flush_data();
	if (live_threads > 0)
		live_threads--;
	if (stopped)
		return;
	struct log_thread *t = (struct log_thread *)sp_rec_begin(LOG_REC_THREAD_EXIT, sizeof(*t));
	t->tid = uid(tid);
	t->time_ns = sp_now_ns();
}

/* ---- tool plumbing ---- */

static Bool sp_process_cmd_line_option(const HChar *arg)
{
	if VG_INT_CLO(arg, "--spent-fd", clo_fd) {}
	else if VG_STR_CLO(arg, "--spent-pipe", clo_pipe) {}
	else if VG_STR_CLO(arg, "--spent-ring-dir", clo_ring_dir) {}
	else if VG_BOOL_CLO(arg, "--spent-children", clo_children) {}
	else if VG_BOOL_CLO(arg, "--spent-data", clo_data) {}
	else if VG_STR_CLO(arg, "--spent-start", clo_start) {}
	else if VG_INT_CLO(arg, "--spent-max", clo_max) {}
	else if VG_BOOL_CLO(arg, "--spent-progress", clo_progress) {}
	else
		return False;
	return True;
}

static void sp_print_usage(void)
{
	VG_(printf)("    --spent-pipe=PATH       write the log records to the FIFO PATH (every\n"
		    "                            process of the tree opens it) [or --spent-fd]\n"
		    "    --spent-fd=N            write the log records to fd N\n"
		    "    --spent-ring-dir=DIR    put the records in a ring file in DIR, mapped\n"
		    "                            shared with the recorder (the FIFO carries notes)\n"
		    "    --spent-children=yes|no trace forked children [yes]\n"
		    "    --spent-data=yes|no     log data addresses [yes]\n"
		    "    --spent-start=SYMBOL    start logging when SYMBOL is entered\n"
		    "    --spent-max=N           stop logging after about N instructions\n"
		    "    --spent-progress=yes|no count instructions for progress notes [no]\n");
}

static void sp_print_debug_usage(void)
{
}

static void sp_post_clo_init(void)
{
	if (!clo_pipe && clo_fd < 0)
		VG_(fmsg_bad_option)("--spent-pipe", "the spent tool is run by `spent trace`, which passes its FIFO\n");
	if (!sp_out_open(clo_pipe, clo_pipe ? -1 : clo_fd, clo_ring_dir))
		VG_(fmsg_bad_option)("--spent-pipe", "cannot open the recorder's FIFO\n");
	sp_proc_init(clo_children);
	if (clo_start) {
		logging = False;
		started = False;
	}
	/* every tool instance starts a stream: the command, or a program a child exec'd */
	sp_emit_process(LOG_PROC_EXEC);
	sp_out_write();
}

static void sp_fini(Int exitcode)
{
	flush_data();
	struct log_exit *e = (struct log_exit *)sp_rec_begin(LOG_REC_EXIT, sizeof(*e));
	/* no exit_group: a fatal signal ended the process (fini's 0 said it exited 0) */
	(void)exitcode;
	e->status = exit_status >= 0 ? exit_status : LOG_EXIT_KILLED;
	e->time_ns = sp_now_ns();
	sp_out_write();
	sp_out_close();
}

static void sp_pre_clo_init(void)
{
	VG_(details_name)("spent");
	VG_(details_version)(NULL);
	VG_(details_description)("PatchWrx-style execution logs for spent trace");
	VG_(details_copyright_author)("spent authors");
	VG_(details_bug_reports_to)("the spent project");
	VG_(details_avg_translation_sizeB)(400);
	VG_(basic_tool_funcs)(sp_post_clo_init, sp_instrument, sp_fini);
	VG_(needs_command_line_options)(sp_process_cmd_line_option, sp_print_usage, sp_print_debug_usage);
	VG_(needs_syscall_wrapper)(sp_pre_syscall, sp_post_syscall);
	VG_(track_new_mem_startup)(sp_new_mem_startup);
	VG_(track_new_mem_mmap)(sp_new_mem_mmap);
	VG_(track_start_client_code)(sp_start_client_code);
	VG_(track_stop_client_code)(sp_stop_client_code);
	VG_(track_pre_deliver_signal)(sp_pre_deliver_signal);
	VG_(track_pre_thread_ll_create)(sp_thread_create);
	VG_(track_pre_thread_ll_exit)(sp_thread_exit);
}

VG_DETERMINE_INTERFACE_VERSION(sp_pre_clo_init)
