/* tests/unit/test_memmap.c - memory-map dots land at address mod N against time, columns merge
 * when the trace outgrows the width, and the PNG written decodes back (libpng) to the picture. */
#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/memmap.h"
#include "plot/plot.h"

static void dots_are_address_mod_n_against_instructions(void **state)
{
	(void)state;
	struct memmap_config cfg = { 4 << 20, 100, 64 };
	struct memmap *mm;
	assert_int_equal(memmap_new(&cfg, &mm), 0);
	/* 50 instructions at 1M (+4M: same row), data at 3M */
	for (int i = 0; i < 50; i++) {
		uint64_t d = (3 << 20) + (uint64_t)i;
		memmap_insn(mm, (5ull << 20) + (uint64_t)i * 4, &d, 1);
	}
	assert_int_equal(memmap_column_span(mm), 1);
	assert_int_equal(memmap_dot(mm, 0, 16), 1);	/* 1M of 4M -> row 16 of 64 */
	assert_int_equal(memmap_dot(mm, 49, 48), 2);	/* 3M -> row 48 */
	assert_int_equal(memmap_dot(mm, 50, 16), 0);	/* no instruction there yet */
	/* 250 more: the 100 columns now cover 400 instructions, 4 per column */
	for (int i = 0; i < 250; i++)
		memmap_insn(mm, 5ull << 20, NULL, 0);
	assert_int_equal(memmap_column_span(mm), 4);
	assert_int_equal(memmap_instructions(mm), 300);
	assert_int_equal(memmap_dot(mm, 12, 48), 2);	/* insns 48..51 include data dots */
	assert_int_equal(memmap_dot(mm, 13, 48), 0);
	assert_int_equal(memmap_dot(mm, 74, 16), 1);
	assert_int_equal(memmap_dot(mm, 75, 16), 0);
	memmap_free(mm);
}

static void png_decodes_to_the_rendered_picture(void **state)
{
	(void)state;
	struct raster r;
	assert_int_equal(raster_init(&r, 40, 30, 0xffffff), 0);
	raster_set(&r, 3, 4, 0xd02020);
	raster_text(&r, 10, 10, 1, 0x000000, "4M");
	char path[] = "/tmp/spent-png-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(raster_write_png(&r, path), 0);
	png_image img;
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_file(&img, path));
	assert_int_equal(img.width, 40);
	assert_int_equal(img.height, 30);
	img.format = PNG_FORMAT_RGB;
	uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
	assert_true(png_image_finish_read(&img, NULL, buf, 0, NULL));
	assert_memory_equal(buf, r.rgb, 40 * 30 * 3);
	uint8_t *p = &buf[(4 * 40 + 3) * 3];
	assert_int_equal(p[0], 0xd0);
	assert_int_equal(p[1], 0x20);
	free(buf);
	unlink(path);
	raster_release(&r);
}

static void svg_escapes_text_and_writes_atomically(void **state)
{
	(void)state;
	char path[] = "/tmp/spent-svg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct svg *s = svg_new(100, 50);
	svg_text(s, 1, 2, 10, "start", "a<b & \"c\"");
	assert_int_equal(svg_write(s, path), 0);
	svg_free(s);
	FILE *f = fopen(path, "r");
	char buf[2048];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_non_null(strstr(buf, "a&lt;b &amp; &quot;c&quot;"));
	assert_non_null(strstr(buf, "</svg>"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dots_are_address_mod_n_against_instructions),
		cmocka_unit_test(png_decodes_to_the_rendered_picture),
		cmocka_unit_test(svg_escapes_text_and_writes_atomically),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
