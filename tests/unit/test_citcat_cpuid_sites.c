/* test_citcat_cpuid_sites.c - the cpuid site finder behind citcat's software CPUID faulting:
 * on this test binary itself (a cpuid in a C function with CFI, one in assembly without CFI
 * or any symbol, 0f a2 inside an immediate and in a table placed in .text) and on the
 * system's dynamic loader against objdump's disassembly as an independent oracle. A table
 * whose bytes happen to decode cleanly into a cpuid cannot be told from code by any decoder;
 * the table here decodes to garbage first, as the constant tables of real assembly do. */
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "citcat/cpuid_patch.h"
#include "core/binio.h"

/* A cpuid in compiled code: .eh_frame covers it. */
__attribute__((noinline)) unsigned cpuid_in_c(unsigned leaf)
{
	unsigned a = leaf, b, c = 0, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return a ^ b ^ c ^ d;
}

/* 0f a2 inside an instruction's immediate: must not be patched. */
__attribute__((noinline)) uint64_t cpuid_bytes_in_immediate(void)
{
	uint64_t v;
	__asm__ volatile("movabs $0x1122a20f33445566, %0" : "=r"(v));
	return v;
}

/* Assembly with no CFI and no symbol at its start: only the end of the previous FDE or the
 * previous symbol gives a boundary. The .L labels make no symbols; the data table in .text
 * holds 0f a2 that is no instruction. The addresses are published as data objects (not
 * function or untyped symbols, which would be boundaries themselves). */
__asm__(".text\n"
	".p2align 4\n"
	".Lnocfi_start:\n"
	"  push %rbx\n"
	"  xor %eax, %eax\n"
	"  xor %ecx, %ecx\n"
	".Lnocfi_cpuid:\n"
	"  cpuid\n"
	"  pop %rbx\n"
	"  ret\n"
	"  .p2align 4\n"
	/* a table: never executed, and no instruction (0x06 is invalid in 64-bit mode, as
	 * constant tables in hand-written assembly decode to garbage) */
	"  .byte 0x06, 0x0f, 0xa2, 0x0f, 0xa2\n"
	".section .data.rel.ro,\"aw\"\n"
	".globl nocfi_cpuid_addr\n.type nocfi_cpuid_addr, @object\n"
	"nocfi_cpuid_addr: .quad .Lnocfi_cpuid\n"
	".globl nocfi_start_addr\n.type nocfi_start_addr, @object\n"
	"nocfi_start_addr: .quad .Lnocfi_start\n"
	".text\n");
extern void *const nocfi_cpuid_addr;
extern void *const nocfi_start_addr;

struct self_map {
	uint64_t bias;
	const ElfW(Phdr) *ph;
	int n;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct self_map *m = ctx;
	m->bias = info->dlpi_addr;
	m->ph = info->dlpi_phdr;
	m->n = info->dlpi_phnum;
	return 1;	/* the first entry is the program */
}

/* File offset of this program's address A. */
static uint64_t self_offset(const void *a)
{
	struct self_map m = { 0 };
	dl_iterate_phdr(find_self, &m);
	uint64_t v = (uint64_t)(uintptr_t)a - m.bias;
	for (int i = 0; i < m.n; i++)
		if (m.ph[i].p_type == PT_LOAD && v >= m.ph[i].p_vaddr &&
		    v < m.ph[i].p_vaddr + m.ph[i].p_filesz)
			return v - m.ph[i].p_vaddr + m.ph[i].p_offset;
	return UINT64_MAX;
}

static int has_site(const struct cc_cpuid_sites *s, uint64_t off)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->offsets[i] == off)
			return 1;
	return 0;
}

/* Offset of the first 0f a2 at or after A (within 64 bytes). */
static uint64_t bytes_offset(const void *a)
{
	const uint8_t *p = a;
	for (int i = 0; i < 64; i++)
		if (p[i] == 0x0f && p[i + 1] == 0xa2)
			return self_offset(p + i);
	return UINT64_MAX;
}

static void test_self(void **state)
{
	uint8_t *data = NULL;
	size_t len = 0;
	struct cc_cpuid_sites s;
	assert_int_equal(binio_read_file("/proc/self/exe", 1 << 30, &data, &len), 0);
	assert_int_equal(cc_cpuid_find_sites(data, len, &s), 0);
	/* the compiled cpuid and the assembly one are found */
	assert_true(has_site(&s, bytes_offset((const void *)cpuid_in_c)));
	assert_true(has_site(&s, self_offset(nocfi_cpuid_addr)));
	/* the immediate and the table are not sites, and are counted as left alone */
	assert_false(has_site(&s, bytes_offset((const void *)cpuid_bytes_in_immediate)));
	uint64_t table = bytes_offset((const uint8_t *)nocfi_cpuid_addr + 2);
	assert_int_not_equal(table, UINT64_MAX);
	assert_false(has_site(&s, table));
	assert_false(has_site(&s, table + 2));
	assert_true(s.unconfirmed >= 3);
	/* every site really holds 0f a2 */
	for (size_t i = 0; i < s.n; i++)
		assert_true(s.offsets[i] + 1 < len && data[s.offsets[i]] == 0x0f &&
			    data[s.offsets[i] + 1] == 0xa2);
	assert_int_equal(cpuid_bytes_in_immediate(), 0x1122a20f33445566ULL);
	volatile unsigned keep = cpuid_in_c(0);	/* the functions are real code */
	(void)keep;
	cc_cpuid_sites_release(&s);
	free(data);
}

/* The dynamic loader (glibc's cpu feature detection lives there): the sites are exactly the
 * cpuid instructions objdump's disassembly shows. */
static void test_loader_against_objdump(void **state)
{
	const char *path = "/lib64/ld-linux-x86-64.so.2";
	uint8_t *data = NULL;
	size_t len = 0;
	struct cc_cpuid_sites s;
	if (binio_read_file(path, 1 << 30, &data, &len))
		skip();
	assert_int_equal(cc_cpuid_find_sites(data, len, &s), 0);
	FILE *p = popen("objdump -d --no-show-raw-insn /lib64/ld-linux-x86-64.so.2", "r");
	assert_non_null(p);
	char line[512];
	size_t oracle = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		if (!strstr(line, "\tcpuid") || sscanf(line, " %llx:", &addr) != 1)
			continue;
		oracle++;
		/* ld.so is linked at 0 with text offset == vaddr within its first exec segment */
		int found = 0;
		for (size_t i = 0; i < s.n && !found; i++)
			found = s.offsets[i] == addr;
		assert_true(found);
	}
	pclose(p);
	assert_true(oracle > 0);
	assert_int_equal(s.n, oracle);
	cc_cpuid_sites_release(&s);
	free(data);
}

static void test_not_elf(void **state)
{
	static const uint8_t junk[64] = { 0x0f, 0xa2, 0x7f, 'E', 'L', 'F' };
	struct cc_cpuid_sites s;
	assert_int_equal(cc_cpuid_find_sites(junk, sizeof(junk), &s), -ENOEXEC);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_loader_against_objdump),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
