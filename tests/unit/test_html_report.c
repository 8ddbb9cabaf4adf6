/* tests/unit/test_html_report.c - the HTML report page (plot/html_report.c): the template's
 * slots filled with CSS, JavaScript and the profile's JSON (stacks, detail rows with times
 * relative to the span, tasks), '<' escaped so no name ends the data script, nothing fetched
 * from a network, plots checked and embedded as data: URIs, nothing written on failure.
 * What the page's JavaScript builds from it is tested in a browser: tests/e2e/report_html.sh. */
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

#include "core/binio.h"
#include "plot/html_report.h"

#define MS 1000000ull
#define T0 1700000000000000000ull

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_html_report.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *path_in_dir(const char *name)
{
	static char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static char *read_text(const char *path)
{
	uint8_t *d = NULL;
	size_t n = 0;
	assert_int_equal(binio_read_file(path, 64u << 20, &d, &n), 0);
	char *s = realloc(d, n + 1);
	assert_non_null(s);
	s[n] = 0;
	return s;
}

/* The text of the data script (a new string). */
static char *data_of(const char *page)
{
	const char *open = "<script type=\"application/json\" id=\"spent-data\">";
	const char *a = strstr(page, open);
	assert_non_null(a);
	a += strlen(open);
	const char *b = strstr(a, "</script>");
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

/* A profile of one program: two functions' worth of stacks in an unreadable image (so names
 * are image+0xOFFSET), two tasks, detail rows at 0 ms, 1500 ms and one without a time. */
static struct spent_profile *sample_profile(bool with_detail)
{
	struct spent_profile *p = spent_profile_new();
	assert_non_null(p);
	struct spent_profile_image im = { .path = "/nonexistent/libhot.so", .id_kind = SPENT_PROFILE_ID_HASH, .id_len = 8 };
	memset(im.id, 7, 8);
	uint32_t img, ev, t1, t2;
	assert_int_equal(spent_profile_image_intern(p, &im, &img), 0);
	assert_int_equal(spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev), 0);
	struct spent_profile_frame hot[2] = { { img, 0x1234 }, { img, 0x100 } };
	struct spent_profile_frame cold[2] = { { img, 0x2000 }, { img, 0x100 } };
	assert_int_equal(spent_profile_add(p, img, 0x1234, ev, 30), 0);
	assert_int_equal(spent_profile_add(p, img, 0x2000, ev, 10), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, hot, 2, 30), 0);
	assert_int_equal(spent_profile_add_stack(p, ev, cold, 2, 10), 0);
	if (!with_detail)
		return p;
	struct spent_profile_task a = { .comm = "worker", .pid = 10, .tid = 11 };
	struct spent_profile_task b = { .comm = "</script><b>x", .pid = 10, .tid = 12 };
	assert_int_equal(spent_profile_task_intern(p, &a, &t1), 0);
	assert_int_equal(spent_profile_task_intern(p, &b, &t2), 0);
	spent_profile_extend_span(p, T0, T0 + 2000 * MS);
	assert_int_equal(spent_profile_add_detail(p, ev, t1, T0 + 3 * MS, hot, 2, 20), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t2, T0 + 1500 * MS, hot, 2, 10), 0);
	assert_int_equal(spent_profile_add_detail(p, ev, t2, 0, cold, 2, 10), 0);
	return p;
}

static char *write_page(const struct spent_profile *p, const struct html_plot *plots, size_t nplots)
{
	struct symbols *sym = NULL;
	assert_int_equal(symbols_new(&sym), 0);
	uint32_t ev = 0;
	struct html_report_config cfg = { .events = &ev, .nevents = 1, .title = "t<i>",
					  .plots = plots, .nplots = nplots };
	assert_int_equal(html_report_write(p, sym, &cfg, path_in_dir("r.html")), 0);
	symbols_free(sym);
	return read_text(path_in_dir("r.html"));
}

