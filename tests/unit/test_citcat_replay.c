/* tests/unit/test_citcat_replay.c - the CITCAT simulator's start state and its replay loop, on
 * small synthetic recordings (an anonymous code page, events, an exit): the x87/SSE state a
 * real execve leaves, a cpuid site patched into a trapping instruction answered from the
 * recording (Unicorn stops after such a handled instruction; both replay paths resume), and an
 * invalid instruction without a recorded cpuid reported, not skipped. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "citcat/citcat.h"
#include "citcat/recording.h"

#define CODE 0x400000ULL	/* the code page; data in the page after it (Unicorn 2.0.1 leaks
				 * a bitmap when a page holding translated code is written) */
#define REG_RIP 16
#define REG_RSP 19
#define REG_EFLAGS 18

/* Programs, assembled into .rodata and copied to CODE. */
#define PROGRAM(id, text)                                                                   \
	extern const uint8_t id[], id##_end[];                                              \
	__asm__(".pushsection .rodata.citcat_programs, \"a\"\n" #id ":\n" text "\n" #id "_end:\n" \
		".popsection\n");

/* exit((fcw >> 8) + (mxcsr >> 8) + xmm0 after an fxsave, pxor, fxrstor round trip with 5):
 * 3 + 0x1f + 5 = 39 in the state execve leaves */
PROGRAM(prog_fpu_state,
	"fnstcw 0x401000; movzbl 0x401001, %edi; stmxcsr 0x401008; movzbl 0x401009, %eax;"
	"add %eax, %edi; mov $5, %eax; movd %eax, %xmm0; fxsave 0x401200; pxor %xmm0, %xmm0;"
	"fxrstor 0x401200; movd %xmm0, %eax; add %eax, %edi; mov $231, %eax; syscall")
/* a patched cpuid site (ud2), then exit(ebx), which only the recorded answer sets */
PROGRAM(prog_patched_cpuid, "ud2; mov %ebx, %edi; mov $231, %eax; syscall")

struct synth {
	char dir[64];
	struct cc_writer w;
	FILE *f;
};

static void put_u(struct synth *s, uint64_t v)
{
	assert_int_equal(binbuf_put_uvarint(&s->w.payload, v), 0);
}

static void emit(struct synth *s, enum cc_rec_kind kind)
{
	assert_int_equal(cc_writer_emit(&s->w, kind), 0);
}

/* META, REGS (rip = CODE), the code and data pages mapped, the code written, START. */
static void synth_begin(struct synth *s, const uint8_t *code, const uint8_t *end)
{
	snprintf(s->dir, sizeof(s->dir), "/tmp/test_citcat_replay.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", s->dir, CC_FILE_NAME);
	s->f = fopen(path, "w");
	assert_non_null(s->f);
	assert_int_equal(cc_writer_init(&s->w, fileno(s->f)), 0);
	binbuf_put_str(&s->w.payload, "synthetic");
	binbuf_put_str(&s->w.payload, "/");
	put_u(s, 1), put_u(s, 0);
	emit(s, CC_REC_META);
	put_u(s, CC_NREGS);
	for (int i = 0; i < CC_NREGS; i++)
		put_u(s, i == REG_RIP ? CODE : i == REG_RSP ? CODE + 0x1f00 : i == REG_EFLAGS ? 0x202 : 0);
	emit(s, CC_REC_REGS);
	put_u(s, CODE), put_u(s, 0x2000), put_u(s, 7), put_u(s, CC_MAP_ANON), put_u(s, 0), put_u(s, 0);
	emit(s, CC_REC_MAP);
	put_u(s, CODE), put_u(s, (uint64_t)(end - code));
	binbuf_put(&s->w.payload, code, (size_t)(end - code));
	emit(s, CC_REC_MEM);
	emit(s, CC_REC_START);
}

static void synth_cpuid(struct synth *s, uint64_t pc, uint64_t ebx)
{
	uint64_t v[7] = { pc, 0, 0, 0xd, ebx, 0, 0 };
	for (int i = 0; i < 7; i++)
		put_u(s, v[i]);
	emit(s, CC_REC_CPUID);
}

