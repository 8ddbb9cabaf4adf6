/* core/procmaps.c - per-process maps of executable images (from perf side-band records or
 * /proc/PID/maps) and pc -> (image, offset) translation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/procmaps.h"

struct proc {
	pid_t pid;
	struct maprange_list maps;	/* tag: const struct image_info *, 0 for anonymous memory */
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
	int err = image_cache_get(c, SPENT_PROFILE_KERNEL_PATH, &pm->kernel);
	if (err) {
		free(pm);
		return err;
	}
	*out = pm;
	return 0;
}

static void proc_free(struct proc *p)
{
	maprange_release(&p->maps);
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

void maprange_release(struct maprange_list *l)
{
	free(l->r);
	*l = (struct maprange_list){ 0 };
}

int maprange_reserve(struct maprange_list *l, size_t more)
{
	if (more > SIZE_MAX - l->n)
		return -ENOMEM;
	return ALLOC_GROW(l->r, l->n + more, l->cap);
}

int maprange_insert(struct maprange_list *l, const struct maprange *m)
{
	size_t i = 0;

	if (maprange_reserve(l, 2))
		return -ENOMEM;
	while (i < l->n) {
		struct maprange *r = &l->r[i];
		if (r->end <= m->start || r->start >= m->end) {
			i++;
		} else if (r->start < m->start && r->end > m->end) {	/* split in two */
			struct maprange right = *r;
			right.pgoff += m->end - r->start;
			right.start = m->end;
			r->end = m->start;
			memmove(&l->r[i + 2], &l->r[i + 1], (l->n - i - 1) * sizeof(*r));
			l->r[i + 1] = right;
			l->n++;
			i += 2;
		} else if (r->start < m->start) {	/* keep the head */
			r->end = m->start;
			i++;
		} else if (r->end > m->end) {		/* keep the tail */
			r->pgoff += m->end - r->start;
			r->start = m->end;
			i++;
		} else {				/* covered: gone */
			memmove(r, r + 1, (l->n - i - 1) * sizeof(*r));
			l->n--;
		}
	}
	/* keep sorted by start */
	i = l->n;
	while (i > 0 && l->r[i - 1].start > m->start) {
		l->r[i] = l->r[i - 1];
		i--;
	}
	l->r[i] = *m;
	l->n++;
	return 0;
}

const struct maprange *maprange_find(const struct maprange_list *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->r[mid].end <= addr)
			lo = mid + 1;
		else if (l->r[mid].start > addr)
			hi = mid;
		else
			return &l->r[mid];
	}
	return NULL;
}

int maprange_copy(struct maprange_list *dst, const struct maprange_list *src)
{
	dst->n = 0;
	if (maprange_reserve(dst, src->n))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*src->r));
	dst->n = src->n;
	return 0;
}

static bool is_anon_name(const char *path)
{
	return !path[0] || (path[0] == '[' && strcmp(path, SPENT_PROFILE_VDSO_PATH)) ||
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
	struct maprange m = { .start = start, .end = start + len, .pgoff = pgoff, .tag = 0 };
	if (!is_anon_name(path)) {
		const struct image_info *img;
		char clean[SPENT_PROFILE_PATH_MAX];
		snprintf(clean, sizeof(clean), "%s", path);
		size_t l = strlen(clean);
		if (l > 10 && !strcmp(clean + l - 10, " (deleted)"))
			clean[l - 10] = 0;
		int err = image_cache_get(pm->cache, clean, &img);
		if (err)
			return err;
		m.tag = (uintptr_t)img;
	}
	return maprange_insert(&p->maps, &m);
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
	/* the kernel writes a newline of a file name as "\012" (and escapes nothing else, so a
	 * name really holding those four characters cannot be told apart: taken as a newline) */
	for (char *r = line + name_at, *w = r;; r++, w++) {
		if (r[0] == '\\' && r[1] == '0' && r[2] == '1' && r[3] == '2') {
			*w = '\n';
			r += 3;
		} else if (!(*w = *r)) {
			break;
		}
	}
	l = strlen(out->path);
	/* a deleted file keeps its identity through device and inode */
	if (l > 10 && !strcmp(line + name_at + l - 10, " (deleted)")) {
		line[name_at + l - 10] = '\0';
		out->deleted = true;
	}
	return 0;
}

