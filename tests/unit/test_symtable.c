/* tests/unit/test_symtable.c - core/symtable against its oracle, libdwfl's own address lookup
 * (dwfl_module_addrinfo), at every few bytes of the text of real images (this test binary with
 * its full symbol table, and libc), before and after a save/load round trip; plus find by
 * name, refusal of a corrupt saved table, and core/inline_table against dwarf_getscopes. */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/binio.h"
#include "core/inline_table.h"
#include "core/demangle.h"
#include "core/symtable.h"

int __attribute__((noinline)) symtable_marker_function(int x) { return x * 5 + 3; }
__thread int symtable_tls_marker = 7;	/* a TLS offset: named, never an address's symbol */
int symtable_object_marker[16] = { 1 };

static Dwfl_Callbacks cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const char *self_path(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	assert_true(n > 0);
	path[n] = 0;
	return path;
}

static Dwfl_Module *open_module(Dwfl **dwfl, const char *path)
{
	*dwfl = dwfl_begin(&cbs);
	assert_non_null(*dwfl);
	dwfl_report_begin(*dwfl);
	Dwfl_Module *m = dwfl_report_offline(*dwfl, path, path, -1);
	dwfl_report_end(*dwfl, NULL, NULL);
	return m;
}

/* Every STEP-th offset of MOD's executable loads: the table answers exactly as libdwfl. A table
 * at FILE addresses (symtable_open) is asked without the module's bias. */
static size_t compare_at(Dwfl_Module *mod, const struct symtable *t, uint64_t step, bool file)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nph = 0, checked = 0;
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (uint64_t off = ph.p_vaddr; off < ph.p_vaddr + ph.p_memsz + 64; off += step) {
			GElf_Sym sym;
			GElf_Off so = 0;
			const char *want = dwfl_module_addrinfo(mod, off + bias, &so, &sym, NULL, NULL, NULL);
			struct symtable_hit hit;
			uint64_t at = file ? off : off + bias;
			int r = symtable_lookup(t, at, &hit);
			size_t hl = r == 0 ? strlen(hit.name) : 0;
			if (!want && hl > 4 && !strcmp(hit.name + hl - 4, "@plt")) {
				/* a PLT stub, which libdwfl leaves unnamed (checked against objdump) */
			} else if (!want) {
				assert_int_equal(r, -ENOENT);
			} else {
				assert_int_equal(r, 0);
				assert_string_equal(hit.name, want);
				assert_int_equal(hit.start, at - so);
				assert_int_equal(hit.size, sym.st_size);
			}
			checked++;
		}
	}
	return checked;
}

static size_t compare_with_dwfl(Dwfl_Module *mod, const struct symtable *t, uint64_t step)
{
	return compare_at(mod, t, step, false);
}

/* FILE_TOO: the file holds the table libdwfl reads (no separate debug info to prefer). */
static void same_answers_as_libdwfl(const char *path, uint64_t step, bool file_too)
{
	Dwfl *dwfl;
	Dwfl_Module *mod = open_module(&dwfl, path);
	struct symtable *t = NULL, *loaded = NULL;
	char saved[] = "/tmp/spent-symtable-XXXXXX";
	assert_non_null(mod);
	assert_int_equal(symtable_from_module(mod, &t), 0);
	assert_true(symtable_count(t) > 10);
	assert_true(compare_with_dwfl(mod, t, step) > 100);
	int fd = mkstemp(saved);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symtable_save(t, saved), 0);
	assert_int_equal(symtable_load(saved, &loaded), 0);
	unlink(saved);
	assert_int_equal(symtable_count(loaded), symtable_count(t));
	compare_with_dwfl(mod, loaded, step);
	symtable_free(loaded);
	/* read from the file itself: the same answers, unless libdwfl found separate debug
	 * info (a fuller table than the file's) */
	assert_int_equal(symtable_open(path, &loaded), 0);
	if (file_too)
		assert_int_equal(symtable_count(loaded), symtable_count(t));
	if (symtable_count(loaded) == symtable_count(t))
		assert_true(compare_at(mod, loaded, step, true) > 100);
	else
		fprintf(stderr, "%s: libdwfl read separate debug info: file table not compared\n", path);
	symtable_free(loaded);
	symtable_free(t);
	dwfl_end(dwfl);
}

static void own_binary_matches_libdwfl(void **state)
{
	(void)state;
	const char *path = self_path();
	same_answers_as_libdwfl(path, 4, true);
}

static void libc_matches_libdwfl(void **state)
{
	(void)state;
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	if (access(libc, R_OK))
		libc = "/lib64/libc.so.6";
	if (access(libc, R_OK))
		skip();
	same_answers_as_libdwfl(libc, 251, false);	/* odd: lands at varied offsets */
}

