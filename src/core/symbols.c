/* core/symbols.c - symbolization through libdwfl (one offline Dwfl per image, at bias 0 so
 * addresses are link-time offsets), /proc/kallsyms for the kernel, the vDSO from memory. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/buildid_cache.h"
#include "core/kallsyms_file.h"
#include "core/inline_table.h"
#include "core/kernel_id.h"
#include "core/linetable.h"
#include "core/outfile.h"
#include "core/procmaps.h"
#include "core/demangle.h"
#include "core/search.h"
#include "core/symbols.h"
#include "core/symtable.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct sym_image {
	struct spent_profile_image id;	/* path owned here */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct symtable *tab;		/* the module's symbols sorted, built at the first lookup,
					 * or the build-id cache's copy when the file is gone */
	struct inline_tables *inlines;	/* per-CU inlined ranges, made as CUs are met */
	struct linetable *lines;	/* the build-id cache's copy of its lines when the file is gone */
	const char *error;		/* why the image could not be opened */
	struct ksym *ksyms;		/* kernel only, sorted */
	struct srcname { const char *raw; char *full; } *srcs;	/* relative -> comp_dir/file */
	size_t nsrcs, srcs_cap;
	size_t nksyms;
	struct sym_image *next;
};

struct symbols {
	struct sym_image *images;
	char *debuginfo_path;
	char *kallsyms;		/* saved kernel symbols to use instead of /proc/kallsyms */
	char *kallsyms_dir;	/* where kallsyms-HEX of each kernel identity is (core/kernel_id.h) */
	Dwfl_Callbacks cbs;
};

static struct sym_image *image_get(struct symbols *s, const struct spent_profile_image *img);
static void mark_ksym(const struct sym_image *im, uint64_t off, uint8_t *used);
static struct symtable *image_table(struct sym_image *im);

int symbols_new(struct symbols **out)
{
	struct symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cbs.find_elf = dwfl_build_id_find_elf;
	s->cbs.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cbs.section_address = dwfl_offline_section_address;
	s->cbs.debuginfo_path = &s->debuginfo_path;
	*out = s;
	return 0;
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (struct sym_image *i = s->images, *n; i; i = n) {
		n = i->next;
		symtable_free(i->tab);
		linetable_free(i->lines);
		inline_tables_free(i->inlines);
		if (i->dwfl)
			dwfl_end(i->dwfl);
		for (size_t k = 0; k < i->nksyms; k++)
			free(i->ksyms[k].name);
		for (size_t k = 0; k < i->nsrcs; k++)
			free(i->srcs[k].full);
		free(i->srcs);
		free(i->ksyms);
		free(i->id.path);
		free(i);
	}
	free(s->kallsyms);
	free(s->kallsyms_dir);
	free(s);
}

int symbols_set_kallsyms(struct symbols *s, const char *path)
{
	free(s->kallsyms);
	s->kallsyms = path ? strdup(path) : NULL;
	return path && !s->kallsyms ? -ENOMEM : 0;
}

int symbols_set_kallsyms_dir(struct symbols *s, const char *dir)
{
	free(s->kallsyms_dir);
	s->kallsyms_dir = dir ? strdup(dir) : NULL;
	return dir && !s->kallsyms_dir ? -ENOMEM : 0;
}