/* /proc/PID/maps whole into *BUF (*LEN bytes): an empty file (a zombie's) is told before
 * anything is forgotten. */
static int read_maps_file(pid_t pid, char **buf, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = 0, cap = 0;
	char *b = NULL;
	int err = 0;
	for (;;) {
		if (n + 4096 + 1 > cap && (err = ALLOC_GROW(b, n + 4096 + 1, cap)))
			break;
		size_t got = fread(b + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0) {
			err = ferror(f) ? -EIO : 0;
			break;
		}
	}
	fclose(f);
	if (err) {
		free(b);
		return err;
	}
	if (b)
		b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int procmaps_load_pid(struct procmaps *pm, pid_t pid)
{
	char *buf = NULL;
	size_t len = 0;
	int err = read_maps_file(pid, &buf, &len);
	if (err)
		return err;
	/* a zombie's (or a kernel thread's) maps read empty: keep what was known, or a late
	 * sample of a command that has exited but is not reaped yet wiped its maps, and every
	 * later sample of it was unknown (70-95% of a short command's with -g) */
	if (!len) {
		free(buf);
		return -ESRCH;
	}
	procmaps_forget(pm, pid);
	err = proc_get(pm, pid) ? 0 : -ENOMEM;
	for (char *line = buf, *nl; !err && line < buf + len; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = buf + len;
		*nl = 0;
		struct procmaps_line ml;
		if (procmaps_parse_line(line, &ml) || !ml.exec || ml.end == ml.start)
			continue;
		err = procmaps_add(pm, pid, ml.start, ml.end - ml.start, ml.pgoff, ml.path);
	}
	free(buf);
	return err;
}

int procmaps_fork(struct procmaps *pm, pid_t parent, pid_t child)
{
	struct proc *pp = proc_find(pm, parent);
	procmaps_forget(pm, child);
	struct proc *c = proc_get(pm, child);
	if (!c)
		return -ENOMEM;
	if (!pp)
		return 0;
	return maprange_copy(&c->maps, &pp->maps);
}

int procmaps_lookup(struct procmaps *pm, pid_t pid, uint64_t addr, const struct image_info **img,
		    uint64_t *offset, enum spent_profile_unknown_reason *why)
{
	if (procmaps_is_kernel_addr(addr)) {
		*img = pm->kernel;
		*offset = addr;
		return 0;
	}
	struct proc *p = proc_find(pm, pid);
	if (!p) {
		*why = SPENT_PROFILE_UNK_PROCESS_GONE;
		return -ENOENT;
	}
	const struct maprange *m = maprange_find(&p->maps, addr);
	if (!m) {
		*why = SPENT_PROFILE_UNK_NO_MAPPING;
		return -ENOENT;
	}
	if (!m->tag) {
		*why = SPENT_PROFILE_UNK_ANON;
		return -ENOENT;
	}
	*img = (const struct image_info *)m->tag;
	*offset = image_file_to_vaddr(*img, addr - m->start + m->pgoff);
	return 0;
}

int procmaps_foreach(const struct procmaps *pm, pid_t pid, procmaps_map_fn fn, void *ctx)
{
	const struct proc *p = proc_find(pm, pid);
	int err = 0;
	for (size_t i = 0; p && i < p->maps.n && !err; i++) {
		const struct maprange *m = &p->maps.r[i];
		if (m->tag)
			err = fn(ctx, m->start, m->end, m->pgoff, (const struct image_info *)m->tag);
	}
	return err;
}
