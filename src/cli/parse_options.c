/* cli/parse_options.c - the table-driven option parser every command uses: parsing, the
 * error messages, `-h` help with defaults, and man pages (see parse_options.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "cli/parse_options.h"
#include "core/number.h"

int parse_options_error(const struct parse_usage *u, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "spent %s: ", u->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return PARSE_OPT_ERROR;
}

/* The three number forms options take, all through the one strict parser (core/number.h):
 * digits (or 0x hex) only, no blanks, garbage or overflow; a sign only where it means one. */
int parse_strict_u64(const char *s, int suffixes, uint64_t *out)
{
	return num_parse_u64(s, suffixes ? NUM_BINARY : NUM_PLAIN, out) ? -EINVAL : 0;
}

int parse_strict_long(const char *s, long *out)
{
	int neg = s && s[0] == '-';
	uint64_t m;

	if (!s || num_parse_u64(s + neg, NUM_PLAIN, &m) ||
	    m > (neg ? (uint64_t)LONG_MAX + 1 : (uint64_t)LONG_MAX))
		return -EINVAL;
	*out = !neg ? (long)m : m > (uint64_t)LONG_MAX ? LONG_MIN : -(long)m;
	return 0;
}

int parse_strict_double(const char *s, double *out)
{
	int neg = s && s[0] == '-';
	double v;

	if (!s || num_parse_double(s + neg, &v))
		return -EINVAL;
	*out = neg ? -v : v;
	return 0;
}

void opt_string_list_release(struct opt_string_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static int takes_value(const struct option *o)
{
	if (o->type == OPTION_BOOL || (o->type == OPTION_CALLBACK && (o->flags & PARSE_OPT_NOARG)))
		return 0;
	return 1;
}

/* The option ARG names alone ("-x" or "--name", no value joined), or NULL */
static const struct option *named_alone(const struct option *opts, const char *arg)
{
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		if (o->type == OPTION_GROUP)
			continue;
		if (arg[1] != '-' && o->short_name && arg[1] == o->short_name && !arg[2])
			return o;
		if (arg[1] == '-' && o->long_name && !strcmp(arg + 2, o->long_name))
			return o;
	}
	return NULL;
}

int parse_options_join_optarg(int argc, char **argv, const struct option *opts, const char *long_name,
			      bool (*takes)(const char *word))
{
	static char joined[160];	/* one buffer: of two joined the parser takes the last anyway */
	for (int i = 1; i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--"); i++) {
		const struct option *o = named_alone(opts, argv[i]);
		if (!o)
			continue;
		if (o->long_name && !strcmp(o->long_name, long_name)) {
			if (i + 1 < argc && takes(argv[i + 1])) {
				snprintf(joined, sizeof(joined), "--%s=%s", long_name, argv[i + 1]);
				argv[i] = joined;
				memmove(&argv[i + 1], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
				argc--;
			}
		} else if (takes_value(o) && !(o->flags & PARSE_OPT_OPTARG)) {
			i++;	/* its value, whatever it reads as */
		}
	}
	return argc;
}

/* "--name" or "-x", for messages. */
static const char *opt_name(const struct option *o, int as_long, char *buf, size_t len)
{
	if (as_long && o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else if (o->short_name)
		snprintf(buf, len, "-%c", o->short_name);
	else
		snprintf(buf, len, "--%s", o->long_name ? o->long_name : "?");
	return buf;
}

static int choice_index(const char *choices, const char *arg)
{
	size_t n = strlen(arg);
	int i = 0;
	for (const char *p = choices; *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, arg, n))
			return i;
		if (!bar)
			break;
		p = bar + 1;
	}
	return -1;
}

