/* collect/daemon_maps.c - per-process executable mappings for the daemon: /proc scan at
 * start-up, side-band MMAP2/COMM/FORK/EXEC/EXIT updates, exited processes kept until drained,
 * files resolved through /proc/PID/root, images interned by (device, inode, path); each
 * process's name (comm) and cgroup v2 path, kept with it until reaped. */
#include "core/alloc.h"
#include "collect/daemon_maps.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/binio.h"
#include "core/procmaps.h"

#define PROC_BUCKETS 4096
#define IMAGE_BUCKETS 1024

struct dproc {
	struct dproc *next;
	pid_t pid;
	bool exited;
	uint64_t exit_gen;
	uint64_t exec_gen;	/* generation of the last exec: old maps kept until reaped */
	bool has_old;
	struct maprange_list cur;	/* tag: dimage id */
	struct maprange_list old;	/* the maps before exec: samples taken before it still use them */
	char comm[DMAPS_COMM_LEN];	/* "" until known */
	char old_comm[DMAPS_COMM_LEN];	/* the name before the last exec ("" unknown) */
	char *cgroup;		/* cgroup v2 path, NULL until read (or when there is none) */
	bool cgroup_read;	/* /proc/PID/cgroup was read (or inherited at fork) */
};

struct image_slot {
	struct image_slot *next;
	uint32_t id;
};

struct dmaps {
	struct dproc *procs[PROC_BUCKETS];
	struct dimage **images;
	size_t nimages, capimages;
	struct image_slot *ihash[IMAGE_BUCKETS];
	uint64_t gen;		/* latest generation seen by dmaps_exit */
	struct stat self_root;
	struct dmaps_stats st;
};

static uint32_t image_hash(const char *path, uint64_t dev, uint64_t ino)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, path, strlen(path));
	h = binio_fnv64(h, &dev, sizeof(dev));
	h = binio_fnv64(h, &ino, sizeof(ino));
	return (uint32_t)(h % IMAGE_BUCKETS);
}

/* Open image IM's file as PID sees it (through its root, so files inside containers are the
 * ones opened; the daemon's own view when PID has gone and shares our root). -errno. */
static int dimage_open(struct dmaps *m, struct dimage *im, pid_t pid)
{
	char p[4200];
	struct stat root;
	int fd;

	if (im->path[0] != '/')
		return -ENOENT;
	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	if (pid > 0 && stat(p, &root) == 0 &&
	    (root.st_dev != m->self_root.st_dev || root.st_ino != m->self_root.st_ino))
		im->foreign_root = true;
	if (pid > 0)
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, im->path);
	else
		snprintf(p, sizeof(p), "%s", im->path);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && pid > 0 && !im->foreign_root)
		fd = open(im->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Identify an image's file (build-id, else content hash) and read its load segments. */
static void dimage_identify(struct dmaps *m, struct dimage *im, pid_t pid)
{
	struct image_info info = { 0 };
	struct stat st;
	int fd = dimage_open(m, im, pid);

	if (fd < 0)
		return;
	/* only trust the file if it is the one that was mapped */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (im->ino == 0 || (st.st_ino == im->ino && st.st_dev == im->dev)) &&
	    image_describe_fd(fd, &info) == 0) {
		im->id_kind = info.id.id_kind;
		im->id_len = info.id.id_len;
		memcpy(im->ident, info.id.id, info.id.id_len);
		im->nloads = (uint8_t)info.nloads;
		for (unsigned i = 0; i < info.nloads; i++)
			im->loads[i] = (struct dimage_load){ .off = info.loads[i].off,
				.filesz = info.loads[i].filesz, .vaddr = info.loads[i].vaddr };
		im->stat_known = true;
		im->size = (uint64_t)st.st_size;
		im->mtime = st.st_mtim;
		im->ctime = st.st_ctim;
	}
	close(fd);
}

