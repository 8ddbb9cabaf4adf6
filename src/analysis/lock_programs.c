/* analysis/lock_programs.c - per-program tables for the lock model: each process of a tree
 * has its own (its libc may be mapped elsewhere; a forked child's stream names its images
 * afresh), and so has each program a pid execs (its images, its locks at addresses an earlier
 * program of the pid may have used too). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lock_programs.h"
#include "core/alloc.h"
#include "core/path.h"

void lock_programs_init(struct lock_programs *lp, struct symtab *syms,
			bool (*has_locks)(void *ctx, uint32_t pid, uint32_t stream), void *ctx)
{
	memset(lp, 0, sizeof(*lp));
	lp->shared.st = syms;
	lp->shared.stale = true;
	lp->has_locks = has_locks;
	lp->ctx = ctx;
}

void lock_programs_release(struct lock_programs *lp)
{
	for (size_t i = 0; i < lp->n_procs; i++) {
		symtab_free(lp->procs[i].st);
		free(lp->procs[i].exe);
	}
	free(lp->procs);
	free(lp->streams);
}

uint32_t lock_programs_stream(const struct lock_programs *lp, uint32_t pid)
{
	for (size_t i = 0; i < lp->n_streams; i++)
		if (lp->streams[i].pid == pid)
			return lp->streams[i].stream;
	return 0;
}

static struct lock_program *program_find(struct lock_programs *lp, uint32_t pid)
{
	if (lp->cur < lp->n_procs && lp->procs[lp->cur].pid == pid && !lp->procs[lp->cur].retired)
		return &lp->procs[lp->cur];
	for (size_t i = 0; i < lp->n_procs; i++)
		if (lp->procs[i].pid == pid && !lp->procs[i].retired) {
			lp->cur = i;
			return &lp->procs[i];
		}
	return NULL;
}

/* P's program has ended (exit or exec): keep its table, retired, while it names locks */
static void program_end(struct lock_programs *lp, struct lock_program *p)
{
	if (lp->has_locks(lp->ctx, p->pid, p->stream)) {
		p->retired = true;
		return;
	}
	symtab_free(p->st);
	free(p->exe);
	*p = lp->procs[--lp->n_procs];
	lp->cur = SIZE_MAX;
}

/* PID's table; a new one for its program STREAM (executable EXE, or NULL) when it has none or
 * when FRESH (a process record: a fork names its images afresh, an exec starts another
 * program). NULL on ENOMEM. */
static struct lock_program *program_get(struct lock_programs *lp, uint32_t pid, uint32_t stream,
					const char *exe, bool fresh)
{
	struct lock_program *p = program_find(lp, pid);
	if (p && !fresh)
		return p;
	if (p)
		program_end(lp, p);
	lp->cur = SIZE_MAX;
	if (ALLOC_GROW(lp->procs, lp->n_procs + 1, lp->cap_procs)) {
		lp->oom = 1;
		return NULL;
	}
	p = &lp->procs[lp->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->stream = stream;
	if (!(p->st = symtab_new()) || (exe && !(p->exe = strdup(exe))))
		lp->oom = 1;
	p->stale = true;
	return p;
}

struct lock_program *lock_programs_lookup(struct lock_programs *lp, uint32_t pid)
{
	struct lock_program *p = pid && lp->procs ? program_find(lp, pid) : NULL;
	return p ? p : &lp->shared;
}

/* glibc's dynamic linker by its file name: ld-linux-x86-64.so.2 (ld-linux.so.2, ld-2.NN.so
 * in older releases). Not musl's ld-musl-*.so.1, which is its libc, bare locks and all. */
static bool is_dynamic_linker(const char *path)
{
	const char *base = path_base_name(path);
	return !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-2.", 5);
}

static void set_stream(struct lock_programs *lp, uint32_t pid, uint32_t stream)
{
	size_t i = 0;
	while (i < lp->n_streams && lp->streams[i].pid != pid)
		i++;
	if (i == lp->n_streams) {
		if (ALLOC_GROW(lp->streams, lp->n_streams + 1, lp->cap_streams)) {
			lp->oom = 1;
			return;
		}
		lp->n_streams++;
	}
	lp->streams[i].pid = pid;
	lp->streams[i].stream = stream;
}

/* Image loads go to their program's table; a process record starts an empty one; a program
 * that exits without locks drops its table (a build's thousand processes each read libc). */
void lock_programs_event(struct lock_programs *lp, const struct spent_trace_event *ev)
{
	struct lock_program *p = NULL;
	if (ev->kind == SPENT_TRACE_EV_PROCESS_START && ev->pid)
		set_stream(lp, ev->pid, ev->u.process.stream);
	if (!lp->shared.st)
		return;	/* no symbols wanted */
	switch (ev->kind) {
	case SPENT_TRACE_EV_IMAGE_LOAD:
		if (!ev->u.image.path)
			return;
		p = ev->pid ? program_get(lp, ev->pid, lock_programs_stream(lp, ev->pid), NULL, false) :
			      &lp->shared;
		if (p && is_dynamic_linker(ev->u.image.path)) {
			p->rtld_start = ev->u.image.start;
			p->rtld_end = ev->u.image.end;
		}
		if (p && p->st) {
			(void)symtab_add_image(p->st, ev->u.image.path, ev->u.image.base);
			p->stale = true;
		}
		return;
	case SPENT_TRACE_EV_PROCESS_START:
		if (ev->pid)
			(void)program_get(lp, ev->pid, ev->u.process.stream, ev->u.process.path, true);
		return;
	case SPENT_TRACE_EV_EXIT:
		if (ev->pid && (p = program_find(lp, ev->pid)))
			program_end(lp, p);
		return;
	default:
		return;
	}
}

/* PID's program STREAM, current or retired; NULL when it has no table */
static const struct lock_program *program_of(const struct lock_programs *lp, uint32_t pid,
					     uint32_t stream)
{
	for (size_t i = 0; pid && i < lp->n_procs; i++)
		if (lp->procs[i].pid == pid && lp->procs[i].stream == stream)
			return &lp->procs[i];
	return NULL;
}

struct symtab *lock_programs_symtab(const struct lock_programs *lp, uint32_t pid, uint32_t stream)
{
	const struct lock_program *p = program_of(lp, pid, stream);
	return p ? p->st : lp->shared.st;
}

const char *lock_programs_exe(const struct lock_programs *lp, uint32_t pid, uint32_t stream)
{
	const struct lock_program *p = program_of(lp, pid, stream);
	return p ? p->exe : NULL;
}
