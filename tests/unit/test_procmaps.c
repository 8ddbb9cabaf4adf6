/* tests/unit/test_procmaps.c - core/procmaps + core/image: pc -> (image, link-time offset)
 * checked against the dynamic loader's own view (dl_iterate_phdr), mapping replacement, fork;
 * the range list against a per-page oracle; /proc/PID/maps line parsing. */
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

#include "core/procmaps.h"

struct find { uintptr_t addr; uintptr_t bias; const char *name; int found; };

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct find *f = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->addr >= s && f->addr < s + ph->p_memsz) {
			f->bias = info->dlpi_addr;
			f->name = info->dlpi_name;
			f->found = 1;
			return 1;
		}
	}
	return 0;
}

static void __attribute__((noinline)) marker_function(void) { __asm__ volatile(""); }

static void check_addr(struct procmaps *pm, uintptr_t addr, const char *want_substr)
{
	struct find f = { .addr = addr };
	dl_iterate_phdr(find_cb, &f);
	assert_true(f.found);
	const struct image_info *img;
	uint64_t off;
	enum spent_profile_unknown_reason why;
	assert_int_equal(procmaps_lookup(pm, getpid(), addr, &img, &off, &why), 0);
	assert_true(off == addr - f.bias);
	assert_non_null(strstr(img->id.path, want_substr));
	assert_int_equal(img->id.id_kind, SPENT_PROFILE_ID_BUILDID);
}

static void own_pcs_translate_like_the_loader(void **state)
{
	(void)state;
	struct image_cache *c;
	struct procmaps *pm;
	assert_int_equal(image_cache_new(&c), 0);
	assert_int_equal(procmaps_new(c, &pm), 0);
	assert_int_equal(procmaps_load_pid(pm, getpid()), 0);
	check_addr(pm, (uintptr_t)marker_function, "test_procmaps");
	check_addr(pm, (uintptr_t)&_cmocka_run_group_tests, "cmocka");
	/* kernel addresses go to the kernel image with the address as offset */
	const struct image_info *img;
	uint64_t off;
	enum spent_profile_unknown_reason why;
	assert_int_equal(procmaps_lookup(pm, getpid(), 0xffffffff81000010ULL, &img, &off, &why), 0);
	assert_string_equal(img->id.path, SPENT_PROFILE_KERNEL_PATH);
	assert_true(off == 0xffffffff81000010ULL);
	/* unknown pid */
	assert_int_equal(procmaps_lookup(pm, 999999, 0x1000, &img, &off, &why), -ENOENT);
	assert_int_equal(why, SPENT_PROFILE_UNK_PROCESS_GONE);
	procmaps_free(pm);
	image_cache_free(c);
}

static void new_mappings_replace_and_fork_copies(void **state)
{
	(void)state;
	struct image_cache *c;
	struct procmaps *pm;
	assert_int_equal(image_cache_new(&c), 0);
	assert_int_equal(procmaps_new(c, &pm), 0);
	assert_int_equal(procmaps_add(pm, 100, 0x10000, 0x10000, 0, "/bin/sh"), 0);
	assert_int_equal(procmaps_add(pm, 100, 0x14000, 0x1000, 0, "//anon"), 0);
	const struct image_info *img;
	uint64_t off;
	enum spent_profile_unknown_reason why;
	assert_int_equal(procmaps_lookup(pm, 100, 0x14010, &img, &off, &why), -ENOENT);
	assert_int_equal(why, SPENT_PROFILE_UNK_ANON);
	assert_int_equal(procmaps_lookup(pm, 100, 0x30000, &img, &off, &why), -ENOENT);
	assert_int_equal(why, SPENT_PROFILE_UNK_NO_MAPPING);
	/* the tail after the anonymous hole keeps its file offset */
	assert_int_equal(procmaps_lookup(pm, 100, 0x15000, &img, &off, &why), 0);
	assert_true(off == image_file_to_vaddr(img, 0x5000));
	assert_int_equal(procmaps_fork(pm, 100, 101), 0);
	assert_int_equal(procmaps_lookup(pm, 101, 0x10100, &img, &off, &why), 0);
	procmaps_forget(pm, 100);
	assert_false(procmaps_known(pm, 100));
	assert_true(procmaps_known(pm, 101));
	procmaps_free(pm);
	image_cache_free(c);
}

