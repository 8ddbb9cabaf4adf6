/* core/symtable.c - sorted per-image symbol tables (see symtable.h): two sorted runs, the
 * image's global symbols and its locals, each with the running maximum of symbol ends so a
 * lookup walks back only over symbols that can still cover the address. Built from a libdwfl
 * module or read from the ELF file itself (symtable_open), with one rule for which symbols
 * count. Saved form (the build-id cache): a text header line, then one "start size
 * section_start section_end flags name" line per symbol in hex, globals first. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/outfile.h"
#include "core/demangle.h"
#include "core/search.h"
#include "core/symtable.h"

#define SYMTABLE_MAGIC "spent-symtable 1"


struct tsym {
	uint64_t start, size;
	uint64_t sec_lo, sec_hi;	/* the symbol's section: where a sizeless label applies */
	uint64_t maxend;		/* max start+size over this and every earlier entry */
	const char *name;
	uint32_t order;			/* position in the image's table: first wins a full tie */
	uint8_t bind;			/* libdwfl's ranking: global 3, weak 2, local 1 */
	uint8_t flags;
};

struct symtable {
	struct tsym *syms;	/* [0, nglobal) globals, then locals; each run sorted */
	size_t n, nglobal;
	char *names;		/* loaded tables: the names' storage */
	char *plt_names;	/* the "NAME@plt" names made for PLT entries (add_plt) */
	Elf *elf;		/* symtable_open: the names point into its string tables */
	int fd;			/* symtable_open: ELF's file, else -1 */
	bool full;		/* symtable_open: read from a .symtab (locals included) */
};

static int bind_rank(unsigned bind)
{
	return bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : bind == STB_LOCAL ? 1 : 0;
}

/* start ascending; on a tie the better candidate last (a lookup walks backwards) */
static int tsym_cmp(const void *a, const void *b)
{
	const struct tsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->bind != y->bind)
		return x->bind < y->bind ? -1 : 1;
	return x->order > y->order ? -1 : x->order < y->order;
}

/* A thread-local symbol's value is an offset in the TLS block, not an address: it is named
 * (symtable_find_symbol) but never the answer to an address. */
static bool addressable(const struct tsym *s)
{
	return !(s->flags & SYMTABLE_TLS);
}

static void sort_run(struct tsym *s, size_t n)
{
	if (n > 1)
		qsort(s, n, sizeof(*s), tsym_cmp);
	uint64_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].size && addressable(&s[i]) && s[i].start + s[i].size > m)
			m = s[i].start + s[i].size;
		s[i].maxend = m;
	}
}

static void finish(struct symtable *t)
{
	sort_run(t->syms, t->nglobal);
	sort_run(t->syms + t->nglobal, t->n - t->nglobal);
}

/* The one rule for which ELF symbols a table holds: named, defined, not a section or file
 * marker, not an ARM/AArch64 mapping symbol ($a, $d, $x). */
static bool symbol_counts(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
	unsigned type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && name[0] != '$' && shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE;
}

static uint8_t symbol_flags(const GElf_Sym *sym, bool global)
{
	unsigned type = GELF_ST_TYPE(sym->st_info);
	return (global ? SYMTABLE_GLOBAL : 0) | (type == STT_FUNC ? SYMTABLE_FUNC : 0) |
	       (type == STT_OBJECT ? SYMTABLE_OBJECT : 0) | (type == STT_TLS ? SYMTABLE_TLS : 0);
}

/* Fill S from SYM (at ADDR, which is SYM's value plus the image's bias) of section SCN. */
static void tsym_set(struct tsym *s, const char *name, const GElf_Sym *sym, uint64_t addr,
		     Elf_Scn *scn, uint32_t order, bool global)
{
	GElf_Shdr sh;
	s->start = addr;
	s->size = sym->st_size;
	s->name = name;
	s->order = order;
	s->bind = (uint8_t)bind_rank(GELF_ST_BIND(sym->st_info));
	s->flags = symbol_flags(sym, global);
	if (scn && gelf_getshdr(scn, &sh)) {
		/* the section in the table's address space, like ADDR */
		s->sec_lo = sh.sh_addr + (addr - sym->st_value);
		s->sec_hi = s->sec_lo + sh.sh_size;
	}
}