static int set_value(const struct option *o, const char *arg, int unset, int as_long,
		     const struct parse_usage *u)
{
	char nm[80];
	opt_name(o, as_long, nm, sizeof(nm));
	if (!arg && !unset && (o->flags & PARSE_OPT_OPTARG))
		arg = o->defarg;
	/* a path option given "" named no file: "cannot write '': its directory does not
	 * exist" said nothing useful */
	if ((o->type == OPTION_STRING || o->type == OPTION_STRING_LIST) && !unset && arg && !*arg &&
	    o->argh && (strstr(o->argh, "FILE") || strstr(o->argh, "DIR") || !strcmp(o->argh, "LOG") ||
			!strcmp(o->argh, "IMAGE") || !strcmp(o->argh, "NAME") || !strcmp(o->argh, "SYMBOL")))
		return parse_options_error(u, "%s takes a%s name, not an empty string", nm,
					   strstr(o->argh, "DIR") ? " directory" :
					   !strcmp(o->argh, "IMAGE") ? "n image" :
					   !strcmp(o->argh, "SYMBOL") ? " function" :
					   !strcmp(o->argh, "NAME") ? "" : " file");
	switch (o->type) {
	case OPTION_BOOL:
		*(int *)o->value = !unset;
		return 0;
	case OPTION_INT: {
		long v;
		/* a sign where none can mean anything ('-0' was taken for 0) */
		if ((o->min >= 0 && arg && arg[0] == '-') || parse_strict_long(arg, &v) || v < o->min ||
		    v > o->max)
			return parse_options_error(u, "%s takes a whole number from %ld to %ld, not '%s'",
						   nm, o->min, o->max, arg);
		*(long *)o->value = v;
		return 0;
	}
	case OPTION_U64:
		if (num_parse_u64(arg, (o->flags & PARSE_OPT_COUNT) ? NUM_SI : NUM_BINARY,
				  (uint64_t *)o->value))
			return parse_options_error(u, "%s takes a non-negative number (%s), not '%s'", nm,
						   (o->flags & PARSE_OPT_COUNT) ? "K/M/G: thousands, millions, billions" :
						   "K/M/G: KiB, MiB, GiB", arg);
		return 0;
	case OPTION_DOUBLE: {
		double v;
		/* a number out of range is said to be one ('--window 100000' read "not a number") */
		if (parse_strict_double(arg, &v))
			return parse_options_error(u, "%s takes a decimal number (like 0.5), not '%s'", nm, arg);
		if (o->max > o->min && (v < o->min || v > o->max))
			return parse_options_error(u, "%s takes a number from %g to %g, not '%s'", nm,
						   (double)o->min, (double)o->max, arg);
		*(double *)o->value = v;
		return 0;
	}
	case OPTION_STRING:
		*(const char **)o->value = unset ? NULL : arg;
		return 0;
	case OPTION_STRING_LIST: {
		struct opt_string_list *l = o->value;
		if (unset) {
			l->n = 0;
			return 0;
		}
		if (ALLOC_GROW(l->items, (size_t)l->n + 1, l->cap))
			return parse_options_error(u, "out of memory");
		l->items[l->n++] = arg;
		return 0;
	}
	case OPTION_CHOICE: {
		int i = choice_index(o->choices, arg);
		if (i < 0) {
			char list[256];
			snprintf(list, sizeof(list), "%s", o->choices);
			for (char *p = list; *p; p++)
				if (*p == '|')
					*p = ',';
			return parse_options_error(u, "%s takes one of %s, not '%s'", nm, list, arg);
		}
		*(int *)o->value = i;
		return 0;
	}
	case OPTION_CALLBACK: {
		int r = o->callback(o, unset ? NULL : arg, unset);
		return r < 0 ? PARSE_OPT_ERROR : 0;
	}
	default:
		return parse_options_error(u, "internal error: option %s has no type", nm);
	}
}

static const struct option *find_long(const struct option *opts, const char *name, size_t len,
				      int *unset)
{
	*unset = 0;
	for (const struct option *o = opts; o->type != OPTION_END; o++)
		if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
			return o;
	if (len > 3 && !strncmp(name, "no-", 3)) {
		for (const struct option *o = opts; o->type != OPTION_END; o++)
			if (o->long_name && !(o->flags & PARSE_OPT_NONEG) &&
			    strlen(o->long_name) == len - 3 && !strncmp(o->long_name, name + 3, len - 3) &&
			    (o->type == OPTION_BOOL || o->type == OPTION_STRING_LIST)) {
				*unset = 1;
				return o;
			}
	}
	return NULL;
}

static const struct option *find_short(const struct option *opts, int c)
{
	for (const struct option *o = opts; o->type != OPTION_END; o++)
		if (o->short_name == c && o->type != OPTION_GROUP)
			return o;
	return NULL;
}

