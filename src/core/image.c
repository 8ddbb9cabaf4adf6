/* core/image.c - the image cache of core/procmaps.h: each mapped file is read once for its
 * identity (GNU build-id, else FNV-64 of the content) and executable PT_LOAD segments; the
 * kernel (build-id from /sys/kernel/notes) and the vDSO (read from our own address space). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdwelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/binio.h"
#include "core/kernel_id.h"
#include "core/procmaps.h"

struct cache_entry {
	struct image_info info;
	dev_t dev;
	ino_t ino;
	int64_t mtime;
	struct cache_entry *next;
};

#define CACHE_BUCKETS 256

struct image_cache {
	struct cache_entry *bucket[CACHE_BUCKETS];
};

int image_cache_new(struct image_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void image_cache_free(struct image_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < CACHE_BUCKETS; i++)
		for (struct cache_entry *e = c->bucket[i], *n; e; e = n) {
			n = e->next;
			free(e->info.id.path);
			free(e);
		}
	free(c);
}

/* Fill identity and executable loads of INFO from an open ELF. */
static void elf_describe(Elf *elf, struct image_info *info)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return;
	info->elf_type = eh.e_type;
	const void *bid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n > 0 && n <= SPENT_PROFILE_ID_MAX) {
		info->id.id_kind = SPENT_PROFILE_ID_BUILDID;
		info->id.id_len = (uint8_t)n;
		memcpy(info->id.id, bid, (size_t)n);
	}
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph && info->nloads < IMAGE_MAX_LOADS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		info->loads[info->nloads].off = ph.p_offset;
		info->loads[info->nloads].vaddr = ph.p_vaddr;
		info->loads[info->nloads].filesz = ph.p_filesz;
		info->nloads++;
	}
}

static void hash_identity(const void *data, size_t len, struct spent_profile_image *id)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, data, len);
	id->id_kind = SPENT_PROFILE_ID_HASH;
	id->id_len = 8;
	for (int i = 0; i < 8; i++)
		id->id[i] = (uint8_t)(h >> (8 * i));
}

int image_describe_fd(int fd, struct image_info *info)
{
	struct stat st;
	void *m;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		return -EINVAL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(m, (size_t)st.st_size);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		elf_describe(elf, info);
	if (elf)
		elf_end(elf);
	if (info->id.id_kind == SPENT_PROFILE_ID_NONE)
		hash_identity(m, (size_t)st.st_size, &info->id);
	munmap(m, (size_t)st.st_size);
	return 0;
}

/* Read PATH: ELF identity and loads; content hash when there is no build-id. */
static void file_describe(const char *path, struct image_info *info)
{
	int fd = binio_open_regular(path);	/* a FIFO must not block us */
	if (fd < 0)
		return;
	image_describe_fd(fd, info);
	close(fd);
}

void image_describe_kernel(struct image_info *info)
{
	uint8_t *d = NULL;
	size_t len = 0;
	info->is_kernel = true;
	if (binio_read_file("/sys/kernel/notes", 1 << 16, &d, &len))
		return;
	/* notes: namesz, descsz, type, name (padded to 4), desc (padded to 4) */
	for (size_t p = 0; p + 12 <= len;) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, d + p, 4);
		memcpy(&dsz, d + p + 4, 4);
		memcpy(&type, d + p + 8, 4);
		size_t name = p + 12, desc = name + ((nsz + 3u) & ~3u);
		if (desc > len || dsz > len - desc)
			break;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(d + name, "GNU", 4) &&
		    dsz <= SPENT_PROFILE_ID_MAX) {
			info->id.id_kind = SPENT_PROFILE_ID_BUILDID;
			info->id.id_len = (uint8_t)dsz;
			memcpy(info->id.id, d + desc, dsz);
			break;
		}
		p = desc + ((dsz + 3u) & ~3u);
	}
	free(d);
}

static void vdso_describe(struct image_info *info)
{
	info->is_vdso = true;
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return;
	const Elf64_Ehdr *eh = (const void *)base;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20))
		return;
	Elf *elf = elf_memory((char *)base, size);
	if (elf) {
		elf_describe(elf, info);
		elf_end(elf);
	}
}

int image_identify(const char *path, struct spent_profile_image *id)
{
	struct image_info info = { 0 };
	elf_version(EV_CURRENT);
	file_describe(path, &info);
	if (info.id.id_kind == SPENT_PROFILE_ID_NONE)
		return access(path, R_OK) ? -errno : -EINVAL;
	id->id_kind = info.id.id_kind;
	id->id_len = info.id.id_len;
	memcpy(id->id, info.id.id, info.id.id_len);
	return 0;
}

int image_cache_get(struct image_cache *c, const char *path, const struct image_info **out)
{
	struct stat st;
	bool pseudo = path[0] == '[';
	if (!path[0] || strlen(path) >= SPENT_PROFILE_PATH_MAX)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	if (!pseudo && stat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, path, strlen(path)) % CACHE_BUCKETS;
	for (struct cache_entry *e = c->bucket[h]; e; e = e->next)
		if (!strcmp(e->info.id.path, path) && e->dev == st.st_dev && e->ino == st.st_ino &&
		    e->mtime == (int64_t)st.st_mtime) {
			*out = &e->info;
			return 0;
		}
	struct cache_entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->info.id.path = strdup(path))) {
		free(e);
		return -ENOMEM;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->mtime = (int64_t)st.st_mtime;
	elf_version(EV_CURRENT);
	if (!strcmp(path, SPENT_PROFILE_KERNEL_PATH)) {
		image_describe_kernel(&e->info);
		/* build-id and _text, as the daemon names the kernel: a recorded profile merged
		 * into a daemon's database of the same boot is then the same kernel, not two */
		uint64_t text = kernel_id_running_text();
		if (text)
			kernel_id_add_text(&e->info.id, text);
	}
	else if (!strcmp(path, SPENT_PROFILE_VDSO_PATH))
		vdso_describe(&e->info);
	else if (!pseudo)
		file_describe(path, &e->info);
	e->next = c->bucket[h];
	c->bucket[h] = e;
	*out = &e->info;
	return 0;
}

uint64_t image_file_to_vaddr(const struct image_info *im, uint64_t file_off)
{
	for (unsigned i = 0; i < im->nloads; i++)
		if (file_off >= im->loads[i].off && file_off - im->loads[i].off < im->loads[i].filesz)
			return file_off - im->loads[i].off + im->loads[i].vaddr;
	return file_off;
}
