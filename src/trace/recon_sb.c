/* trace/recon_sb.c - the reconstructor's superblock descriptions: checking a LOG_REC_CODE
 * record, setting each instruction's TRACE_INSN_* flags from the recorded images (Zydis, cached
 * by image + offset), compiling the per-exit templates the fast replay copies, and the table
 * of superblocks by key (a retranslation replaces and frees the older description). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/decode.h"
#include "trace/recon_internal.h"

static int sb_insert(struct recon *r, struct recon_sb *sb)
{
	if (r->p.n_sb * 2 >= r->p.tab_cap) {
		size_t ncap = r->p.tab_cap ? 2 * r->p.tab_cap : 4096;
		struct recon_sb **nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; i < r->p.tab_cap; i++) {
			struct recon_sb *s = r->p.tab[i], *nx;
			for (; s; s = nx) {
				nx = s->next;
				size_t k = recon_sb_slot(s->key, ncap);
				s->next = nt[k];
				nt[k] = s;
			}
		}
		free(r->p.tab);
		r->p.tab = nt;
		r->p.tab_cap = ncap;
	}
	struct recon_sb **pp = &r->p.tab[recon_sb_slot(sb->key, r->p.tab_cap)];
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == sb->key) {	/* retranslation replaces */
			struct recon_sb *old = *pp;
			sb->next = old->next;
			*pp = sb;
			old->next = r->dead;	/* the batch's executions may point to it */
			r->dead = old;
			r->p.sb_gen++;
			r->p.prev_succ = NULL;
			return 0;
		}
	}
	sb->next = NULL;
	*pp = sb;
	r->p.n_sb++;
	return 0;
}

/* Flags of the instruction at PC from the recorded images (0 when its bytes are unknown). */
static uint16_t insn_flags(struct recon *r, uint64_t pc, uint16_t len)
{
	for (size_t i = r->p.n_img; i-- > 0;) {
		struct recon_image *im = &r->p.img[i];
		if (pc < im->start || pc - im->start >= im->len || !im->bytes)
			continue;
		uint64_t off = pc - im->start + im->offset;
		if (off >= im->n_bytes)
			return 0;
		size_t avail = im->n_bytes - off < 16 ? (size_t)(im->n_bytes - off) : 16;
		struct decoded_insn d;
		if (decode_insn(r->dc, (r->p.stream << 20) ^ (uint32_t)i, off, im->bytes + off, avail, &d) < 0)
			return 0;
		if (d.len != len) {
			r->decode_mismatches++;
			return 0;
		}
		return d.flags;
	}
	return 0;
}

/* An op that logs a value. */
static int is_site(const struct log_op *o)
{
	if (o->kind == LOG_OP_ACCESS)
		return (o->flags & (LOG_OPF_FIRST | LOG_OPF_GUARDED)) != 0 && !(o->flags & LOG_OPF_CONST);
	return o->kind == LOG_OP_END && (o->flags & LOG_OPF_INDIRECT);
}

