/* citcat/cpuid_patch.c - applies software CPUID faulting to a traced process: for each
 * executable file mapping in /proc/PID/maps, the file's confirmed cpuid sites (cached per file
 * identity: device, inode, size, mtime) are overwritten with ud2 through /proc/PID/mem, and the
 * patched addresses kept so a SIGILL can be told from a real one. The recorder calls this after
 * it has recorded a mapping, so the recording keeps the original bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "citcat/cpuid_patch.h"
#include "core/alloc.h"
#include "core/procmaps.h"

struct file_sites {
	uint64_t dev, ino, size, mtime_ns;
	struct cc_cpuid_sites sites;
	char *path;
};

struct cc_cpuid_patcher {
	struct file_sites *files;
	size_t nfiles, files_cap;
	uint64_t *patched;	/* sorted addresses */
	size_t npatched, patched_cap;
	uint64_t unconfirmed;
	const char *first_unconfirmed;
};

int cc_cpuid_patcher_new(struct cc_cpuid_patcher **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void cc_cpuid_patcher_free(struct cc_cpuid_patcher *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfiles; i++) {
		cc_cpuid_sites_release(&p->files[i].sites);
		free(p->files[i].path);
	}
	free(p->files);
	free(p->patched);
	free(p);
}

static size_t patched_index(const struct cc_cpuid_patcher *p, uint64_t addr)
{
	size_t lo = 0, hi = p->npatched;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->patched[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool cc_cpuid_patched_at(const struct cc_cpuid_patcher *p, uint64_t addr)
{
	size_t i = patched_index(p, addr);
	return i < p->npatched && p->patched[i] == addr;
}

static int remember_patch(struct cc_cpuid_patcher *p, uint64_t addr)
{
	size_t i = patched_index(p, addr);
	if (i < p->npatched && p->patched[i] == addr)
		return 0;
	if (ALLOC_GROW(p->patched, p->npatched + 1, p->patched_cap))
		return -ENOMEM;
	memmove(p->patched + i + 1, p->patched + i, (p->npatched - i) * sizeof(*p->patched));
	p->patched[i] = addr;
	p->npatched++;
	return 0;
}

/* Open the file a maps line names, checking it is the mapped one (same device and inode);
 * /proc/PID/map_files/ when the path now names another file. -1 when neither works. */
static int open_mapped(pid_t pid, const struct procmaps_line *m, struct stat *st)
{
	char alt[96];
	int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_ino != m->ino ||
			st->st_dev != makedev(m->dev_major, m->dev_minor))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		return fd;
	snprintf(alt, sizeof(alt), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(alt, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The sites of the file mapped by M, scanned on first sight of its identity; NULL when it
 * cannot be read or is not an ELF file (nothing to patch). */
static int sites_for(struct cc_cpuid_patcher *p, pid_t pid, const struct procmaps_line *m,
		     const struct file_sites **out)
{
	struct stat st;
	*out = NULL;
	int fd = open_mapped(pid, m, &st);
	if (fd < 0)
		return 0;
	uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
	for (size_t i = 0; i < p->nfiles; i++) {
		struct file_sites *f = &p->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == (uint64_t)st.st_size &&
		    f->mtime_ns == mt) {
			close(fd);
			*out = f;
			return 0;
		}
	}
	if (ALLOC_GROW(p->files, p->nfiles + 1, p->files_cap)) {
		close(fd);
		return -ENOMEM;
	}
	struct file_sites *f = &p->files[p->nfiles];
	memset(f, 0, sizeof(*f));
	f->dev = st.st_dev, f->ino = st.st_ino, f->size = (uint64_t)st.st_size, f->mtime_ns = mt;
	f->path = strdup(m->path);
	int err = f->path ? 0 : -ENOMEM;
	if (!err && st.st_size > 0) {
		void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data != MAP_FAILED) {
			err = cc_cpuid_find_sites(data, (size_t)st.st_size, &f->sites);
			if (err == -ENOEXEC)
				err = 0;	/* not an x86-64 ELF: nothing the decoder can confirm */
			munmap(data, (size_t)st.st_size);
		}
	}
	close(fd);
	if (err) {
		free(f->path);
		return err;
	}
	p->nfiles++;
	p->unconfirmed += f->sites.unconfirmed;
	if (f->sites.unconfirmed && !p->first_unconfirmed)
		p->first_unconfirmed = f->path;
	*out = f;
	return 0;
}

static int patch_mapping(struct cc_cpuid_patcher *p, pid_t pid, int memfd,
			 const struct procmaps_line *m, uint64_t lo, uint64_t hi)
{
	const struct file_sites *f;
	int err = sites_for(p, pid, m, &f);
	if (err || !f)
		return err;
	for (size_t i = 0; i < f->sites.n && !err; i++) {
		uint64_t off = f->sites.offsets[i];
		if (off < m->pgoff || off - m->pgoff >= m->end - m->start)
			continue;
		uint64_t addr = m->start + (off - m->pgoff);
		if (addr < lo || addr + 2 > hi || cc_cpuid_patched_at(p, addr))
			continue;
		uint8_t b[2];
		static const uint8_t ud2[2] = { 0x0f, 0x0b };
		if (pread(memfd, b, 2, (off_t)addr) != 2 || b[0] != 0x0f)
			continue;
		/* ud2 where the file has a confirmed cpuid is this patch, moved here (mremap) */
		if (b[1] == 0xa2 && pwrite(memfd, ud2, 2, (off_t)addr) != 2)
			return -errno;
		if (b[1] == 0xa2 || b[1] == 0x0b)
			err = remember_patch(p, addr);
	}
	return err;
}

int cc_cpuid_patch_range(struct cc_cpuid_patcher *p, pid_t pid, int memfd, uint64_t start,
			 uint64_t len)
{
	char path[64], line[4096 + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	uint64_t lo = len ? start : 0, hi = len ? start + len : UINT64_MAX;
	int err = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		struct procmaps_line m;
		if (procmaps_parse_line(line, &m) || !m.exec || m.path[0] != '/' || m.end <= lo ||
		    m.start >= hi)
			continue;
		err = patch_mapping(p, pid, memfd, &m, lo, hi);
	}
	fclose(f);
	return err;
}

void cc_cpuid_patch_counts(const struct cc_cpuid_patcher *p, uint64_t *patched,
			   uint64_t *unconfirmed, const char **first_file)
{
	*patched = p ? p->npatched : 0;
	*unconfirmed = p ? p->unconfirmed : 0;
	*first_file = p ? p->first_unconfirmed : NULL;
}
