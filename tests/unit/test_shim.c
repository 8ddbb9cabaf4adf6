/* tests/unit/test_shim.c - Shim's library parts: the sample file round trip and its reader's
 * refusals, rate summaries, histogram symbolisation and merging, ELF symbol lookup, and the
 * observer's rule for which samples count on a busy machine (shim/sample_class.h). */
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

#include "core/binio.h"
#include "shim/sample_class.h"
#include "shim/shim.h"
#include "shim/shim_format.h"

__attribute__((noinline)) int shim_test_marker_fn(int x)
{
	return x * 3 + 1;
}

static struct shim_result *sample_result(void)
{
	struct shim_result *r = shim_result_new();
	assert_non_null(r);
	r->flags = SHIM_RESULT_SCHED_CHANNEL;
	r->observer_cpu = 1;
	r->app_cpu = 0;
	r->exit_status = 3;
	r->pid = 4242;
	r->tsc_hz = 2000000000;
	r->ratio_lo = 0.99;
	r->ratio_hi = 1.01;
	r->samples = 5;
	r->samples_app = 4;
	r->samples_other = 1;
	r->samples_gap = 2;
	r->app_ns = 123456789;
	r->first_tsc = 1000;
	r->last_tsc = 9000;
	snprintf(r->note, sizeof(r->note), "a note");
	r->ncounters = 1;
	r->ntags = 1;
	r->signals = calloc(2, sizeof(*r->signals));
	struct shim_signal_result *c = &r->signals[0], *t = &r->signals[1];
	c->kind = SHIM_SIG_RATE;
	c->source = SHIM_SRC_MEMORY;
	snprintf(c->name, sizeof(c->name), "ticks");
	c->symbol = strdup("ticks");
	c->image = strdup("/bin/x");
	c->addr = 0x1234;
	c->kept = 3;
	c->dropped = 1;
	c->rate_median = 2e7;
	t->kind = SHIM_SIG_TAG;
	t->source = SHIM_SRC_MEMORY;
	snprintf(t->name, sizeof(t->name), "phase");
	t->symbol = strdup("phase");
	t->image = strdup("/bin/x");
	t->nrows = 2;
	t->rows = calloc(2, sizeof(*t->rows));
	t->rows[0] = (struct shim_hist_row){ 7, 3, strdup("main") };
	t->rows[1] = (struct shim_hist_row){ 1, 1, NULL };
	t->overflow = 1;
	r->nlog = 2;
	r->log = calloc(2 * 5, sizeof(uint64_t));
	for (int i = 0; i < 10; i++)
		r->log[i] = (uint64_t)i * 1000 + 7;
	return r;
}

static void file_roundtrip(void **state)
{
	(void)state;
	char path[] = "/tmp/test_shim.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct shim_result *r = sample_result(), *b = NULL;
	assert_int_equal(shim_file_write(path, r), 0);
	assert_int_equal(shim_file_read(path, &b), 0);
	unlink(path);
	assert_int_equal(b->flags, r->flags);
	assert_int_equal(b->exit_status, 3);
	assert_int_equal(b->pid, 4242);
	assert_int_equal(b->samples, 5);
	assert_int_equal(b->samples_app, 4);
	assert_int_equal(b->samples_other, 1);
	assert_int_equal(b->samples_gap, 2);
	assert_int_equal(b->app_ns, 123456789);
	assert_int_equal(b->tsc_hz, r->tsc_hz);
	assert_string_equal(b->note, "a note");
	assert_int_equal(b->signals[0].kept, 3);
	assert_true(b->signals[0].rate_median == 2e7);
	assert_int_equal(b->signals[1].nrows, 2);
	assert_string_equal(b->signals[1].rows[0].symbol, "main");
	assert_null(b->signals[1].rows[1].symbol);
	assert_int_equal(b->signals[1].overflow, 1);
	assert_int_equal(b->nlog, 2);
	assert_memory_equal(b->log, r->log, 10 * sizeof(uint64_t));
	shim_result_free(r);
	shim_result_free(b);
}

