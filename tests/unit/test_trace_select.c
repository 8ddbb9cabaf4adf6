/* test_trace_select.c - spent_trace_source_select: one process of a process-tree trace by pid or by
 * program name (an exec changes it), references and events kept with their instructions, and
 * the process tag that keeps address spaces apart; batches of executions alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spent/trace.h"
#include "trace/memsource.h"

/* PID maps libc: base 0x7000, code [0x7100, 0x7200) */
static void libc_load(struct memtrace *t, uint32_t pid)
{
	struct spent_trace_event im = { .kind = SPENT_TRACE_EV_IMAGE_LOAD, .pid = pid };
	im.u.image.path = "/lib/libc.so.6";
	im.u.image.base = 0x7000;
	im.u.image.start = 0x7100;
	im.u.image.end = 0x7200;
	assert_int_equal(memtrace_event(t, &im), 0);
}

/* pid 10 runs sh, forks pid 11 (sh), which execs sort; pid 10 runs on after it. */
static struct memtrace *tree(void)
{
	struct memtrace *t = memtrace_new();
	struct spent_trace_event e = { .kind = SPENT_TRACE_EV_PROCESS_START, .pid = 10 };
	e.u.process.path = "/bin/sh";
	assert_int_equal(memtrace_event(t, &e), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(memtrace_insn(t, 1, 0x1000 + i, 1, 0), 0);
		t->insns[t->n_insns - 1].pid = 10;
		assert_int_equal(memtrace_ref(t, 0x5000, 8, SPENT_TRACE_REF_READ), 0);
	}
	e.pid = 11;
	e.u.process.forked = 1;
	assert_int_equal(memtrace_event(t, &e), 0);
	assert_int_equal(memtrace_insn(t, 1, 0x1000, 1, 0), 0);
	t->insns[t->n_insns - 1].pid = 11;
	e.u.process.forked = 0;
	e.u.process.path = "/usr/bin/sort";
	assert_int_equal(memtrace_event(t, &e), 0);
	for (int i = 0; i < 2; i++) {
		if (i == 1) {	/* a library mapped amid sort's instructions */
			libc_load(t, 11);
		}
		assert_int_equal(memtrace_insn(t, 1, 0x2000 + i, 1, 0), 0);
		t->insns[t->n_insns - 1].pid = 11;
		assert_int_equal(memtrace_ref(t, 0x5000, 4, SPENT_TRACE_REF_WRITE), 0);
		assert_int_equal(memtrace_ref(t, 0x6000, 4, SPENT_TRACE_REF_READ), 0);
	}
	assert_int_equal(memtrace_insn(t, 1, 0x1003, 1, 0), 0);
	t->insns[t->n_insns - 1].pid = 10;
	return t;
}

struct seen {
	size_t insns, refs, process_events;
	uint64_t first_pc, last_ref;
	uint64_t image_base, image_start, image_end;	/* of the last image load */
};

static struct seen run(uint32_t pid, const char *comm, int flags)
{
	struct memtrace *t = tree();
	struct spent_trace_source *in, *src;
	struct spent_trace_batch b;
	struct seen s = { 0 };
	int rc;
	assert_int_equal(memtrace_source_new(t, 2, &in), 0);	/* small batches: selection across them */
	assert_int_equal(spent_trace_source_select(in, pid, comm, flags, &src), 0);
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		for (size_t i = 0; i < b.n_insns; i++) {
			if (!s.insns && !i)
				s.first_pc = b.insns[0].pc;
			assert_true(b.insns[i].ref0 + b.insns[i].nrefs <= b.n_refs);
			/* a batch's references are those its instructions name (a batch passed on
			 * as it is may point into a larger array) */
			s.refs += b.insns[i].nrefs;
			if (b.insns[i].nrefs)
				s.last_ref = b.refs[b.insns[i].ref0 + b.insns[i].nrefs - 1].addr;
		}
		for (size_t i = 0; i < b.n_events; i++) {
			assert_true(b.events[i].before <= b.n_insns);
			s.process_events += b.events[i].kind == SPENT_TRACE_EV_PROCESS_START;
			if (b.events[i].kind == SPENT_TRACE_EV_IMAGE_LOAD) {
				s.image_base = b.events[i].u.image.base;
				s.image_start = b.events[i].u.image.start;
				s.image_end = b.events[i].u.image.end;
			}
		}
		s.insns += b.n_insns;
	}
	assert_int_equal(rc, 0);
	spent_trace_source_free(src);
	memtrace_free(t);
	return s;
}

