/* test_parse_options.c - the table-driven option parser: every spelling of every type,
 * operands and `--`, stopping at the program's argv, the errors (unknown, missing value,
 * bad numbers: negative, overflow, garbage, trailing text), help with defaults, man page,
 * and perf's `-g WORD` joined to an optional value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/parse_options.h"

struct o {
	int flag, quiet, mode;
	long count;
	uint64_t size, insns;
	double ratio;
	const char *out;
	struct opt_string_list ev;
	int cb_calls;
	const char *cb_arg;
	const char *graph;
};
static struct o o;

static int on_cb(const struct option *opt, const char *arg, int unset)
{
	o.cb_calls++;
	o.cb_arg = arg;
	return arg && !strcmp(arg, "bad") ? -1 : 0;
}

static const char *const usage[] = { "spent t [OPTIONS] -- CMD", NULL };
static const struct parse_usage u = { "t", usage, "a test command", NULL };

static const struct option opts[] = {
	OPT_GROUP("Basics"),
	OPT_BOOL('f', "flag", &o.flag, "a flag"),
	OPT_BOOL('q', "quiet", &o.quiet, "be quiet"),
	OPT_INT('n', "count", &o.count, "N", "how many", 1, 100),
	OPT_U64('s', "size", &o.size, "BYTES", "a size"),
	OPT_COUNT(0, "insns", &o.insns, "N", "a count"),
	OPT_DOUBLE(0, "ratio", &o.ratio, "R", "a ratio"),
	OPT_STRING('o', "output", &o.out, "FILE", "where"),
	OPT_STRING_LIST('e', "event", &o.ev, "EV", "an event (repeatable)"),
	OPT_CHOICE(0, "mode", &o.mode, "fast|slow|exact", "how"),
	OPT_CALLBACK('c', "cb", NULL, "ARG", "a callback", on_cb),
	{ .type = OPTION_STRING, .short_name = 'g', .long_name = "call-graph", .value = &o.graph,
	  .argh = "fp|dwarf", .help = "stacks", .flags = PARSE_OPT_OPTARG, .defarg = "fp" },
	OPT_END(),
};

static int run(int flags, ...)
{
	static char *argv[32];
	va_list ap;
	int n = 0;
	argv[n++] = "t";
	va_start(ap, flags);
	for (char *a; (a = va_arg(ap, char *)) && n < 31;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	opt_string_list_release(&o.ev);
	memset(&o, 0, sizeof(o));
	o.count = 10;
	o.out = "default.out";
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	int r = parse_options(n, argv, opts, &u, flags);
	fclose(stderr);
	stderr = saved;
	return r;
}

static void test_spellings(void **state)
{
	assert_int_equal(run(0, "-f", "--count", "5", "--output=x", "-sy", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "-f", "--count", "5", "--output=x", "-s4K", NULL), 0);
	assert_int_equal(o.flag, 1);
	assert_int_equal(o.count, 5);
	assert_string_equal(o.out, "x");
	assert_int_equal(o.size, 4096);
	assert_int_equal(run(0, "-fq", "-n7", "--size", "0x10", "--ratio=0.25", NULL), 0);
	assert_true(o.flag && o.quiet);
	assert_int_equal(o.count, 7);
	assert_int_equal(o.size, 16);
	assert_true(o.ratio == 0.25);
	/* a count's K is a thousand (as record's -c), a size's 1024 */
	assert_int_equal(run(0, "--insns", "2K", "--size=2K", NULL), 0);
	assert_int_equal(o.insns, 2000);
	assert_int_equal(o.size, 2048);
	assert_int_equal(run(0, "--flag", "--no-flag", NULL), 0);
	assert_int_equal(o.flag, 0);
	assert_int_equal(run(0, "--mode", "exact", NULL), 0);
	assert_int_equal(o.mode, 2);
	assert_int_equal(run(0, "--mode=slow", NULL), 0);
	assert_int_equal(o.mode, 1);
}

static void test_lists_and_callbacks(void **state)
{
	assert_int_equal(run(0, "-e", "a", "--event=b", "-ec", NULL), 0);
	assert_int_equal(o.ev.n, 3);
	assert_string_equal(o.ev.items[0], "a");
	assert_string_equal(o.ev.items[2], "c");
	assert_int_equal(run(0, "-c", "x", "--cb=y", NULL), 0);
	assert_int_equal(o.cb_calls, 2);
	assert_string_equal(o.cb_arg, "y");
	assert_int_equal(run(0, "--cb", "bad", NULL), PARSE_OPT_ERROR);
	/* an optional value only attaches with = or directly after the letter */
	assert_int_equal(run(0, "-g", "prog", NULL), 1);
	assert_string_equal(o.graph, "fp");
	assert_int_equal(run(0, "--call-graph=dwarf", NULL), 0);
	assert_string_equal(o.graph, "dwarf");
	assert_int_equal(run(0, "-gdwarf", NULL), 0);
	assert_string_equal(o.graph, "dwarf");
}

