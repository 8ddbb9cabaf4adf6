/* cli/cli.h - helpers shared by the command files: error lines, number parsing, output sinks. */
#ifndef SPENT_CLI_H
#define SPENT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Print "spent: MESSAGE" on stderr as one line (lowercase, no final period by convention). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, prefixed "spent: warning: ". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse an unsigned decimal (or 0x hex) with optional K/M/G binary suffix; 0 or -EINVAL. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Parse a size like 32K, 8M, 64 (binary units); 0 or -EINVAL. */
int cli_parse_size(const char *s, uint64_t *out);
/* Parse a positive int option value, printing an error naming OPT on failure; 0 or -EINVAL. */
int cli_parse_int_opt(const char *opt, const char *s, long min, long max, long *out);

/* Before the run: can PATH take a file output (core/outfile.h's rules)? 0, or prints
 * "spent: cannot write 'PATH': why" and returns -errno. */
int cli_check_output(const char *path);

/* Write S as a JSON string literal (quotes included) with escapes. */
void cli_json_string(FILE *out, const char *s);
/* Write S as one CSV field, quoted when it holds a comma, quote or newline. */
void cli_csv_field(FILE *out, const char *s);

#endif