/* Whether identified image IM's file, mapped again by PID, is no longer the file it was
 * identified from (same path, device and inode, other size or times). A stat, not an open:
 * every exec mapping of a sampled image comes here (a shell loop maps a few per process). A
 * file that cannot be looked at now says nothing: the image stays. */
static bool dimage_rebuilt(const struct dimage *im, pid_t pid)
{
	char p[4200];
	struct stat st;
	if (!im->stat_known || im->path[0] != '/')
		return false;
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, im->path);
	if ((pid <= 0 || stat(p, &st) < 0) && (im->foreign_root || stat(im->path, &st) < 0))
		return false;
	return st.st_ino == im->ino && st.st_dev == im->dev &&
	       ((uint64_t)st.st_size != im->size ||
		st.st_mtim.tv_sec != im->mtime.tv_sec || st.st_mtim.tv_nsec != im->mtime.tv_nsec ||
		st.st_ctim.tv_sec != im->ctime.tv_sec || st.st_ctim.tv_nsec != im->ctime.tv_nsec);
}

/* The id of the image (PATH, DEV, INO) PID maps now, interned on first sight and again
 * when the file was rebuilt in place since its image was identified; -ENOMEM. */
static int image_intern(struct dmaps *m, const char *path, uint64_t dev, uint64_t ino,
			pid_t pid, uint32_t *id)
{
	uint32_t h = image_hash(path, dev, ino);
	struct image_slot *s;
	struct dimage *im;

	for (s = m->ihash[h]; s; s = s->next) {
		im = m->images[s->id];
		if (im->superseded || im->dev != dev || im->ino != ino || strcmp(im->path, path) != 0)
			continue;
		if (im->identified && dimage_rebuilt(im, pid)) {
			/* maps made before keep it; new ones get a new image, identified anew */
			im->superseded = true;
			break;
		}
		*id = s->id;
		return 0;
	}
	if (ALLOC_GROW(m->images, m->nimages + 1, m->capimages))
		return -ENOMEM;
	im = calloc(1, sizeof(*im));
	s = calloc(1, sizeof(*s));
	if (!im || !s || !(im->path = strdup(path))) {
		free(im);
		free(s);
		return -ENOMEM;
	}
	im->id = (uint32_t)m->nimages;
	im->dev = dev;
	im->ino = ino;
	/* identified (build-id or content hash, load segments) when its first sample is placed:
	 * most images mapped somewhere are never sampled, and hashing a file is not free */
	m->images[m->nimages++] = im;
	s->id = im->id;
	s->next = m->ihash[h];
	m->ihash[h] = s;
	m->st.images = m->nimages;
	*id = im->id;
	return 0;
}

int dmaps_new(struct dmaps **out)
{
	struct dmaps *m = calloc(1, sizeof(*m));
	uint32_t id;
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	if (stat("/", &m->self_root) < 0)
		memset(&m->self_root, 0, sizeof(m->self_root));
	err = image_intern(m, "[kernel.kallsyms]", 0, 0, 0, &id);
	if (err) {
		dmaps_free(m);
		return err;
	}
	/* the running kernel's build-id, as spent record stores it: epochs of another boot or
	 * host are then symbolized (and merged) as the different kernel they are; the daemon
	 * adds the boot's _text address (dmaps_set_kernel_identity) */
	struct image_info kinfo = { 0 };
	image_describe_kernel(&kinfo);
	dmaps_set_kernel_identity(m, &kinfo.id);
	*out = m;
	return 0;
}

void dmaps_set_kernel_identity(struct dmaps *m, const struct spent_profile_image *id)
{
	struct dimage *k = m->images[DIMAGE_KERNEL];
	k->id_kind = id->id_kind;
	k->id_len = id->id_len <= sizeof(k->ident) ? id->id_len : 0;
	memcpy(k->ident, id->id, k->id_len);
	k->identified = true;
}

static void proc_free(struct dproc *p)
{
	if (!p)
		return;
	maprange_release(&p->cur);
	maprange_release(&p->old);
	free(p->cgroup);
	free(p);
}

