/* tests/unit/test_untrusted_paths.c - paths that untrusted inputs name (a trace log's images;
 * the images a trace loads, for the sinks' symbol table; a recording's files and a profile
 * directory's files, read with binio_read_file; a profile directory's saved kallsyms) may be
 * FIFOs or devices: they are refused at once, never opened in a way that waits for a writer
 * or reads forever. An alarm turns a hang into a failure of this test program. */
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

#include "analysis/symtab.h"
#include "core/binio.h"
#include "core/symbols.h"
#include "trace/log_io.h"

static char fifo[64];

static int make_fifo(void **state)
{
	(void)state;
	snprintf(fifo, sizeof(fifo), "/tmp/spent-ut-fifo.%d", (int)getpid());
	unlink(fifo);
	return mkfifo(fifo, 0600);
}

static int remove_fifo(void **state)
{
	(void)state;
	unlink(fifo);
	return 0;
}

static void build_id_of_a_fifo_or_device_fails_at_once(void **state)
{
	(void)state;
	uint8_t id[20], n = 7;
	uint32_t kind = 9;
	alarm(10);
	assert_int_not_equal(log_image_identity(fifo, id, &n, &kind), 0);
	assert_int_equal(n, 0);
	assert_int_not_equal(log_image_identity("/dev/zero", id, &n, &kind), 0);
	alarm(0);
}

static void symtab_skips_a_fifo_or_device(void **state)
{
	(void)state;
	struct symtab *st = symtab_new();
	assert_non_null(st);
	alarm(10);
	assert_int_not_equal(symtab_add_image(st, fifo, 0), 0);
	assert_int_not_equal(symtab_add_image(st, "/dev/zero", 0), 0);
	alarm(0);
	assert_int_equal(symtab_count(st), 0);
	symtab_free(st);
}

/* A log whose images are the FIFO, with and without a recorded build-id (the check, then the
 * mapping for decoding): the reconstruction ends, whatever it says. */
static void log_naming_a_fifo_reconstructs_or_fails_at_once(void **state)
{
	(void)state;
	char path[] = "/tmp/spent-ut-fifolog.XXXXXX";
	close(mkstemp(path));
	struct log_writer *w;
	uint8_t rec[sizeof(struct log_image) + 64] = { 0 };
	for (int with_id = 0; with_id < 2; with_id++) {
		struct log_image li = { .start = 0x400000, .len = 0x1000,
					.path_len = (uint32_t)strlen(fifo),
					.flags = with_id ? LOG_IMG_BUILD_ID : 0,
					.build_id_len = with_id ? 20 : 0 };
		size_t pad = (li.path_len + 7u) & ~7u;
		memcpy(rec, &li, sizeof(li));
		memcpy(rec + sizeof(li), fifo, li.path_len);
		assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
		assert_int_equal(log_writer_add(w, LOG_REC_IMAGE, rec, (uint32_t)(sizeof(li) + pad)), 0);
		assert_int_equal(log_writer_commit(w), 0);
		log_writer_free(w);
		struct spent_trace_source *src;
		struct spent_trace_batch b;
		char err[512];
		alarm(10);
		assert_int_equal(trace_log_open_source(path, &src, err, sizeof(err)), 0);
		while (spent_trace_source_next(src, &b) > 0)
			;
		alarm(0);
		spent_trace_source_free(src);
	}
	unlink(path);
}

static void read_file_refuses_a_fifo_at_once(void **state)
{
	(void)state;
	uint8_t *data = NULL;
	size_t len = 0;
	alarm(10);
	assert_int_equal(binio_read_file(fifo, 1 << 20, &data, &len), -EINVAL);
	alarm(0);
	assert_null(data);
}

/* A saved kallsyms that is a FIFO is not waited on (the kernel's own list serves instead). */
static void saved_kallsyms_fifo_is_not_waited_on(void **state)
{
	(void)state;
	struct symbols *s;
	struct spent_profile_image k = { .path = SPENT_PROFILE_KERNEL_PATH };
	struct sym_info si;
	assert_int_equal(symbols_new(&s), 0);
	assert_int_equal(symbols_set_kallsyms(s, fifo), 0);
	alarm(10);
	(void)symbols_lookup(s, &k, 0xffffffff81000000ULL, &si);
	alarm(0);
	symbols_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_id_of_a_fifo_or_device_fails_at_once),
		cmocka_unit_test(symtab_skips_a_fifo_or_device),
		cmocka_unit_test(log_naming_a_fifo_reconstructs_or_fails_at_once),
		cmocka_unit_test(read_file_refuses_a_fifo_at_once),
		cmocka_unit_test(saved_kallsyms_fifo_is_not_waited_on),
	};
	return cmocka_run_group_tests(tests, make_fifo, remove_fifo);
}