/* exit_group(CODE) and the EXIT record; closes the file. */
static void synth_exit(struct synth *s, uint64_t code)
{
	put_u(s, 231);
	put_u(s, code);
	for (int i = 1; i < 6; i++)
		put_u(s, 0);
	binbuf_put_svarint(&s->w.payload, 0);
	put_u(s, 0);
	emit(s, CC_REC_SYSCALL);
	binbuf_put_svarint(&s->w.payload, (int64_t)(code << 8));
	put_u(s, 1), put_u(s, 0);
	binbuf_put_le64(&s->w.payload, BINIO_FNV64_INIT);
	emit(s, CC_REC_EXIT);
	assert_int_equal(cc_writer_flush(&s->w), 0);
	cc_writer_release(&s->w);
	fclose(s->f);
}

static void synth_remove(struct synth *s)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", s->dir, CC_FILE_NAME);
	unlink(path);
	rmdir(s->dir);
}

/* Replay DIR at full speed; 0 or -errno, the summary in SUM, the message in ERR. */
static int replay(const char *dir, struct citcat_summary *sum, char *err, size_t errlen)
{
	struct citcat_replay *rp;
	int e = citcat_replay_new(dir, &rp, err, errlen);
	if (e)
		return e;
	e = citcat_replay_run(rp, sum, err, errlen);
	citcat_replay_free(rp);
	return e;
}

static void replay_starts_in_the_execve_fpu_state(void **state)
{
	struct synth s;
	synth_begin(&s, prog_fpu_state, prog_fpu_state_end);
	synth_exit(&s, 39);
	struct citcat_summary sum;
	char err[512] = "";
	int e = replay(s.dir, &sum, err, sizeof(err));
	synth_remove(&s);
	if (e)
		fail_msg("replay failed: %s", err);
	assert_int_equal(sum.exit_status, 39 << 8);
	assert_true(sum.verified);
}

static void patched_cpuid_answered_and_replay_resumes(void **state)
{
	struct synth s;
	synth_begin(&s, prog_patched_cpuid, prog_patched_cpuid_end);
	synth_cpuid(&s, CODE, 42);
	synth_exit(&s, 42);
	struct citcat_summary sum;
	char err[512] = "";
	int e = replay(s.dir, &sum, err, sizeof(err));
	if (e) {
		synth_remove(&s);
		fail_msg("replay failed: %s", err);
	}
	assert_int_equal(sum.exit_status, 42 << 8);
	assert_true(sum.verified);
	assert_int_equal(sum.instructions, 4);
	assert_int_equal(sum.events, 2);	/* the cpuid and the exit_group */

	/* the trace-source path steps in batches: it resumes too, and sees every instruction */
	struct spent_trace_source *src;
	struct citcat_replay *rp;
	assert_int_equal(citcat_source_new(s.dir, 0, &src, &rp, err, sizeof(err)), 0);
	struct spent_trace_batch b;
	size_t insns = 0;
	int exited = 0, r;
	while ((r = spent_trace_source_next(src, &b)) == 1) {
		insns += b.n_insns;
		for (size_t i = 0; i < b.n_events; i++)
			exited |= b.events[i].kind == SPENT_TRACE_EV_EXIT && b.events[i].u.exit.status == 42 << 8;
	}
	assert_int_equal(r, 0);
	assert_int_equal(insns, 4);
	assert_true(exited);
	spent_trace_source_free(src);
	synth_remove(&s);
}

static void invalid_instruction_without_cpuid_is_an_error(void **state)
{
	struct synth s;
	synth_begin(&s, prog_patched_cpuid, prog_patched_cpuid_end);
	synth_exit(&s, 42);	/* no CPUID event: the ud2 is the program's own */
	struct citcat_summary sum;
	char err[512] = "";
	int e = replay(s.dir, &sum, err, sizeof(err));
	synth_remove(&s);
	assert_true(e < 0);
	assert_false(sum.verified);
	assert_non_null(strstr(err, "Invalid instruction"));
	assert_non_null(strstr(err, "pc 0x400000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay_starts_in_the_execve_fpu_state),
		cmocka_unit_test(patched_cpuid_answered_and_replay_resumes),
		cmocka_unit_test(invalid_instruction_without_cpuid_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
