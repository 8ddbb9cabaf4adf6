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
	struct symtable *dbg;
	if (symtable_open_debug(info.dli_fname, &dbg) == 0) {
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libc_names_match_the_dynamic_linker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