int symbols_save_kernel(struct symbols *s, const struct spent_profile *p, const char *path)
{
	int err = 0;
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		const struct spent_profile_image *img = spent_profile_image_get(p, i);
		if (strcmp(img->path, SPENT_PROFILE_KERNEL_PATH))
			continue;
		struct sym_image *im = image_get(s, img);
		if (!im || !im->nksyms)
			return im ? 0 : -ENOMEM;
		uint8_t *used = calloc(im->nksyms, 1);
		if (!used)
			return -ENOMEM;
		/* mark every symbol a count or a stack frame of the kernel image falls in */
		for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++) {
			struct spent_profile_count *c = NULL;
			size_t n = 0;
			spent_profile_counts(p, i, ev, &c, &n);
			for (size_t k = 0; k < n; k++)
				mark_ksym(im, c[k].offset, used);
			free(c);
		}
		for (size_t k = 0; k < spent_profile_nstacks(p); k++) {
			uint32_t ev;
			const struct spent_profile_frame *f;
			size_t nf;
			uint64_t cnt;
			spent_profile_stack_get(p, k, &ev, &f, &nf, &cnt);
			for (size_t j = 0; j < nf; j++)
				if (f[j].image == i)
					mark_ksym(im, f[j].offset, used);
		}
		struct binbuf b;
		binbuf_init(&b);
		char addr[32];
		for (size_t k = 0; k < im->nksyms && !err; k++) {
			if (!used[k])
				continue;
			/* keep the next symbol too, so the last one's size stays known; names go in
			 * whole (kernel names reach 511 bytes: no fixed-size line) */
			for (size_t j = k; j <= k + 1 && j < im->nksyms && !err; j++) {
				int l = snprintf(addr, sizeof(addr), "%016llx t ",
						 (unsigned long long)im->ksyms[j].addr);
				err = binbuf_put(&b, addr, (size_t)l) ?:
				      binbuf_put(&b, im->ksyms[j].name, strlen(im->ksyms[j].name)) ?:
				      binbuf_put_u8(&b, '\n');
			}
		}
		free(used);
		err = err ? err : kallsyms_file_write_zst(path, b.data, b.len, OUTFILE_MODE);
		binbuf_release(&b);
		break;
	}
	return err;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Parse "ADDR TYPE NAME[\t[module]]" lines (the /proc/kallsyms format) keeping text symbols.
 * Names reach 511 bytes (KSYM_NAME_LEN); a longer line is skipped whole, so its tail cannot
 * pass for a line of its own. */
static void parse_kallsyms(struct sym_image *im, FILE *f)
{
	char line[1024];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') && !feof(f)) {
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		uint64_t a = 0;
		char *p = line;
		for (;; p++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
			if (d < 0)
				break;
			a = a << 4 | (uint64_t)d;
		}
		if (!a || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;
		char type = p[1], *name = p + 3;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name[strcspn(name, " \t\n")] = 0;
		if (!name[0])
			continue;
		if (ALLOC_GROW(im->ksyms, im->nksyms + 1, cap))
			break;
		im->ksyms[im->nksyms].addr = a;
		im->ksyms[im->nksyms].name = strdup(name);
		if (im->ksyms[im->nksyms].name)
			im->nksyms++;
	}
}

/* The saved symbols of kernel IM's own identity (DIR/kallsyms-HEX): 0 or -errno. */
static int open_identity_kallsyms(const struct symbols *s, const struct sym_image *im, struct kallsyms_file *k)
{
	char name[128], path[4096];
	if (!s->kallsyms_dir || kernel_id_kallsyms_name(&im->id, name, sizeof(name)) ||
	    snprintf(path, sizeof(path), "%s/%s", s->kallsyms_dir, name) >= (int)sizeof(path))
		return -ENOENT;
	return kallsyms_file_open(path, k);
}

static void load_kallsyms(struct symbols *s, struct sym_image *im)
{
	/* a kernel without a copy of its own (older databases, spent record's profiles): the
	 * one saved kallsyms (plain or compressed), else the running kernel's */
	struct kallsyms_file k = {0};
	if (open_identity_kallsyms(s, im, &k) && (!s->kallsyms || kallsyms_file_open(s->kallsyms, &k))) {
		/* the running kernel's names fit only the boot they came from: KASLR moves _text
		 * every boot, so a kernel whose saved copy is missing or unreadable is named from
		 * /proc only when its _text is the running one's (or either is unknown); before,
		 * another boot's samples got this boot's names, silently */
		uint64_t text = kernel_id_text(&im->id), running = text ? kernel_id_running_text() : 0;
		if (text && running && text != running) {
			im->error = "its saved symbols are missing or unreadable, and it is not the "
				    "running kernel (another _text)";
			return;
		}
		k.f = fopen("/proc/kallsyms", "re");
	}
	if (!k.f) {
		im->error = "cannot read /proc/kallsyms";
		return;
	}
	parse_kallsyms(im, k.f);
	kallsyms_file_close(&k);
	if (im->nksyms)
		qsort(im->ksyms, im->nksyms, sizeof(*im->ksyms), ksym_cmp);
	else
		im->error = "no kernel symbols readable in /proc/kallsyms (kptr_restrict?)";
}