static void test_page_parts_and_detail(void **state)
{
	struct spent_profile *p = sample_profile(true);
	char *page = write_page(p, NULL, 0);
	char *data = data_of(page);
	assert_true(!strncmp(page, "<!DOCTYPE html>", 15));
	/* every slot filled, with the real CSS and JavaScript */
	assert_null(strstr(page, "/*SPENT_"));
	assert_non_null(strstr(page, ".fr {"));
	assert_non_null(strstr(page, "data-ready"));
	/* the comm holding "</script>" did not end the data script: its '<' are escaped */
	assert_non_null(strstr(data, "\"\\u003c/script>\\u003cb>x\""));
	assert_non_null(strstr(data, "\"title\":\"t\\u003ci>\""));
	/* stacks of the event, named as the folded export names them, root first */
	assert_non_null(strstr(data, "\"names\":[\"libhot.so+0x100\",\"libhot.so+0x1234\",\"libhot.so+0x2000\"]"));
	assert_non_null(strstr(data, "\"chains\":[[0,1],[0,2]]"));
	assert_non_null(strstr(data, "\"stacks\":[[0,30],[1,10]]"));
	/* detail rows: microseconds from the span's start (the 10 ms bucket of 3 ms is 0), -1
	 * for no time, the task index, the chain */
	assert_non_null(strstr(data, "\"bucket_us\":10000"));
	assert_non_null(strstr(data, "\"span_us\":2000000"));
	assert_non_null(strstr(data, "[0,0,0,20]"));
	assert_non_null(strstr(data, "[1500000,1,0,10]"));
	assert_non_null(strstr(data, "[-1,1,1,10]"));
	assert_non_null(strstr(data, "\"tasks\":[[\"worker\",10,11,null],"));
	/* nothing comes from elsewhere */
	assert_null(strstr(page, "http:"));
	assert_null(strstr(page, "https:"));
	assert_null(strstr(page, "<script src"));
	assert_null(strstr(page, "<link"));
	free(data);
	free(page);
	spent_profile_free(p);
}

static void test_page_without_detail(void **state)
{
	struct spent_profile *p = sample_profile(false);
	char *page = write_page(p, NULL, 0);
	char *data = data_of(page);
	assert_non_null(strstr(data, "\"detail\":null"));
	assert_non_null(strstr(data, "\"tasks\":[]"));
	assert_non_null(strstr(data, "\"stacks\":[[0,30],[1,10]]"));
	assert_non_null(strstr(data, "\"plots\":[]"));
	free(data);
	free(page);
	spent_profile_free(p);
}

static void test_plots(void **state)
{
	static const uint8_t png[10] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 'a', 'b' };
	static const char svg[] = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n";
	struct html_plot pl[2], bad;
	assert_int_equal(binio_write_file_atomic(path_in_dir("a.png"), png, sizeof(png), 0600), 0);
	assert_int_equal(binio_write_file_atomic(path_in_dir("b.svg"), svg, strlen(svg), 0600), 0);
	assert_int_equal(binio_write_file_atomic(path_in_dir("c.txt"), "hello\n", 6, 0600), 0);
	assert_int_equal(html_plot_read(path_in_dir("a.png"), &pl[0]), 0);
	assert_string_equal(pl[0].mime, "image/png");
	assert_string_equal(pl[0].title, "a.png");
	assert_int_equal(html_plot_read(path_in_dir("b.svg"), &pl[1]), 0);
	assert_string_equal(pl[1].mime, "image/svg+xml");
	assert_int_equal(html_plot_read(path_in_dir("c.txt"), &bad), -EINVAL);
	assert_null(bad.data);
	assert_int_equal(html_plot_read(path_in_dir("missing.svg"), &bad), -ENOENT);
	struct spent_profile *p = sample_profile(false);
	char *page = write_page(p, pl, 2);
	char *data = data_of(page);
	/* base64 of the 10 bytes, padding included */
	assert_non_null(strstr(data, "{\"title\":\"a.png\",\"uri\":\"data:image/png;base64,iVBORw0KGgphYg==\"}"));
	assert_non_null(strstr(data, "\"uri\":\"data:image/svg+xml;base64,PD94bWwg"));
	/* the SVG's namespace URI is inside the base64, not a fetch in the page */
	assert_null(strstr(page, "http:"));
	free(data);
	free(page);
	spent_profile_free(p);
	html_plot_release(&pl[0]);
	html_plot_release(&pl[1]);
}

static void test_failure_writes_nothing(void **state)
{
	struct spent_profile *p = sample_profile(true);
	struct symbols *sym = NULL;
	assert_int_equal(symbols_new(&sym), 0);
	uint32_t ev = 0;
	struct html_report_config cfg = { .events = &ev, .nevents = 0 };
	assert_int_equal(html_report_write(p, sym, &cfg, path_in_dir("none.html")), -EINVAL);
	assert_int_equal(access(path_in_dir("none.html"), F_OK), -1);
	cfg.nevents = 1;
	assert_int_equal(html_report_write(p, sym, &cfg, path_in_dir("no/such/dir.html")), -ENOENT);
	/* an existing page stays whole when the new one cannot be written */
	assert_int_equal(html_report_write(p, sym, &cfg, path_in_dir("keep.html")), 0);
	assert_int_equal(symlink("keep.html", path_in_dir("link.html")), 0);
	assert_int_equal(html_report_write(p, sym, &cfg, path_in_dir("link.html")), -ELOOP);
	symbols_free(sym);
	spent_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_parts_and_detail),
		cmocka_unit_test(test_page_without_detail),
		cmocka_unit_test(test_plots),
		cmocka_unit_test(test_failure_writes_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