void dmaps_free(struct dmaps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct dproc *p = m->procs[i], *n;
		for (; p; p = n) {
			n = p->next;
			proc_free(p);
		}
	}
	for (size_t i = 0; i < IMAGE_BUCKETS; i++) {
		struct image_slot *s = m->ihash[i], *n;
		for (; s; s = n) {
			n = s->next;
			free(s);
		}
	}
	for (size_t i = 0; i < m->nimages; i++) {
		free(m->images[i]->path);
		free(m->images[i]);
	}
	free(m->images);
	free(m);
}

/* The live entry for PID, else the most recent exited one, else NULL. */
static struct dproc *proc_find(struct dmaps *m, pid_t pid)
{
	struct dproc *p, *dead = NULL;

	for (p = m->procs[(uint32_t)pid % PROC_BUCKETS]; p; p = p->next) {
		if (p->pid != pid)
			continue;
		if (!p->exited)
			return p;
		if (!dead || p->exit_gen > dead->exit_gen)
			dead = p;
	}
	return dead;
}

static struct dproc *proc_add(struct dmaps *m, pid_t pid)
{
	struct dproc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->next = m->procs[(uint32_t)pid % PROC_BUCKETS];
	m->procs[(uint32_t)pid % PROC_BUCKETS] = p;
	m->st.processes++;
	return p;
}

/* The live entry for PID, created when missing. */
static struct dproc *proc_get(struct dmaps *m, pid_t pid)
{
	struct dproc *p = proc_find(m, pid);

	if (p && !p->exited)
		return p;
	return proc_add(m, pid);
}

static int pseudo_path(const char *path, uint64_t dev, uint64_t ino, const char **out)
{
	*out = path;
	/* "//anon" (perf's name for anonymous memory) starts with '/': looked at first */
	if (strncmp(path, "//anon", 6) == 0)
		*out = "[anon]";
	else if (path[0] != '/' && path[0] != '[' && (path[0] == '\0' || (dev == 0 && ino == 0)))
		*out = "[anon]";
	return 0;
}

int dmaps_mmap(struct dmaps *m, const struct dmaps_mmap *mm)
{
	struct dproc *p;
	struct maprange r;
	uint32_t image;
	const char *path;
	uint64_t dev = mm->dev, ino = mm->ino;
	int err;

	if (!(mm->prot & PROT_EXEC) || mm->len == 0 || mm->start + mm->len < mm->start)
		return 0;
	pseudo_path(mm->path, dev, ino, &path);
	if (path[0] == '[')
		dev = ino = 0;
	/* a late record of an exited process still belongs to it: a new process with the same
	 * pid always announces itself with a FORK first */
	p = proc_find(m, mm->pid);
	if (!p && !(p = proc_add(m, mm->pid)))
		return -ENOMEM;
	err = image_intern(m, path, dev, ino, mm->pid, &image);
	if (err)
		return err;
	r.tag = image;
	r.start = mm->start;
	r.end = mm->start + mm->len;
	r.pgoff = path[0] == '[' ? 0 : mm->pgoff;
	size_t before = p->cur.n;
	err = maprange_insert(&p->cur, &r);
	m->st.regions += p->cur.n - before;
	return err;
}

int dmaps_fork(struct dmaps *m, pid_t pid, pid_t ppid)
{
	struct dproc *parent = proc_find(m, ppid), *p;

	if (pid == ppid)
		return 0;
	p = proc_find(m, pid);
	if (p && !p->exited) {	/* pid reused before we saw the exit: start over */
		m->st.regions -= p->cur.n;
		p->cur.n = 0;
		p->comm[0] = '\0';
		free(p->cgroup);
		p->cgroup = NULL;
		p->cgroup_read = false;
	} else {
		p = proc_add(m, pid);
		if (!p)
			return -ENOMEM;
	}
	if (!parent)
		return 0;
	/* a child runs as its parent until it execs (COMM then renames it) */
	memcpy(p->comm, parent->comm, sizeof(p->comm));
	if (parent->cgroup_read && !p->cgroup_read) {
		p->cgroup = parent->cgroup ? strdup(parent->cgroup) : NULL;
		p->cgroup_read = true;
	}
	m->st.regions += parent->cur.n;
	return maprange_copy(&p->cur, &parent->cur);
}

