/* cli/cli.h - helpers shared by the command files: error lines, number parsing, output sinks. */
#ifndef SPENT_CLI_H
#define SPENT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The database `spent daemon` and `spent top` use without --db. */
#define SPENT_DEFAULT_DB "/var/lib/spent"

/* Print "spent: MESSAGE" on stderr as one line (lowercase, no final period by convention). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A write to stdout failed with -ERR: "spent: cannot write to stdout: REASON", once (stdout's
 * error flag is cleared, so the check at exit says nothing more). A reader that went away
 * (EPIPE) is not reported, as at exit. */
void cli_stdout_error(int err);
/* Same, prefixed "spent: warning: ". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -q (perf's --quiet): cli_warn prints nothing from here on; errors still print */
void cli_set_quiet(bool quiet);
/* The events this machine can count, those matching GLOB (NULL: all), as `spent list` and
 * `spent stat --list` print them: 0, or 1 after an error line. */
int cli_list_events(const char *glob);

/* Numbers are parsed strictly (core/number.h): digits and a suffix only, no blanks, no sign,
 * no garbage, no overflow. */
/* An unsigned decimal (or 0x hex) with an optional K/M/G decimal suffix; 0, -EINVAL, -ERANGE. */
int cli_parse_u64(const char *s, uint64_t *out);
/* -F as record, top and daemon take it: samples per second, K/M counting thousands and
 * millions; 0 or -EINVAL (0 Hz included). */
int cli_parse_frequency(const char *s, uint64_t *hz);
/* A rate above kernel.perf_event_max_sample_rate (which the kernel refuses) lowered to it,
 * with a warning, as perf and spent record do. */
void cli_clamp_frequency(uint64_t *hz);
/* -C CPUS as stat and record take it: a list like 0-3,5 of online CPUs, into *CPUS (malloc'd,
 * *N of them); 0, or -EINVAL after one error line. */
int cli_parse_cpu_list(const char *list, int **cpus, size_t *n);
/* V as a percentage of TOTAL (0 when TOTAL is), as the reports print their rows. */
static inline double cli_pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}
/* A size like 32K, 8M, 64 (binary units); 0, -EINVAL, -ERANGE. */
int cli_parse_size(const char *s, uint64_t *out);
/* An integer option value in [MIN, MAX] (MIN >= 0), printing an error naming OPT on failure;
 * 0 or -EINVAL. */
int cli_parse_int_opt(const char *opt, const char *s, long min, long max, long *out);
/* A decimal number option value in [MIN, MAX], printing an error naming OPT; 0 or -EINVAL. */
int cli_parse_double_opt(const char *opt, const char *s, double min, double max, double *out);
struct spent_event;
/* perf's fallback when kernel.perf_event_paranoid keeps this user from kernel events: EV is
 * switched to user space only (":u", spent_event_user_fallback) and one warning line, once
 * per run, says so. True when EV was switched. */
bool cli_user_space_fallback(struct spent_event *ev);

/* Before the run: can PATH take a file output (core/outfile.h's rules)? 0, or prints
 * "spent: cannot write 'PATH': why" and returns -errno. */
int cli_check_output(const char *path);
/* The same, and PATH must not be INPUT (the same file) or a file inside it (a directory: a
 * recording, a profile): "spent: cannot write 'PATH': it is the input 'INPUT'" (a study's SVG
 * given the log's name replaced the log). */
int cli_check_output_from(const char *path, const char *input);
/* Refuse (one error line, -EEXIST) two of the N output PATHS (NULL or '-': none) that name one
 * file, as given by the options OPTS: the last written would silently replace the other. */
int cli_check_outputs_distinct(const char *const *paths, const char *const *opts, size_t n);

/* Write S as one CSV field, quoted when it holds a comma, quote or newline. */
void cli_csv_field(FILE *out, const char *s);
/* The same with separator SEP (spent stat -x): a field holding SEP is quoted. */
void cli_csv_field_sep(FILE *out, const char *s, char sep);
/* Every value of a repeatable list option (-e a -e b,c) as one comma-separated list
 * ("a,b,c"), malloc'ed; NULL when out of memory. */
struct opt_string_list;
char *cli_join_list(const struct opt_string_list *l);

#endif