/* --name[=value]: index of the next argument to look at, or an error. */
static int parse_long(int argc, char **argv, int i, const struct option *opts,
		      const struct parse_usage *u)
{
	const char *name = argv[i] + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	int unset;
	if (((len == 4 && !strncmp(name, "help", 4)) || (len == 3 && !strncmp(name, "man", 3))) && eq)
		return parse_options_error(u, "--%.*s takes no value", (int)len, name);
	if (len == 4 && !strncmp(name, "help", 4))
		return parse_options_help(stdout, opts, u), PARSE_OPT_HELP;
	if (len == 3 && !strncmp(name, "man", 3))
		return parse_options_man(stdout, opts, u), PARSE_OPT_HELP;
	const struct option *o = find_long(opts, name, len, &unset);
	if (!o)
		return parse_options_error(u, "unknown option '--%.*s': see 'spent %s -h'", (int)len,
					   name, u->cmd);
	const char *arg = NULL;
	if (unset && eq)
		return parse_options_error(u, "--%.*s takes no value", (int)len, name);
	if (!takes_value(o) || unset) {
		if (eq)
			return parse_options_error(u, "--%s takes no value", o->long_name);
	} else if (eq) {
		arg = eq + 1;
	} else if (!(o->flags & PARSE_OPT_OPTARG)) {
		if (i + 1 >= argc)
			return parse_options_error(u, "--%s needs a value (%s)", o->long_name,
						   o->argh ? o->argh : "VALUE");
		arg = argv[++i];
	}
	int r = set_value(o, arg, unset, 1, u);
	return r < 0 ? r : i + 1;
}

/* -x, -xVALUE, -x VALUE, -abc (bundled flags). */
static int parse_short(int argc, char **argv, int i, const struct option *opts,
		       const struct parse_usage *u)
{
	for (const char *p = argv[i] + 1; *p; p++) {
		if (*p == 'h')
			return parse_options_help(stdout, opts, u), PARSE_OPT_HELP;
		const struct option *o = find_short(opts, (unsigned char)*p);
		if (!o)
			return parse_options_error(u, "unknown option '-%c': see 'spent %s -h'", *p, u->cmd);
		if (!takes_value(o)) {
			int r = set_value(o, NULL, 0, 0, u);
			if (r < 0)
				return r;
			continue;
		}
		const char *arg = p[1] ? p + 1 : NULL;
		if (!arg && !(o->flags & PARSE_OPT_OPTARG)) {
			if (i + 1 >= argc)
				return parse_options_error(u, "-%c needs a value (%s)", *p,
							   o->argh ? o->argh : "VALUE");
			arg = argv[++i];
		}
		int r = set_value(o, arg, 0, 0, u);
		return r < 0 ? r : i + 1;
	}
	return i + 1;
}

int parse_options(int argc, char **argv, const struct option *opts, const struct parse_usage *u,
		  int flags)
{
	int out = 0, i = 1;
	while (i < argc) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1]) {	/* an operand ("-" alone is one too) */
			if (flags & PARSE_STOP_AT_NON_OPTION)
				break;
			argv[out++] = argv[i++];
			continue;
		}
		int r = a[1] == '-' ? parse_long(argc, argv, i, opts, u) :
				      parse_short(argc, argv, i, opts, u);
		if (r < 0)
			return r;
		i = r;
	}
	while (i < argc)
		argv[out++] = argv[i++];
	argv[out] = NULL;
	return out;
}

/* ---- help and man pages ---- */

/* The default to show for O, in BUF; NULL when there is none worth showing. */
static const char *default_text(const struct option *o, char *buf, size_t len)
{
	if (o->defval)
		return o->defval;
	if (!o->value)
		return NULL;
	switch (o->type) {
	case OPTION_INT:
		if (*(long *)o->value == 0 && o->min > 0)
			return NULL;
		snprintf(buf, len, "%ld", *(long *)o->value);
		return buf;
	case OPTION_U64:
		if (!*(uint64_t *)o->value)
			return NULL;
		snprintf(buf, len, "%llu", (unsigned long long)*(uint64_t *)o->value);
		return buf;
	case OPTION_DOUBLE:
		if (*(double *)o->value == 0)
			return NULL;
		snprintf(buf, len, "%g", *(double *)o->value);
		return buf;
	case OPTION_STRING:
		return *(const char **)o->value;
	case OPTION_CHOICE: {
		int k = *(int *)o->value;
		const char *p = o->choices;
		for (int j = 0; j < k && p; j++) {
			p = strchr(p, '|');
			p = p ? p + 1 : NULL;
		}
		if (!p)
			return NULL;
		const char *bar = strchr(p, '|');
		snprintf(buf, len, "%.*s", bar ? (int)(bar - p) : (int)strlen(p), p);
		return buf;
	}
	default:
		return NULL;
	}
}

