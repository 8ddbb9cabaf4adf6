/* tests/unit/test_linetable.c - the build-id cache's line tables (core/linetable.c): a saved
 * table is read back and searched (the later row at one address, gaps after an end of
 * sequence), a table built from this test's own DWARF finds this file, and corrupt files
 * (rows out of order, a file index past the names, a count larger than the file) are refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/linetable.h"

static char path[64];

static int setup(void **state)
{
	strcpy(path, "/tmp/spent-ut-lines.XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

static int load_text(const char *text, struct linetable **t)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return linetable_load(path, t);
}

static void saved_table_is_searched(void **state)
{
	struct linetable *t;
	const char *file;
	int line;

	assert_int_equal(load_text("spent-lines 1 2 5\n/src/a.c\n/src/b.c\n"
				   "1000 a 0\n1010 b 0\n1010 c 1\n1020 0 0\n2000 7 1\n", &t), 0);
	assert_int_equal(linetable_rows(t), 5);
	assert_int_equal(linetable_lookup(t, 0xfff, &file, &line), -ENOENT);
	assert_int_equal(linetable_lookup(t, 0x1004, &file, &line), 0);
	assert_string_equal(file, "/src/a.c");
	assert_int_equal(line, 10);
	assert_int_equal(linetable_lookup(t, 0x1015, &file, &line), 0);	/* the later row */
	assert_string_equal(file, "/src/b.c");
	assert_int_equal(line, 12);
	assert_int_equal(linetable_lookup(t, 0x1800, &file, &line), -ENOENT);	/* the gap */
	assert_int_equal(linetable_lookup(t, 0x2001, &file, &line), 0);
	assert_int_equal(line, 7);
	/* written back, it reads the same */
	assert_int_equal(linetable_save(t, path), 0);
	linetable_free(t);
	assert_int_equal(linetable_load(path, &t), 0);
	assert_int_equal(linetable_lookup(t, 0x1015, &file, &line), 0);
	assert_int_equal(line, 12);
	linetable_free(t);
}

static void corrupt_tables_refused(void **state)
{
	struct linetable *t = (void *)1;
	assert_int_equal(load_text("spent-lines 1 1 2\n/a.c\n2000 1 0\n1000 2 0\n", &t), -EINVAL);
	assert_null(t);
	assert_int_equal(load_text("spent-lines 1 1 1\n/a.c\n1000 1 1\n", &t), -EINVAL);
	assert_int_equal(load_text("spent-lines 1 1 99\n/a.c\n1000 1 0\n", &t), -EINVAL);
	assert_int_equal(load_text("spent-lines 1 1 1\n/a.c\n1000 1 0 junk\n", &t), -EINVAL);
	assert_int_equal(load_text("spent-symtable 1 0 0\n", &t), -EINVAL);
	assert_int_equal(linetable_load("/nonexistent/lines", &t), -ENOENT);
}

/* this very test's DWARF: the line of a function in this file */
static void built_from_own_dwarf(void **state)
{
	Dwfl_Callbacks cbs = { .find_elf = dwfl_build_id_find_elf,
			       .find_debuginfo = dwfl_standard_find_debuginfo,
			       .section_address = dwfl_offline_section_address };
	Dwfl *dwfl = dwfl_begin(&cbs);
	assert_non_null(dwfl);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	Dwfl_Module *mod = dwfl_report_offline(dwfl, self, self, -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	struct linetable *t;
	assert_int_equal(linetable_from_module(mod, &t), 0);
	Dwarf_Addr lo;
	const char *name;
	int found = 0;
	for (int i = 0; !found && i < dwfl_module_getsymtab(mod); i++) {
		GElf_Sym sym;
		name = dwfl_module_getsym_info(mod, i, &sym, &lo, NULL, NULL, NULL);
		found = name && !strcmp(name, "saved_table_is_searched");
	}
	assert_true(found);
	const char *file;
	int line;
	assert_int_equal(linetable_lookup(t, lo, &file, &line), 0);
	assert_non_null(strstr(file, "test_linetable.c"));
	assert_true(line > 40 && line < 60);
	linetable_free(t);
	dwfl_end(dwfl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(saved_table_is_searched),
		cmocka_unit_test(corrupt_tables_refused),
		cmocka_unit_test(built_from_own_dwarf),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
