/* profile/profile_file.c - encode and validate-then-parse single profile files (layout in
 * profile_file.h): counts of one image x event, unknown samples, call stacks; the header,
 * image and CRC helpers every kind shares (samples files are profile_samples.c's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_file.h"

int profile_file_put_header(struct binbuf *b, uint32_t version, uint8_t kind,
			    const struct spent_profile_event *e)
{
	int err = binbuf_put(b, PROFILE_FILE_MAGIC, 4);
	err = err ? err : binbuf_put_le32(b, version);
	err = err ? err : binbuf_put_u8(b, kind);
	err = err ? err : binbuf_put_str(b, e->name);
	err = err ? err : binbuf_put_uvarint(b, e->period);
	return err ? err : binbuf_put_uvarint(b, e->flags);
}

int profile_file_put_image(struct binbuf *b, const struct spent_profile_image *img)
{
	int err = binbuf_put_str(b, img->path);
	err = err ? err : binbuf_put_u8(b, img->id_kind);
	err = err ? err : binbuf_put_u8(b, img->id_len);
	return err ? err : binbuf_put(b, img->id, img->id_len);
}

int profile_file_put_crc(struct binbuf *b, size_t start)
{
	return binbuf_put_le32(b, binio_crc32(0, b->data + start, b->len - start));
}

int profile_file_encode_counts(const struct spent_profile *p, uint32_t img, uint32_t ev,
			       struct binbuf *b)
{
	struct spent_profile_count *c = NULL;
	size_t n = 0, start = b->len;
	int err = spent_profile_counts(p, img, ev, &c, &n);
	if (err)
		goto out;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += c[i].count;
	err = profile_file_put_header(b, PROFILE_FILE_VERSION, PROFILE_FILE_COUNTS,
				      spent_profile_event_get(p, ev));
	err = err ? err : profile_file_put_image(b, spent_profile_image_get(p, img));
	err = err ? err : binbuf_put_uvarint(b, n);
	err = err ? err : binbuf_put_uvarint(b, total);
	uint64_t prev = 0;
	for (size_t i = 0; i < n && !err; i++) {
		err = binbuf_put_uvarint(b, c[i].offset - prev);
		err = err ? err : binbuf_put_uvarint(b, c[i].count);
		prev = c[i].offset;
	}
	err = err ? err : profile_file_put_crc(b, start);
out:
	free(c);
	return err;
}

int profile_file_encode_unknown(const struct spent_profile *p, uint32_t ev, struct binbuf *b,
				bool *empty)
{
	size_t n = 0, start = b->len;
	for (int r = 0; r < SPENT_PROFILE_UNK_NR; r++)
		n += spent_profile_unknown_count(p, ev, r) != 0;
	if (empty)
		*empty = n == 0;
	int err = profile_file_put_header(b, PROFILE_FILE_VERSION, PROFILE_FILE_UNKNOWN,
					  spent_profile_event_get(p, ev));
	err = err ? err : binbuf_put_uvarint(b, n);
	for (int r = 0; r < SPENT_PROFILE_UNK_NR && !err; r++) {
		uint64_t c = spent_profile_unknown_count(p, ev, r);
		if (!c)
			continue;
		err = binbuf_put_uvarint(b, (uint64_t)r);
		err = err ? err : binbuf_put_uvarint(b, c);
	}
	return err ? err : profile_file_put_crc(b, start);
}

int profile_file_encode_stacks(const struct spent_profile *p, uint32_t ev, struct binbuf *b,
			       bool *empty)
{
	size_t ni = spent_profile_nimages(p), ns = 0, start = b->len;
	uint64_t total = 0;
	int err = 0;
	/* local image table: only images the stacks of EV use, renumbered densely */
	uint32_t *local = malloc((ni + 1) * sizeof(*local));
	if (!local)
		return -ENOMEM;
	for (size_t i = 0; i < ni; i++)
		local[i] = UINT32_MAX;
	uint32_t nlocal = 0;
	const struct spent_profile_frame *f;
	size_t nf;
	uint64_t cnt;
	for (size_t i = 0; spent_profile_stack_next(p, ev, &i, &f, &nf, &cnt);) {
		ns++;
		total += cnt;
		for (size_t k = 0; k < nf; k++)
			if (f[k].image != SPENT_PROFILE_NO_IMAGE && local[f[k].image] == UINT32_MAX)
				local[f[k].image] = nlocal++;
	}
	if (empty)
		*empty = ns == 0;
	err = profile_file_put_header(b, PROFILE_FILE_VERSION, PROFILE_FILE_STACKS,
				      spent_profile_event_get(p, ev));
	err = err ? err : binbuf_put_uvarint(b, nlocal);
	for (uint32_t l = 0; l < nlocal && !err; l++)
		for (size_t i = 0; i < ni; i++)
			if (local[i] == l) {
				err = profile_file_put_image(b, spent_profile_image_get(p, (uint32_t)i));
				break;
			}
	err = err ? err : binbuf_put_uvarint(b, ns);
	err = err ? err : binbuf_put_uvarint(b, total);
	for (size_t i = 0; !err && spent_profile_stack_next(p, ev, &i, &f, &nf, &cnt);) {
		err = binbuf_put_uvarint(b, cnt);
		err = err ? err : binbuf_put_uvarint(b, nf);
		for (size_t k = 0; k < nf && !err; k++) {
			uint64_t li = f[k].image == SPENT_PROFILE_NO_IMAGE ? 0 : (uint64_t)local[f[k].image] + 1;
			err = binbuf_put_uvarint(b, li);
			err = err ? err : binbuf_put_uvarint(b, f[k].offset);
		}
	}
	err = err ? err : profile_file_put_crc(b, start);
	free(local);
	return err;
}

