/* tests/unit/test_symtab.c - analysis/symtab, the trace's runtime-address symbol table, on
 * the libc this test runs with (read through core/symtable): names match what the dynamic
 * linker resolved, and of a function's two versions (glibc's pthread_cond_wait@@GLIBC_2.3.2 and
 * its compat @GLIBC_2.2.5) find-by-name gives the default one, as dlsym does; libc's static
 * functions come from its separate debug file at the first lookup by address. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/symtab.h"
#include "core/symtable.h"

static void libc_names_match_the_dynamic_linker(void **state)
{
	(void)state;
	/* libc's own definitions: a sanitized build's interceptors come first in RTLD_DEFAULT */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "pthread_cond_wait") : NULL;
	Dl_info info;
	if (!fn || !dladdr(fn, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		skip();
	struct symtab *st = symtab_new();
	assert_non_null(st);
	uint64_t base = (uint64_t)(uintptr_t)info.dli_fbase, addr = 0;
	assert_int_equal(symtab_add_image(st, info.dli_fname, base), 0);
	assert_int_equal(symtab_add_image(st, info.dli_fname, base), 0);	/* once only */
	size_t n = symtab_count(st);
	assert_true(n > 100);
	assert_int_equal(symtab_find_func(st, "pthread_cond_wait", &addr), 0);
	assert_true(addr == (uint64_t)(uintptr_t)fn);	/* the default version */
	void *lock = dlsym(libc, "pthread_mutex_lock");
	const struct symtab_sym *s = symtab_lookup(st, (uint64_t)(uintptr_t)lock + 1);
	assert_non_null(s);
	assert_true(s->is_func);
	assert_true(s->addr == (uint64_t)(uintptr_t)lock);
	char buf[64];
	symtab_name_addr(st, (uint64_t)(uintptr_t)lock + 1, buf, sizeof(buf));
	assert_true(buf[0] != '0');	/* named, not an address */
	/* the first lookup by address read libc's separate debug file (libc6-dbg), if any: its
	 * static functions are named at their runtime addresses */
	struct symtable *lib, *dbg;
	char dbg_path[256];
	assert_int_equal(symtable_open(info.dli_fname, &lib), 0);
	int found = symtable_debug_path(lib, dbg_path, sizeof(dbg_path));
	symtable_free(lib);
	if (found == 0 && symtable_open(dbg_path, &dbg) == 0) {
		struct symtable_hit hit;
		assert_int_equal(symtable_find_symbol(dbg, "_int_malloc", &hit), 0);
		assert_true(symtab_count(st) > n);
		assert_int_equal(symtab_find_func(st, "_int_malloc", &addr), 0);
		assert_true(addr == base + hit.start);
		symtab_name_addr(st, base + hit.start + 4, buf, sizeof(buf));
		assert_string_equal(buf, "_int_malloc+4");
		symtable_free(dbg);
	}
	n = symtab_count(st);
	assert_int_equal(symtab_find_func(st, "no_such_function_here", &addr), -ENOENT);
	assert_int_equal(symtab_add_image(st, "/nonexistent/lib.so", 0), -ENOENT);
	assert_int_equal(symtab_add_image(st, "/proc/self/status", 0), -ENOEXEC);
	assert_int_equal(symtab_count(st), n);
	symtab_free(st);
	dlclose(libc);
}

/* An image with a .symtab of its own (this test, built unstripped) has all its locals: no
 * debug file is looked for, so a lookup adds nothing (with one there, every local was added
 * twice). A table of a module has no file to ask. */
static void unstripped_image_reads_no_debug_file(void **state)
{
	(void)state;
	char self[4096], buf[256];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	struct symtable *t;
	assert_int_equal(symtable_open(self, &t), 0);
	struct symtable_hit hit;
	if (symtable_find_symbol(t, "unstripped_image_reads_no_debug_file", &hit) != 0)
		skip();	/* stripped after all */
	assert_int_equal(symtable_debug_path(t, buf, sizeof(buf)), -ENOENT);
	symtable_free(t);
	struct symtab *st = symtab_new();
	assert_non_null(st);
	assert_int_equal(symtab_add_image(st, self, 0x400000), 0);
	size_t before = symtab_count(st);
	assert_non_null(symtab_lookup(st, 0x400000 + hit.start));
	assert_int_equal(symtab_count(st), before);
	symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libc_names_match_the_dynamic_linker),
		cmocka_unit_test(unstripped_image_reads_no_debug_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
