/* collect/daemon_maps.h - the daemon's view of every process's executable mappings, fed by a
 * /proc scan at start-up and by side-band MMAP2/COMM/FORK/EXIT records; interned images. */
#ifndef SPENT_COLLECT_DAEMON_MAPS_H
#define SPENT_COLLECT_DAEMON_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/procmaps.h"

#define DIMAGE_KERNEL 0	/* image id of "[kernel.kallsyms]": every map table has it */
/* pcs at and above are the kernel's (aggregate.bpf.c counts its kernel samples the same way) */
#define DMAPS_KERNEL_START 0xffff800000000000ULL

#define DMAPS_COMM_LEN 16	/* the kernel's TASK_COMM_LEN */
#define DIMAGE_MAX_LOADS IMAGE_MAX_LOADS	/* filled from core/procmaps.h's image_info */

/* One PT_LOAD segment: file offsets [off, off+filesz) are link-time addresses vaddr+... */
struct dimage_load {
	uint64_t off, filesz, vaddr;
};

/* One executable image, identified by its file (device, inode) and path. */
struct dimage {
	uint32_t id;		/* index in the table, stable for the daemon's life */
	char *path;		/* as the process named it; "[kernel.kallsyms]", "[vdso]", "[anon]" */
	uint64_t dev, ino;	/* 0 for pseudo images */
	uint8_t id_kind;	/* enum spent_profile_id_kind: build-id, content hash, or none */
	uint8_t id_len;
	uint8_t ident[32];
	bool foreign_root;	/* mapped by a process whose root is not ours (container) */
	bool identified;	/* id and loads read (on the first sample placed in it) */
	/* the file as it was identified: a later mapping of the same path, device and inode
	 * whose file has another size or times is a rebuild in place (cp over it, or the inode
	 * reused) and gets an image of its own; this one is then superseded (never matched) */
	bool stat_known, superseded;
	uint64_t size;
	struct timespec mtime, ctime;
	uint8_t nloads;		/* PT_LOAD segments read from the file (0: offsets stay file offsets) */
	struct dimage_load loads[DIMAGE_MAX_LOADS];
};

struct dmaps_stats {
	uint64_t processes;	/* live processes tracked now */
	uint64_t exited_pending;	/* exited, kept until their samples are drained */
	uint64_t regions;	/* executable regions tracked now */
	uint64_t images;	/* images interned */
};

struct dmaps;

/* A new empty table (with the kernel image). Caller frees with dmaps_free. */
int dmaps_new(struct dmaps **out);
/* Identify the kernel image as ID (build-id and the boot's _text: collect/daemon_kernel.h). */
void dmaps_set_kernel_identity(struct dmaps *m, const struct spent_profile_image *id);
void dmaps_free(struct dmaps *m);

/* Scan /proc (ROOT_DIR, normally "/proc") for the processes running now. */
int dmaps_scan_proc(struct dmaps *m, const char *proc_dir);

/* Side-band records. PROT_EXEC mappings only are kept. */
struct dmaps_mmap {
	pid_t pid;
	uint64_t start, len, pgoff;
	uint64_t dev, ino;
	uint32_t prot;
	const char *path;
};
int dmaps_mmap(struct dmaps *m, const struct dmaps_mmap *mm);
/* A new process PID (not a thread) forked from PPID: it starts with the parent's maps. */
int dmaps_fork(struct dmaps *m, pid_t pid, pid_t ppid);
/* PID called exec: its maps are kept aside until the next reap, the new image's come next. */
int dmaps_exec(struct dmaps *m, pid_t pid);
/* Process PID exited during drain generation GEN: kept until dmaps_reap(GEN or later). */
void dmaps_exit(struct dmaps *m, pid_t pid, uint64_t gen);
/* Process PID (its main thread) is now called COMM (TASK_COMM_LEN at most is kept); EXEC
 * when the name comes with an exec (the cgroup is then read again). */
void dmaps_comm(struct dmaps *m, pid_t pid, const char *comm, bool exec);
/* Who PID is, for its samples: *COMM (never NULL: "[unknown]" when no name is known,
 * "swapper" for pid 0) and *CGROUP (the cgroup v2 path, or NULL), both valid until the next
 * dmaps call. Read from /proc on first use while the process lives; kept after it exited
 * until reaped. 0, or -ESRCH when PID is not known at all. */
int dmaps_task(struct dmaps *m, pid_t pid, const char **comm, const char **cgroup);
/* As dmaps_task, for a sample at PC: a pc that only the maps before PID's last exec hold was
 * sampled before it, under the name it had then (a shell's forked child runs the shell until
 * it execs: those samples are the shell's, as perf names them; they were the new program's). */
int dmaps_task_at(struct dmaps *m, pid_t pid, uint64_t pc, const char **comm, const char **cgroup);
/* Forget processes that exited in generations <= GEN and maps replaced by exec before it. */
void dmaps_reap(struct dmaps *m, uint64_t gen);

/*
 * Find the image PC belongs to in process PID: 0 with *IMAGE and *OFFSET (the link-time
 * address inside the image, as the profile format wants; the address itself for the kernel), -ESRCH for an unknown process, -ENOENT for an unmapped pc.
 */
int dmaps_resolve(struct dmaps *m, pid_t pid, uint64_t pc, uint32_t *image, uint64_t *offset);

/* Image ID (NULL when out of range); the pointer stays valid until dmaps_free. */
const struct dimage *dmaps_image(const struct dmaps *m, uint32_t id);
size_t dmaps_image_count(const struct dmaps *m);
void dmaps_get_stats(const struct dmaps *m, struct dmaps_stats *st);

#endif