/* ---- names ---- */

static void slug(char *out, size_t outlen, const char *s, size_t maxlen)
{
	size_t k = 0;
	for (; *s && k + 1 < outlen && k < maxlen; s++)
		out[k++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				  (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'
				  ? *s : '_');
	out[k] = 0;
}

static int event_slug(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen)
{
	const struct spent_profile_event *e = spent_profile_event_get(p, ev);
	char s[100];
	slug(s, sizeof(s), e->name, 80);
	int n = snprintf(out, outlen, "%s-%llu%s", s, (unsigned long long)e->period,
			 e->flags & SPENT_PROFILE_EV_FREQ ? "hz" : "");
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int profile_file_name_counts(const struct spent_profile *p, uint32_t img, uint32_t ev, char *out,
			     size_t outlen)
{
	const struct spent_profile_image *im = spent_profile_image_get(p, img);
	char evs[128], base[80], id[2 * SPENT_PROFILE_ID_MAX + 1] = "noid";
	int err = event_slug(p, ev, evs, sizeof(evs));
	if (err)
		return err;
	const char *bn = strrchr(im->path, '/');
	slug(base, sizeof(base), bn && bn[1] ? bn + 1 : im->path, 64);
	for (unsigned i = 0; i < im->id_len; i++)
		snprintf(id + 2 * i, 3, "%02x", im->id[i]);
	uint32_t ph = (uint32_t)binio_fnv64(BINIO_FNV64_INIT, im->path, strlen(im->path));
	int n = snprintf(out, outlen, "%s-%s-%08x@%s.prof", base, id, ph, evs);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

static int name_kind(const struct spent_profile *p, uint32_t ev, const char *kind, char *out,
		     size_t outlen)
{
	char evs[128];
	int err = event_slug(p, ev, evs, sizeof(evs));
	if (err)
		return err;
	int n = snprintf(out, outlen, "%s@%s.prof", kind, evs);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int profile_file_name_unknown(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen)
{
	return name_kind(p, ev, "unknown", out, outlen);
}

int profile_file_name_stacks(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen)
{
	return name_kind(p, ev, "stacks", out, outlen);
}

int profile_file_name_samples(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen)
{
	return name_kind(p, ev, "samples", out, outlen);
}

/* ---- parsing: validate the whole file into a scratch profile, then merge ---- */

#define BAD(msg) do { *why = (msg); err = -EBADMSG; goto out; } while (0)

int profile_file_get_image(struct binreader *r, struct spent_profile_image *img, const char **why)
{
	uint8_t kind, len;
	int err = binreader_get_str(r, SPENT_PROFILE_PATH_MAX - 1, &img->path);
	if (err) {
		*why = "bad image path";
		return -EBADMSG;
	}
	if (!img->path[0] || binreader_get_u8(r, &kind) || binreader_get_u8(r, &len) ||
	    kind > SPENT_PROFILE_ID_HASH || len > SPENT_PROFILE_ID_MAX || binreader_get(r, img->id, len)) {
		*why = "bad image identity";
		return -EBADMSG;
	}
	img->id_kind = kind;
	img->id_len = len;
	return 0;
}

static int parse_counts(struct binreader *r, struct spent_profile *t, uint32_t ev, const char **why)
{
	struct spent_profile_image img = { 0 };
	uint32_t ii;
	uint64_t n, total, sum = 0, off = 0;
	int err = profile_file_get_image(r, &img, why);
	if (err)
		goto out;
	if (spent_profile_image_intern(t, &img, &ii))
		BAD("bad image");
	if (binreader_get_uvarint(r, &n) || binreader_get_uvarint(r, &total))
		BAD("truncated counts header");
	if (n > binreader_left(r) / 2)
		BAD("entry count larger than the file");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d, c;
		if (binreader_get_uvarint(r, &d) || binreader_get_uvarint(r, &c))
			BAD("truncated entries");
		if ((i > 0 && d == 0) || c == 0 || off + d < off || sum + c < sum)
			BAD("offsets not increasing or zero count");
		off += d;
		sum += c;
		if ((err = spent_profile_add(t, ii, off, ev, c)))
			goto out;
	}
	if (sum != total)
		BAD("entries do not add up to the header total");
out:
	free(img.path);
	return err;
}

static int parse_unknown(struct binreader *r, struct spent_profile *t, uint32_t ev, const char **why)
{
	uint64_t n, seen = 0;
	int err = 0;
	if (binreader_get_uvarint(r, &n) || n > SPENT_PROFILE_UNK_NR)
		BAD("bad unknown count");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t reason, c;
		if (binreader_get_uvarint(r, &reason) || binreader_get_uvarint(r, &c))
			BAD("truncated unknown entries");
		if (reason >= SPENT_PROFILE_UNK_NR || (seen & (1ull << reason)))
			BAD("bad unknown reason");
		seen |= 1ull << reason;
		err = spent_profile_add_unknown(t, (enum spent_profile_unknown_reason)reason, ev, c);
		if (err == -EOVERFLOW)
			BAD("unknown counts add up to more than 64 bits");	/* no writer makes that */
		if (err)
			goto out;
	}
out:
	return err;
}

static int parse_stacks(struct binreader *r, struct spent_profile *t, uint32_t ev, const char **why)
{
	uint64_t ni, ns, total, sum = 0;
	uint32_t *map = NULL;
	struct spent_profile_frame *fr = NULL;
	int err = 0;
	if (binreader_get_uvarint(r, &ni) || ni > binreader_left(r) / 3)
		BAD("bad stack image count");
	map = malloc((ni + 1) * sizeof(*map));
	fr = malloc(1024 * sizeof(*fr));
	if (!map || !fr) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < ni; i++) {
		struct spent_profile_image img = { 0 };
		err = profile_file_get_image(r, &img, why);
		if (!err && spent_profile_image_intern(t, &img, &map[i])) {
			*why = "bad stack image";
			err = -EBADMSG;
		}
		free(img.path);
		if (err)
			goto out;
	}
	if (binreader_get_uvarint(r, &ns) || binreader_get_uvarint(r, &total) ||
	    ns > binreader_left(r) / 4)
		BAD("bad stack count");
	for (uint64_t s = 0; s < ns; s++) {
		uint64_t c, depth;
		if (binreader_get_uvarint(r, &c) || binreader_get_uvarint(r, &depth))
			BAD("truncated stack");
		if (c == 0 || depth == 0 || depth > 1024 || sum + c < sum)
			BAD("bad stack depth or count");
		sum += c;
		for (uint64_t k = 0; k < depth; k++) {
			uint64_t li, off;
			if (binreader_get_uvarint(r, &li) || binreader_get_uvarint(r, &off))
				BAD("truncated frame");
			if (li > ni)
				BAD("frame image index out of range");
			fr[k].image = li ? map[li - 1] : SPENT_PROFILE_NO_IMAGE;
			fr[k].offset = off;
		}
		if ((err = spent_profile_add_stack(t, ev, fr, depth, c)))
			goto out;
	}
	if (sum != total)
		BAD("stacks do not add up to the header total");
out:
	free(map);
	free(fr);
	return err;
}

int spent_profile_file_parse(const uint8_t *data, size_t len, struct spent_profile *into, const char **why)
{
	struct binreader r;
	struct spent_profile *t = NULL;
	char *name = NULL;
	uint32_t version, ev;
	uint8_t kind;
	uint64_t period, flags;
	int err = 0;
	const char *dummy;
	if (!why)
		why = &dummy;
	if (len < 13 || memcmp(data, PROFILE_FILE_MAGIC, 4))
		BAD("not a spent profile file (bad magic)");
	uint32_t crc = (uint32_t)data[len - 4] | (uint32_t)data[len - 3] << 8 |
		       (uint32_t)data[len - 2] << 16 | (uint32_t)data[len - 1] << 24;
	binreader_init(&r, data + 4, len - 8);
	if (binreader_get_le32(&r, &version))
		BAD("truncated header");
	if (version < PROFILE_FILE_VERSION || version > PROFILE_FILE_VERSION_SAMPLES)
		BAD("unsupported profile file version");
	if (binio_crc32(0, data, len - 4) != crc)
		BAD("checksum mismatch (truncated or corrupt)");
	if (binreader_get_u8(&r, &kind) || binreader_get_str(&r, SPENT_PROFILE_EVENT_NAME_MAX - 1, &name) ||
	    binreader_get_uvarint(&r, &period) || binreader_get_uvarint(&r, &flags))
		BAD("bad event header");
	if (!name[0] || flags > SPENT_PROFILE_EV_FREQ)
		BAD("bad event description");
	t = spent_profile_new();
	if (!t || spent_profile_event_intern(t, name, period, (uint32_t)flags, &ev)) {
		err = -ENOMEM;
		goto out;
	}
	if (kind == PROFILE_FILE_COUNTS)
		err = parse_counts(&r, t, ev, why);
	else if (kind == PROFILE_FILE_UNKNOWN)
		err = parse_unknown(&r, t, ev, why);
	else if (kind == PROFILE_FILE_STACKS)
		err = parse_stacks(&r, t, ev, why);
	else if (kind == PROFILE_FILE_SAMPLES && version >= PROFILE_FILE_VERSION_SAMPLES_V2)
		err = profile_file_parse_samples(&r, t, ev, version, why);
	else
		BAD("unknown file kind");
	if (err)
		goto out;
	if (binreader_left(&r))
		BAD("trailing bytes after the entries");
	err = spent_profile_merge(into, t);
out:
	free(name);
	spent_profile_free(t);
	return err;
}

/* ---- an epoch's span file ---- */

#define SPAN_MAGIC "spent-span 1 "

size_t profile_span_encode(uint64_t start_ns, uint64_t end_ns, char *out)
{
	int n = snprintf(out, PROFILE_SPAN_TEXT_MAX, SPAN_MAGIC "%llu %llu\n",
			 (unsigned long long)start_ns, (unsigned long long)end_ns);
	return n > 0 && n < PROFILE_SPAN_TEXT_MAX ? (size_t)n : 0;
}

/* A decimal u64 without sign or leading zero at *P (advanced past it): 0 or -1. */
static int span_number(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	*v = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	if (s == *p || (**p == '0' && s - *p > 1))
		return -1;
	*p = s;
	return 0;
}

int profile_span_parse(const uint8_t *data, size_t len, uint64_t *start_ns, uint64_t *end_ns)
{
	size_t ml = strlen(SPAN_MAGIC);
	const uint8_t *p = data + ml, *end = data + len;
	if (len < ml || memcmp(data, SPAN_MAGIC, ml) || span_number(&p, end, start_ns) ||
	    p == end || *p++ != ' ' || span_number(&p, end, end_ns) || p == end || *p++ != '\n' ||
	    p != end || !*start_ns || *start_ns > *end_ns)
		return -EBADMSG;
	return 0;
}
