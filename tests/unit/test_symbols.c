/* tests/unit/test_symbols.c - core/symbols (libdwfl lookups, code bytes, saved kallsyms) and
 * analysis/report + profile/folded on a synthetic profile of this very test binary. The oracle
 * is the running program: the loader's load bias, the code bytes in memory, __LINE__. */
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/report.h"
#include "core/binio.h"
#include "core/procmaps.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"
#include "core/symbols.h"
#include "profile/export.h"
#include "profile_test_util.h"

static const int marker_line = __LINE__ + 1;
int __attribute__((noinline)) unit_marker_function(int x) { return x * 3 + 1; }
int __attribute__((noinline)) unit_caller_function(int x) { return unit_marker_function(x) + 2; }

struct first_obj {
	uintptr_t bias;
	int seen;
};

static int first_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct first_obj *s = data;
	if (!s->seen) {
		s->bias = info->dlpi_addr;
		s->seen = 1;
	}
	return 1;
}

/* link-time offset of FN in the main program (the first object dl_iterate_phdr reports) */
static uint64_t self_offset(const void *fn)
{
	struct first_obj st = { 0, 0 };
	dl_iterate_phdr(first_obj_cb, &st);
	return (uintptr_t)fn - st.bias;
}

static void own_function_name_line_and_code(void **state)
{
	(void)state;
	struct symbols *s;
	struct spent_profile_image im = self_image();
	assert_int_equal(symbols_new(&s), 0);
	uint64_t off = self_offset((const void *)unit_marker_function);
	struct sym_info si;
	assert_int_equal(symbols_lookup(s, &im, off + 1, &si), 0);
	assert_string_equal(si.name, "unit_marker_function");
	assert_true(si.start == off);
	assert_true(si.exact);
	assert_non_null(si.file);
	assert_non_null(strstr(si.file, "test_symbols.c"));
	assert_int_equal(si.line, marker_line);
	uint64_t start, size;
	assert_int_equal(symbols_find_function(s, &im, "unit_marker_function", &start, &size), 0);
	assert_true(start == off && size > 0);
	uint8_t code[8];
	assert_int_equal(symbols_read_code(s, &im, off, code, sizeof(code)), 0);
	assert_memory_equal(code, (const void *)unit_marker_function, sizeof(code));
	assert_int_equal(symbols_find_function(s, &im, "no_such_function_here", &start, &size), -ENOENT);
	symbols_free(s);
}

static void missing_image_says_why(void **state)
{
	(void)state;
	struct symbols *s;
	struct spent_profile_image im = { .path = "/nonexistent/binary" };
	struct sym_info si;
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_lookup(s, &im, 0x1000, &si), -ENOENT);
	assert_null(si.name);
	assert_string_equal(symbols_image_error(s, &im), "image file not found");
	symbols_free(s);
}

static void saved_kallsyms_are_used(void **state)
{
	(void)state;
	char path[] = "/tmp/spent-ut-ksyms.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "ffffffff81000000 T kfirst\nffffffff81000100 t ksecond\nffffffff81000200 D kdata\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	struct symbols *s;
	struct spent_profile_image k = { .path = SPENT_PROFILE_KERNEL_PATH };
	struct sym_info si;
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_set_kallsyms(s, path), 0);
	assert_int_equal(symbols_lookup(s, &k, 0xffffffff81000123ULL, &si), 0);
	assert_string_equal(si.name, "ksecond");
	assert_true(si.start == 0xffffffff81000100ULL);
	symbols_free(s);
	unlink(path);
}

/* A kernel of another boot (its _text is not the running kernel's) whose saved symbols are
 * missing is not named from /proc/kallsyms, whose addresses are this boot's: it was, with
 * wrong names and no word. The running kernel's identity still is. */
