/* shim/shim_elf.c - the ELF facts Shim's coordinator needs: symbol values by name (software
 * signal channels) and symbols by address (histogram values) from core/symtable, and, read
 * here with libelf, PT_LOAD ranges, PT_INTERP (static or not), DT_NEEDED and the library
 * search ld.so would do. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/symtable.h"
#include "shim/shim.h"

struct shim_elf {
	char *path;
	struct symtable *syms;	/* core/symtable: the one ELF symbol reader */
	uint64_t load_lo[16], load_hi[16];
	size_t nloads;
	bool has_interp;
	char **needed;
	size_t nneeded, capneeded;
	char *runpath;
};

static int read_dynamic(struct shim_elf *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !sh->sh_entsize)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Dyn d;
		if (!gelf_getdyn(data, (int)i, &d))
			break;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH)
			continue;
		const char *s = elf_strptr(elf, sh->sh_link, d.d_un.d_val);
		if (!s)
			continue;
		if (d.d_tag != DT_NEEDED) {
			free(e->runpath);
			e->runpath = strdup(s);
			continue;
		}
		if (ALLOC_GROW(e->needed, e->nneeded + 1, e->capneeded))
			return -ENOMEM;
		if (!(e->needed[e->nneeded] = strdup(s)))
			return -ENOMEM;
		e->nneeded++;
	}
	return 0;
}

static int read_elf(struct shim_elf *e, Elf *elf)
{
	size_t nph = 0;
	int err = 0;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_INTERP)
			e->has_interp = true;
		if (ph.p_type == PT_LOAD && e->nloads < 16) {
			e->load_lo[e->nloads] = ph.p_vaddr;
			e->load_hi[e->nloads++] = ph.p_vaddr + ph.p_memsz;
		}
	}
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !err; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			err = read_dynamic(e, elf, scn, &sh);
	}
	return err;
}

int shim_elf_open(const char *path, struct shim_elf **out)
{
	struct shim_elf *e = NULL;
	Elf *elf = NULL;
	int fd = -1, err = 0;

	*out = NULL;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		err = -ENOEXEC;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = read_elf(e, elf)) || (err = symtable_open(path, &e->syms)))
		goto out;
	*out = e;
	e = NULL;
out:
	shim_elf_free(e);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

void shim_elf_free(struct shim_elf *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nneeded; i++)
		free(e->needed[i]);
	symtable_free(e->syms);
	free(e->needed);
	free(e->runpath);
	free(e->path);
	free(e);
}

bool shim_elf_is_static(const struct shim_elf *e)
{
	return !e->has_interp;
}

int shim_elf_find(const struct shim_elf *e, const char *name, uint64_t *value)
{
	struct symtable_hit hit;
	if (symtable_find_symbol(e->syms, name, &hit))
		return -ENOENT;
	if (hit.flags & SYMTABLE_TLS)
		return -EINVAL;
	*value = hit.start;
	return 0;
}

const char *shim_elf_lookup(const struct shim_elf *e, uint64_t vaddr, uint64_t *start)
{
	struct symtable_hit hit;
	if (symtable_lookup(e->syms, vaddr, &hit))
		return NULL;
	*start = hit.start;
	return hit.name;
}

bool shim_elf_contains(const struct shim_elf *e, uint64_t vaddr)
{
	for (size_t i = 0; i < e->nloads; i++)
		if (vaddr >= e->load_lo[i] && vaddr < e->load_hi[i])
			return true;
	return false;
}

const char *shim_elf_needed(const struct shim_elf *e, size_t i)
{
	return i < e->nneeded ? e->needed[i] : NULL;
}

/* Try each ':'-separated directory of LIST for SONAME ($ORIGIN is E's directory). */
static int search_dirs(const struct shim_elf *e, const char *list, const char *soname, char *out,
		       size_t outlen)
{
	char origin[PATH_MAX];
	snprintf(origin, sizeof(origin), "%s", e->path);
	char *slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(origin, sizeof(origin), ".");
	for (const char *p = list; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		int n;
		if (len >= 7 && strncmp(p, "$ORIGIN", 7) == 0)
			n = snprintf(out, outlen, "%s%.*s/%s", origin, (int)(len - 7), p + 7, soname);
		else
			n = snprintf(out, outlen, "%.*s/%s", (int)len, p, soname);
		if (len && n > 0 && (size_t)n < outlen &&
		    access(out, R_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

int shim_elf_find_library(const struct shim_elf *e, const char *soname, char *out, size_t outlen)
{
	static const char sysdirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:"
				      "/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	if (strchr(soname, '/'))
		return (size_t)snprintf(out, outlen, "%s", soname) < outlen ? 0 : -ENAMETOOLONG;
	if (search_dirs(e, getenv("LD_LIBRARY_PATH"), soname, out, outlen) == 0 ||
	    search_dirs(e, e->runpath, soname, out, outlen) == 0 ||
	    search_dirs(e, sysdirs, soname, out, outlen) == 0)
		return 0;
	return -ENOENT;
}
