/* trace/source_select.c - one process (or program) out of a process-tree trace: a source that
 * wraps another and passes on only the instructions, references and events of the processes
 * picked by pid or by program name, optionally tagging addresses with the process so a cache
 * model keeps address spaces apart (see spent_trace_source_select in spent/trace.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "spent/trace.h"

struct sel_proc {
	uint32_t pid;
	uint32_t number;	/* 1, 2, ... in order of first appearance */
	int picked;		/* its current program is selected */
};

struct select_state {
	struct spent_trace_source *in;
	uint32_t pid;
	char *comm;
	int flags;
	struct sel_proc *procs;
	size_t n_procs, cap_procs;
	struct spent_trace_insn *insns;
	struct spent_trace_ref *refs;
	struct spent_trace_event *evs;
	struct spent_trace_exec *execs;
	size_t cap_insns, cap_refs, cap_evs, cap_execs;
};

static struct sel_proc *proc_find(struct select_state *s, uint32_t pid)
{
	for (size_t i = s->n_procs; i-- > 0;)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (ALLOC_GROW(s->procs, s->n_procs + 1, s->cap_procs))
		return NULL;
	struct sel_proc *p = &s->procs[s->n_procs++];
	p->pid = pid;
	p->number = (uint32_t)s->n_procs;
	p->picked = !s->comm && (!s->pid || s->pid == pid);
	return p;
}

/* The bits a process's addresses carry: its number less one in bits 48-63, so the first
 * process's (a single-process trace's) addresses stay as they are. */
static uint64_t trace_select_tag(int flags, uint32_t number)
{
	return (flags & SPENT_TRACE_SELECT_TAG) ? (uint64_t)(number - 1) << SPENT_TRACE_SELECT_TAG_SHIFT : 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Whether batch B's events all belong to process PID, none starting a process (nor, when
 * tagging, loading an image: its addresses get the tag), and PID is picked; then *OUT is B
 * and *TAG its process's tag. 1 yes, 0 no, -ENOMEM. */
static int uniform_picked(struct select_state *s, const struct spent_trace_batch *b, uint32_t pid,
			  struct spent_trace_batch *out, uint64_t *tag)
{
	for (size_t i = 0; i < b->n_events; i++)
		if (b->events[i].pid != pid || b->events[i].kind == SPENT_TRACE_EV_PROCESS_START ||
		    ((s->flags & SPENT_TRACE_SELECT_TAG) && b->events[i].kind == SPENT_TRACE_EV_IMAGE_LOAD))
			return 0;
	struct sel_proc *p = proc_find(s, pid);
	if (!p)
		return -ENOMEM;
	if (!p->picked)
		return 0;
	*out = *b;
	*tag = trace_select_tag(s->flags, p->number);
	return 1;
}

/* B's references from R0 on (a source may index a larger array), tagged with TAG, as OUT's. */
static int tagged_refs(struct select_state *s, const struct spent_trace_batch *b, uint32_t r0, uint64_t tag,
		       struct spent_trace_batch *out)
{
	size_t nr = b->n_refs - r0;
	if (ALLOC_GROW(s->refs, nr, s->cap_refs))
		return -ENOMEM;
	memcpy(s->refs, b->refs + r0, nr * sizeof(*s->refs));
	for (size_t i = 0; i < nr; i++)
		s->refs[i].addr |= tag;
	out->refs = s->refs;
	out->n_refs = nr;
	return 0;
}

/* A batch of one process throughout (its instructions and events, no process starting in
 * it: the case of nearly every batch) when that process is picked: passed on as it is when its
 * tag is 0 (the first process, or no tagging), else copied with the tag set in one tight pass.
 * 1 when handled, 0 when the batch needs filter_batch, -ENOMEM. */
static int uniform_batch(struct select_state *s, const struct spent_trace_batch *b,
			 struct spent_trace_batch *out)
{
	if (!b->n_insns)
		return 0;
	uint32_t pid = b->insns[0].pid;
	for (size_t i = 1; i < b->n_insns; i++)
		if (b->insns[i].pid != pid)
			return 0;
	uint64_t tag;
	int rc = uniform_picked(s, b, pid, out, &tag);
	if (rc <= 0 || !tag)
		return rc;
	uint32_t r0 = b->insns[0].ref0;
	if (ALLOC_GROW(s->insns, b->n_insns, s->cap_insns) || tagged_refs(s, b, r0, tag, out))
		return -ENOMEM;
	memcpy(s->insns, b->insns, b->n_insns * sizeof(*s->insns));
	for (size_t i = 0; i < b->n_insns; i++) {
		s->insns[i].pc |= tag;
		s->insns[i].ref0 -= r0;
	}
	out->insns = s->insns;
	return 1;
}