static int vdso_fd(void)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -1;
	const Elf64_Ehdr *eh = (const void *)base;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, base, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool same_identity(Dwfl_Module *mod, const struct spent_profile_image *want)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	if (want->id_kind != SPENT_PROFILE_ID_BUILDID)
		return true;	/* content hashes: checked on the fd before (same_content) */
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n <= 0 || (n == want->id_len && !memcmp(bits, want->id, (size_t)n));
}

/*
 * Whether the file open on FD still has the content hash the profile recorded for an image
 * without a build-id (anything else: true). The hash is the whole file's, as record computed
 * it (image_describe_fd), so a rebuild at the same path is caught as a build-id change would
 * be. The profile keeps no size or mtime to skip it with, so it costs one read of the file
 * (FNV-1a, a byte at a time), once per image per process (image_get keeps the result):
 * measured 0.18 s more for a 123 MB image, 0.03 s for 23 MB (about 1.6 ms per MB).
 */
static bool same_content(int fd, const struct spent_profile_image *want)
{
	struct image_info now = { 0 };
	if (want->id_kind != SPENT_PROFILE_ID_HASH)
		return true;
	if (image_describe_fd(fd, &now))
		return false;
	return now.id.id_kind == want->id_kind && now.id.id_len == want->id_len &&
	       !memcmp(now.id.id, want->id, want->id_len);
}

static void open_image(struct symbols *s, struct sym_image *im)
{
	if (!strcmp(im->id.path, SPENT_PROFILE_KERNEL_PATH)) {
		load_kallsyms(s, im);
		return;
	}
	im->dwfl = dwfl_begin(&s->cbs);
	if (!im->dwfl) {
		im->error = "out of memory";
		return;
	}
	dwfl_report_begin(im->dwfl);
	if (!strcmp(im->id.path, SPENT_PROFILE_VDSO_PATH)) {
		int fd = vdso_fd();
		if (fd >= 0)
			im->mod = dwfl_report_elf(im->dwfl, "[vdso]", "[vdso]", fd, 0, false);
	} else {
		/* our own fd, opened only when it is a regular file: libdwfl would open a FIFO the
		 * profile names and block on it */
		int fd = binio_open_regular(im->id.path);
		if (fd >= 0 && !same_content(fd, &im->id)) {
			close(fd);
			im->error = "file changed since the profile was taken (content hash differs)";
		} else if (fd >= 0) {
			im->mod = dwfl_report_elf(im->dwfl, im->id.path, im->id.path, fd, 0, false);
			if (!im->mod)
				close(fd);	/* consumed only on success */
		} else {
			im->error = fd == -ENOENT ? "image file not found" :
				    fd == -EINVAL || fd == -EISDIR ? "the image file is not a regular file" :
				    fd == -EACCES ? "image file not readable" : "cannot open the image file";
		}
	}
	dwfl_report_end(im->dwfl, NULL, NULL);
	if (!im->mod && !im->error)
		im->error = "not a readable ELF image";
	if (im->mod && !same_identity(im->mod, &im->id)) {
		im->error = "file changed since the profile was taken (build-id differs)";
		im->mod = NULL;
	}
	/* the file is gone or rebuilt: the names saved at record time, when there are some */
	char cached[4096];
	if (!im->mod && im->id.path[0] != '[' &&
	    buildid_cache_symtab_path(&im->id, 0, cached, sizeof(cached)) == 0 &&
	    symtable_load(cached, &im->tab) == 0) {
		char lines[4096];
		buildid_cache_touch(cached);	/* used: the last to be pruned */
		if (buildid_cache_entry_file(cached, "lines", lines, sizeof(lines)) == 0)
			linetable_load(lines, &im->lines);	/* none: saved without line info */
	}
}

static struct sym_image *image_get(struct symbols *s, const struct spent_profile_image *img)
{
	for (struct sym_image *i = s->images; i; i = i->next)
		if (i->id.id_kind == img->id_kind && i->id.id_len == img->id_len &&
		    !memcmp(i->id.id, img->id, img->id_len) && !strcmp(i->id.path, img->path))
			return i;
	struct sym_image *im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->id = *img;
	if (!(im->id.path = strdup(img->path))) {
		free(im);
		return NULL;
	}
	open_image(s, im);
	im->next = s->images;
	s->images = im;
	return im;
}