static int check_ops(const struct log_op *ops, uint32_t n, uint32_t n_roots)
{
	uint32_t exits = 0;
	if (n == 0 || ops[0].kind != LOG_OP_IMARK || ops[n - 1].kind != LOG_OP_END)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct log_op *o = &ops[i];
		switch (o->kind) {
		case LOG_OP_IMARK:
			if (o->size == 0 || o->size > 32)
				return -1;
			break;
		case LOG_OP_ACCESS:
			if (!(o->flags & LOG_OPF_CONST) && o->arg >= n_roots)
				return -1;
			if (o->size == 0 || o->size > LOG_ACCESS_MAX)
				return -1;
			break;
		case LOG_OP_EXIT:
			if (o->arg != exits++)
				return -1;
			break;
		case LOG_OP_END:
			if (i != n - 1 || o->arg != exits || exits > 254)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static uint8_t ref_kind(const struct log_op *o)
{
	if ((o->flags & LOG_OPF_READ) && (o->flags & LOG_OPF_WRITE))
		return SPENT_TRACE_REF_MODIFY;
	return (o->flags & LOG_OPF_WRITE) ? SPENT_TRACE_REF_WRITE : SPENT_TRACE_REF_READ;
}

/* Fill the fast-replay tables of a checked superblock; leaves sb->fast 0 when it has a guarded
 * access (its references depend on the logged guards) or an instruction with over 255. */
static void sb_compile(struct recon_sb *sb)
{
	uint32_t ins = 0, nacc = 0, ns = 0, nx = 0;
	struct spent_trace_insn *cur = NULL;
	sb->fast = 0;
	for (uint32_t i = 0; i < sb->n_ops; i++) {
		const struct log_op *o = &sb->ops[i];
		struct recon_exit *x = NULL;
		switch (o->kind) {
		case LOG_OP_IMARK:
			cur = &sb->tmpl[ins++];
			memset(cur, 0, sizeof(*cur));
			cur->pc = o->val;
			cur->len = (uint8_t)o->size;
			cur->flags = sb->iflags[i];
			cur->ref0 = nacc;
			break;
		case LOG_OP_ACCESS: {
			if ((o->flags & LOG_OPF_GUARDED) || cur->nrefs == 255)
				return;
			struct recon_acc *a = &sb->acc[nacc++];
			int cst = (o->flags & LOG_OPF_CONST) != 0;
			a->off = o->val;
			a->root = cst ? RECON_ROOT_ZERO : o->arg;
			a->size = o->size;
			a->kind = ref_kind(o);
			if ((o->flags & LOG_OPF_FIRST) && !cst)
				sb->sites[ns++] = (struct recon_site){ o->arg, (o->flags & LOG_OPF_RAW) != 0 };
			cur->nrefs++;
			break;
		}
		case LOG_OP_EXIT:
			x = &sb->exits[nx++];
			break;
		default:	/* END */
			if (o->flags & LOG_OPF_INDIRECT)
				sb->sites[ns++] = (struct recon_site){ RECON_ROOT_NONE,
								       (o->flags & LOG_OPF_RAW) != 0 };
			x = &sb->exits[nx++];
			break;
		}
		if (x) {
			memset(&x->succ, 0, sizeof(x->succ));
			x->n_insns = ins;
			x->n_refs = nacc;
			x->n_sites = ns;
			x->last_nrefs = cur->nrefs;
			x->target = o->val;
		}
	}
	sb->n_exits = nx - 1;
	sb->fast = 1;
}

int recon_on_code(struct recon *r, const struct log_record *rec)
{
	struct log_code c;
	if (rec->len < sizeof(c))
		return recon_fail(r, -EBADMSG, "corrupt log: short superblock record in block at byte %llu",
			     (unsigned long long)rec->block_offset);
	memcpy(&c, rec->payload, sizeof(c));
	if (c.n_ops == 0 || c.n_ops > LOG_CODE_MAX_OPS || c.n_roots > c.n_ops ||
	    rec->len != sizeof(c) + (size_t)c.n_ops * sizeof(struct log_op))
		return recon_fail(r, -EBADMSG, "corrupt log: superblock record for 0x%llx has bad sizes "
			     "(block at byte %llu)", (unsigned long long)c.key,
			     (unsigned long long)rec->block_offset);
	const struct log_op *src_ops = (const struct log_op *)(rec->payload + sizeof(c));
	uint32_t n_sites = 0, n_imarks = 0, n_acc = 0, n_exits = 0;
	for (uint32_t i = 0; i < c.n_ops; i++) {
		struct log_op o;
		memcpy(&o, &src_ops[i], sizeof(o));
		n_sites += is_site(&o);
		n_imarks += o.kind == LOG_OP_IMARK;
		n_acc += o.kind == LOG_OP_ACCESS;
		n_exits += o.kind == LOG_OP_EXIT || o.kind == LOG_OP_END;
	}
	/* one allocation; what the fast replay reads on every execution (values, exits,
	 * accesses, sites) right after the header, so a superblock's hot state spans few host
	 * cache lines; the ops, templates and flags (read when it is described, on the slow path,
	 * or once per sink) after it. Parts 8-byte aligned. */
	size_t sz_last = n_sites * sizeof(uint64_t), sz_exits = n_exits * sizeof(struct recon_exit);
	size_t sz_acc = n_acc * sizeof(struct recon_acc);
	size_t sz_sites = (n_sites * sizeof(struct recon_site) + 7) & ~(size_t)7;
	size_t sz_ops = c.n_ops * sizeof(struct log_op), sz_tmpl = n_imarks * sizeof(struct spent_trace_insn);
	struct recon_sb *sb = malloc(sizeof(*sb) + sz_last + sz_exits + sz_acc + sz_sites + sz_ops + sz_tmpl +
				     c.n_ops * sizeof(uint16_t));
	if (!sb)
		return -ENOMEM;
	sb->key = c.key;
	sb->id = ++r->n_sb_ids ? r->n_sb_ids : 0;	/* 0 after 2^32 descriptions: none */
	sb->n_ops = c.n_ops;
	sb->n_roots = c.n_roots;
	sb->n_sites = n_sites;
	char *part = (char *)(sb + 1);
	sb->last = (uint64_t *)part;
	sb->exits = (struct recon_exit *)(part += sz_last);
	sb->acc = (struct recon_acc *)(part += sz_exits);
	sb->sites = (struct recon_site *)(part += sz_acc);
	sb->ops = (struct log_op *)(part += sz_sites);
	sb->tmpl = (struct spent_trace_insn *)(part += sz_ops);
	sb->iflags = (uint16_t *)(part + sz_tmpl);
	memset(sb->last, 0, n_sites * sizeof(uint64_t));
	memcpy(sb->ops, src_ops, c.n_ops * sizeof(struct log_op));
	if (check_ops(sb->ops, sb->n_ops, sb->n_roots) < 0) {
		free(sb);
		return recon_fail(r, -EBADMSG, "corrupt log: superblock record for 0x%llx has invalid ops "
			     "(block at byte %llu)", (unsigned long long)c.key,
			     (unsigned long long)rec->block_offset);
	}
	sb->n_imarks = n_imarks;
	memset(&sb->succ, 0, sizeof(sb->succ));
	for (uint32_t i = 0; i < sb->n_ops; i++)
		sb->iflags[i] = sb->ops[i].kind == LOG_OP_IMARK ?
			insn_flags(r, sb->ops[i].val, sb->ops[i].size) : 0;
	sb_compile(sb);
	return sb_insert(r, sb);
}

int recon_keep_code(struct recon *r, const struct log_record *rec)
{
	uint64_t off;
	if (ALLOC_GROW(r->codes, r->n_codes + 1, r->cap_codes))
		return -ENOMEM;
	int err = log_code_copies_add(&r->code_copies, rec->payload, rec->len, &off);
	if (err < 0)
		return err;
	r->codes[r->n_codes++] = (struct recon_code){ off, rec->len };
	return 0;
}

int recon_on_code_same(struct recon *r, const struct log_record *rec)
{
	struct log_code_same s;
	if (rec->len != sizeof(s))
		return recon_fail(r, -EBADMSG, "corrupt log: repeated superblock record of %u bytes in "
			     "block at byte %llu", rec->len, (unsigned long long)rec->block_offset);
	memcpy(&s, rec->payload, sizeof(s));
	if (!r->keep_codes || s.reserved || s.index >= r->n_codes || r->codes[s.index].off == UINT64_MAX)
		return recon_fail(r, -EBADMSG, "corrupt log: a repeated superblock record names superblock "
			     "record %u, which the log does not hold (block at byte %llu)", s.index,
			     (unsigned long long)rec->block_offset);
	struct log_record code = *rec;
	code.type = LOG_REC_CODE;
	code.payload = r->code_copies.bytes + r->codes[s.index].off;
	code.len = r->codes[s.index].len;
	return recon_on_code(r, &code);
}