/* Random inserts into a maprange_list against a brute-force oracle: one owner per page, where
 * the last insert covering a page owns it, with the file offset that insert gave the page. */
#define PAGES 64
static void maprange_matches_page_oracle(void **state)
{
	(void)state;
	struct maprange_list l = { 0 };
	long owner[PAGES];
	uint64_t pgoff[PAGES];
	unsigned seed = 12345;

	for (int i = 0; i < PAGES; i++)
		owner[i] = -1;
	for (long k = 0; k < 400; k++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t a = (seed >> 8) % PAGES, n = 1 + (seed >> 20) % 9;
		if (a + n > PAGES)
			n = PAGES - a;
		struct maprange m = { .start = a * 4096, .end = (a + n) * 4096, .pgoff = k * 65536,
				      .tag = (uintptr_t)k };
		assert_int_equal(maprange_insert(&l, &m), 0);
		for (uint64_t p = a; p < a + n; p++) {
			owner[p] = k;
			pgoff[p] = (uint64_t)k * 65536 + (p - a) * 4096;
		}
		for (size_t i = 1; i < l.n; i++)	/* sorted, disjoint */
			assert_true(l.r[i - 1].end <= l.r[i].start);
		for (int p = 0; p < PAGES; p++) {
			const struct maprange *r = maprange_find(&l, (uint64_t)p * 4096 + 17);
			if (owner[p] < 0) {
				assert_null(r);
				continue;
			}
			assert_non_null(r);
			assert_int_equal(r->tag, owner[p]);
			assert_int_equal(r->pgoff + ((uint64_t)p * 4096 - r->start), pgoff[p]);
		}
	}
	maprange_release(&l);
}

static void maps_lines_parse(void **state)
{
	(void)state;
	struct procmaps_line ml;
	char a[] = "7f0000001000-7f0000003000 r-xp 00002000 fd:01 1234   /usr/lib/x y.so (deleted)\n";
	char b[] = "7ffd0000-7ffd2000 rw-p 00000000 00:00 0 \n";
	char c[] = "not a mapping\n";
	char d[] = "3000-2000 r-xp 0 00:00 0 /x\n";
	/* the kernel writes a newline in a file name as \012 and nothing else escaped */
	char e[] = "1000-2000 r-xp 0 fd:01 9 /t/a\"q\\b\\012n/p\\012\n";

	assert_int_equal(procmaps_parse_line(a, &ml), 0);
	assert_int_equal(ml.start, 0x7f0000001000ull);
	assert_int_equal(ml.end, 0x7f0000003000ull);
	assert_int_equal(ml.pgoff, 0x2000);
	assert_int_equal(ml.dev_major, 0xfd);
	assert_int_equal(ml.dev_minor, 1);
	assert_int_equal(ml.ino, 1234);
	assert_true(ml.exec);
	assert_true(ml.deleted);
	assert_string_equal(ml.path, "/usr/lib/x y.so");
	assert_int_equal(procmaps_parse_line(b, &ml), 0);
	assert_false(ml.exec);
	assert_string_equal(ml.path, "");
	assert_int_equal(procmaps_parse_line(c, &ml), -EINVAL);
	assert_int_equal(procmaps_parse_line(d, &ml), -EINVAL);
	assert_int_equal(procmaps_parse_line(e, &ml), 0);
	assert_string_equal(ml.path, "/t/a\"q\\b\nn/p\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_pcs_translate_like_the_loader),
		cmocka_unit_test(new_mappings_replace_and_fork_copies),
		cmocka_unit_test(maprange_matches_page_oracle),
		cmocka_unit_test(maps_lines_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