static void open_reads_the_file_kinds_and_refusals(void **state)
{
	(void)state;
	const char *path = self_path();
	struct symtable *t = NULL;
	struct symtable_hit hit, at;
	assert_int_equal(symtable_open(path, &t), 0);
	assert_int_equal(symtable_find_symbol(t, "symtable_marker_function", &hit), 0);
	assert_true(hit.flags & SYMTABLE_FUNC);
	assert_int_equal(symtable_lookup(t, hit.start + 1, &at), 0);
	assert_string_equal(at.name, "symtable_marker_function");
	assert_int_equal(symtable_find_symbol(t, "symtable_object_marker", &hit), 0);
	assert_true(hit.flags & SYMTABLE_OBJECT);
	assert_int_equal(hit.size, sizeof(symtable_object_marker));
	assert_int_equal(symtable_lookup(t, hit.start + 8, &at), 0);
	assert_string_equal(at.name, "symtable_object_marker");
	assert_int_equal(symtable_find_symbol(t, "symtable_tls_marker", &hit), 0);
	assert_true(hit.flags & SYMTABLE_TLS);
	/* its value is a small TLS offset: whatever sits there, it is not the TLS symbol */
	if (symtable_lookup(t, hit.start, &at) == 0)
		assert_string_not_equal(at.name, "symtable_tls_marker");
	assert_int_equal(symtable_find_symbol(t, "no_such_symbol_anywhere", &hit), -ENOENT);
	size_t funcs = 0;
	for (size_t i = 0; symtable_symbol(t, i, &hit) == 0; i++)
		funcs += (hit.flags & SYMTABLE_FUNC) != 0;
	assert_true(funcs > 10);
	symtable_free(t);
	assert_int_equal(symtable_open("/nonexistent/spent/elf", &t), -ENOENT);
	assert_int_equal(symtable_open("/proc/self/status", &t), -ENOEXEC);
	assert_true(symtable_open("/tmp", &t) < 0);	/* a directory */
	char fifo[] = "/tmp/spent-symtable-fifo-XXXXXX";
	int fd = mkstemp(fifo);
	assert_true(fd >= 0);
	close(fd);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_true(symtable_open(fifo, &t) < 0);	/* refused, not blocked on */
	unlink(fifo);
}

static void find_by_name_and_corrupt_file(void **state)
{
	(void)state;
	const char *path = self_path();
	Dwfl *dwfl;
	Dwfl_Module *mod = open_module(&dwfl, path);
	struct symtable *t = NULL;
	uint64_t start = 0, size = 0;
	assert_int_equal(symtable_from_module(mod, &t), 0);
	assert_int_equal(symtable_find(t, "symtable_marker_function", &start, &size), 0);
	assert_true(size > 0);
	struct symtable_hit hit;
	assert_int_equal(symtable_lookup(t, start + size / 2, &hit), 0);
	assert_string_equal(hit.name, "symtable_marker_function");
	assert_int_equal(symtable_find(t, "no_such_function_anywhere", &start, &size), -ENOENT);
	symtable_free(t);
	dwfl_end(dwfl);

	char bad[] = "/tmp/spent-symtable-XXXXXX";
	int fd = mkstemp(bad);
	assert_true(fd >= 0);
	const char *text = "spent-symtable 1 3 1\n10 5 0 100 1 3 3 f\nnot a line\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(symtable_load(bad, &t), -EINVAL);
	unlink(bad);
	assert_int_equal(symtable_load("/nonexistent/spent/symtable", &t), -ENOENT);
}

/* dwarf_getscopes' innermost inlined subroutine, the oracle of core/inline_table */
static const char *scopes_inlined(Dwarf_Die *cu, uint64_t addr)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes);
	for (int i = 0; i < n && !name; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			name = dwarf_diename(&scopes[i]);
	free(scopes);
	return name;
}

static void inlines_match_getscopes(void **state)
{
	(void)state;
	const char *path = self_path();
	Dwfl *dwfl;
	Dwfl_Module *mod = open_module(&dwfl, path);
	struct inline_tables *t = NULL;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nph = 0, inlined = 0;
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (uint64_t off = ph.p_vaddr + bias; off < ph.p_vaddr + bias + ph.p_memsz; off += 3) {
			Dwarf_Addr cubias;
			Dwarf_Die *cu = dwfl_module_addrdie(mod, off, &cubias);
			if (!cu)
				continue;
			const char *want = scopes_inlined(cu, off - cubias);
			const char *got = inline_tables_lookup(&t, cu, off - cubias);
			if (want) {
				assert_non_null(got);
				assert_string_equal(got, want);
				inlined++;
			} else {
				assert_null(got);
			}
		}
	}
	assert_true(inlined > 10);	/* -O2: the libraries' inlines are there to compare */
	inline_tables_free(t);
	dwfl_end(dwfl);
}

/* The PLT stubs are named NAME@plt, at the addresses objdump (an independent reader) names
 * them, in tables read from the file and from libdwfl alike. */
