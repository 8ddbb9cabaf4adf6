/* citcat/cpuid_sites.c - where an ELF file's cpuid instructions are: the file offsets of every
 * `0f a2` in its executable segments that a decoder confirms as a cpuid instruction.
 *
 * Bytes 0f a2 also occur inside other instructions (an immediate, a displacement), and
 * overwriting one of those would corrupt the program, so a match is confirmed only by
 * decoding forward from a known instruction boundary and landing exactly on it. The nearest
 * boundary at or before the match is the start of its enclosing function's CFI range (the
 * .eh_frame FDE, via libdw), or, for code without CFI (hand-written assembly), the greatest
 * of: the end of the previous FDE, the previous function/label symbol, the start of its
 * executable section or segment. Padding between functions (nops, int3) decodes, so a sweep
 * from there resynchronises. Matches that do not confirm are counted, never patched. */
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "citcat/cpuid_patch.h"
#include "core/alloc.h"

#define MAX_SWEEP (1u << 20)	/* bytes decoded towards one match at most */

struct seg {
	uint64_t vaddr, off, len;
};

struct scan {
	Elf *elf;
	const uint8_t *data;
	size_t len;
	struct seg *segs;
	size_t nsegs;
	Dwarf_CFI *cfi;
	int cfi_tried;
	uint64_t *fde_starts;	/* initial locations from .eh_frame_hdr, sorted */
	size_t nfde;
	uint64_t *bounds;	/* symbol values and executable section starts, sorted */
	size_t nbounds;
	ZydisDecoder dec;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Greatest element <= V of the sorted array A (N elements), or 0 with *FOUND false. */
static uint64_t floor_u64(const uint64_t *a, size_t n, uint64_t v, int *found)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo > 0;
	return lo ? a[lo - 1] : 0;
}

static int push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (ALLOC_GROW(*a, *n + 1, *cap))
		return -ENOMEM;
	(*a)[(*n)++] = v;
	return 0;
}

static int load_segments(struct scan *s)
{
	size_t phnum;
	if (elf_getphdrnum(s->elf, &phnum))
		return -EINVAL;
	s->segs = calloc(phnum ? phnum : 1, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(s->elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset > s->len || ph.p_filesz > s->len - ph.p_offset)
			continue;	/* a truncated file: only what it holds */
		s->segs[s->nsegs++] = (struct seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	return 0;
}

/* Symbols (functions and untyped labels) and executable section starts: boundaries. */
static int load_bounds(struct scan *s)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(s->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && push_u64(&s->bounds, &s->nbounds, &cap, sh.sh_addr))
			return -ENOMEM;
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE)
				continue;
			int t = GELF_ST_TYPE(sym.st_info);
			if ((t == STT_FUNC || t == STT_NOTYPE) &&
			    push_u64(&s->bounds, &s->nbounds, &cap, sym.st_value))
				return -ENOMEM;
		}
	}
	if (s->nbounds)
		qsort(s->bounds, s->nbounds, sizeof(*s->bounds), cmp_u64);
	return 0;
}

/* The file bytes at vaddr V..V+N inside executable segment SEG, or NULL. */
static const uint8_t *seg_bytes(const struct scan *s, const struct seg *g, uint64_t v)
{
	if (v < g->vaddr || v >= g->vaddr + g->len)
		return NULL;
	return s->data + g->off + (v - g->vaddr);
}

/* FDE initial locations from the .eh_frame_hdr search table (the encoding every GNU and LLVM
 * linker writes: datarel sdata4); none when absent or encoded otherwise. */
static int load_fde_starts(struct scan *s)
{
	size_t phnum;
	if (elf_getphdrnum(s->elf, &phnum))
		return 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(s->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_offset > s->len || ph.p_filesz > s->len - ph.p_offset || ph.p_filesz < 12)
			return 0;
		const uint8_t *h = s->data + ph.p_offset;
		/* version 1, eh_frame_ptr enc, fde_count enc (udata4), table enc (datarel sdata4) */
		if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
			return 0;
		size_t ptrlen = (h[1] & 0x0f) == 0x0b || (h[1] & 0x0f) == 0x03 ? 4 : 8;
		if (4 + ptrlen + 4 > ph.p_filesz)
			return 0;
		uint32_t count;
		memcpy(&count, h + 4 + ptrlen, 4);
		size_t table = 4 + ptrlen + 4;
		if (count > (ph.p_filesz - table) / 8)
			return 0;
		s->fde_starts = malloc((count ? count : 1) * sizeof(uint64_t));
		if (!s->fde_starts)
			return -ENOMEM;
		for (uint32_t k = 0; k < count; k++) {
			int32_t rel;
			memcpy(&rel, h + table + (size_t)k * 8, 4);
			s->fde_starts[k] = ph.p_vaddr + (uint64_t)(int64_t)rel;
		}
		s->nfde = count;
		qsort(s->fde_starts, s->nfde, sizeof(uint64_t), cmp_u64);
		return 0;
	}
	return 0;
}

