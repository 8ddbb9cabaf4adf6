/* trace/memsource.c - the in-memory trace, its batch-replaying source, and the synthetic
 * workload generator used by unit tests and benches. */
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
};

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
	free(s);
}

static const struct spent_trace_source_ops memsrc_ops = {
	.name = "memory",
	.next = memsrc_next,
	.error = NULL,
	.free = memsrc_free,
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
