/* core/procmaps.c - per-process maps of executable images (from perf side-band records or
 * /proc/PID/maps) and pc -> (image, offset) translation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/procmaps.h"

struct map {
	uint64_t start, end, pgoff;
	const struct image_info *img;	/* NULL: anonymous executable memory */
};

struct proc {
	pid_t pid;
	struct map *maps;	/* sorted by start, non-overlapping */
	size_t n, cap;
	struct proc *next;
};

#define PROC_BUCKETS 1024

struct procmaps {
	struct image_cache *cache;
	struct proc *bucket[PROC_BUCKETS];
	const struct image_info *kernel;
};

int procmaps_new(struct image_cache *c, struct procmaps **out)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->cache = c;
	int err = image_cache_get(c, PROFILE_KERNEL_PATH, &pm->kernel);
	if (err) {
		free(pm);
		return err;
	}
	*out = pm;
	return 0;
}

static void proc_free(struct proc *p)
{
	free(p->maps);
	free(p);
}

void procmaps_free(struct procmaps *pm)
{
	if (!pm)
		return;
	for (int i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *p = pm->bucket[i], *n; p; p = n) {
			n = p->next;
			proc_free(p);
		}
	free(pm);
}

static struct proc *proc_find(const struct procmaps *pm, pid_t pid)
{
	for (struct proc *p = pm->bucket[(unsigned)pid % PROC_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *proc_get(struct procmaps *pm, pid_t pid)
{
	struct proc *p = proc_find(pm, pid);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	unsigned b = (unsigned)pid % PROC_BUCKETS;
	p->next = pm->bucket[b];
	pm->bucket[b] = p;
	return p;
}

bool procmaps_known(const struct procmaps *pm, pid_t pid)
{
	return proc_find(pm, pid) != NULL;
}

void procmaps_forget(struct procmaps *pm, pid_t pid)
{
	struct proc **pp = &pm->bucket[(unsigned)pid % PROC_BUCKETS];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid) {
			struct proc *p = *pp;
			*pp = p->next;
			proc_free(p);
			return;
		}
}

static int maps_reserve(struct proc *p, size_t n)
{
	if (p->n + n <= p->cap)
		return 0;
	size_t ncap = p->cap ? p->cap * 2 : 16;
	while (ncap < p->n + n)
		ncap *= 2;
	struct map *m = realloc(p->maps, ncap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->maps = m;
	p->cap = ncap;
	return 0;
}

/* Insert M into P, cutting whatever it overlaps (a new mmap replaces old pages). */
static int maps_insert(struct proc *p, struct map m)
{
	if (maps_reserve(p, 2))
		return -ENOMEM;
	size_t w = 0, n = p->n;
	struct map tail = { 0 };
	bool have_tail = false;
	for (size_t i = 0; i < n; i++) {
		struct map o = p->maps[i];
		if (o.end <= m.start || o.start >= m.end) {
			p->maps[w++] = o;
			continue;
		}
		if (o.start < m.start) {	/* keep the head */
			struct map h = o;
			h.end = m.start;
			p->maps[w++] = h;
		}
		if (o.end > m.end) {		/* keep the tail */
			tail = o;
			tail.pgoff += m.end - o.start;
			tail.start = m.end;
			have_tail = true;
		}
	}
	p->maps[w++] = m;
	if (have_tail)
		p->maps[w++] = tail;
	p->n = w;
	/* insertion sort: nearly sorted already */
	for (size_t i = 1; i < p->n; i++) {
		struct map k = p->maps[i];
		size_t j = i;
		while (j > 0 && p->maps[j - 1].start > k.start) {
			p->maps[j] = p->maps[j - 1];
			j--;
		}
		p->maps[j] = k;
	}
	return 0;
}

static bool is_anon_name(const char *path)
{
	return !path[0] || (path[0] == '[' && strcmp(path, PROFILE_VDSO_PATH)) ||
	       !strncmp(path, "//anon", 6) || !strncmp(path, "/memfd:", 7) ||
	       !strncmp(path, "anon_inode:", 11);
}

int procmaps_add(struct procmaps *pm, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		 const char *path)
{
	if (!len || start + len < start)
		return -EINVAL;
	struct proc *p = proc_get(pm, pid);
	if (!p)
		return -ENOMEM;
	struct map m = { .start = start, .end = start + len, .pgoff = pgoff, .img = NULL };
	if (!is_anon_name(path)) {
		char clean[PROFILE_PATH_MAX];
		snprintf(clean, sizeof(clean), "%s", path);
		size_t l = strlen(clean);
		if (l > 10 && !strcmp(clean + l - 10, " (deleted)"))
			clean[l - 10] = 0;
		int err = image_cache_get(pm->cache, clean, &m.img);
		if (err)
			return err;
	}
	return maps_insert(p, m);
}

int procmaps_parse_line(char *line, struct procmaps_line *out)
{
	unsigned long long s, e, off, ino;
	char perms[8];
	int name_at = 0;
	size_t l;

	memset(out, 0, sizeof(*out));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &out->dev_major,
		   &out->dev_minor, &ino, &name_at) < 7 || !name_at || e < s)
		return -EINVAL;
	out->start = s;
	out->end = e;
	out->pgoff = off;
	out->ino = ino;
	out->exec = strchr(perms, 'x') != NULL;
	line[name_at + strcspn(line + name_at, "\n")] = '\0';
	out->path = line + name_at;
	l = strlen(out->path);
	/* a deleted file keeps its identity through device and inode */
	if (l > 10 && !strcmp(line + name_at + l - 10, " (deleted)")) {
		line[name_at + l - 10] = '\0';
		out->deleted = true;
	}
	return 0;
}

int procmaps_load_pid(struct procmaps *pm, pid_t pid)
{
	char path[64], line[PROFILE_PATH_MAX + 128];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	procmaps_forget(pm, pid);
	struct proc *p = proc_get(pm, pid);
	int err = p ? 0 : -ENOMEM;
	while (!err && fgets(line, sizeof(line), f)) {
		struct procmaps_line ml;
		if (procmaps_parse_line(line, &ml) || !ml.exec || ml.end == ml.start)
			continue;
		err = procmaps_add(pm, pid, ml.start, ml.end - ml.start, ml.pgoff, ml.path);
	}
	fclose(f);
	return err;
}

int procmaps_fork(struct procmaps *pm, pid_t parent, pid_t child)
{
	struct proc *pp = proc_find(pm, parent);
	procmaps_forget(pm, child);
	struct proc *c = proc_get(pm, child);
	if (!c)
		return -ENOMEM;
	if (!pp || !pp->n)
		return 0;
	if (maps_reserve(c, pp->n))
		return -ENOMEM;
	memcpy(c->maps, pp->maps, pp->n * sizeof(*c->maps));
	c->n = pp->n;
	return 0;
}

int procmaps_lookup(struct procmaps *pm, pid_t pid, uint64_t addr, const struct image_info **img,
		    uint64_t *offset, enum profile_unknown_reason *why)
{
	if (procmaps_is_kernel_addr(addr)) {
		*img = pm->kernel;
		*offset = addr;
		return 0;
	}
	struct proc *p = proc_find(pm, pid);
	if (!p) {
		*why = PROFILE_UNK_PROCESS_GONE;
		return -ENOENT;
	}
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n || p->maps[lo].start > addr) {
		*why = PROFILE_UNK_NO_MAPPING;
		return -ENOENT;
	}
	const struct map *m = &p->maps[lo];
	if (!m->img) {
		*why = PROFILE_UNK_ANON;
		return -ENOENT;
	}
	*img = m->img;
	*offset = image_file_to_vaddr(m->img, addr - m->start + m->pgoff);
	return 0;
}

int procmaps_foreach(const struct procmaps *pm, pid_t pid, procmaps_map_fn fn, void *ctx)
{
	const struct proc *p = proc_find(pm, pid);
	int err = 0;
	for (size_t i = 0; p && i < p->n && !err; i++)
		if (p->maps[i].img)
			err = fn(ctx, p->maps[i].start, p->maps[i].end, p->maps[i].pgoff, p->maps[i].img);
	return err;
}