int dmaps_exec(struct dmaps *m, pid_t pid)
{
	struct dproc *p = proc_find(m, pid);
	int err;

	if (!p && !(p = proc_add(m, pid)))
		return -ENOMEM;
	/* every image this process had before (a shell script can exec several times between
	 * two drains) stays searchable until the samples taken before the exec are drained */
	if ((err = maprange_reserve(&p->old, p->cur.n)))
		return err;
	if (p->cur.n)
		memcpy(p->old.r + p->old.n, p->cur.r, p->cur.n * sizeof(*p->cur.r));
	p->old.n += p->cur.n;
	m->st.regions -= p->cur.n;
	p->cur.n = 0;
	p->has_old = true;
	memcpy(p->old_comm, p->comm, sizeof(p->old_comm));	/* the COMM record comes next */
	p->exec_gen = m->gen;
	return 0;
}

/* Newest first: the old maps of several execs may overlap. */
static const struct maprange *regions_find_linear(const struct maprange_list *rs, uint64_t pc)
{
	for (size_t i = rs->n; i-- > 0;)
		if (rs->r[i].start <= pc && pc < rs->r[i].end)
			return &rs->r[i];
	return NULL;
}

void dmaps_exit(struct dmaps *m, pid_t pid, uint64_t gen)
{
	struct dproc *p = proc_find(m, pid);

	if (gen > m->gen)
		m->gen = gen;
	if (!p || p->exited)
		return;
	p->exited = true;
	p->exit_gen = gen;
	m->st.exited_pending++;
}

void dmaps_reap(struct dmaps *m, uint64_t gen)
{
	if (gen > m->gen)
		m->gen = gen;
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct dproc **pp = &m->procs[i];
		while (*pp) {
			struct dproc *p = *pp;
			if (p->exited && p->exit_gen <= gen) {
				*pp = p->next;
				m->st.regions -= p->cur.n;
				m->st.processes--;
				m->st.exited_pending--;
				proc_free(p);
				continue;
			}
			if (p->has_old && p->exec_gen <= gen) {
				maprange_release(&p->old);
				p->has_old = false;
			}
			pp = &p->next;
		}
	}
}

int dmaps_resolve(struct dmaps *m, pid_t pid, uint64_t pc, uint32_t *image, uint64_t *offset)
{
	const struct maprange *r;
	struct dproc *p;

	if (pc >= DMAPS_KERNEL_START) {
		*image = DIMAGE_KERNEL;
		*offset = pc;
		return 0;
	}
	p = proc_find(m, pid);
	if (!p)
		return -ESRCH;
	r = maprange_find(&p->cur, pc);
	if (!r && p->has_old)
		r = regions_find_linear(&p->old, pc);
	if (!r)
		return -ENOENT;
	*image = (uint32_t)r->tag;
	*offset = pc - r->start + r->pgoff;
	struct dimage *im = m->images[*image];
	if (!im->identified) {
		im->identified = true;
		dimage_identify(m, im, pid);
	}
	for (uint8_t i = 0; i < im->nloads; i++) {
		const struct dimage_load *l = &im->loads[i];
		if (*offset >= l->off && *offset < l->off + l->filesz) {
			*offset = *offset - l->off + l->vaddr;
			break;
		}
	}
	return 0;
}