/* An empty table owning no file. */
static struct symtable *table_new(void)
{
	struct symtable *t = calloc(1, sizeof(*t));
	if (t)
		t->fd = -1;
	return t;
}

static int add_plt(struct symtable *t, Elf *elf, uint64_t bias);

int symtable_from_module(Dwfl_Module *mod, struct symtable **out)
{
	struct symtable *t = table_new();
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	if (!t)
		return -ENOMEM;
	if (n > 1 && !(t->syms = calloc((size_t)n, sizeof(*t->syms)))) {
		free(t);
		return -ENOMEM;
	}
	if (first_global < 1)
		first_global = 1;
	/* globals first, as libdwfl searches them first */
	for (int pass = 0; pass < 2; pass++) {
		int lo = pass ? 1 : first_global, hi = pass ? first_global : n;
		for (int i = lo; i < hi; i++) {
			GElf_Sym sym;
			GElf_Addr addr;
			GElf_Word shndx;
			Elf *elf = NULL;
			const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, NULL);
			if (!symbol_counts(nm, &sym, shndx))
				continue;
			Elf_Scn *scn = elf && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
			tsym_set(&t->syms[t->n++], nm, &sym, addr, scn, (uint32_t)i, !pass);
		}
		if (!pass)
			t->nglobal = t->n;
	}
	GElf_Addr bias = 0;
	Elf *melf = dwfl_module_getelf(mod, &bias);
	if (melf && add_plt(t, melf, bias) == -ENOMEM) {
		symtable_free(t);
		return -ENOMEM;
	}
	finish(t);
	*out = t;
	return 0;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n = gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* A local symbol "NAME@plt" for each x86-64 PLT entry that jumps to NAME, as perf makes them:
 * no symbol table covers the stubs, which showed as image+0xOFFSET (1-2% of a program
 * calling sin() in a loop). Entry I of .rela.plt's jump slots is the I-th 16-byte entry of
 * .plt.sec when there is one (IBT), else of .plt after its header entry. BIAS: table
 * addresses minus file addresses. Best effort: an image without them gets none. */
static int add_plt(struct symtable *t, Elf *elf, uint64_t bias)
{
	GElf_Ehdr eh;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rela = section_named(elf, ".rela.plt", &rsh);
	Elf_Scn *plt = section_named(elf, ".plt.sec", &psh);
	bool sec = plt != NULL;
	if (!plt)
		plt = section_named(elf, ".plt", &psh);
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || !rela || !plt ||
	    rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	Elf_Scn *dyn = elf_getscn(elf, rsh.sh_link);
	Elf_Data *rd = elf_getdata(rela, NULL), *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
	if (!rd || !dd || !gelf_getshdr(dyn, &dsh))
		return 0;
	size_t n = rsh.sh_size / rsh.sh_entsize, bytes = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *nm;
		if (gelf_getrela(rd, (int)i, &r) && GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT &&
		    gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) &&
		    (nm = elf_strptr(elf, dsh.sh_link, sym.st_name)) && nm[0])
			bytes += strlen(nm) + sizeof("@plt");
	}
	struct tsym *grown = bytes ? realloc(t->syms, (t->n + n) * sizeof(*t->syms)) : NULL;
	if (!bytes)
		return 0;
	if (!grown || !(t->plt_names = malloc(bytes))) {
		if (grown)
			t->syms = grown;
		return -ENOMEM;
	}
	t->syms = grown;
	char *out = t->plt_names;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *nm;
		uint64_t at = psh.sh_addr + 16 * (sec ? i : i + 1);
		if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(nm = elf_strptr(elf, dsh.sh_link, sym.st_name)) || !nm[0] ||
		    at + 16 > psh.sh_addr + psh.sh_size)
			continue;
		struct tsym *s = &t->syms[t->n++];
		memset(s, 0, sizeof(*s));
		s->start = at + bias;
		s->size = 16;
		s->sec_lo = psh.sh_addr + bias;
		s->sec_hi = s->sec_lo + psh.sh_size;
		s->name = out;
		s->order = UINT32_MAX - (uint32_t)(n - k++);	/* after every symbol of the file */
		s->bind = 1;
		s->flags = SYMTABLE_FUNC;
		out += sprintf(out, "%s@plt", nm) + 1;
	}
	return 0;
}

