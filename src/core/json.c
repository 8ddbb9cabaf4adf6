/* core/json.c - the one JSON writer (core/json.h): containers with commas placed for the
 * caller, RFC 8259 string escaping with UTF-8 validation, numbers that are always valid JSON. */
#include "core/json.h"
#include "core/text.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(struct json_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

/* Before any value: the comma that separates it from the previous one of its container. */
static void value_start(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && w->depth <= JSON_MAX_DEPTH) {
		if (w->has_items[w->depth - 1])
			fputc(',', w->f);
		w->has_items[w->depth - 1] = true;
	}
}

static void open_container(struct json_writer *w, char c)
{
	value_start(w);
	fputc(c, w->f);
	if (w->depth < JSON_MAX_DEPTH)
		w->has_items[w->depth] = false;
	w->depth++;
}

static void close_container(struct json_writer *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	w->after_key = false;
	fputc(c, w->f);
}

void json_object_begin(struct json_writer *w)
{
	open_container(w, '{');
}

void json_object_end(struct json_writer *w)
{
	close_container(w, '}');
}

void json_array_begin(struct json_writer *w)
{
	open_container(w, '[');
}

void json_array_end(struct json_writer *w)
{
	close_container(w, ']');
}

void json_newline(struct json_writer *w)
{
	fputc('\n', w->f);
	w->depth = 0;
	w->after_key = false;
}

void json_write_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c >= 0x80) {
			size_t len = utf8_seq_len(p + i, n - i);
			if (len) {
				fwrite(p + i, 1, len, f);
				i += len;
			} else {
				fputs("\\ufffd", f);	/* not UTF-8: the replacement character */
				i++;
			}
			continue;
		}
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
		i++;
	}
	fputc('"', f);
}

void json_key(struct json_writer *w, const char *key)
{
	value_start(w);
	json_write_string(w->f, key, strlen(key));
	fputc(':', w->f);
	w->after_key = true;
}

void json_strn(struct json_writer *w, const char *s, size_t n)
{
	value_start(w);
	if (s)
		json_write_string(w->f, s, n);
	else
		fputs("null", w->f);
}

void json_str(struct json_writer *w, const char *s)
{
	json_strn(w, s, s ? strlen(s) : 0);
}

void json_u64(struct json_writer *w, uint64_t v)
{
	value_start(w);
	fprintf(w->f, "%" PRIu64, v);
}

void json_i64(struct json_writer *w, int64_t v)
{
	value_start(w);
	fprintf(w->f, "%" PRId64, v);
}

void json_double(struct json_writer *w, double v, int decimals)
{
	value_start(w);
	if (isfinite(v))
		fprintf(w->f, "%.*f", decimals, v);
	else
		fputs("null", w->f);
}

void json_double_sig(struct json_writer *w, double v, int digits)
{
	char buf[64];

	value_start(w);
	if (!isfinite(v)) {
		fputs("null", w->f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	fputs(buf, w->f);
}

void json_bool(struct json_writer *w, bool v)
{
	value_start(w);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w)
{
	value_start(w);
	fputs("null", w->f);
}

/* The JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s)
{
	const char *p = s;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		return false;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0';
}

void json_literal(struct json_writer *w, const char *text)
{
	value_start(w);
	if (text && (is_json_number(text) || !strcmp(text, "true") || !strcmp(text, "false") ||
		     !strcmp(text, "null")))
		fputs(text, w->f);
	else
		fputs("null", w->f);
}

void json_kstr(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_str(w, s);
}

void json_ku64(struct json_writer *w, const char *key, uint64_t v)
{
	json_key(w, key);
	json_u64(w, v);
}

void json_ki64(struct json_writer *w, const char *key, int64_t v)
{
	json_key(w, key);
	json_i64(w, v);
}

void json_kdouble(struct json_writer *w, const char *key, double v, int decimals)
{
	json_key(w, key);
	json_double(w, v, decimals);
}

void json_kdouble_sig(struct json_writer *w, const char *key, double v, int digits)
{
	json_key(w, key);
	json_double_sig(w, v, digits);
}

void json_kbool(struct json_writer *w, const char *key, bool v)
{
	json_key(w, key);
	json_bool(w, v);
}

void json_knull(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_null(w);
}

void json_khex(struct json_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	json_kstr(w, key, buf);
}
