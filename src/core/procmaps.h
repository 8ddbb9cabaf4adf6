/* core/procmaps.h - process image maps: which image (identified by build-id or content hash)
 * is mapped where in each process, and pc -> (image, offset) translation, fed by perf
 * MMAP2/COMM/FORK/EXIT side-band records or /proc/PID/maps. Also the image cache (each file
 * read once), the kernel image and the vDSO. */
#ifndef SPENT_CORE_PROCMAPS_H
#define SPENT_CORE_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/profile.h"

#define IMAGE_MAX_LOADS 16

/* What spent knows about one image file. */
struct image_info {
	struct spent_profile_image id;	/* path + identity; path owned by the cache */
	int elf_type;			/* ET_EXEC, ET_DYN, or 0 when not a readable ELF */
	unsigned nloads;
	struct {
		uint64_t off, vaddr, filesz;
	} loads[IMAGE_MAX_LOADS];	/* executable PT_LOAD segments */
	bool is_kernel, is_vdso;
};

struct image_cache;

int image_cache_new(struct image_cache **out);
void image_cache_free(struct image_cache *c);
/*
 * The image at PATH, read once per (path, device, inode, mtime). SPENT_PROFILE_KERNEL_PATH and
 * SPENT_PROFILE_VDSO_PATH name the kernel and this kernel's vDSO. A file that cannot be opened still
 * gets an entry (identity NONE) so samples are kept by path. 0 or -ENOMEM / -EINVAL.
 */
int image_cache_get(struct image_cache *c, const char *path, const struct image_info **out);
/* Link-time virtual address of byte FILE_OFF of the image (FILE_OFF itself when unknown). */
uint64_t image_file_to_vaddr(const struct image_info *im, uint64_t file_off);

/* Read the build-id (or FNV-64 content hash) of an ELF file into ID; 0 or -errno. */
int image_identify(const char *path, struct spent_profile_image *id);
/* Identity and executable loads of the file open on FD (the caller chose and checked which
 * file: e.g. through /proc/PID/root). INFO->id.path is left alone. 0, or -errno when FD is
 * not a readable regular file (INFO then has no identity). */
int image_describe_fd(int fd, struct image_info *info);
/* The running kernel's identity (build-id from /sys/kernel/notes; none when unreadable). */
void image_describe_kernel(struct image_info *info);

/* A sorted list of non-overlapping address ranges, each with its caller's TAG: the per-process
 * map table of procmaps, also the daemon's (collect/daemon_maps.c). */
struct maprange {
	uint64_t start, end, pgoff;	/* [start, end) maps file offset pgoff at start */
	uintptr_t tag;			/* what is mapped there (the user's choice) */
};
struct maprange_list {
	struct maprange *r;
	size_t n, cap;
};
void maprange_release(struct maprange_list *l);
/* Room for MORE ranges beyond N; 0 or -ENOMEM. */
int maprange_reserve(struct maprange_list *l, size_t more);
/* Insert M, cutting whatever it overlaps (a new mmap replaces old pages); 0 or -ENOMEM. */
int maprange_insert(struct maprange_list *l, const struct maprange *m);
/* The range holding ADDR, or NULL. */
const struct maprange *maprange_find(const struct maprange_list *l, uint64_t addr);
/* DST becomes a copy of SRC (fork); 0 or -ENOMEM. */
int maprange_copy(struct maprange_list *dst, const struct maprange_list *src);

struct procmaps;

int procmaps_new(struct image_cache *c, struct procmaps **out);
void procmaps_free(struct procmaps *pm);

/* A new executable mapping in process PID (tgid); replaces what it overlaps. PATH may be
 * empty or a pseudo name ("[heap]", "//anon") for anonymous memory. */
int procmaps_add(struct procmaps *pm, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		 const char *path);
/* One line of /proc/PID/maps, parsed in place by procmaps_parse_line. */
struct procmaps_line {
	uint64_t start, end, pgoff;
	unsigned dev_major, dev_minor;
	uint64_t ino;
	bool exec;		/* 'x' in the permissions */
	bool deleted;		/* the file was unlinked (" (deleted)" cut from PATH) */
	const char *path;	/* points into the line: "" for anonymous memory */
};
/* Parse LINE ("start-end perms offset maj:min inode   path\n"), cutting its newline and
 * " (deleted)" in place: 0, or -EINVAL for a line that is not a mapping. */
int procmaps_parse_line(char *line, struct procmaps_line *out);
/* Load PID's executable mappings from /proc/PID/maps (replacing what was known). An empty
 * file (a zombie's, a kernel thread's) leaves what was known as it was: -ESRCH. */
int procmaps_load_pid(struct procmaps *pm, pid_t pid);
/* CHILD starts with a copy of PARENT's maps (fork). */
int procmaps_fork(struct procmaps *pm, pid_t parent, pid_t child);
/* PID exec'd (its old maps are gone) or exited. */
void procmaps_forget(struct procmaps *pm, pid_t pid);
/* True when something is known about PID. */
bool procmaps_known(const struct procmaps *pm, pid_t pid);

/*
 * Translate pc ADDR of process PID: 0 and *IMG, *OFFSET on success; otherwise -ENOENT and
 * *WHY (SPENT_PROFILE_UNK_NO_MAPPING, _ANON, _PROCESS_GONE). Kernel addresses go to the kernel
 * image whatever the pid.
 */
int procmaps_lookup(struct procmaps *pm, pid_t pid, uint64_t addr, const struct image_info **img,
		    uint64_t *offset, enum spent_profile_unknown_reason *why);

/* Call FN for each file-backed mapping of PID in address order; stops at FN's non-zero. */
typedef int (*procmaps_map_fn)(void *ctx, uint64_t start, uint64_t end, uint64_t pgoff,
			       const struct image_info *img);
int procmaps_foreach(const struct procmaps *pm, pid_t pid, procmaps_map_fn fn, void *ctx);

/* True for an address in the kernel half of the x86-64 address space. */
static inline bool procmaps_is_kernel_addr(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

#endif