/* The table of ELF's .symtab, or of its .dynsym when it has none (libdwfl's choice too). */
static int from_elf(struct symtable *t, Elf *elf)
{
	Elf_Scn *scn = NULL, *tab = NULL;
	GElf_Shdr sh, tsh = { 0 };
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB ||
					       (sh.sh_type == SHT_DYNSYM && !tab))) {
			tab = scn;
			tsh = sh;
		}
	Elf_Data *d = tab ? elf_getdata(tab, NULL) : NULL;
	if (!d || !tsh.sh_entsize)
		return 0;
	t->full = tsh.sh_type == SHT_SYMTAB;
	/* a .dynsym's versions: .gnu.version has one 16-bit entry per symbol (0x8000: hidden) */
	Elf_Data *versym = NULL;
	if (tsh.sh_type == SHT_DYNSYM)
		for (scn = NULL; (scn = elf_nextscn(elf, scn));)
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym &&
			    sh.sh_link == elf_ndxscn(tab))
				versym = elf_getdata(scn, NULL);
	size_t n = tsh.sh_size / tsh.sh_entsize, first_global = tsh.sh_info;
	if (n > 1 && !(t->syms = calloc(n, sizeof(*t->syms))))
		return -ENOMEM;
	if (first_global < 1 || first_global > n)
		first_global = 1;
	for (int pass = 0; pass < 2; pass++) {	/* globals first, as in symtable_from_module */
		size_t lo = pass ? 1 : first_global, hi = pass ? first_global : n;
		for (size_t i = lo; i < hi; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			const char *nm = elf_strptr(elf, tsh.sh_link, sym.st_name);
			if (!symbol_counts(nm, &sym, sym.st_shndx))
				continue;
			Elf_Scn *sec = sym.st_shndx < SHN_LORESERVE ? elf_getscn(elf, sym.st_shndx) : NULL;
			tsym_set(&t->syms[t->n], nm, &sym, sym.st_value, sec, (uint32_t)i, !pass);
			GElf_Versym vs;
			if (versym && gelf_getversym(versym, (int)i, &vs) && (vs & 0x8000))
				t->syms[t->n].flags |= SYMTABLE_HIDDEN;
			t->n++;
		}
		if (!pass)
			t->nglobal = t->n;
	}
	int err = add_plt(t, elf, 0);
	finish(t);
	return err;
}

int symtable_open(const char *path, struct symtable **out)
{
	struct symtable *t = table_new();
	if (!t)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	t->fd = binio_open_regular(path);	/* a FIFO named by a trace must not block us */
	if (t->fd < 0) {
		int err = t->fd;
		free(t);
		return err;
	}
	t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
	int err = !t->elf || elf_kind(t->elf) != ELF_K_ELF ? -ENOEXEC : from_elf(t, t->elf);
	if (err) {
		symtable_free(t);
		return err;
	}
	*out = t;
	return 0;
}

int symtable_debug_path(const struct symtable *t, char *buf, size_t size)
{
	const unsigned char *bid = NULL;
	ssize_t n = t->elf && !t->full ? dwelf_elf_gnu_build_id(t->elf, (const void **)&bid) : 0;
	if (n < 2 || n > 64)
		return -ENOENT;
	/* /usr/lib/debug/.build-id/ab/cdef....debug: the first byte names the directory */
	int k = snprintf(buf, size, "%s/.build-id/%02x/", SYMTABLE_DEBUG_DIR, bid[0]);
	for (ssize_t i = 1; i < n && k >= 0 && (size_t)k < size; i++)
		k += snprintf(buf + k, size - (size_t)k, "%02x", bid[i]);
	if (k < 0 || (size_t)k >= size ||
	    (size_t)snprintf(buf + k, size - (size_t)k, ".debug") >= size - (size_t)k)
		return -ENAMETOOLONG;
	return 0;
}

