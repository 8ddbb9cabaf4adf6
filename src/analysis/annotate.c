/* analysis/annotate.c - decode a function with Zydis (decoder + Intel formatter), place each
 * event's samples on the instructions and attach file:line from the symbols. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "core/alloc.h"
#include "core/symtable.h"
#include "analysis/annotate.h"

void annotate_free(struct annotate *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->ninsns; i++)
		free(a->insns[i].counts);
	free(a->insns);
	free(a->fn_totals);
	free(a);
}

static uint64_t samples_in(const struct spent_profile *p, uint32_t img, const uint32_t *evs, size_t nev,
			   uint64_t start, uint64_t size)
{
	uint64_t t = 0;
	for (size_t e = 0; e < nev; e++) {
		struct spent_profile_count *c = NULL;
		size_t n = 0;
		spent_profile_counts(p, img, evs[e], &c, &n);
		for (size_t i = 0; i < n; i++)
			if (c[i].offset >= start && c[i].offset - start < size)
				t += c[i].count;
		free(c);
	}
	return t;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* "IMAGE+0xOFF", as the report names samples of code no symbol covers (a stripped binary):
 * the image by its file name, and the run of sampled instructions around OFF (samples less
 * than 64 bytes apart) from the first of them: each is an instruction's start, so decoding
 * from there is sound. 0 with *IMG, *START, *SIZE; -ENOENT; -ENOMEM. */
static int sampled_region(const struct spent_profile *p, const char *name, const uint32_t *evs,
			  size_t nev, long *img, uint64_t *start, uint64_t *size)
{
	const char *plus = strrchr(name, '+');
	char *end;
	if (!plus || strncmp(plus, "+0x", 3) || !plus[3])
		return -ENOENT;
	uint64_t off = strtoull(plus + 3, &end, 16);
	if (*end)
		return -ENOENT;
	size_t blen = (size_t)(plus - name);
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		const char *path = spent_profile_image_get(p, i)->path, *bn = strrchr(path, '/');
		bn = bn ? bn + 1 : path;
		if (strlen(bn) != blen || strncmp(bn, name, blen))
			continue;
		uint64_t *offs = NULL;
		size_t n = 0, cap = 0;
		for (size_t e = 0; e < nev; e++) {
			struct spent_profile_count *c = NULL;
			size_t k = 0;
			spent_profile_counts(p, i, evs[e], &c, &k);
			for (size_t j = 0; j < k; j++)
				if (c[j].count && !ALLOC_GROW(offs, n + 1, cap))
					offs[n++] = c[j].offset;
			free(c);
		}
		if (n)
			qsort(offs, n, sizeof(*offs), u64_cmp);
		size_t at = 0;
		while (at < n && offs[at] < off)
			at++;
		if (at == n || offs[at] != off) {
			free(offs);
			continue;	/* no sample there: not a name the report printed */
		}
		size_t lo = at, hi = at;
		while (lo > 0 && offs[lo] - offs[lo - 1] < 64)
			lo--;
		while (hi + 1 < n && offs[hi + 1] - offs[hi] < 64)
			hi++;
		*img = i;
		*start = offs[lo];
		*size = offs[hi] - offs[lo] + 16;	/* the last sampled instruction whole */
		free(offs);
		return 0;
	}
	return -ENOENT;
}

static int decode(struct annotate *a, struct symbols *sym, const struct spent_profile_image *img,
		  const uint8_t *code)
{
	ZydisDecoder dec;
	ZydisFormatter fmt;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL);
	size_t cap = 0;
	for (uint64_t off = 0; off < a->size;) {
		if (ALLOC_GROW(a->insns, a->ninsns + 1, cap))
			return -ENOMEM;
		struct annotate_insn *x = &a->insns[a->ninsns];
		memset(x, 0, sizeof(*x));
		x->offset = a->start + off;
		if (!(x->counts = calloc(a->nevents, sizeof(uint64_t))))
			return -ENOMEM;
		if (ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, a->size - off, &in, ops))) {
			x->len = in.length;
			ZydisFormatterFormatInstruction(&fmt, &in, ops, in.operand_count_visible, x->text,
							sizeof(x->text), x->offset, NULL);
		} else {
			x->len = 1;
			snprintf(x->text, sizeof(x->text), "(bad) .byte 0x%02x", code[off]);
		}
		struct sym_info si;
		if (symbols_lookup(sym, img, x->offset, &si) == 0) {
			x->file = si.file;
			x->line = si.line;
		}
		off += x->len;
		a->ninsns++;
	}
	return 0;
}