static void test_by_pid(void **state)
{
	struct seen s = run(10, NULL, 0);
	assert_int_equal(s.insns, 4);
	assert_int_equal(s.refs, 3);
	assert_int_equal(s.process_events, 1);
	s = run(11, NULL, 0);
	assert_int_equal(s.insns, 3);
	assert_int_equal(s.refs, 4);
	assert_int_equal(s.process_events, 2);
	assert_int_equal(s.first_pc, 0x1000);
	s = run(0, NULL, 0);
	assert_int_equal(s.insns, 7);
	assert_int_equal(s.refs, 7);
}

static void test_by_program(void **state)
{
	struct seen s = run(0, "sort", 0);	/* pid 11 after its exec only */
	assert_int_equal(s.insns, 2);
	assert_int_equal(s.refs, 4);
	assert_int_equal(s.first_pc, 0x2000);
	assert_int_equal(s.last_ref, 0x6000);
	s = run(0, "sh", 0);	/* pid 10 and pid 11 before its exec */
	assert_int_equal(s.insns, 5);
	s = run(10, "sort", 0);
	assert_int_equal(s.insns, 0);
}

static void test_tag(void **state)
{
	struct seen s = run(11, NULL, SPENT_TRACE_SELECT_TAG);
	assert_int_equal(s.first_pc, (1ull << 48) | 0x1000);	/* pid 11: the second process seen */
	assert_int_equal(s.last_ref, (1ull << 48) | 0x6000);
	assert_int_equal(spent_trace_select_untag(s.last_ref), 0x6000);
	/* an image load's addresses carry the tag too: symbols read at its base name the
	 * process's tagged addresses */
	assert_int_equal(s.image_base, (1ull << 48) | 0x7000);
	assert_int_equal(s.image_start, (1ull << 48) | 0x7100);
	assert_int_equal(s.image_end, (1ull << 48) | 0x7200);
	s = run(11, NULL, 0);
	assert_int_equal(s.image_start, 0x7100);	/* untouched without tagging */
	s = run(10, NULL, SPENT_TRACE_SELECT_TAG);
	assert_int_equal(s.first_pc, 0x1000);	/* the first process keeps its addresses */
}

/* An image load inside a batch of one process's instructions only (the pass-through path,
 * which copies no event): tagged all the same. */
static void test_tag_image_in_one_process_batch(void **state)
{
	struct memtrace *t = memtrace_new();
	struct spent_trace_event e = { .kind = SPENT_TRACE_EV_PROCESS_START, .pid = 10 };
	e.u.process.path = "/bin/sh";
	for (uint32_t pid = 10; pid <= 11; pid++) {
		e.pid = pid;
		e.u.process.forked = pid == 11;
		assert_int_equal(memtrace_event(t, &e), 0);
		for (int i = 0; i < 4; i++) {
			if (pid == 11 && i == 3) {	/* batch [2, 4) of pid 11: no process start */
				libc_load(t, 11);
			}
			assert_int_equal(memtrace_insn(t, 1, 0x1000 + (uint64_t)i, 1, 0), 0);
			t->insns[t->n_insns - 1].pid = pid;
		}
	}
	struct spent_trace_source *in, *src;
	assert_int_equal(memtrace_source_new(t, 2, &in), 0);
	assert_int_equal(spent_trace_source_select(in, 0, NULL, SPENT_TRACE_SELECT_TAG, &src), 0);
	struct spent_trace_batch b;
	uint64_t start = 0;
	int rc;
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		for (size_t i = 0; i < b.n_events; i++)
			if (b.events[i].kind == SPENT_TRACE_EV_IMAGE_LOAD)
				start = b.events[i].u.image.start;
	assert_int_equal(rc, 0);
	assert_int_equal(start, (1ull << 48) | 0x7100);
	spent_trace_source_free(src);
	memtrace_free(t);
}

/* The stream SRC yields as instructions (executions expanded: pc with its tag, tid, pid,
 * references by absolute index) and references, events with their absolute position. */