/* uniform_batch for a batch of executions: the tag goes into each execution's pc_tag. */
static int uniform_execs(struct select_state *s, const struct spent_trace_batch *b,
			 struct spent_trace_batch *out)
{
	if (!b->n_execs)
		return 0;
	uint32_t pid = b->execs[0].pid;
	for (size_t i = 1; i < b->n_execs; i++)
		if (b->execs[i].pid != pid)
			return 0;
	uint64_t tag;
	int rc = uniform_picked(s, b, pid, out, &tag);
	if (rc <= 0 || !tag)
		return rc;
	uint32_t r0 = b->execs[0].ref0;
	if (ALLOC_GROW(s->execs, b->n_execs, s->cap_execs) || tagged_refs(s, b, r0, tag, out))
		return -ENOMEM;
	memcpy(s->execs, b->execs, b->n_execs * sizeof(*s->execs));
	for (size_t i = 0; i < b->n_execs; i++) {
		s->execs[i].pc_tag |= tag;
		s->execs[i].ref0 -= r0;
	}
	out->execs = s->execs;
	return 1;
}

/* The event E of a batch being filtered: updates whether its process is picked; 1 when it is
 * passed on (copied to *OUT, an image load's addresses tagged as its process's), 0 when not,
 * -ENOMEM. */
static int filter_event(struct select_state *s, const struct spent_trace_event *e,
			struct spent_trace_event *out)
{
	struct sel_proc *ep = proc_find(s, e->pid);
	if (!ep)
		return -ENOMEM;
	if (e->kind == SPENT_TRACE_EV_PROCESS_START)
		ep->picked = (!s->pid || s->pid == e->pid) &&
			     (!s->comm || !strcmp(base_name(e->u.process.path), s->comm));
	if (!ep->picked)
		return 0;
	*out = *e;
	if (e->kind == SPENT_TRACE_EV_IMAGE_LOAD) {
		uint64_t tag = trace_select_tag(s->flags, ep->number);
		out->u.image.base |= tag;
		out->u.image.start |= tag;
		out->u.image.end |= tag;
	}
	return 1;
}

/* filter_batch for a batch of executions. */
static int filter_execs(struct select_state *s, const struct spent_trace_batch *b,
			struct spent_trace_batch *out)
{
	if (ALLOC_GROW(s->execs, b->n_execs, s->cap_execs) ||
	    ALLOC_GROW(s->refs, b->n_refs, s->cap_refs) ||
	    ALLOC_GROW(s->evs, b->n_events, s->cap_evs))
		return -ENOMEM;
	size_t nx = 0, ni = 0, nr = 0, ne = 0, ev = 0, pos = 0;
	for (size_t i = 0; i <= b->n_execs; i++) {
		for (; ev < b->n_events && (i == b->n_execs || b->events[ev].before <= pos); ev++) {
			int rc = filter_event(s, &b->events[ev], &s->evs[ne]);
			if (rc < 0)
				return rc;
			if (!rc)
				continue;
			s->evs[ne++].before = ni;
		}
		if (i == b->n_execs)
			break;
		const struct spent_trace_exec *x = &b->execs[i];
		pos += x->n_insns;
		struct sel_proc *p = proc_find(s, x->pid);
		if (!p)
			return -ENOMEM;
		if (!p->picked)
			continue;
		uint64_t tag = trace_select_tag(s->flags, p->number);
		size_t n = x->n_refs;
		s->execs[nx] = *x;
		s->execs[nx].pc_tag |= tag;
		s->execs[nx++].ref0 = (uint32_t)nr;
		for (size_t k = 0; k < n; k++) {
			s->refs[nr] = b->refs[x->ref0 + k];
			s->refs[nr++].addr |= tag;
		}
		ni += x->n_insns;
	}
	*out = *b;
	out->execs = s->execs;
	out->n_execs = nx;
	out->n_insns = ni;
	out->refs = s->refs;
	out->n_refs = nr;
	out->events = s->evs;
	out->n_events = ne;
	return 0;
}

