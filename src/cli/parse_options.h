/* cli/parse_options.h - one option parser for every command (in the manner of git's
 * parse-options): a command describes its options in a table (short and long name, type,
 * target field, argument name, one-line help, default) and gets from it the parsing
 * (`-x V`, `-xV`, `--long V`, `--long=V`, `--no-long`, bundled short flags, `--` and the first
 * non-option ending the options where the command runs a program), the usage and `-h` text
 * listing every option with its help and default, one unknown-option message, and the man page
 * (`--man`, used by the build). */
#ifndef SPENT_CLI_PARSE_OPTIONS_H
#define SPENT_CLI_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum parse_opt_type {
	OPTION_END = 0,
	OPTION_GROUP,		/* a heading in the help, no option */
	OPTION_BOOL,		/* int: 1, or 0 with --no-NAME */
	OPTION_INT,		/* long in [min, max] */
	OPTION_U64,		/* uint64_t: decimal or 0x hex, optional K/M/G (binary) suffix */
	OPTION_DOUBLE,		/* double, finite, in [min, max] when max > min */
	OPTION_STRING,		/* const char *; "-" is a value like any other */
	OPTION_STRING_LIST,	/* struct opt_string_list: every occurrence appended */
	OPTION_CHOICE,		/* int: index of the value in CHOICES ("a|b|c") */
	OPTION_CALLBACK,	/* CALLBACK(opt, arg or NULL, unset) does it */
};

enum parse_opt_flags {
	PARSE_OPT_NONEG = 1 << 0,	/* no --no-NAME form */
	PARSE_OPT_HIDDEN = 1 << 1,	/* not in -h or the man page */
	PARSE_OPT_OPTARG = 1 << 2,	/* the value is optional (only as --name=V or -xV); DEFARG
					 * is used when it is absent */
	PARSE_OPT_NOARG = 1 << 3,	/* a callback that takes no value */
	PARSE_OPT_COUNT = 1 << 4,	/* OPTION_U64 counting things: K/M/G are x1000 (as record's
					 * -c), not the x1024 of a size */
};

struct opt_string_list {
	const char **items;
	int n;
	size_t cap;
};

struct option;
typedef int (*parse_opt_cb)(const struct option *opt, const char *arg, int unset);

struct option {
	enum parse_opt_type type;
	int short_name;			/* 0 for none */
	const char *long_name;		/* NULL for none */
	void *value;
	const char *argh;		/* the value's name in the help ("FILE"); NULL: no value */
	const char *help;		/* one line */
	const char *defval;		/* the default shown in the help; NULL: taken from *value */
	int flags;
	long min, max;			/* OPTION_INT; OPTION_DOUBLE when max > min */
	const char *choices;		/* OPTION_CHOICE: "a|b|c" */
	const char *defarg;		/* PARSE_OPT_OPTARG: the value when none is given */
	parse_opt_cb callback;
};

#define OPT_END() { .type = OPTION_END }
#define OPT_GROUP(title) { .type = OPTION_GROUP, .help = (title) }
#define OPT_BOOL(s, l, v, h) { .type = OPTION_BOOL, .short_name = (s), .long_name = (l), \
	.value = (v), .help = (h) }
#define OPT_INT(s, l, v, a, h, lo, hi) { .type = OPTION_INT, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h), .min = (lo), .max = (hi) }
#define OPT_U64(s, l, v, a, h) { .type = OPTION_U64, .short_name = (s), .long_name = (l), \
	.value = (v), .argh = (a), .help = (h) }
#define OPT_COUNT(s, l, v, a, h) { .type = OPTION_U64, .short_name = (s), .long_name = (l), \
	.value = (v), .argh = (a), .help = (h), .flags = PARSE_OPT_COUNT }
#define OPT_DOUBLE(s, l, v, a, h) { .type = OPTION_DOUBLE, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h) }
#define OPT_STRING(s, l, v, a, h) { .type = OPTION_STRING, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h) }
#define OPT_STRING_LIST(s, l, v, a, h) { .type = OPTION_STRING_LIST, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h) }
#define OPT_CHOICE(s, l, v, c, h) { .type = OPTION_CHOICE, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (c), .help = (h), .choices = (c) }
#define OPT_CALLBACK(s, l, v, a, h, cb) { .type = OPTION_CALLBACK, .short_name = (s), \
	.long_name = (l), .value = (v), .argh = (a), .help = (h), .callback = (cb) }

/* What a command says about itself: its name as typed after "spent" ("stat", "db status"),
 * usage lines (NULL-terminated), a one-line summary and an optional longer description for
 * the man page. */
struct parse_usage {
	const char *cmd;
	const char *const *usage;
	const char *summary;
	const char *description;
};

enum parse_flags {
	PARSE_STOP_AT_NON_OPTION = 1 << 0,	/* the first non-option starts the program's argv */
};

#define PARSE_OPT_HELP (-1)	/* -h/--help/--man printed what was asked: exit 0 */
#define PARSE_OPT_ERROR (-2)	/* an error line was printed: exit 2 */

/* Parse ARGV[1..ARGC-1] against OPTS. The non-option arguments are moved to ARGV[0..n-1]
 * (ARGV[0] itself is dropped) and n returned; or PARSE_OPT_HELP / PARSE_OPT_ERROR. */
int parse_options(int argc, char **argv, const struct option *opts, const struct parse_usage *u,
		  int flags);
/* perf's `-g WORD` for the option LONG_NAME (and its short name) of OPTS, whose value is
 * optional (PARSE_OPT_OPTARG: the parser takes one only joined, --LONG=WORD or -gWORD): when
 * the next word reads as its value (TAKES), the two become `--LONG=WORD`, so the word is not
 * taken for the command. The scan stops at "--" or the first word that is no option, and steps
 * over the values of OPTS's options given as the next word. Returns the new ARGC. */
int parse_options_join_optarg(int argc, char **argv, const struct option *opts, const char *long_name,
			      bool (*takes)(const char *word));
/* Print the usage line(s) and every option with its help and default. */
void parse_options_help(FILE *out, const struct option *opts, const struct parse_usage *u);
/* Print a man page (roff) for the command. */
void parse_options_man(FILE *out, const struct option *opts, const struct parse_usage *u);
/* Print S as roff text: backslashes and '-' escaped, no control character first (spent(1)). */
void parse_options_roff_text(FILE *out, const char *s);
/* Print "spent CMD: MESSAGE" and return PARSE_OPT_ERROR (for checks after parsing). */
int parse_options_error(const struct parse_usage *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Strict numbers, shared by the parser and commands: the whole string, no sign, no overflow. */
int parse_strict_u64(const char *s, int suffixes, uint64_t *out);
int parse_strict_long(const char *s, long *out);
int parse_strict_double(const char *s, double *out);
void opt_string_list_release(struct opt_string_list *l);

#endif
