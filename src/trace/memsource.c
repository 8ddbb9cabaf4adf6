/* trace/memsource.c - the in-memory trace, its batch-replaying source (batches of instructions,
 * or of superblock-like executions on request), and the synthetic workload generator used by
 * unit tests and benches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "trace/memsource.h"

struct memtrace *memtrace_new(void)
{
	return calloc(1, sizeof(struct memtrace));
}

void memtrace_free(struct memtrace *t)
{
	if (!t)
		return;
	free(t->insns);
	free(t->refs);
	free(t->events);
	free(t);
}

int memtrace_insn(struct memtrace *t, uint32_t tid, uint64_t pc, uint8_t len, uint16_t flags)
{
	if (ALLOC_GROW(t->insns, t->n_insns + 1, t->cap_insns))
		return -ENOMEM;
	struct spent_trace_insn *in = &t->insns[t->n_insns++];
	memset(in, 0, sizeof(*in));
	in->pc = pc;
	in->tid = tid;
	in->len = len;
	in->flags = flags;
	in->ref0 = (uint32_t)t->n_refs;
	return 0;
}

int memtrace_ref(struct memtrace *t, uint64_t addr, uint32_t size, uint32_t kind)
{
	if (!t->n_insns)
		return -EINVAL;
	if (ALLOC_GROW(t->refs, t->n_refs + 1, t->cap_refs))
		return -ENOMEM;
	struct spent_trace_ref *r = &t->refs[t->n_refs++];
	r->addr = addr;
	r->size = size;
	r->kind = kind;
	t->insns[t->n_insns - 1].nrefs++;
	return 0;
}

int memtrace_event(struct memtrace *t, const struct spent_trace_event *ev)
{
	if (ALLOC_GROW(t->events, t->n_events + 1, t->cap_events))
		return -ENOMEM;
	t->events[t->n_events] = *ev;
	t->events[t->n_events].before = t->n_insns;
	t->n_events++;
	return 0;
}

/* The replaying source: windows of the instruction array (refs indexed from the trace's
 * first reference); events copied with 'before' rebased to the window. */
struct memsrc {
	const struct memtrace *t;
	size_t batch, pos, ev_pos;
	int done;
	struct spent_trace_event *evs;
	size_t cap_evs;
	/* batches of executions (want_execs): each a straight-line run of one thread's
	 * instructions (up to a taken branch, an event, MEMSRC_RUN_MAX), pointing to the
	 * template made where a run first started at its pc; a later run from that pc that
	 * matches a prefix of it shares it and its block number, else gets its own */
	int want_execs;
	struct spent_trace_exec *execs;
	size_t cap_execs;
	struct memsrc_tmpl **tab;	/* open addressing by first pc */
	size_t tab_cap, n_tmpl;
};
#define MEMSRC_RUN_MAX 8u

struct memsrc_tmpl {
	uint32_t block, n;
	struct spent_trace_insn insns[];	/* ref0 relative to the first's, tid and pid 0 */
};

/* Instructions from trace index I that may form one execution: a straight line of one
 * thread and process, at most MEMSRC_RUN_MAX, within [I, END). */
static uint32_t run_length(const struct memtrace *t, size_t i, size_t end)
{
	uint32_t n = 1;
	for (; n < MEMSRC_RUN_MAX && i + n < end; n++) {
		const struct spent_trace_insn *a = &t->insns[i + n - 1], *b = a + 1;
		if (b->pc != a->pc + a->len || b->tid != a->tid || b->pid != a->pid)
			break;
	}
	return n;
}

/* Whether instructions I.. (N of them) are a prefix of template M. */
static int tmpl_matches(const struct memtrace *t, const struct memsrc_tmpl *m, size_t i, uint32_t n)
{
	if (n > m->n)
		return 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct spent_trace_insn *a = &t->insns[i + k], *b = &m->insns[k];
		if (a->pc != b->pc || a->len != b->len || a->flags != b->flags || a->nrefs != b->nrefs ||
		    a->ref0 - t->insns[i].ref0 != b->ref0)
			return 0;
	}
	return 1;
}