static void other_boot_kernel_not_named_from_proc(void **state)
{
	(void)state;
	uint64_t running = kernel_id_running_text();
	if (!running)
		skip();	/* kptr_restrict hides the addresses: nothing to compare */
	struct spent_profile_image k = { .path = SPENT_PROFILE_KERNEL_PATH,
					 .id_kind = SPENT_PROFILE_ID_BUILDID, .id_len = 28 };
	memset(k.id, 0xab, 20);
	uint64_t other = running ^ 0x200000;	/* KASLR moves _text in 2 MB steps */
	for (int i = 0; i < 8; i++)
		k.id[20 + i] = (uint8_t)(other >> (56 - 8 * i));
	struct symbols *s;
	struct sym_info si;
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_set_kallsyms_dir(s, "/nonexistent-spent-ut"), 0);
	assert_int_not_equal(symbols_lookup(s, &k, running + 0x1000, &si), 0);
	assert_non_null(strstr(symbols_image_error(s, &k), "not the running kernel"));
	symbols_free(s);
	for (int i = 0; i < 8; i++)
		k.id[20 + i] = (uint8_t)(running >> (56 - 8 * i));
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_set_kallsyms_dir(s, "/nonexistent-spent-ut"), 0);
	assert_int_equal(symbols_lookup(s, &k, running + 0x1000, &si), 0);
	assert_non_null(si.name);
	symbols_free(s);
}

/* Kernel symbol names reach 511 bytes (KSYM_NAME_LEN): such a name is read and saved whole
 * (fuzz_profile_dir found the save overrunning a 320-byte line; the reader cut names at 492),
 * and a line too long for any kallsyms is skipped, its tail not read as a symbol. */
static void saved_kallsyms_keep_long_names(void **state)
{
	(void)state;
	char in[] = "/tmp/spent-ut-ksyms-in.XXXXXX", out[] = "/tmp/spent-ut-ksyms-out.XXXXXX";
	char name[512], junk[1100], text[2400];
	memset(name, 'k', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	memset(junk, 'j', sizeof(junk) - 1);
	junk[sizeof(junk) - 1] = 0;
	memcpy(junk + 1000, " ffffffff81000080 t ktail", 25);	/* the tail of an overlong line */
	int n = snprintf(text, sizeof(text), "ffffffff81000000 T %s\nffffffff81000040 t %s\n"
			 "ffffffff81000100 t knext\n", name, junk);
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, (size_t)n), n);
	close(fd);
	close(mkstemp(out));
	struct spent_profile *p = spent_profile_new();
	struct spent_profile_image k = { .path = SPENT_PROFILE_KERNEL_PATH };
	uint32_t img, ev;
	assert_int_equal(spent_profile_image_intern(p, &k, &img), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000, 0, &ev), 0);
	assert_int_equal(spent_profile_add(p, img, 0xffffffff81000010ULL, ev, 3), 0);
	struct symbols *s;
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_set_kallsyms(s, in), 0);
	assert_int_equal(symbols_save_kernel(s, p, out), 0);
	/* the save is compressed (kallsyms.zst): read it back through the one reader */
	struct kallsyms_file kf;
	assert_int_equal(kallsyms_file_open(out, &kf), 0);
	char saved[2400];
	size_t len = fread(saved, 1, sizeof(saved), kf.f);
	kallsyms_file_close(&kf);
	n = snprintf(text, sizeof(text), "ffffffff81000000 t %s\nffffffff81000100 t knext\n", name);
	assert_int_equal(len, (size_t)n);
	assert_memory_equal(saved, text, len);
	symbols_free(s);
	spent_profile_free(p);
	unlink(in);
	unlink(out);
}

/* A profile of this test binary with one cpu-clock event, its symbols, and the offsets of the
 * marker and caller functions (M, C) for samples and stacks */
static void synthetic_profile(struct symbols **s, struct spent_profile **p, uint32_t *img, uint32_t *ev,
			      uint64_t *m, uint64_t *c)
{
	struct spent_profile_image im = self_image();
	*p = spent_profile_new();
	assert_non_null(*p);
	assert_int_equal(symbols_new(s), 0);
	assert_int_equal(spent_profile_image_intern(*p, &im, img), 0);
	assert_int_equal(spent_profile_event_intern(*p, "cpu-clock", 99991, 0, ev), 0);
	*m = self_offset((const void *)unit_marker_function);
	*c = self_offset((const void *)unit_caller_function);
}

