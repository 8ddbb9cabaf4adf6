/* tests/unit/test_stat_output.c - spent stat's printing (cli/stat_output.c) of the --costs
 * estimates in each format: --csv and -x SEP gave the table (a script reading CSV got prose),
 * now CSV lines with the same fields as --json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/stat.h"
#include "spent/events.h"

/* cycles, branch-misses and cache-misses counted: two classes the model knows */
static size_t cost_rows(struct spent_event *ev, struct stat_row *rows)
{
	static const char *const names[] = { "cycles", "branch-misses", "cache-misses" };
	static const uint64_t counts[] = { 1000000000, 2000000, 300000 };
	char err[256];
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(spent_event_parse(names[i], &ev[i], err, sizeof(err)), 0);
		rows[i] = (struct stat_row){ .ev = &ev[i], .supported = true, .tid = -1, .pid = -1, .cpu = -1 };
		rows[i].v.value = counts[i];
		rows[i].v.enabled = rows[i].v.running = 1000000;
	}
	return 3;
}

/* The costs printed in FORMAT (SEP for -x) into a string (freed by the caller) */
static char *costs_text(enum stat_format format, char sep)
{
	struct spent_event ev[3];
	struct stat_row rows[3];
	size_t n = cost_rows(ev, rows);
	struct stat_opts opts = { .format = format, .sep = sep };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct stat_out o = { .f = f, .opts = &opts, .format = format, .header_done = true };
	stat_print_costs(&o, rows, n);
	fclose(f);
	return buf;
}

/* Lines of S that have exactly FIELDS fields separated by SEP (outside quotes: a source names
 * its book with commas) */
static int lines_with_fields(const char *s, char sep, int fields)
{
	int good = 0;
	for (const char *l = s; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		int f = 1, quoted = 0;
		for (size_t i = 0; i < len; i++) {
			quoted ^= l[i] == '"';
			f += l[i] == sep && !quoted;
		}
		good += len && f == fields;
		l += len + (nl != NULL);
	}
	return good;
}

static void costs_as_csv_with_a_header(void **state)
{
	(void)state;
	char *s = costs_text(STAT_CSV, ',');
	assert_null(strstr(s, "Estimated cost"));
	const char *hdr = "cost_event,count,cycles_each,cycles,pct_of_cycles,seconds,source\n";
	assert_true(!strncmp(s, hdr, strlen(hdr)));
	/* the header and one line per known class, a source holding a comma quoted */
	assert_int_equal(lines_with_fields(s, ',', 7), 3);
	assert_non_null(strstr(s, "\nbranch-misses,2000000,"));
	free(s);
}

static void costs_as_x_sep_lines_only(void **state)
{
	(void)state;
	char *s = costs_text(STAT_PERF_CSV, ';');
	assert_null(strstr(s, "Estimated cost"));
	assert_null(strstr(s, "cost_event"));
	assert_int_equal(lines_with_fields(s, ';', 7), 2);
	assert_true(!strncmp(s, "branch-misses;2000000;", 22) || !strncmp(s, "cache-misses;300000;", 20));
	free(s);
}

static void costs_table_unchanged(void **state)
{
	(void)state;
	char *s = costs_text(STAT_TABLE, ',');
	assert_non_null(strstr(s, "Estimated cost per event class"));
	assert_non_null(strstr(s, " Sources:"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(costs_as_csv_with_a_header),
		cmocka_unit_test(costs_as_x_sep_lines_only),
		cmocka_unit_test(costs_table_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