/* [*START, *END) of the FDE covering V: 0, or -ENOENT. */
static int fde_range(struct scan *s, uint64_t v, uint64_t *start, uint64_t *end)
{
	if (!s->cfi_tried) {
		s->cfi_tried = 1;
		s->cfi = dwarf_getcfi_elf(s->elf);
	}
	Dwarf_Frame *fr = NULL;
	if (!s->cfi || dwarf_cfi_addrframe(s->cfi, v, &fr) != 0)
		return -ENOENT;
	Dwarf_Addr a = 0, b = 0;
	bool sig;
	int ok = dwarf_frame_info(fr, &a, &b, &sig) >= 0;
	free(fr);
	if (!ok || a > v || b <= v)
		return -ENOENT;
	*start = a;
	*end = b;
	return 0;
}

/* The nearest known instruction boundary at or before V, for code no FDE covers. */
static uint64_t boundary_without_cfi(struct scan *s, const struct seg *g, uint64_t v)
{
	uint64_t best = g->vaddr;
	int found;
	uint64_t b = floor_u64(s->bounds, s->nbounds, v, &found);
	if (found && b > best)
		best = b;
	uint64_t f = floor_u64(s->fde_starts, s->nfde, v, &found);
	uint64_t fs, fe;
	if (found && fde_range(s, f, &fs, &fe) == 0 && fe <= v && fe > best)
		best = fe;
	return best;
}

/* 1 when decoding from FROM lands on a cpuid at V, 0 when it does not. */
static int decodes_to_cpuid(struct scan *s, const struct seg *g, uint64_t from, uint64_t v)
{
	if (v - from > MAX_SWEEP)
		return 0;
	uint64_t end = g->vaddr + g->len;
	for (uint64_t pc = from; pc < v;) {
		const uint8_t *p = seg_bytes(s, g, pc);
		ZydisDecodedInstruction in;
		if (!p || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&s->dec, NULL, p, end - pc, &in)))
			return 0;	/* not code the decoder follows: unconfirmed */
		pc += in.length;
		if (pc > v)
			return 0;	/* the match is inside another instruction */
	}
	const uint8_t *p = seg_bytes(s, g, v);
	ZydisDecodedInstruction in;
	return p && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&s->dec, NULL, p, end - v, &in)) &&
	       in.mnemonic == ZYDIS_MNEMONIC_CPUID;
}

static int scan_segment(struct scan *s, const struct seg *g, struct cc_cpuid_sites *out,
			size_t *cap)
{
	const uint8_t *base = s->data + g->off;
	for (uint64_t i = 0; i + 1 < g->len; i++) {
		const uint8_t *m = memchr(base + i, 0x0f, g->len - 1 - i);
		if (!m)
			break;
		i = (uint64_t)(m - base);
		if (m[1] != 0xa2)
			continue;
		uint64_t v = g->vaddr + i, fs, fe;
		uint64_t from = fde_range(s, v, &fs, &fe) == 0 ? fs : boundary_without_cfi(s, g, v);
		if (from < g->vaddr || !decodes_to_cpuid(s, g, from, v)) {
			out->unconfirmed++;
			continue;
		}
		if (push_u64(&out->offsets, &out->n, cap, g->off + i))
			return -ENOMEM;
	}
	return 0;
}

int cc_cpuid_find_sites(const uint8_t *data, size_t len, struct cc_cpuid_sites *out)
{
	struct scan s;
	size_t cap = 0;
	int err;
	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	elf_version(EV_CURRENT);
	s.data = data;
	s.len = len;
	s.elf = elf_memory((char *)data, len);
	GElf_Ehdr eh;
	if (!s.elf || !gelf_getehdr(s.elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64) {
		err = -ENOEXEC;
		goto out;
	}
	ZydisDecoderInit(&s.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	err = load_segments(&s);
	err = err ? err : load_bounds(&s);
	err = err ? err : load_fde_starts(&s);
	for (size_t i = 0; i < s.nsegs && !err; i++)
		err = scan_segment(&s, &s.segs[i], out, &cap);
out:
	if (s.cfi)
		dwarf_cfi_end(s.cfi);
	if (s.elf)
		elf_end(s.elf);
	free(s.segs);
	free(s.fde_starts);
	free(s.bounds);
	if (err) {
		free(out->offsets);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

void cc_cpuid_sites_release(struct cc_cpuid_sites *s)
{
	free(s->offsets);
	memset(s, 0, sizeof(*s));
}