/* The template for the N instructions from trace index I (made from the longest run there). */
static struct memsrc_tmpl *tmpl_get(struct memsrc *s, size_t i, uint32_t n)
{
	const struct memtrace *t = s->t;
	uint64_t pc = t->insns[i].pc;
	if (s->n_tmpl * 2 >= s->tab_cap) {	/* grow (templates of one pc follow each other) */
		size_t cap = s->tab_cap ? 2 * s->tab_cap : 1024;
		struct memsrc_tmpl **nt = calloc(cap, sizeof(*nt));
		if (!nt)
			return NULL;
		for (size_t k = 0; k < s->tab_cap; k++) {
			if (!s->tab[k])
				continue;
			size_t h = (s->tab[k]->insns[0].pc * 0x9E3779B97F4A7C15ull) >> 40 & (cap - 1);
			while (nt[h])
				h = (h + 1) & (cap - 1);
			nt[h] = s->tab[k];
		}
		free(s->tab);
		s->tab = nt;
		s->tab_cap = cap;
	}
	size_t h = (pc * 0x9E3779B97F4A7C15ull) >> 40 & (s->tab_cap - 1);
	for (; s->tab[h]; h = (h + 1) & (s->tab_cap - 1))
		if (s->tab[h]->insns[0].pc == pc && tmpl_matches(t, s->tab[h], i, n))
			return s->tab[h];
	uint32_t len = run_length(t, i, t->n_insns);
	struct memsrc_tmpl *m = malloc(sizeof(*m) + len * sizeof(m->insns[0]));
	if (!m)
		return NULL;
	m->block = (uint32_t)++s->n_tmpl;
	m->n = len;
	for (uint32_t k = 0; k < len; k++) {
		m->insns[k] = t->insns[i + k];
		m->insns[k].ref0 -= t->insns[i].ref0;
		m->insns[k].tid = m->insns[k].pid = 0;
	}
	s->tab[h] = m;
	return m;
}

/* The batch's instructions [POS, END) as executions; the batch's events (before rebased)
 * fall between them. */
static int make_execs(struct memsrc *s, size_t pos, size_t end, struct spent_trace_batch *out)
{
	const struct memtrace *t = s->t;
	size_t nx = 0, ev = 0;
	for (size_t i = pos; i < end;) {
		/* a run stops before the next event */
		while (ev < out->n_events && out->events[ev].before <= i - pos)
			ev++;
		size_t stop = ev < out->n_events ? pos + out->events[ev].before : end;
		uint32_t n = run_length(t, i, stop < end ? stop : end);
		struct memsrc_tmpl *m = tmpl_get(s, i, n);
		if (!m || ALLOC_GROW(s->execs, nx + 1, s->cap_execs))
			return -ENOMEM;
		struct spent_trace_exec *x = &s->execs[nx++];
		memset(x, 0, sizeof(*x));
		x->insns = m->insns;
		x->n_insns = n;
		x->ref0 = t->insns[i].ref0;
		x->n_refs = t->insns[i + n - 1].ref0 + t->insns[i + n - 1].nrefs - x->ref0;
		x->last_nrefs = t->insns[i + n - 1].nrefs;
		x->tid = t->insns[i].tid;
		x->pid = t->insns[i].pid;
		x->block = m->block;
		i += n;
	}
	out->insns = NULL;
	out->execs = s->execs;
	out->n_execs = nx;
	return 0;
}

static int memsrc_next(void *state, struct spent_trace_batch *out)
{
	struct memsrc *s = state;
	const struct memtrace *t = s->t;
	if (s->done)
		return 0;
	size_t n = t->n_insns - s->pos;
	if (n > s->batch)
		n = s->batch;
	size_t end = s->pos + n;
	int last = end == t->n_insns;
	/* zero copy: instructions keep absolute ref0, so the batch's refs start at the first */
	size_t r1 = end < t->n_insns ? t->insns[end].ref0 : t->n_refs;
	size_t ne = 0;
	while (s->ev_pos < t->n_events && (t->events[s->ev_pos].before < end ||
					   (last && t->events[s->ev_pos].before <= end))) {
		if (ALLOC_GROW(s->evs, ne + 1, s->cap_evs))
			return -ENOMEM;
		s->evs[ne] = t->events[s->ev_pos++];
		s->evs[ne].before -= s->pos;
		ne++;
	}
	memset(out, 0, sizeof(*out));
	out->insns = t->insns + s->pos;
	out->n_insns = n;
	out->refs = t->refs;
	out->n_refs = r1;
	out->events = s->evs;
	out->n_events = ne;
	out->first_index = s->pos;
	if (s->want_execs && make_execs(s, s->pos, end, out))
		return -ENOMEM;
	s->pos = end;
	if (last)
		s->done = 1;
	return 1;
}