const char *symbols_image_error(struct symbols *s, const struct spent_profile_image *img)
{
	struct sym_image *im = image_get(s, img);
	return im ? im->error : "out of memory";
}

const char *symbols_names_missing(struct symbols *s, const struct spent_profile_image *img,
				  const char **cache_why)
{
	struct sym_image *im = image_get(s, img);
	*cache_why = "";
	if (!im)
		return "out of memory";
	if (im->mod || im->tab || im->nksyms)
		return NULL;
	if (im->id.path[0] == '[' || im->id.id_kind == SPENT_PROFILE_ID_NONE)
		return im->error;
	char cached[4096];
	int err = buildid_cache_symtab_path(&im->id, 0, cached, sizeof(cached));
	*cache_why = err == -ECANCELED ? "the build-id cache is off (SPENT_BUILDID_DIR=off)" :
		     err ? "there is no build-id cache directory (no HOME)" :
		     "the build-id cache has no copy of its symbols";
	return im->error;
}

int symbols_cache_image(struct symbols *s, const struct spent_profile_image *img, bool *saved)
{
	char path[4096];
	*saved = false;
	int err = img->path[0] == '[' ? -EINVAL :
		  buildid_cache_symtab_path(img, 1, path, sizeof(path));
	if (err == -EINVAL || err == -ENOENT)
		return 0;	/* pseudo images, no identity or no HOME: no key */
	if (err || access(path, F_OK) == 0)
		return err;	/* off (-ECANCELED), the directory cannot be made; or cached */
	struct sym_image *im = image_get(s, img);
	struct symtable *tab = im ? image_table(im) : NULL;
	if (!im || !im->mod || !tab)
		return 0;	/* no file of that identity (rebuilt already), no symbols */
	if (!(err = symtable_save(tab, path)))
		err = buildid_cache_note_image(path, img->path);
	*saved = !err;
	/* lines after the symbols: an entry without them still names functions */
	struct linetable *lt = NULL;
	char lines[4096];
	if (!err && linetable_from_module(im->mod, &lt) == 0 &&
	    !(err = buildid_cache_entry_file(path, "lines", lines, sizeof(lines))))
		err = linetable_save(lt, lines);
	linetable_free(lt);
	return err;
}

int symbols_cache_images(struct symbols *s, const struct spent_profile *p)
{
	int first_err = 0, saved = 0;
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		bool one;
		int err = symbols_cache_image(s, spent_profile_image_get(p, i), &one);
		if (err == -ECANCELED)
			return 0;
		if (err && !first_err)
			first_err = err;	/* e.g. the cache directory cannot be made */
		saved += one;
	}
	/* the cache grew: keep it within its size (nothing to do when nothing was added) */
	int err = saved ? buildid_cache_prune(BUILDID_CACHE_DEFAULT_MAX, NULL, NULL) : 0;
	return first_err ? first_err : err;
}

/* Number of kernel symbols starting at or below OFF: the one containing OFF is at [n - 1]. */
static size_t ksym_upper_bound(const struct sym_image *im, uint64_t off)
{
	return SEARCH_UPPER_BOUND(im->ksyms, im->nksyms, .addr, off);
}

static void kernel_lookup(const struct sym_image *im, uint64_t off, struct sym_info *out)
{
	size_t lo = ksym_upper_bound(im, off);
	if (!lo)
		return;
	const struct ksym *k = &im->ksyms[lo - 1];
	out->name = k->name;
	out->start = k->addr;
	out->size = lo < im->nksyms ? im->ksyms[lo].addr - k->addr : 0;
	out->exact = 1;
}

static void inline_lookup(struct sym_image *im, uint64_t off, struct sym_info *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(im->mod, off, &bias);
	if (cu)
		out->inlined = inline_tables_lookup(&im->inlines, cu, off - bias);
}

/* FILE as recorded in the line table, made absolute with the CU's compilation directory. */
static const char *full_source_path(struct sym_image *im, Dwfl_Line *line, const char *file)
{
	const char *dir = dwfl_line_comp_dir(line);
	if (file[0] == '/' || !dir)
		return file;
	for (size_t i = 0; i < im->nsrcs; i++)
		if (im->srcs[i].raw == file)
			return im->srcs[i].full;
	if (ALLOC_GROW(im->srcs, im->nsrcs + 1, im->srcs_cap))
		return file;
	struct srcname *n = im->srcs;
	if (asprintf(&n[im->nsrcs].full, "%s/%s", dir, file) < 0)
		return file;
	n[im->nsrcs].raw = file;
	return n[im->nsrcs++].full;
}