/* The first line of /proc/PID/NAME (without its newline) into BUF; 0 or -errno. */
static int proc_read_line(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* PID's cgroup v2 path (the "0::PATH" line of /proc/PID/cgroup), read once while it lives. */
static void proc_read_cgroup(struct dproc *p)
{
	char buf[4096], *line, *save = NULL;
	char path[64];
	ssize_t n;
	int fd;

	if (p->cgroup_read || p->exited || p->pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;	/* gone: maybe the next lookup, or never */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	p->cgroup_read = true;
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			p->cgroup = strdup(line + 3);
			return;
		}
}

void dmaps_comm(struct dmaps *m, pid_t pid, const char *comm, bool exec)
{
	struct dproc *p = proc_find(m, pid);

	if (!p && !(p = proc_add(m, pid)))
		return;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	/* an exec is when a service manager's child has reached its own cgroup */
	if (exec && p->cgroup_read && !p->exited) {
		free(p->cgroup);
		p->cgroup = NULL;
		p->cgroup_read = false;
	}
	proc_read_cgroup(p);
}

int dmaps_task(struct dmaps *m, pid_t pid, const char **comm, const char **cgroup)
{
	struct dproc *p = pid > 0 ? proc_find(m, pid) : NULL;

	*cgroup = NULL;
	if (pid == 0) {
		*comm = "swapper";	/* the idle task, as perf names it */
		return 0;
	}
	if (!p) {
		*comm = "[unknown]";
		return -ESRCH;
	}
	if (!p->comm[0] && !p->exited && proc_read_line(pid, "comm", p->comm, sizeof(p->comm)))
		p->comm[0] = '\0';
	proc_read_cgroup(p);
	*comm = p->comm[0] ? p->comm : "[unknown]";
	*cgroup = p->cgroup;
	return 0;
}

int dmaps_task_at(struct dmaps *m, pid_t pid, uint64_t pc, const char **comm, const char **cgroup)
{
	int r = dmaps_task(m, pid, comm, cgroup);
	struct dproc *p = r == 0 && pid > 0 ? proc_find(m, pid) : NULL;

	if (p && p->has_old && p->old_comm[0] && pc < DMAPS_KERNEL_START && !maprange_find(&p->cur, pc) &&
	    regions_find_linear(&p->old, pc))
		*comm = p->old_comm;
	return r;
}

const struct dimage *dmaps_image(const struct dmaps *m, uint32_t id)
{
	return id < m->nimages ? m->images[id] : NULL;
}

size_t dmaps_image_count(const struct dmaps *m)
{
	return m->nimages;
}

void dmaps_get_stats(const struct dmaps *m, struct dmaps_stats *st)
{
	*st = m->st;
}

/* One line of /proc/PID/maps (parsed by core/procmaps). */
static int scan_line(struct dmaps *m, pid_t pid, char *line)
{
	struct procmaps_line ml;
	struct dmaps_mmap mm = { .pid = pid, .prot = PROT_EXEC };

	if (procmaps_parse_line(line, &ml) || !ml.exec || strcmp(ml.path, "[vsyscall]") == 0)
		return 0;
	mm.start = ml.start;
	mm.len = ml.end - ml.start;
	mm.pgoff = ml.pgoff;
	mm.dev = ml.ino ? makedev(ml.dev_major, ml.dev_minor) : 0;
	mm.ino = ml.ino;
	mm.path = ml.path;
	return dmaps_mmap(m, &mm);
}

int dmaps_scan_proc(struct dmaps *m, const char *proc_dir)
{
	DIR *d = opendir(proc_dir);
	struct dirent *de;
	char path[512], *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pid = (pid_t)atoi(de->d_name);
		snprintf(path, sizeof(path), "%s/%s/maps", proc_dir, de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;	/* gone meanwhile, or a kernel thread */
		struct dproc *p = proc_get(m, pid);
		if (!p) {
			err = -ENOMEM;
			fclose(f);
			break;
		}
		if (proc_read_line(pid, "comm", p->comm, sizeof(p->comm)))
			p->comm[0] = '\0';
		while (getline(&line, &cap, f) > 0) {
			err = scan_line(m, pid, line);
			if (err)
				break;
		}
		fclose(f);
		if (err)
			break;
	}
	free(line);
	closedir(d);
	return err;
}