static void memsrc_free(void *state)
{
	struct memsrc *s = state;
	if (!s)
		return;
	free(s->evs);
	free(s->execs);
	for (size_t i = 0; i < s->tab_cap; i++)
		free(s->tab[i]);
	free(s->tab);
	free(s);
}

static int memsrc_want_execs(void *state)
{
	struct memsrc *s = state;
	s->want_execs = 1;
	return 0;
}

static const struct spent_trace_source_ops memsrc_ops = {
	.name = "memory",
	.next = memsrc_next,
	.error = NULL,
	.free = memsrc_free,
	.want_execs = memsrc_want_execs,
};

int memtrace_source_new(const struct memtrace *t, size_t batch, struct spent_trace_source **out)
{
	struct memsrc *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->t = t;
	s->batch = batch ? batch : 4096;
	*out = spent_trace_source_new(&memsrc_ops, s);
	return *out ? 0 : -ENOMEM;
}

/* xorshift64*: small, deterministic, good enough for synthetic address streams */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

struct gen_thread {
	uint64_t pc, loop_start, loop_end, sweep, sp;
};

static int gen_one(struct memtrace *t, const struct memgen_config *c, struct gen_thread *g,
		   uint32_t tid, uint64_t *rs)
{
	const uint64_t code = 0x400000, data = 0x10000000, array = 0x20000000;
	uint64_t r = rnd(rs);
	uint8_t len = (uint8_t)(1 + r % 7);
	int err = memtrace_insn(t, tid, g->pc, len, 0);
	if (err)
		return err;
	g->pc += len;
	if (g->pc >= g->loop_end) {	/* loop back, or move to another loop */
		if ((r >> 8) % 16 == 0) {
			uint64_t span = c->code_bytes > 256 ? c->code_bytes - 256 : 1;
			g->loop_start = code + (rnd(rs) % span);
			g->loop_end = g->loop_start + 32 + rnd(rs) % 224;
		}
		g->pc = g->loop_start;
	}
	if ((r >> 16) % 100 >= c->data_pct)
		return 0;
	uint32_t kind = (uint32_t)(1 + (r >> 24) % 3);
	uint32_t size = 1u << ((r >> 28) % 4);
	uint64_t addr;
	switch ((r >> 32) % 4) {
	case 0:
		g->sweep = (g->sweep + 8) % (c->array_bytes ? c->array_bytes : 1);
		addr = array + g->sweep;
		break;
	case 1:
		addr = data + rnd(rs) % (c->data_bytes ? c->data_bytes : 1);
		break;
	case 2:
		addr = g->sp - (rnd(rs) % 256);
		break;
	default:
		addr = data + (rnd(rs) % 64) * 8;	/* hot globals */
		break;
	}
	return memtrace_ref(t, addr, size, kind);
}

int memgen_mixed(struct memtrace *t, const struct memgen_config *cfg)
{
	struct memgen_config c = *cfg;
	if (!c.threads)
		c.threads = 1;
	if (!c.slice)
		c.slice = 1000;
	if (c.code_bytes < 512)
		c.code_bytes = 512;
	struct gen_thread *g = calloc(c.threads, sizeof(*g));
	if (!g)
		return -ENOMEM;
	uint64_t rs = c.seed * 2654435761u + 88172645463325252ULL;
	for (uint32_t i = 0; i < c.threads; i++) {
		g[i].loop_start = g[i].pc = 0x400000 + i * 4096;
		g[i].loop_end = g[i].loop_start + 128;
		g[i].sp = 0x7ff000000000ULL - (uint64_t)i * 0x100000;
	}
	int err = 0;
	for (size_t n = 0; n < c.n_insns && !err; n++) {
		uint32_t th = (uint32_t)((n / c.slice) % c.threads);
		err = gen_one(t, &c, &g[th], 100 + th, &rs);
	}
	free(g);
	return err;
}
