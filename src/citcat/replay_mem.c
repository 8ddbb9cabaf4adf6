/* citcat/replay_mem.c - the replayer's memory: the files the recording maps loaded (from their
 * copies in the recording, or from their paths after checking size and content hash), and
 * MAP/MEM/UNMAP/ZERO records applied to the simulator's address space. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "citcat/recdir.h"
#include "citcat/replay_int.h"
#include "citcat/replay_mem.h"

#define PAGE 4096ULL

/* The content of the copied file F from rp->dir/files, verified. 0 or -errno with rp->err. */
static int load_copy(struct citcat_replay *rp, const struct cc_rec *f, uint8_t **data)
{
	size_t stored = 0;
	int err = cc_copy_read(rp->dir, f->u.file.hash, f->u.file.size, data, &stored);
	if (!err) {
		rp->copy_bytes += stored;
		return 0;
	}
	if (err == -EBADMSG)
		snprintf(rp->err, sizeof(rp->err), "the copy of '%s' in the recording (%s/%016" PRIx64
			 "%s) is corrupt: it does not hold the %" PRIu64 " bytes that were recorded",
			 f->u.file.path, CC_COPY_DIR, f->u.file.hash, CC_COPY_SUFFIX, f->u.file.size);
	else if (err == -ENOENT)
		snprintf(rp->err, sizeof(rp->err), "the copy of '%s' is missing from the recording "
			 "(%s/%016" PRIx64 "%s): the recording is incomplete", f->u.file.path,
			 CC_COPY_DIR, f->u.file.hash, CC_COPY_SUFFIX);
	else
		snprintf(rp->err, sizeof(rp->err), "the copy of '%s' in the recording (%s/%016" PRIx64
			 "%s) cannot be read: %s", f->u.file.path, CC_COPY_DIR, f->u.file.hash,
			 CC_COPY_SUFFIX, strerror(-err));
	return err;
}

/* The content of the uncopied file F at its path, which must not have changed since. */
static int load_checked(struct citcat_replay *rp, const struct cc_rec *f, uint8_t **data)
{
	size_t len = 0;
	int err = binio_read_file(f->u.file.path, (size_t)8 << 30, data, &len);
	if (err) {
		snprintf(rp->err, sizeof(rp->err), "'%s' (read by the recorded run) cannot be "
			 "read: %s: replay needs the same files", f->u.file.path, strerror(-err));
		return -ENOENT;
	}
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, *data, len);
	if (len != f->u.file.size || h != f->u.file.hash) {
		snprintf(rp->err, sizeof(rp->err), "'%s' changed since it was recorded (%zu bytes, "
			 "recorded %" PRIu64 "%s): restore it or record again", f->u.file.path, len,
			 f->u.file.size, len == f->u.file.size ? ", different content" : "");
		free(*data);
		*data = NULL;
		return -ESTALE;
	}
	return 0;
}

int cc_replay_check_files(struct citcat_replay *rp)
{
	const struct cc_recording *r = rp->rec;
	size_t maxid = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].kind == CC_REC_FILE && r->recs[i].u.file.id > maxid)
			maxid = r->recs[i].u.file.id;
	if (maxid > r->n)
		return snprintf(rp->err, sizeof(rp->err), "file ids out of range"), -EBADMSG;
	rp->file_data = calloc(maxid + 1, sizeof(*rp->file_data));
	rp->file_len = calloc(maxid + 1, sizeof(*rp->file_len));
	if (!rp->file_data || !rp->file_len)
		return -ENOMEM;
	rp->nfile = maxid + 1;
	for (size_t i = 0; i < r->n; i++) {
		const struct cc_rec *f = &r->recs[i];
		uint8_t *data = NULL;
		if (f->kind != CC_REC_FILE || !(f->u.file.flags & (CC_FILE_COPY | CC_FILE_CHECK)))
			continue;	/* only opened: its bytes are in the read records */
		int err = f->u.file.flags & CC_FILE_COPY ? load_copy(rp, f, &data) :
			  load_checked(rp, f, &data);
		if (err)
			return err;
		free(rp->file_data[f->u.file.id]);
		rp->file_data[f->u.file.id] = data;
		rp->file_len[f->u.file.id] = f->u.file.size;
	}
	return 0;
}

/* Unmap whatever part of [start, start+len) is mapped. */
static int unmap_range(uc_engine *uc, uint64_t start, uint64_t len)
{
	uc_mem_region *regs = NULL;
	uint32_t n = 0;
	if (uc_mem_regions(uc, &regs, &n) != UC_ERR_OK)
		return -ENOMEM;
	uint64_t end = start + len;
	int err = 0;
	for (uint32_t i = 0; i < n && !err; i++) {
		uint64_t s = regs[i].begin, e = regs[i].end + 1;
		uint64_t a = s > start ? s : start, b = e < end ? e : end;
		if (a < b && uc_mem_unmap(uc, a, b - a) != UC_ERR_OK)
			err = -EINVAL;
	}
	uc_free(regs);
	return err;
}

