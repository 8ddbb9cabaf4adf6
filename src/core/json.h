/* core/json.h - the one JSON writer: every JSON document any spent command or the daemon
 * prints goes through it, so strings are escaped one way (RFC 8259: quote, backslash and every
 * control character escaped; bytes that are not valid UTF-8 become U+FFFD, so the output is
 * always valid UTF-8 JSON whatever bytes a path holds), commas are placed by the writer, and
 * numbers that JSON cannot carry (NaN, infinities) are written as null.
 *
 *   struct json_writer w;
 *   json_init(&w, stdout);
 *   json_object_begin(&w);
 *   json_kstr(&w, "image", path);
 *   json_ku64(&w, "samples", n);
 *   json_object_end(&w);
 *   json_newline(&w);          // one object per line (JSON Lines)
 */
#ifndef SPENT_CORE_JSON_H
#define SPENT_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *f;
	unsigned depth;			/* open objects and arrays */
	bool has_items[JSON_MAX_DEPTH];	/* the container at each depth holds a value already */
	bool after_key;			/* a key was written: its value comes next, no comma */
};

void json_init(struct json_writer *w, FILE *f);

void json_object_begin(struct json_writer *w);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w);
void json_array_end(struct json_writer *w);
/* End a top-level value with a newline (JSON Lines); the writer is ready for the next one. */
void json_newline(struct json_writer *w);

/* A member's key inside an object; the value follows with one of the calls below. */
void json_key(struct json_writer *w, const char *key);

/* Values. A NULL string is written as null. */
void json_str(struct json_writer *w, const char *s);
void json_strn(struct json_writer *w, const char *s, size_t n);
void json_u64(struct json_writer *w, uint64_t v);
void json_i64(struct json_writer *w, int64_t v);
/* V with DECIMALS digits after the point (printf %.*f). */
void json_double(struct json_writer *w, double v, int decimals);
/* V with DIGITS significant digits (printf %.*g). */
void json_double_sig(struct json_writer *w, double v, int digits);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
/* TEXT when it is a JSON number or true/false/null literal (as copied from another JSON
 * document), else null: nothing unchecked reaches the output. */
void json_literal(struct json_writer *w, const char *text);

/* Members: json_key then the value. */
void json_kstr(struct json_writer *w, const char *key, const char *s);
void json_ku64(struct json_writer *w, const char *key, uint64_t v);
void json_ki64(struct json_writer *w, const char *key, int64_t v);
void json_kdouble(struct json_writer *w, const char *key, double v, int decimals);
void json_kdouble_sig(struct json_writer *w, const char *key, double v, int digits);
void json_kbool(struct json_writer *w, const char *key, bool v);
void json_knull(struct json_writer *w, const char *key);
/* "0x..." string of V (addresses and offsets, which JSON numbers cannot hold exactly). */
void json_khex(struct json_writer *w, const char *key, uint64_t v);

/* Write S (N bytes) as a JSON string literal, quotes included, to F. */
void json_write_string(FILE *f, const char *s, size_t n);

#endif