static void place_counts(struct annotate *a, const struct spent_profile *p, const uint32_t *evs)
{
	for (size_t e = 0; e < a->nevents; e++) {
		struct spent_profile_count *c = NULL;
		size_t n = 0, k = 0;
		spent_profile_counts(p, a->image, evs[e], &c, &n);
		for (size_t i = 0; i < n; i++) {
			if (c[i].offset < a->start || c[i].offset - a->start >= a->size)
				continue;
			a->fn_totals[e] += c[i].count;
			while (k < a->ninsns && a->insns[k].offset < c[i].offset)
				k++;
			if (k < a->ninsns && a->insns[k].offset == c[i].offset)
				a->insns[k].counts[e] += c[i].count;
			else
				a->unattributed += c[i].count;
		}
		free(c);
	}
}

/* The size comes from the image's symbol table, which may be corrupt: an unbounded one would
 * have us read and decode gigabytes. Each decoded instruction costs about 200 bytes (its
 * text, counts, line), so 64 MiB of code is a few GB at worst, yet far above what compilers
 * emit for one function; the message says the limit, not "no memory". */
#define ANNOTATE_MAX_BYTES (64ull << 20)
#define ANNOTATE_TOO_BIG "its symbol says it is larger than 64 MiB, more than spent decodes"

int annotate_function(const struct spent_profile *p, struct symbols *sym, const char *name,
		      const uint32_t *evs, size_t nev, struct annotate **out, const char **why,
		      long *unreadable)
{
	struct annotate *a = NULL;
	uint8_t *code = NULL;
	uint64_t best = 0, bstart = 0, bsize = 0;
	long bimg = -1;
	int err;
	*why = NULL;
	*unreadable = -1;
	/* every function answering NAME in every image: the one with most samples wins (C++
	 * overloads named without parameters too: the first in the file was taken, silently) */
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		struct symtable_range *fr;
		size_t nf;
		if (symbols_find_functions(sym, spent_profile_image_get(p, i), name, &fr, &nf))
			continue;
		for (size_t k = 0; k < nf; k++) {
			uint64_t s = fr[k].start, z = fr[k].size ? fr[k].size : 256;
			uint64_t t = samples_in(p, i, evs, nev, s, z);
			if (bimg < 0 || t > best) {
				bimg = i;
				best = t;
				bstart = s;
				bsize = z;
			}
		}
		free(fr);
	}
	bool region = bimg < 0 && sampled_region(p, name, evs, nev, &bimg, &bstart, &bsize) == 0;
	if (bimg < 0) {
		/* the name may be in an image we cannot open: say which, beside "not found" (a
		 * machine-wide database nearly always has one, and its error alone read as if it
		 * were the function's) */
		for (uint32_t i = 0; i < spent_profile_nimages(p) && !*why; i++)
			if (spent_profile_image_total(p, i, evs[0]) &&
			    (*why = symbols_image_error(sym, spent_profile_image_get(p, i))) != NULL)
				*unreadable = i;
		return -ENOENT;
	}
	const struct spent_profile_image *img = spent_profile_image_get(p, (uint32_t)bimg);
	if (bsize > ANNOTATE_MAX_BYTES) {
		*why = ANNOTATE_TOO_BIG;
		return -EFBIG;
	}
	if (!(code = malloc(bsize)) || !(a = calloc(1, sizeof(*a))) ||
	    !(a->fn_totals = calloc(nev, sizeof(uint64_t)))) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = symbols_read_code(sym, img, bstart, code, bsize))) {
		/* named from the build-id cache, but the code is in the file: say what is wrong
		 * with it */
		*why = symbols_image_error(sym, img);
		if (!*why)
			*why = "cannot read the function's code from the image (kernel or missing file)";
		err = -ENODATA;
		goto fail;
	}
	a->image = (uint32_t)bimg;
	a->region = region;
	a->start = bstart;
	a->size = bsize;
	a->nevents = nev;
	if ((err = decode(a, sym, img, code)))
		goto fail;
	place_counts(a, p, evs);
	free(code);
	*out = a;
	return 0;
fail:
	free(code);
	annotate_free(a);
	return err;
}
