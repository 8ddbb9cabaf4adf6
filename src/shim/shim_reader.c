/* shim/shim_reader.c - reads the Shim sample file (format in shim_format.h) from untrusted
 * bytes: every count is checked against the bytes left before anything is allocated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "shim/shim_format.h"

static int get_double(struct binreader *r, double *d)
{
	uint64_t bits;
	int err = binreader_get_le64(r, &bits);
	if (!err)
		memcpy(d, &bits, sizeof(bits));
	return err;
}

static int get_i32(struct binreader *r, int32_t *v)
{
	int64_t x;
	int err = binreader_get_svarint(r, &x);
	if (err)
		return err;
	if (x < INT32_MIN || x > INT32_MAX)
		return -EBADMSG;
	*v = (int32_t)x;
	return 0;
}

/* A string copied into a fixed buffer of N bytes (at most N - 1 characters). */
static int get_fixed_str(struct binreader *r, char *out, size_t n)
{
	char *s = NULL;
	int err = binreader_get_str(r, n - 1, &s);
	if (!err) {
		memcpy(out, s, strlen(s) + 1);
		free(s);
	}
	return err;
}

/* Empty strings read back as NULL symbols. */
static int get_opt_str(struct binreader *r, size_t maxlen, char **out)
{
	int err = binreader_get_str(r, maxlen, out);
	if (!err && !**out) {
		free(*out);
		*out = NULL;
	}
	return err;
}

static int get_rows(struct binreader *r, struct shim_signal_result *s)
{
	uint64_t n;
	int err = binreader_get_uvarint(r, &s->overflow) ?: binreader_get_uvarint(r, &n);
	if (err)
		return err;
	if (n > binreader_left(r) / 3)	/* each row takes at least three bytes */
		return -EBADMSG;
	s->rows = calloc(n ? n : 1, sizeof(*s->rows));
	if (!s->rows)
		return -ENOMEM;
	for (uint64_t i = 0; !err && i < n; i++) {
		err = binreader_get_uvarint(r, &s->rows[i].value) ?:
		      binreader_get_uvarint(r, &s->rows[i].samples) ?:
		      get_opt_str(r, 255, &s->rows[i].symbol);
		s->nrows = i + 1;
	}
	return err;
}

static int get_signal(struct binreader *r, bool tag, struct shim_signal_result *s)
{
	uint8_t kind, source;
	int err = binreader_get_u8(r, &kind) ?: binreader_get_u8(r, &source);
	if (err)
		return err;
	if (tag ? kind != SHIM_SIG_TAG : (kind != SHIM_SIG_COUNTER && kind != SHIM_SIG_RATE))
		return -EBADMSG;
	if (source != SHIM_SRC_MEMORY && source != SHIM_SRC_PERF_READ)
		return -EBADMSG;
	s->kind = kind;
	s->source = source;
	err = get_fixed_str(r, s->name, sizeof(s->name)) ?: binreader_get_str(r, 255, &s->symbol) ?:
	      binreader_get_str(r, 4096, &s->image) ?: binreader_get_uvarint(r, &s->addr);
	if (err)
		return err;
	if (tag)
		return get_rows(r, s);
	err = binreader_get_uvarint(r, &s->first_value) ?: binreader_get_uvarint(r, &s->last_value) ?:
	      binreader_get_uvarint(r, &s->kept) ?: binreader_get_uvarint(r, &s->dropped) ?:
	      binreader_get_uvarint(r, &s->offcpu) ?:
	      binreader_get_uvarint(r, &s->nrates) ?: get_double(r, &s->rate_min) ?:
	      get_double(r, &s->rate_median) ?: get_double(r, &s->rate_max);
	return err;
}

static int get_header(struct binreader *r, uint32_t version, struct shim_result *res)
{
	uint64_t nc, nt;
	int err = binreader_get_uvarint(r, &res->tsc_hz) ?: get_i32(r, &res->observer_cpu) ?:
		  get_i32(r, &res->app_cpu) ?: get_i32(r, &res->exit_status) ?:
		  get_i32(r, &res->pid) ?:
		  binreader_get_uvarint(r, &res->period_req_ns) ?: get_double(r, &res->ratio_lo) ?:
		  get_double(r, &res->ratio_hi) ?: binreader_get_uvarint(r, &res->samples) ?:
		  binreader_get_uvarint(r, &res->samples_app) ?:
		  binreader_get_uvarint(r, &res->samples_other) ?:
		  (version >= 2 ? binreader_get_uvarint(r, &res->samples_gap) : 0) ?:
		  (version >= 2 ? binreader_get_uvarint(r, &res->app_ns) : 0) ?:
		  binreader_get_uvarint(r, &res->first_tsc) ?: binreader_get_uvarint(r, &res->last_tsc) ?:
		  get_fixed_str(r, res->note, sizeof(res->note)) ?: binreader_get_uvarint(r, &nc) ?:
		  binreader_get_uvarint(r, &nt);
	if (err)
		return err;
	if (nc > SHIM_MAX_COUNTERS || nt > SHIM_MAX_TAGS)
		return -EBADMSG;
	res->ncounters = (uint32_t)nc;
	res->ntags = (uint32_t)nt;
	return 0;
}

static int get_log(struct binreader *r, struct shim_result *res)
{
	uint64_t words = shim_sample_words(res->ncounters, res->ntags), n;
	int err = binreader_get_uvarint(r, &n);
	if (err)
		return err;
	if (n > binreader_left(r) / 8 / words)
		return -EBADMSG;
	res->log = malloc((n ? n : 1) * words * sizeof(uint64_t));
	if (!res->log)
		return -ENOMEM;
	res->nlog = n;
	for (uint64_t i = 0; !err && i < n * words; i++)
		err = binreader_get_le64(r, &res->log[i]);
	return err;
}

int shim_file_parse(const void *data, size_t len, struct shim_result **out)
{
	struct shim_result *res = NULL;
	struct binreader r;
	uint32_t version, flags, crc;
	int err = 0;

	*out = NULL;
	if (len < 20 || memcmp(data, SHIM_FILE_MAGIC, 8) != 0)
		return -EBADMSG;
	memcpy(&crc, (const uint8_t *)data + len - 4, 4);
	crc = le32toh(crc);
	binreader_init(&r, data, len - 4);
	binreader_skip(&r, 8);
	if ((err = binreader_get_le32(&r, &version)) || (err = binreader_get_le32(&r, &flags)))
		return err;
	if (version < 1 || version > SHIM_FILE_VERSION)
		return -EPROTO;
	if (binio_crc32(0, data, len - 4) != crc)
		return -EBADMSG;
	if (!(res = shim_result_new()))
		return -ENOMEM;
	res->flags = flags & SHIM_FILE_FLAG_SCHED ? SHIM_RESULT_SCHED_CHANNEL : 0;
	if ((err = get_header(&r, version, res)))
		goto out;
	res->signals = calloc(res->ncounters + res->ntags + 1, sizeof(*res->signals));
	if (!res->signals) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; !err && i < res->ncounters + res->ntags; i++)
		err = get_signal(&r, i >= res->ncounters, &res->signals[i]);
	if (!err)
		err = get_log(&r, res);
	if (!err && binreader_left(&r))
		err = -EBADMSG;
	if (err)
		goto out;
	*out = res;
	res = NULL;
out:
	shim_result_free(res);
	return err;
}

int shim_file_read(const char *path, struct shim_result **out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int err = binio_read_file(path, SHIM_FILE_MAX_BYTES, &data, &len);
	if (!err)
		err = shim_file_parse(data, len, out);
	free(data);
	return err;
}