static void reader_refuses_truncation_and_corruption(void **state)
{
	(void)state;
	char path[] = "/tmp/test_shim.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct shim_result *r = sample_result(), *b = NULL;
	assert_int_equal(shim_file_write(path, r), 0);
	uint8_t *data;
	size_t len;
	assert_int_equal(binio_read_file(path, 1 << 20, &data, &len), 0);
	unlink(path);
	for (size_t n = 0; n < len; n++)
		assert_int_not_equal(shim_file_parse(data, n, &b), 0);
	data[len / 2] ^= 0x40;
	assert_int_equal(shim_file_parse(data, len, &b), -EBADMSG);
	data[len / 2] ^= 0x40;
	data[8] = 9;	/* version 9 */
	assert_int_equal(shim_file_parse(data, len, &b), -EPROTO);
	assert_null(b);
	free(data);
	shim_result_free(r);
}

static void rates_median_of_reservoir(void **state)
{
	(void)state;
	double v[] = { 5e-3, 1e-3, 2e-3, 4e-3, 3e-3 };	/* per tick */
	double mn, med, mx;
	shim_rates_summarise(v, 5, 1000, &mn, &med, &mx);
	assert_true(mn == 1.0 && med == 3.0 && mx == 5.0);
	shim_rates_summarise(v, 4, 1000, &mn, &med, &mx);	/* even count: mean of middle two */
	assert_true(med > 2.499 && med < 2.501);
}

struct self_image {
	struct shim_image_map map;
	int done;
};

static int self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_image *s = arg;
	if (s->done++)
		return 1;
	s->map.base = info->dlpi_addr;
	ssize_t n = readlink("/proc/self/exe", s->map.path, sizeof(s->map.path) - 1);
	s->map.path[n > 0 ? n : 0] = 0;
	return 1;
}

static void histogram_merges_values_inside_a_function(void **state)
{
	(void)state;
	struct self_image self = { .done = 0 };
	dl_iterate_phdr(self_cb, &self);
	struct shim_image_syms *is = shim_image_syms_new(&self.map, 1);
	assert_non_null(is);
	uint64_t fn = (uint64_t)(uintptr_t)&shim_test_marker_fn;
	struct shim_hist_slot slots[4] = { { fn, 5 }, { fn + 2, 4 }, { 3, 2 }, { 0, 0 } };
	struct shim_hist_row *rows;
	size_t n;
	assert_int_equal(shim_hist_build(slots, 4, is, &rows, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].symbol, "shim_test_marker_fn");
	assert_int_equal(rows[0].samples, 9);
	assert_int_equal(rows[0].value, fn);
	assert_null(rows[1].symbol);
	assert_int_equal(rows[1].value, 3);
	shim_hist_rows_free(rows, n);
	shim_image_syms_free(is);
}

static void elf_finds_symbols_and_interp(void **state)
{
	(void)state;
	struct shim_elf *e;
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	path[n] = 0;
	assert_int_equal(shim_elf_open(path, &e), 0);
	uint64_t v;
	assert_int_equal(shim_elf_find(e, "shim_test_marker_fn", &v), 0);
	assert_int_equal(shim_elf_find(e, "no_such_symbol_here", &v), -ENOENT);
	assert_false(shim_elf_is_static(e));
	assert_non_null(shim_elf_needed(e, 0));
	shim_elf_free(e);
	assert_int_equal(shim_elf_open("/nonexistent/x", &e), -ENOENT);
	assert_int_equal(shim_elf_open("/proc/self/status", &e), -ENOEXEC);
}