struct flat {
	struct spent_trace_insn insns[64];
	struct spent_trace_ref refs[64];
	size_t ev_at[16];
	uint32_t ev_kind[16];
	size_t n_insns, n_refs, n_evs, n_execs;
};

static void flatten(struct spent_trace_source *src, struct flat *f)
{
	struct spent_trace_batch b;
	int rc;
	memset(f, 0, sizeof(*f));
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		size_t base = f->n_insns;
		for (size_t i = 0; i < b.n_events; i++) {
			assert_true(f->n_evs < 16);
			f->ev_at[f->n_evs] = base + b.events[i].before;
			f->ev_kind[f->n_evs++] = b.events[i].kind;
		}
		for (size_t i = 0; i < b.n_insns && !b.execs; i++) {
			struct spent_trace_insn in = b.insns[i];
			for (uint32_t k = 0; k < in.nrefs; k++)
				f->refs[f->n_refs++] = b.refs[in.ref0 + k];
			in.ref0 = (uint32_t)(f->n_refs - in.nrefs);
			f->insns[f->n_insns++] = in;
		}
		for (size_t i = 0; i < b.n_execs; i++) {
			const struct spent_trace_exec *x = &b.execs[i];
			f->n_execs++;
			for (uint32_t k = 0; k < x->n_insns; k++) {
				struct spent_trace_insn in = x->insns[k];
				in.pc |= x->pc_tag;
				in.tid = x->tid;
				in.pid = x->pid;
				if (k == x->n_insns - 1)
					in.nrefs = (uint8_t)x->last_nrefs;
				for (uint32_t r = 0; r < in.nrefs; r++)
					f->refs[f->n_refs++] = b.refs[x->ref0 + in.ref0 + r];
				in.ref0 = (uint32_t)(f->n_refs - in.nrefs);
				f->insns[f->n_insns++] = in;
			}
		}
		assert_int_equal(f->n_insns - base, b.n_insns);
	}
	assert_int_equal(rc, 0);
}

/* Batches of superblock executions pass through the selection as instruction batches do:
 * the same instructions, references (tagged alike: pc_tag) and events at the same places,
 * for a whole batch of one process and for batches it has to filter. */
static void test_executions_select_alike(void **state)
{
	static const struct { uint32_t pid; const char *comm; int flags; } cases[] = {
		{ 0, NULL, SPENT_TRACE_SELECT_TAG }, { 11, NULL, SPENT_TRACE_SELECT_TAG },
		{ 0, "sort", SPENT_TRACE_SELECT_TAG }, { 0, "sh", 0 }, { 10, NULL, 0 },
	};
	static const size_t batch[] = { 2, 3, 100 };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t bs = 0; bs < 3; bs++) {
			struct memtrace *t = tree();
			struct flat a, x;
			for (int execs = 0; execs < 2; execs++) {
				struct spent_trace_source *in, *src;
				assert_int_equal(memtrace_source_new(t, batch[bs], &in), 0);
				assert_int_equal(spent_trace_source_select(in, cases[c].pid, cases[c].comm,
									   cases[c].flags, &src), 0);
				if (execs)
					assert_int_equal(spent_trace_source_want_execs(src), 0);
				flatten(src, execs ? &x : &a);
				spent_trace_source_free(src);
			}
			assert_true(x.n_execs > 0 || a.n_insns == 0);
			assert_int_equal(x.n_insns, a.n_insns);
			assert_int_equal(x.n_refs, a.n_refs);
			assert_int_equal(x.n_evs, a.n_evs);
			assert_memory_equal(x.insns, a.insns, a.n_insns * sizeof(a.insns[0]));
			assert_memory_equal(x.refs, a.refs, a.n_refs * sizeof(a.refs[0]));
			assert_memory_equal(x.ev_at, a.ev_at, a.n_evs * sizeof(a.ev_at[0]));
			assert_memory_equal(x.ev_kind, a.ev_kind, a.n_evs * sizeof(a.ev_kind[0]));
			memtrace_free(t);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_pid),
		cmocka_unit_test(test_by_program),
		cmocka_unit_test(test_tag),
		cmocka_unit_test(test_tag_image_in_one_process_batch),
		cmocka_unit_test(test_executions_select_alike),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