static void plt_entries_are_named_as_objdump_names_them(void **state)
{
	(void)state;
	const char *path = self_path();
	char cmd[4200], line[512];
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		skip();
	struct symtable *te = NULL, *tm = NULL;
	assert_int_equal(symtable_open(path, &te), 0);
	Dwfl *dwfl;
	assert_int_equal(symtable_from_module(open_module(&dwfl, path), &tm), 0);
	uint64_t se, sm, z;
	assert_int_equal(symtable_find(te, "symtable_marker_function", &se, &z), 0);
	assert_int_equal(symtable_find(tm, "symtable_marker_function", &sm, &z), 0);
	int seen = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long at;
		char name[256];
		/* "0000000000004050 <free@plt>:" (the header entry is "<first@plt-0x10>:") */
		size_t len;
		if (sscanf(line, "%llx <%255[^>]>:", &at, name) != 2 || (len = strlen(name)) < 5 ||
		    strcmp(name + len - 4, "@plt"))
			continue;
		struct symtable_hit hit;
		if (symtable_lookup(te, at + 4, &hit))
			fail_msg("0x%llx: objdump says %s, the file's table has nothing", at, name);
		if (strcmp(hit.name, name))
			fail_msg("0x%llx: objdump says %s, the file's table %s", at, name, hit.name);
		assert_int_equal(hit.start, at);
		assert_int_equal(symtable_lookup(tm, at + 4 + (sm - se), &hit), 0);
		if (strcmp(hit.name, name))
			fail_msg("0x%llx: objdump says %s, libdwfl's table %s", at, name, hit.name);
		seen++;
	}
	pclose(p);
	symtable_free(te);
	symtable_free(tm);
	dwfl_end(dwfl);
	assert_true(seen >= 3);	/* this test calls libc through its PLT */
}

/* What a typed name finds among the symbols that match it: the function before its .cold
 * part and other compiler copies, a template instance without its return type. */
static void names_rank_functions_before_their_parts(void **state)
{
	(void)state;
	static const struct {
		const char *sym, *wanted;
		enum demangle_match want;
	} cases[] = {
		{ "main", "main", DEMANGLE_MATCH_EXACT },
		{ "_ZN2ns7throwerEi", "ns::thrower", DEMANGLE_MATCH_PARAMS },
		{ "_ZN2ns7throwerEi", "ns::thrower(int)", DEMANGLE_MATCH_PARAMS },
		/* ns::thrower(int) [clone .cold]: annotate picked it over the function */
		{ "_ZN2ns7throwerEi.cold", "ns::thrower", DEMANGLE_MATCH_CLONE },
		{ "_ZN2ns7throwerEi.cold", "ns::thrower(int) [clone .cold]", DEMANGLE_MATCH_PARAMS },
		{ "hot.constprop.0", "hot", DEMANGLE_MATCH_CLONE },
		{ "hot.constprop.0", "ho", DEMANGLE_NO_MATCH },
		{ "hotter", "hot", DEMANGLE_NO_MATCH },
		/* double ns::apply<int>(int): was found only with "double " before it */
		{ "_ZN2ns5applyIiEEdT_", "ns::apply", DEMANGLE_MATCH_TEMPLATE },
		{ "_ZN2ns5applyIiEEdT_", "ns::apply<int>", DEMANGLE_MATCH_TEMPLATE },
		{ "_ZN2ns5applyIiEEdT_", "double ns::apply<int>", DEMANGLE_MATCH_PARAMS },
		{ "_ZN2ns5applyIiEEdT_", "apply", DEMANGLE_NO_MATCH },
		{ "_ZSt16__introsort_loopIPdlN9__gnu_cxx5__ops15_Iter_less_iterEEvT_S4_T0_T1_",
		  "std::__introsort_loop", DEMANGLE_MATCH_TEMPLATE },
		{ "_ZSt16__introsort_loopIPdlN9__gnu_cxx5__ops15_Iter_less_iterEEvT_S4_T0_T1_",
		  "__gnu_cxx::__ops::_Iter_less_iter", DEMANGLE_NO_MATCH },
	};
	/* a PLT stub's name (NAME@plt) shows demangled, the suffix kept: a C++ one printed
	 * mangled in the report (_ZNSt14error_categoryD2Ev@plt) */
	char buf[256];
	assert_string_equal(demangle_name("_ZNSt14error_categoryD2Ev@plt", buf, sizeof(buf)),
			    "std::error_category::~error_category()@plt");
	assert_string_equal(demangle_name("free@plt", buf, sizeof(buf)), "free@plt");
	assert_string_equal(demangle_name("_ZN2ns7throwerEi", buf, sizeof(buf)), "ns::thrower(int)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum demangle_match got = demangle_match_rank(cases[i].sym, cases[i].wanted);
		if (got != cases[i].want)
			fail_msg("%s for '%s': %d, want %d", cases[i].sym, cases[i].wanted, got, cases[i].want);
	}
	assert_true(DEMANGLE_MATCH_CLONE < DEMANGLE_MATCH_TEMPLATE &&
		    DEMANGLE_MATCH_TEMPLATE < DEMANGLE_MATCH_PARAMS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_rank_functions_before_their_parts),
		cmocka_unit_test(plt_entries_are_named_as_objdump_names_them),
		cmocka_unit_test(own_binary_matches_libdwfl),
		cmocka_unit_test(libc_matches_libdwfl),
		cmocka_unit_test(find_by_name_and_corrupt_file),
		cmocka_unit_test(open_reads_the_file_kinds_and_refusals),
		cmocka_unit_test(inlines_match_getscopes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