/* Version 1 files (no samples_gap, no app_ns) still read, with none. */
static void reader_reads_version_1(void **state)
{
	(void)state;
	char path[] = "/tmp/test_shim.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	uint8_t *data[2];
	size_t len[2];
	/* write samples_gap and app_ns (adjacent) as 0 and as 1 (one uvarint byte each): the
	 * first differing byte is the first of them */
	for (int g = 0; g < 2; g++) {
		struct shim_result *r = sample_result();
		r->samples_gap = (uint64_t)g;
		r->app_ns = (uint64_t)g;
		assert_int_equal(shim_file_write(path, r), 0);
		assert_int_equal(binio_read_file(path, 1 << 20, &data[g], &len[g]), 0);
		shim_result_free(r);
	}
	unlink(path);
	assert_int_equal(len[0], len[1]);
	size_t at = 16, n = len[0];
	while (at < n && data[0][at] == data[1][at])
		at++;
	assert_true(at < n - 4 && data[0][at + 1] == 0 && data[1][at + 1] == 1);
	memmove(data[0] + at, data[0] + at + 2, n - at - 2);
	n -= 2;
	uint32_t v1 = htole32(1), crc;
	memcpy(data[0] + 8, &v1, 4);
	crc = htole32(binio_crc32(0, data[0], n - 4));
	memcpy(data[0] + n - 4, &crc, 4);
	struct shim_result *b = NULL;
	assert_int_equal(shim_file_parse(data[0], n, &b), 0);
	assert_int_equal(b->samples, 5);
	assert_int_equal(b->samples_other, 1);
	assert_int_equal(b->samples_gap, 0);
	assert_int_equal(b->app_ns, 0);
	assert_int_equal(b->signals[1].nrows, 2);
	shim_result_free(b);
	free(data[0]);
	free(data[1]);
}

static void samples_classified_by_the_thread_channel(void **state)
{
	(void)state;
	const uint32_t pid = 4242;
	const uint64_t app = (uint64_t)pid << 32 | 4243, other = (uint64_t)77 << 32 | 77;
	struct shim_sample_view v = { app, 5, 5, 9, 9 };
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_APP);
	v.thread = other;
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_OTHER);
	v.thread = 0;	/* idle */
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_OTHER);
	v.thread = app;
	v.app_sw_after = 6;	/* the app CPU switched between the thread and the tag reads */
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_GAP);
	v.app_sw_after = 5;
	v.own_sw_after = 11;	/* the observer was descheduled within the sample */
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_GAP);
	v.thread = other;	/* off its CPU wins: it says where the time went */
	assert_int_equal(shim_sample_classify(&v, 1, pid), SHIM_SAMPLE_OTHER);
	/* without the channel every sample counts */
	struct shim_sample_view none = { 0, 0, 0, 0, 0 };
	assert_int_equal(shim_sample_classify(&none, 0, pid), SHIM_SAMPLE_APP);
	assert_true(shim_rate_interval_ok(&none, SHIM_SAMPLE_APP, &none, SHIM_SAMPLE_APP));
}

static void rates_not_taken_across_a_switch(void **state)
{
	(void)state;
	struct shim_sample_view a = { 1ull << 32, 5, 5, 9, 9 }, b = a;
	assert_true(shim_rate_interval_ok(&a, SHIM_SAMPLE_APP, &b, SHIM_SAMPLE_APP));
	assert_false(shim_rate_interval_ok(&a, SHIM_SAMPLE_OTHER, &b, SHIM_SAMPLE_APP));
	assert_false(shim_rate_interval_ok(&a, SHIM_SAMPLE_APP, &b, SHIM_SAMPLE_OTHER));
	b.app_sw = b.app_sw_after = 7;	/* the app was switched out and back in between */
	assert_false(shim_rate_interval_ok(&a, SHIM_SAMPLE_APP, &b, SHIM_SAMPLE_APP));
	b = a;
	b.own_sw = b.own_sw_after = 10;	/* the observer was descheduled between the samples */
	assert_false(shim_rate_interval_ok(&a, SHIM_SAMPLE_APP, &b, SHIM_SAMPLE_APP));
	b = a;
	b.own_sw_after = 10;	/* ... or during the later one */
	assert_false(shim_rate_interval_ok(&a, SHIM_SAMPLE_APP, &b, SHIM_SAMPLE_GAP));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_roundtrip),
		cmocka_unit_test(reader_refuses_truncation_and_corruption),
		cmocka_unit_test(reader_reads_version_1),
		cmocka_unit_test(samples_classified_by_the_thread_channel),
		cmocka_unit_test(rates_not_taken_across_a_switch),
		cmocka_unit_test(rates_median_of_reservoir),
		cmocka_unit_test(histogram_merges_values_inside_a_function),
		cmocka_unit_test(elf_finds_symbols_and_interp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