static int region_cmp(const void *a, const void *b)
{
	const uc_mem_region *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Map the parts of [start, start+len) not mapped yet, one call per gap between the regions
 * (page by page, a recording's huge brk range took hours). */
static int map_holes(uc_engine *uc, uint64_t start, uint64_t len)
{
	uc_mem_region *regs = NULL;
	uint32_t n = 0;
	uint64_t p = start, end = start + len;
	int err = 0;
	if (uc_mem_regions(uc, &regs, &n) != UC_ERR_OK)
		return -ENOMEM;
	if (n)
		qsort(regs, n, sizeof(*regs), region_cmp);
	for (uint32_t i = 0; i < n && p < end && !err; i++) {
		uint64_t b = regs[i].begin, e = regs[i].end + 1;
		if (e <= p || b >= end)
			continue;
		if (b > p && uc_mem_map(uc, p, b - p, UC_PROT_ALL) != UC_ERR_OK)
			err = -ENOMEM;
		p = e;
	}
	if (!err && p < end && uc_mem_map(uc, p, end - p, UC_PROT_ALL) != UC_ERR_OK)
		err = -ENOMEM;
	uc_free(regs);
	return err;
}

static int apply_map(struct citcat_replay *rp, const struct cc_rec *m, int initial)
{
	uc_engine *uc = rp->uc;
	uint64_t s = m->u.map.start, len = m->u.map.len;
	if (m->u.map.kind == CC_MAP_BRK ? map_holes(uc, s, len) :
	    unmap_range(uc, s, len) || uc_mem_map(uc, s, len, UC_PROT_ALL) != UC_ERR_OK) {
		snprintf(rp->err, sizeof(rp->err), "cannot map [%#" PRIx64 ", %#" PRIx64 ") in the "
			 "simulator", s, s + len);
		return -ENOMEM;
	}
	if (m->u.map.kind == CC_MAP_STACK && initial) {
		/* the kernel grows the stack on demand; the simulator maps 8 MB below it now */
		for (uint64_t ext = 8ULL << 20; ext >= PAGE && ext <= s; ext >>= 1)
			if (uc_mem_map(uc, s - ext, ext, UC_PROT_ALL) == UC_ERR_OK)
				break;
	}
	if (m->u.map.kind != CC_MAP_FILE)
		return 0;
	uint64_t id = m->u.map.file_id, off = m->u.map.offset;
	if (id >= rp->nfile)
		return -EBADMSG;
	if (off >= rp->file_len[id])
		return 0;
	uint64_t n = rp->file_len[id] - off < len ? rp->file_len[id] - off : len;
	if (uc_mem_write(uc, s, rp->file_data[id] + off, n) != UC_ERR_OK)
		return -EFAULT;
	return (m->u.map.prot & 4) ? cc_replay_fxsave_scan(rp, s, rp->file_data[id] + off, n) : 0;
}

/* The mapped parts of [s, s+len) read as zeros again; unmapped pages stay unmapped. Each part
 * is mapped afresh (a page-by-page walk of a huge range took hours, and writing zeros over a
 * huge mapping would make the simulator's memory real). */
static int zero_range(uc_engine *uc, uint64_t s, uint64_t len)
{
	uc_mem_region *regs = NULL;
	uint32_t n = 0;
	uint64_t end = s + len;
	int err = 0;
	if (uc_mem_regions(uc, &regs, &n) != UC_ERR_OK)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && !err; i++) {
		uint64_t a = regs[i].begin > s ? regs[i].begin : s;
		uint64_t b = regs[i].end + 1 < end ? regs[i].end + 1 : end;
		if (a < b && (uc_mem_unmap(uc, a, b - a) != UC_ERR_OK ||
			      uc_mem_map(uc, a, b - a, UC_PROT_ALL) != UC_ERR_OK))
			err = -ENOMEM;
	}
	uc_free(regs);
	return err;
}

int cc_replay_apply(struct citcat_replay *rp, const struct cc_rec *m, int initial)
{
	switch (m->kind) {
	case CC_REC_MAP:
		return apply_map(rp, m, initial);
	case CC_REC_MEM:
		if (uc_mem_write(rp->uc, m->u.mem.addr, m->u.mem.bytes, m->u.mem.len) != UC_ERR_OK) {
			snprintf(rp->err, sizeof(rp->err), "the recording writes %" PRIu64 " bytes at "
				 "unmapped %#" PRIx64, m->u.mem.len, m->u.mem.addr);
			return -EFAULT;
		}
		return 0;
	case CC_REC_UNMAP:
		return unmap_range(rp->uc, m->u.range.start, m->u.range.len);
	case CC_REC_ZERO:
		return zero_range(rp->uc, m->u.range.start, m->u.range.len);
	default:
		return 0;
	}
}

static const int uc_regs_order[CC_NREGS] = {
	UC_X86_REG_R15, UC_X86_REG_R14, UC_X86_REG_R13, UC_X86_REG_R12, UC_X86_REG_RBP,
	UC_X86_REG_RBX, UC_X86_REG_R11, UC_X86_REG_R10, UC_X86_REG_R9, UC_X86_REG_R8,
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI, UC_X86_REG_RDI,
	-1 /* orig_rax */, UC_X86_REG_RIP, -1 /* cs */, UC_X86_REG_EFLAGS, UC_X86_REG_RSP,
	-1 /* ss */, UC_X86_REG_FS_BASE, UC_X86_REG_GS_BASE, -1, -1, -1, -1,
};

int cc_replay_set_regs(struct citcat_replay *rp, const uint64_t *v, bool with_rip)
{
	for (int i = 0; i < CC_NREGS; i++) {
		if (uc_regs_order[i] < 0 || (!with_rip && uc_regs_order[i] == UC_X86_REG_RIP))
			continue;
		uint64_t x = v[i];
		if (uc_reg_write(rp->uc, uc_regs_order[i], &x) != UC_ERR_OK)
			return -EINVAL;
	}
	return 0;
}