/* "-e, --event=EV" */
static void option_spelling(const struct option *o, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	if (o->short_name)
		n += (size_t)snprintf(buf + n, len - n, "-%c", o->short_name);
	if (o->long_name && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s--%s%s", n ? ", " : "",
				      o->type == OPTION_BOOL && !(o->flags & PARSE_OPT_NONEG) ? "[no-]" : "",
				      o->long_name);
	if (takes_value(o) && o->argh && n < len) {
		int opt = (o->flags & PARSE_OPT_OPTARG) != 0;
		snprintf(buf + n, len - n, "%s%s%s%s", opt ? "[" : "", o->long_name ? "=" : " ",
			 o->argh, opt ? "]" : "");
	}
}

void parse_options_help(FILE *out, const struct option *opts, const struct parse_usage *u)
{
	for (int k = 0; u->usage && u->usage[k]; k++)
		fprintf(out, "%s %s\n", k ? "   or:" : "usage:", u->usage[k]);
	if (u->summary)
		fprintf(out, "\n%s\n", u->summary);
	fputc('\n', out);
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		char sp[160], dbuf[64];
		if (o->flags & PARSE_OPT_HIDDEN)
			continue;
		if (o->type == OPTION_GROUP) {
			fprintf(out, "\n%s\n", o->help);
			continue;
		}
		option_spelling(o, sp, sizeof(sp));
		const char *d = default_text(o, dbuf, sizeof(dbuf));
		if (strlen(sp) > 28)
			fprintf(out, "    %s\n%34s", sp, "");
		else
			fprintf(out, "    %-30s", sp);
		fprintf(out, "%s", o->help ? o->help : "");
		if (d)
			fprintf(out, " (default: %s)", d);
		fputc('\n', out);
	}
	fprintf(out, "\n    %-30s%s\n    %-30s%s\n", "-h, --help", "show this help",
		"--man", "print the man page (roff)");
}

void parse_options_roff_text(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

void parse_options_man(FILE *out, const struct option *opts, const struct parse_usage *u)
{
	char title[96];
	snprintf(title, sizeof(title), "spent-%s", u->cmd);
	for (char *p = title; *p; p++)
		*p = *p == ' ' ? '-' : (char)toupper((unsigned char)*p);
	fprintf(out, ".TH %s 1 \"\" \"spent %s\" \"spent manual\"\n.SH NAME\n", title, SPENT_VERSION);
	snprintf(title, sizeof(title), "spent-%s", u->cmd);
	for (char *p = title; *p; p++)
		*p = *p == ' ' ? '-' : *p;
	parse_options_roff_text(out, title);
	fputs(" \\- ", out);
	parse_options_roff_text(out, u->summary ? u->summary : "");
	fputs("\n.SH SYNOPSIS\n", out);
	for (int k = 0; u->usage && u->usage[k]; k++) {
		fputs(".nf\n", out);
		parse_options_roff_text(out, u->usage[k]);
		fputs("\n.fi\n", out);
	}
	if (u->description) {
		fputs(".SH DESCRIPTION\n", out);
		parse_options_roff_text(out, u->description);
		fputc('\n', out);
	}
	fputs(".SH OPTIONS\n", out);
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		char sp[160], dbuf[64];
		if (o->flags & PARSE_OPT_HIDDEN)
			continue;
		if (o->type == OPTION_GROUP) {
			fputs(".SS ", out);
			parse_options_roff_text(out, o->help);
			fputc('\n', out);
			continue;
		}
		option_spelling(o, sp, sizeof(sp));
		fputs(".TP\n.B ", out);
		parse_options_roff_text(out, sp);
		fputc('\n', out);
		parse_options_roff_text(out, o->help ? o->help : "");
		const char *d = default_text(o, dbuf, sizeof(dbuf));
		if (d) {
			fputs(" (default: ", out);
			parse_options_roff_text(out, d);
			fputc(')', out);
		}
		fputc('\n', out);
	}
	fputs(".TP\n.B \\-h, \\-\\-help\nshow the usage and options\n.SH SEE ALSO\n.BR spent (1)\n", out);
}