static void mark_ksym(const struct sym_image *im, uint64_t off, uint8_t *used)
{
	size_t lo = ksym_upper_bound(im, off);
	if (lo)
		used[lo - 1] = 1;
}

/* IM's sorted symbol table, built once (NULL when out of memory) */
static struct symtable *image_table(struct sym_image *im)
{
	if (!im->tab && im->mod)
		symtable_from_module(im->mod, &im->tab);
	return im->tab;
}

static int lookup(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
		  struct sym_info *out, bool lines)
{
	memset(out, 0, sizeof(*out));
	struct sym_image *im = image_get(s, img);
	if (!im)
		return -ENOMEM;
	if (im->nksyms) {
		kernel_lookup(im, offset, out);
		return 0;
	}
	if (!im->mod && !im->tab)
		return -ENOENT;
	struct symtable *tab = image_table(im);
	struct symtable_hit hit;
	if (tab && symtable_lookup(tab, offset, &hit) == 0) {
		out->name = hit.name;
		out->start = hit.start;
		out->size = hit.size;
		out->exact = hit.size == 0 || offset - hit.start < hit.size;
	}
	Dwfl_Line *line = lines && im->mod ? dwfl_module_getsrc(im->mod, offset) : NULL;
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (file && lineno > 0) {
			out->file = full_source_path(im, line, file);
			out->line = lineno;
		}
		inline_lookup(im, offset, out);
	} else if (lines && !im->mod && im->lines) {
		linetable_lookup(im->lines, offset, &out->file, &out->line);
	}
	return 0;
}

int symbols_lookup(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
		   struct sym_info *out)
{
	return lookup(s, img, offset, out, true);
}

int symbols_lookup_name(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
			struct sym_info *out)
{
	return lookup(s, img, offset, out, false);
}

int symbols_find_functions(struct symbols *s, const struct spent_profile_image *img, const char *name,
			   struct symtable_range **out, size_t *n)
{
	struct sym_image *im = image_get(s, img);
	*out = NULL;
	*n = 0;
	if (!im)
		return -ENOMEM;
	for (size_t i = 0; i < im->nksyms; i++)
		if (!strcmp(im->ksyms[i].name, name)) {	/* kernel names are looked up exactly: one */
			if (!(*out = malloc(sizeof(**out))))
				return -ENOMEM;
			(*out)->start = im->ksyms[i].addr;
			(*out)->size = i + 1 < im->nksyms ? im->ksyms[i + 1].addr - (*out)->start : 0;
			*n = 1;
			return 0;
		}
	struct symtable *tab = image_table(im);
	return tab ? symtable_find_all(tab, name, out, n) : -ENOENT;
}

int symbols_find_function(struct symbols *s, const struct spent_profile_image *img, const char *name,
			  uint64_t *start, uint64_t *size)
{
	struct symtable_range *r;
	size_t n;
	int err = symbols_find_functions(s, img, name, &r, &n);
	if (err)
		return err;
	*start = r[0].start;
	*size = r[0].size;
	free(r);
	return 0;
}

int symbols_read_code(struct symbols *s, const struct spent_profile_image *img, uint64_t offset,
		      uint8_t *buf, size_t len)
{
	struct sym_image *im = image_get(s, img);
	if (!im)
		return -ENOMEM;
	if (!im->mod)
		return -ENOENT;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(im->mod, &bias);
	size_t nph;
	if (!elf || elf_getphdrnum(elf, &nph))
		return -ENOENT;
	size_t rawlen;
	char *raw = elf_rawfile(elf, &rawlen);
	for (size_t i = 0; raw && i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (offset < ph.p_vaddr || offset - ph.p_vaddr >= ph.p_filesz)
			continue;
		uint64_t fo = offset - ph.p_vaddr + ph.p_offset;
		uint64_t avail = ph.p_filesz - (offset - ph.p_vaddr);
		if (fo > rawlen || len > avail || len > rawlen - fo)
			return -ERANGE;
		memcpy(buf, raw + fo, len);
		return 0;
	}
	return -ERANGE;
}