/* The picked part of batch B into OUT (arrays owned by S). */
static int filter_batch(struct select_state *s, const struct spent_trace_batch *b, struct spent_trace_batch *out)
{
	if (ALLOC_GROW(s->insns, b->n_insns, s->cap_insns) ||
	    ALLOC_GROW(s->refs, b->n_refs, s->cap_refs) ||
	    ALLOC_GROW(s->evs, b->n_events, s->cap_evs))
		return -ENOMEM;
	size_t ni = 0, nr = 0, ne = 0, ev = 0;
	struct sel_proc *p = NULL;
	for (size_t i = 0; i <= b->n_insns; i++) {
		for (; ev < b->n_events && b->events[ev].before <= i; ev++) {
			int rc = filter_event(s, &b->events[ev], &s->evs[ne]);
			if (rc < 0)
				return rc;
			p = NULL;	/* the table may have moved */
			if (!rc)
				continue;
			s->evs[ne++].before = ni;
		}
		if (i == b->n_insns)
			break;
		const struct spent_trace_insn *in = &b->insns[i];
		if (!p || p->pid != in->pid)
			if (!(p = proc_find(s, in->pid)))
				return -ENOMEM;
		if (!p->picked)
			continue;
		uint64_t tag = trace_select_tag(s->flags, p->number);
		struct spent_trace_insn *o = &s->insns[ni++];
		*o = *in;
		o->pc |= tag;
		o->ref0 = (uint32_t)nr;
		for (uint32_t k = 0; k < in->nrefs; k++) {
			s->refs[nr] = b->refs[in->ref0 + k];
			s->refs[nr++].addr |= tag;
		}
	}
	*out = *b;
	out->insns = s->insns;
	out->n_insns = ni;
	out->refs = s->refs;
	out->n_refs = nr;
	out->events = s->evs;
	out->n_events = ne;
	return 0;
}

static int select_next(void *state, struct spent_trace_batch *out)
{
	struct select_state *s = state;
	struct spent_trace_batch b;
	int rc;
	while ((rc = spent_trace_source_next(s->in, &b)) > 0) {
		int err = b.execs ? uniform_execs(s, &b, out) : uniform_batch(s, &b, out);
		if (!err)
			err = b.execs ? filter_execs(s, &b, out) : filter_batch(s, &b, out);
		if (err < 0)
			return err;
		if (out->n_insns || out->n_events)
			return 1;
	}
	return rc;
}

static const char *select_error(void *state)
{
	struct select_state *s = state;
	return spent_trace_source_error(s->in);
}

static void select_free(void *state)
{
	struct select_state *s = state;
	spent_trace_source_free(s->in);
	free(s->comm);
	free(s->procs);
	free(s->insns);
	free(s->refs);
	free(s->evs);
	free(s->execs);
	free(s);
}

static int select_want_execs(void *state)
{
	struct select_state *s = state;
	return spent_trace_source_want_execs(s->in);
}

static int select_progress(void *state, uint64_t *done, uint64_t *total)
{
	struct select_state *s = state;
	return spent_trace_source_progress(s->in, done, total);
}

static int select_data_addresses(void *state)
{
	struct select_state *s = state;
	return spent_trace_source_data_addresses(s->in);
}

static const struct spent_trace_source_ops select_ops = {
	.name = "select",
	.next = select_next,
	.error = select_error,
	.free = select_free,
	.progress = select_progress,
	.want_execs = select_want_execs,
	.data_addresses = select_data_addresses,
};

uint64_t spent_trace_select_untag(uint64_t addr)
{
	return addr & ((1ull << SPENT_TRACE_SELECT_TAG_SHIFT) - 1);
}

int spent_trace_source_select(struct spent_trace_source *in, uint32_t pid, const char *comm, int flags,
			struct spent_trace_source **out)
{
	struct select_state *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (!s || (comm && !(s->comm = strdup(comm)))) {
		free(s);
		spent_trace_source_free(in);
		return -ENOMEM;
	}
	s->in = in;
	s->pid = pid;
	s->flags = flags;
	*out = spent_trace_source_new(&select_ops, s);
	return *out ? 0 : -ENOMEM;
}
