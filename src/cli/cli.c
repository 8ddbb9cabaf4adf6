/* cli/cli.c - helpers shared by the command files: error lines, number parsing, JSON/CSV quoting,
 * the check of an output path before a run. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/outfile.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("spent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("spent: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int parse_with_suffix(const char *s, uint64_t *out, uint64_t unit)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	uint64_t mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = unit; end++; break;
	case 'm': case 'M': mul = unit * unit; end++; break;
	case 'g': case 'G': mul = unit * unit * unit; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	if (mul > 1 && v > UINT64_MAX / mul)
		return -ERANGE;
	*out = (uint64_t)v * mul;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	return parse_with_suffix(s, out, 1000);
}

int cli_parse_size(const char *s, uint64_t *out)
{
	return parse_with_suffix(s, out, 1024);
}

int cli_parse_int_opt(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || end == s || *end || v < min || v > max) {
		cli_error("invalid value '%s' for %s: expected an integer in [%ld, %ld]",
			  s ? s : "", opt, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

void cli_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void cli_csv_field(FILE *out, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

int cli_check_output(const char *path)
{
	int err = outfile_check(path);
	if (err)
		cli_error("cannot write '%s': %s", path, outfile_strerror(err));
	return err;
}