static void test_operands(void **state)
{
	char **argv;
	assert_int_equal(run(0, "a", "-f", "b", "--", "-q", NULL), 3);
	assert_int_equal(o.flag, 1);
	assert_int_equal(o.quiet, 0);	/* after -- it is an operand */
	assert_int_equal(run(PARSE_STOP_AT_NON_OPTION, "-f", "ls", "-q", NULL), 2);
	assert_int_equal(o.quiet, 0);	/* the program's own option */
	assert_int_equal(run(0, "-", NULL), 1);	/* "-" is an operand (stdin/stdout) */
	(void)argv;
}

static void test_errors(void **state)
{
	assert_int_equal(run(0, "--nope", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "-Z", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--count", NULL), PARSE_OPT_ERROR);	/* missing value */
	assert_int_equal(run(0, "--count", "0", NULL), PARSE_OPT_ERROR);	/* below min */
	assert_int_equal(run(0, "--count", "101", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--count", "5x", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--count", "-0", NULL), PARSE_OPT_ERROR);	/* no sign at all */
	assert_int_equal(run(0, "--help=x", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--man=1", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--size", "-1", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--size", " 1", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--size", "18446744073709551616", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--size", "17179869184G", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--ratio", "nan", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--mode", "medium", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--flag=1", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--no-count", NULL), PARSE_OPT_ERROR);
	/* a FILE option given "" names no file; an event list may be empty (it says so itself) */
	assert_int_equal(run(0, "-o", "", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "--output=", NULL), PARSE_OPT_ERROR);
	assert_int_equal(run(0, "-e", "", NULL), 0);
	opt_string_list_release(&o.ev);	/* run() releases the list only at its next call */
}

static void test_help_and_man(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	memset(&o, 0, sizeof(o));
	o.count = 10;
	o.out = "default.out";
	FILE *f = open_memstream(&buf, &len);
	parse_options_help(f, opts, &u);
	fclose(f);
	assert_non_null(strstr(buf, "usage: spent t [OPTIONS] -- CMD"));
	assert_non_null(strstr(buf, "-n, --count=N"));
	assert_non_null(strstr(buf, "how many (default: 10)"));
	assert_non_null(strstr(buf, "where (default: default.out)"));
	assert_non_null(strstr(buf, "--[no-]flag"));
	assert_non_null(strstr(buf, "-g, --call-graph[=fp|dwarf]"));
	assert_non_null(strstr(buf, "how (default: fast)"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	parse_options_man(f, opts, &u);
	fclose(f);
	assert_non_null(strstr(buf, ".TH SPENT-T 1"));
	assert_non_null(strstr(buf, "\\-\\-count=N"));
	free(buf);
}

static bool is_mode(const char *w)
{
	return !strcmp(w, "dwarf") || !strcmp(w, "fp");
}

/* perf's `-g dwarf`: the next word joined to an optional value when it reads as one, the values
 * of options that take one stepped over (a -C 0 before -g stopped the scan: "dwarf" ran as the
 * program), nothing after "--" or the first operand touched */
static void join_optarg(void **state)
{
	(void)state;
	static const char *cpus;
	const struct option gopts[] = {
		OPT_STRING('C', "cpu", &cpus, "CPUS", "cpus"),
		OPT_BOOL('q', "quiet", &o.quiet, "quiet"),
		{ .type = OPTION_STRING, .short_name = 'g', .long_name = "call-graph", .value = &o.graph,
		  .argh = "MODE", .help = "graph", .flags = PARSE_OPT_OPTARG, .defarg = "fp" },
		OPT_END(),
	};
	char *a1[] = { "x", "-C", "0", "-q", "-g", "dwarf", "--", "prog", NULL };
	assert_int_equal(parse_options_join_optarg(8, a1, gopts, "call-graph", is_mode), 7);
	assert_string_equal(a1[4], "--call-graph=dwarf");
	assert_string_equal(a1[5], "--");
	assert_string_equal(a1[6], "prog");
	/* a value that reads as a mode is a value: -C takes "fp" */
	char *a2[] = { "x", "--cpu", "fp", "--call-graph", "fp", "prog", NULL };
	assert_int_equal(parse_options_join_optarg(6, a2, gopts, "call-graph", is_mode), 5);
	assert_string_equal(a2[2], "fp");
	assert_string_equal(a2[3], "--call-graph=fp");
	/* not a mode, or after the first operand or "--": left as it is */
	char *a3[] = { "x", "-g", "prog", "-g", "dwarf", NULL };
	assert_int_equal(parse_options_join_optarg(5, a3, gopts, "call-graph", is_mode), 5);
	assert_string_equal(a3[1], "-g");
	char *a4[] = { "x", "--", "-g", "dwarf", NULL };
	assert_int_equal(parse_options_join_optarg(4, a4, gopts, "call-graph", is_mode), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_lists_and_callbacks),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_help_and_man),
		cmocka_unit_test(join_optarg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
