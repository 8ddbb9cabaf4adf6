/* citcat/record_vfork.c - what a vfork child leaves in its parent's memory. A child made by
 * vfork (or clone with CLONE_VM and without CLONE_THREAD, as posix_spawn makes) runs unrecorded
 * in the parent's address space until it execs or exits, and the parent then sees every byte
 * it wrote: its stack frames, errno, variables the program sets in the child on purpose, the
 * syscall buffer. The replay runs only the parent, so those bytes are inputs: the recorder keeps
 * a copy of the parent's writable pages at the call's entry and records the pages that differ
 * at its exit as MEM effects of the call. (Soft-dirty bits would name the written pages
 * without the copy, but kernels built without CONFIG_MEM_SOFT_DIRTY accept clear_refs and
 * never set them.) The child's buffered calls are in the shared buffer too: they are not the
 * parent's, so they are skipped, their bytes reaching the replay with the buffer's pages. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "citcat/record_int.h"
#include "citcat/syscallbuf_abi.h"

#define PAGE 4096ULL
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PAGEMAP_BATCH 512

struct cc_vfork_snap {
	uint64_t *addr;		/* page addresses, ascending */
	uint8_t *data;		/* PAGE bytes per page */
	size_t n, cap;
};

/* One writable mapping of /proc/PID/maps (the kernel's own pages left out). */
struct wmap {
	uint64_t start, end;
	int anon;		/* no file behind it: a page never touched reads as zeros */
};

static int snap_add(struct cc_vfork_snap *s, uint64_t addr, const uint8_t *page)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *a = realloc(s->addr, cap * sizeof(*a));
		if (a)
			s->addr = a;
		uint8_t *d = a ? realloc(s->data, cap * PAGE) : NULL;
		if (!d)
			return -ENOMEM;
		s->data = d;
		s->cap = cap;
	}
	s->addr[s->n] = addr;
	memcpy(s->data + s->n * PAGE, page, PAGE);
	s->n++;
	return 0;
}

/* Calls FN for every page of the writable mappings that is present or swapped out, with its
 * bytes (pages that cannot be read are left out). */
typedef int (*page_fn)(struct cc_tracer *tr, void *ctx, const struct wmap *m, uint64_t addr,
		       const uint8_t *page);

static int walk_written_pages(struct cc_tracer *tr, page_fn fn, void *ctx)
{
	char path[64], line[CC_MAX_PATH + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", tr->pid);
	FILE *maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", tr->pid);
	int pm = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *page = malloc(PAGE);
	uint64_t ent[PAGEMAP_BATCH];
	int err = !maps || pm < 0 ? -errno : page ? 0 : -ENOMEM;
	while (!err && fgets(line, sizeof(line), maps)) {
		unsigned long long s, e;
		char perms[8], file[CC_MAX_PATH] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095[^\n]", &s, &e, perms, file) < 3 ||
		    perms[1] != 'w' || !strcmp(file, "[vvar]") || !strcmp(file, "[vsyscall]"))
			continue;
		struct wmap m = { s, e, file[0] != '/' };
		for (uint64_t a = s; !err && a < e;) {
			uint64_t n = (e - a) / PAGE < PAGEMAP_BATCH ? (e - a) / PAGE : PAGEMAP_BATCH;
			ssize_t got = pread(pm, ent, n * 8, (off_t)(a / PAGE * 8));
			if (got != (ssize_t)(n * 8)) {
				err = got < 0 ? -errno : -EIO;
				break;
			}
			for (uint64_t i = 0; !err && i < n; i++)
				if ((ent[i] & (PM_PRESENT | PM_SWAPPED)) &&
				    cc_mem_read(tr, a + i * PAGE, page, PAGE) == 0)
					err = fn(tr, ctx, &m, a + i * PAGE, page);
			a += n * PAGE;
		}
	}
	if (maps)
		fclose(maps);
	if (pm >= 0)
		close(pm);
	free(page);
	return err;
}

static int keep_page(struct cc_tracer *tr, void *ctx, const struct wmap *m, uint64_t addr,
		     const uint8_t *page)
{
	(void)tr;
	(void)m;
	return snap_add(ctx, addr, page);
}

void cc_vfork_release(struct cc_tracer *tr)
{
	if (!tr->vfork)
		return;
	free(tr->vfork->addr);
	free(tr->vfork->data);
	free(tr->vfork);
	tr->vfork = NULL;
}

int cc_vfork_enter(struct cc_tracer *tr)
{
	cc_vfork_release(tr);
	if (!(tr->vfork = calloc(1, sizeof(*tr->vfork))))
		return -ENOMEM;
	tr->vfork_tid = tr->pid;
	int err = walk_written_pages(tr, keep_page, tr->vfork);
	if (err) {
		cc_vfork_release(tr);
		snprintf(tr->err, tr->errlen, "cannot copy the program's memory before its vfork: %s",
			 strerror(-err));
	}
	return err;
}

struct diff_state {
	size_t next;		/* the first snapshot page not below the page being compared */
};

static int emit_if_changed(struct cc_tracer *tr, void *ctx, const struct wmap *m, uint64_t addr,
			   const uint8_t *page)
{
	struct diff_state *d = ctx;
	const struct cc_vfork_snap *s = tr->vfork;
	while (d->next < s->n && s->addr[d->next] < addr)
		d->next++;
	if (d->next < s->n && s->addr[d->next] == addr) {
		if (!memcmp(s->data + d->next * PAGE, page, PAGE))
			return 0;
	} else if (m->anon) {
		/* not there at the entry: the replay has zeros (a file mapping's page, the file's
		 * bytes, is recorded whatever it holds) */
		uint64_t v = 0;
		for (size_t i = 0; i < PAGE && !v; i += 8)
			memcpy(&v, page + i, 8);
		if (!v)
			return 0;
	}
	return cc_emit_mem_bytes(tr, addr, page, PAGE);	/* the bytes just read */
}

int cc_vfork_effects(struct cc_tracer *tr)
{
	if (!tr->vfork || tr->vfork_tid != tr->pid)
		return 0;
	struct diff_state d = { 0 };
	int err = walk_written_pages(tr, emit_if_changed, &d);
	if (!err && tr->sb_addr) {
		uint64_t used;
		if (cc_mem_read(tr, tr->sb_addr + CC_SB_USED_OFF, &used, sizeof(used)) == 0 &&
		    used >= tr->sb_drained && used <= CC_SB_SIZE - CC_SB_HDR && !(used & 7))
			tr->sb_drained = used;	/* the child's entries: not the parent's calls */
	}
	cc_vfork_release(tr);
	if (err)
		snprintf(tr->err, tr->errlen, "cannot compare the program's memory after its vfork: %s",
			 strerror(-err));
	return err;
}