static void report_and_folded_on_synthetic_profile(void **state)
{
	(void)state;
	struct symbols *s;
	struct spent_profile *p;
	uint32_t img, ev;
	uint64_t m, c;
	synthetic_profile(&s, &p, &img, &ev, &m, &c);
	assert_int_equal(spent_profile_add(p, img, m, ev, 30), 0);
	assert_int_equal(spent_profile_add(p, img, m + 2, ev, 30), 0);
	assert_int_equal(spent_profile_add(p, img, c + 1, ev, 40), 0);
	struct spent_profile_frame st[2] = { { img, m + 2 }, { img, c + 4 } };
	assert_int_equal(spent_profile_add_stack(p, ev, st, 2, 60), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, st + 1, 1, 40), 0);
	struct report *r;
	struct report_config cfg = { .by = REPORT_BY_FUNCTION, .events = &ev, .nevents = 1, .children = true };
	assert_int_equal(report_build(p, s, &cfg, &r), 0);
	assert_int_equal(r->nrows, 2);
	assert_true(r->totals[0] == 100);
	/* sorted by inclusive: the caller (100) before the marker (60) */
	assert_string_equal(r->rows[0].symbol, "unit_caller_function");
	assert_true(r->rows[0].incl[0] == 100 && r->rows[0].self[0] == 40);
	assert_string_equal(r->rows[1].symbol, "unit_marker_function");
	assert_true(r->rows[1].self[0] == 60 && r->rows[1].incl[0] == 60);
	report_free(r);
	struct folded *f;
	assert_int_equal(folded_build(p, s, ev, 0, &f), 0);
	assert_int_equal(f->n, 2);
	assert_string_equal(f->stacks[0], "unit_caller_function");
	assert_string_equal(f->stacks[1], "unit_caller_function;unit_marker_function");
	assert_true(f->counts[1] == 60 && f->total == 100);
	folded_free(f);
	spent_profile_free(p);
	symbols_free(s);
}

/* report -g's chains: stacks whose frames fall in the same functions are one chain (counts
 * added), each under its leaf's row, its frames renumbered as the rows were sorted (by self
 * alone, or by inclusive with --children: the two orders differ here) */
static void report_chains_merge_and_follow_the_sort(void **state)
{
	(void)state;
	struct symbols *s;
	struct spent_profile *p;
	uint32_t img, ev;
	uint64_t m, c;
	synthetic_profile(&s, &p, &img, &ev, &m, &c);
	assert_int_equal(spent_profile_add(p, img, m, ev, 60), 0);
	assert_int_equal(spent_profile_add(p, img, c + 1, ev, 40), 0);
	struct spent_profile_frame a[2] = { { img, m + 2 }, { img, c + 4 } };
	struct spent_profile_frame b[2] = { { img, m }, { img, c + 8 } };
	struct spent_profile_frame own[1] = { { img, c + 1 } };
	assert_int_equal(spent_profile_add_stack(p, ev, a, 2, 50), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, b, 2, 10), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, own, 1, 40), 0);
	for (int children = 0; children < 2; children++) {
		struct report *r;
		struct report_config cfg = { .by = REPORT_BY_FUNCTION, .events = &ev, .nevents = 1,
					     .children = children, .chains = true };
		assert_int_equal(report_build(p, s, &cfg, &r), 0);
		assert_int_equal(r->nrows, 2);
		assert_int_equal(r->nchains, 2);
		/* by self the marker (60) comes first, by inclusive the caller (100) */
		size_t mk = children ? 1 : 0, cl = 1 - mk;
		assert_string_equal(r->rows[mk].symbol, "unit_marker_function");
		assert_string_equal(r->rows[cl].symbol, "unit_caller_function");
		const struct report_row *mr = &r->rows[mk], *cr = &r->rows[cl];
		assert_int_equal(mr->nchains, 1);
		assert_int_equal(cr->nchains, 1);
		const struct report_chain *mc = &r->chains[mr->chain0], *cc = &r->chains[cr->chain0];
		assert_true(mc->count == 60 && mc->n == 2);
		assert_true(mc->rows[0] == mk && mc->rows[1] == cl);
		assert_true(cc->count == 40 && cc->n == 1 && cc->rows[0] == cl);
		report_free(r);
	}
	spent_profile_free(p);
	symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_function_name_line_and_code),
		cmocka_unit_test(missing_image_says_why),
		cmocka_unit_test(saved_kallsyms_are_used),
		cmocka_unit_test(other_boot_kernel_not_named_from_proc),
		cmocka_unit_test(saved_kallsyms_keep_long_names),
		cmocka_unit_test(report_and_folded_on_synthetic_profile),
		cmocka_unit_test(report_chains_merge_and_follow_the_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
