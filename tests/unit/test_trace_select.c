/* test_trace_select.c - spent_trace_source_select: one process of a process-tree trace by pid or by
 * program name (an exec changes it), references and events kept with their instructions, and
 * the process tag that keeps address spaces apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spent/trace.h"
#include "trace/memsource.h"

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
	s = run(10, NULL, SPENT_TRACE_SELECT_TAG);
	assert_int_equal(s.first_pc, 0x1000);	/* the first process keeps its addresses */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_pid),
		cmocka_unit_test(test_by_program),
		cmocka_unit_test(test_tag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
