/* analysis/symtab.c - symbol tables of the images a trace loaded, read with libelf, kept sorted
 * by runtime address for lookups by address and by name. */
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "analysis/symtab.h"
#include "core/binio.h"

struct symtab {
	struct symtab_sym *syms;
	size_t n, cap;
	bool sorted;
	char **paths;	/* images already read */
	size_t n_paths, paths_cap;
};

struct symtab *symtab_new(void)
{
	struct symtab *st = calloc(1, sizeof(*st));
	if (st)
		st->sorted = true;
	return st;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->syms[i].name);
	for (size_t i = 0; i < st->n_paths; i++)
		free(st->paths[i]);
	free(st->paths);
	free(st->syms);
	free(st);
}

size_t symtab_count(const struct symtab *st)
{
	return st->n;
}

int symtab_add(struct symtab *st, const char *name, uint64_t addr, uint64_t size, bool is_func)
{
	if (ALLOC_GROW(st->syms, st->n + 1, st->cap))
		return -ENOMEM;
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	st->syms[st->n++] = (struct symtab_sym){ addr, size, copy, is_func };
	st->sorted = false;
	return 0;
}

static int add_section_syms(struct symtab *st, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			    uint64_t base)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_OBJECT) || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		int err = symtab_add(st, name, base + sym.st_value, sym.st_size, type == STT_FUNC);
		if (err)
			return err;
	}
	return 0;
}

int symtab_add_image(struct symtab *st, const char *path, uint64_t base)
{
	for (size_t i = 0; i < st->n_paths; i++)
		if (!strcmp(st->paths[i], path))
			return 0;
	int err = 0;
	Elf *elf = NULL;
	elf_version(EV_CURRENT);
	int fd = binio_open_regular(path);	/* a FIFO a trace names must not block us */
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	/* prefer .symtab (has statics); fall back to .dynsym */
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh, dsh, tsh;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			tab = scn;
			tsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dsh = sh;
		}
	}
	if (tab)
		err = add_section_syms(st, elf, tab, &tsh, base);
	if (!err && dyn)
		err = add_section_syms(st, elf, dyn, &dsh, base);
	if (!err) {
		if (ALLOC_GROW(st->paths, st->n_paths + 1, st->paths_cap) ||
		    !(st->paths[st->n_paths] = strdup(path))) {
			err = -ENOMEM;
			goto out;
		}
		st->n_paths++;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void symtab_add_batch_images(struct symtab *st, const struct trace_batch *batch)
{
	for (size_t i = 0; i < batch->n_events; i++) {
		const struct trace_event *ev = &batch->events[i];
		if (ev->kind == TRACE_EV_IMAGE_LOAD && ev->u.image.path)
			(void)symtab_add_image(st, ev->u.image.path, ev->u.image.base);
	}
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* sized before unsized at one address, then by name for determinism */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void ensure_sorted(struct symtab *st)
{
	if (st->sorted)
		return;
	qsort(st->syms, st->n, sizeof(*st->syms), sym_cmp);
	st->sorted = true;
}

const struct symtab_sym *symtab_lookup(struct symtab *st, uint64_t addr)
{
	ensure_sorted(st);
	size_t lo = 0, hi = st->n;	/* first symbol with addr > ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back over a few candidates: the nearest start may be an unsized label */
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct symtab_sym *s = &st->syms[lo - 1];
		if (s->addr == addr || (s->size && addr < s->addr + s->size))
			return s;
	}
	return NULL;
}

int symtab_find_func(struct symtab *st, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->syms[i].is_func && !strcmp(st->syms[i].name, name)) {
			*addr = st->syms[i].addr;
			return 0;
		}
	return -ENOENT;
}

const char *symtab_name_addr(struct symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct symtab_sym *s = symtab_lookup(st, addr);
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (s->addr == addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+%llu", s->name, (unsigned long long)(addr - s->addr));
	return buf;
}