void symtable_free(struct symtable *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t->plt_names);
	if (t->elf)
		elf_end(t->elf);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

int symtable_symbol(const struct symtable *t, size_t i, struct symtable_hit *hit)
{
	if (i >= t->n)
		return -ENOENT;
	hit->name = t->syms[i].name;
	hit->start = t->syms[i].start;
	hit->size = t->syms[i].size;
	hit->flags = t->syms[i].flags;
	hit->index = t->syms[i].order;
	return 0;
}

size_t symtable_count(const struct symtable *t)
{
	return t->n;
}

struct search {
	uint64_t off;
	const struct tsym *closest, *sizeless;
	uint64_t min_label;	/* sizeless labels below a sized symbol's end do not apply */
};

static bool better(const struct tsym *cand, const struct tsym *cur)
{
	return !cur || cand->start > cur->start || (cand->start == cur->start && cand->bind > cur->bind);
}

static void search_run(const struct tsym *s, size_t n, struct search *st)
{
	size_t lo = SEARCH_UPPER_BOUND(s, n, .start, st->off);
	if (!lo)
		return;
	if (s[lo - 1].maxend > st->min_label)
		st->min_label = s[lo - 1].maxend;
	/* sized: the first covering one walking back is the closest, best-bound */
	for (size_t j = lo; j-- > 0 && s[j].maxend > st->off;)
		if (s[j].size && addressable(&s[j]) && st->off - s[j].start < s[j].size) {
			if (better(&s[j], st->closest))
				st->closest = &s[j];
			break;
		}
	/* sizeless: only labels at or above every preceding symbol's end can apply */
	for (size_t j = lo; j-- > 0 && s[j].start >= st->min_label;)
		if (!s[j].size && addressable(&s[j]) && st->off >= s[j].sec_lo &&
		    st->off < s[j].sec_hi) {
			if (better(&s[j], st->sizeless))
				st->sizeless = &s[j];
			break;
		}
}

int symtable_lookup(const struct symtable *t, uint64_t offset, struct symtable_hit *hit)
{
	struct search st = { .off = offset };
	search_run(t->syms, t->nglobal, &st);
	if (!st.closest && !(st.sizeless && st.sizeless->start == offset))
		search_run(t->syms + t->nglobal, t->n - t->nglobal, &st);
	const struct tsym *s = st.closest;
	if (!s && st.sizeless && st.sizeless->start >= st.min_label)
		s = st.sizeless;
	if (!s)
		return -ENOENT;
	hit->name = s->name;
	hit->start = s->start;
	hit->size = s->size;
	hit->flags = s->flags;
	hit->index = s->order;
	return 0;
}

static int by_file_order(const void *a, const void *b)
{
	const struct tsym *x = *(const struct tsym *const *)a, *y = *(const struct tsym *const *)b;
	return x->order < y->order ? -1 : x->order > y->order;
}

int symtable_find_all(const struct symtable *t, const char *name, struct symtable_range **out, size_t *n)
{
	/* the best match (the function before its .cold part, an exact name before a template
	 * instance); every one matching as well (overloads: "over" is over(int) and over(long)),
	 * in file order. One pass: a mangled name's demangling is most of a search's cost */
	const struct tsym **c = NULL;
	size_t nc = 0, cap = 0;
	enum demangle_match best = DEMANGLE_NO_MATCH;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!(t->syms[i].flags & SYMTABLE_FUNC))
			continue;
		enum demangle_match m = demangle_match_rank(t->syms[i].name, name);
		if (m == DEMANGLE_NO_MATCH || m < best)
			continue;
		if (m > best) {
			best = m;
			nc = 0;
		}
		if (ALLOC_GROW(c, nc + 1, cap)) {
			free(c);
			return -ENOMEM;
		}
		c[nc++] = &t->syms[i];
	}
	struct symtable_range *r = nc ? malloc(nc * sizeof(*r)) : NULL;
	if (!r) {
		free(c);
		return nc ? -ENOMEM : -ENOENT;
	}
	qsort(c, nc, sizeof(*c), by_file_order);
	for (size_t k = 0; k < nc; k++)
		r[k] = (struct symtable_range){ c[k]->start, c[k]->size };
	free(c);
	*out = r;
	*n = nc;
	return 0;
}

int symtable_find(const struct symtable *t, const char *name, uint64_t *start, uint64_t *size)
{
	struct symtable_range *r;
	size_t n;
	int err = symtable_find_all(t, name, &r, &n);
	if (err)
		return err;
	*start = r[0].start;
	*size = r[0].size;
	free(r);
	return 0;
}

int symtable_find_symbol(const struct symtable *t, const char *name, struct symtable_hit *hit)
{
	const struct tsym *best = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->syms[i].name, name) && (!best || t->syms[i].order < best->order))
			best = &t->syms[i];
	if (!best)
		return -ENOENT;
	return symtable_symbol(t, (size_t)(best - t->syms), hit);
}

int symtable_save(const struct symtable *t, const char *path)
{
	struct binbuf b;
	char line[128];
	int err;
	binbuf_init(&b);
	int l = snprintf(line, sizeof(line), "%s %zu %zu\n", SYMTABLE_MAGIC, t->n, t->nglobal);
	err = binbuf_put(&b, line, (size_t)l);
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tsym *s = &t->syms[i];
		l = snprintf(line, sizeof(line), "%llx %llx %llx %llx %x %x %x ",
			     (unsigned long long)s->start, (unsigned long long)s->size,
			     (unsigned long long)s->sec_lo, (unsigned long long)s->sec_hi,
			     s->order, s->bind, s->flags);
		err = binbuf_put(&b, line, (size_t)l);
		err = err ? err : binbuf_put(&b, s->name, strlen(s->name));
		err = err ? err : binbuf_put(&b, "\n", 1);
	}
	err = err ? err : outfile_write(path, b.data, b.len, OUTFILE_MODE);
	binbuf_release(&b);
	return err;
}

/* Parse the saved lines in DATA (the names are made to point into it). */
static int parse_saved(struct symtable *t, char *data, size_t len)
{
	char *p = data, *end = data + len;
	size_t n = 0, ng = 0;
	char *nl = memchr(p, '\n', len);
	if (!nl || sscanf(p, SYMTABLE_MAGIC " %zu %zu", &n, &ng) != 2 || ng > n || n > len / 8)
		return -EINVAL;
	if (n && !(t->syms = calloc(n, sizeof(*t->syms))))
		return -ENOMEM;
	for (p = nl + 1; t->n < n; p = nl + 1) {
		if (p >= end || !(nl = memchr(p, '\n', (size_t)(end - p))))
			return -EINVAL;
		*nl = 0;
		struct tsym *s = &t->syms[t->n];
		unsigned long long v[4];
		unsigned order, bind, flags;
		int used = 0;
		if (sscanf(p, "%llx %llx %llx %llx %x %x %x %n", &v[0], &v[1], &v[2], &v[3], &order,
			   &bind, &flags, &used) != 7 || !used || !p[used])
			return -EINVAL;
		*s = (struct tsym){ .start = v[0], .size = v[1], .sec_lo = v[2], .sec_hi = v[3],
				    .order = order, .bind = (uint8_t)bind, .flags = (uint8_t)flags,
				    .name = p + used };
		t->n++;
	}
	t->nglobal = ng;
	finish(t);
	return 0;
}

int symtable_load(const char *path, struct symtable **out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int err = binio_read_file(path, 1u << 30, &data, &len);
	if (err)
		return err;
	struct symtable *t = table_new();
	if (!t) {
		free(data);
		return -ENOMEM;
	}
	t->names = (char *)data;
	if ((err = parse_saved(t, (char *)data, len))) {
		symtable_free(t);
		return err;
	}
	*out = t;
	return 0;
}
