/* shim/shim_file.c - writes the Shim sample file (format in shim_format.h) atomically. */
#include <errno.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"
#include "shim/shim_format.h"

static int put_double(struct binbuf *b, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	return binbuf_put_le64(b, bits);
}

static int put_signal(struct binbuf *b, const struct shim_signal_result *s)
{
	int err = binbuf_put_u8(b, (uint8_t)s->kind) ?: binbuf_put_u8(b, (uint8_t)s->source) ?:
		  binbuf_put_str(b, s->name) ?: binbuf_put_str(b, s->symbol ? s->symbol : "") ?:
		  binbuf_put_str(b, s->image ? s->image : "") ?: binbuf_put_uvarint(b, s->addr);
	if (err)
		return err;
	if (s->kind != SHIM_SIG_TAG)
		return binbuf_put_uvarint(b, s->first_value) ?: binbuf_put_uvarint(b, s->last_value) ?:
		       binbuf_put_uvarint(b, s->kept) ?: binbuf_put_uvarint(b, s->dropped) ?:
		       binbuf_put_uvarint(b, s->offcpu) ?:
		       binbuf_put_uvarint(b, s->nrates) ?: put_double(b, s->rate_min) ?:
		       put_double(b, s->rate_median) ?: put_double(b, s->rate_max);
	err = binbuf_put_uvarint(b, s->overflow) ?: binbuf_put_uvarint(b, s->nrows);
	for (size_t i = 0; !err && i < s->nrows; i++)
		err = binbuf_put_uvarint(b, s->rows[i].value) ?:
		      binbuf_put_uvarint(b, s->rows[i].samples) ?:
		      binbuf_put_str(b, s->rows[i].symbol ? s->rows[i].symbol : "");
	return err;
}

static int put_result(struct binbuf *b, const struct shim_result *r)
{
	uint64_t words = shim_sample_words(r->ncounters, r->ntags);
	int err = binbuf_put(b, SHIM_FILE_MAGIC, 8) ?: binbuf_put_le32(b, SHIM_FILE_VERSION) ?:
		  binbuf_put_le32(b, r->flags & SHIM_RESULT_SCHED_CHANNEL ? SHIM_FILE_FLAG_SCHED : 0) ?:
		  binbuf_put_uvarint(b, r->tsc_hz) ?: binbuf_put_svarint(b, r->observer_cpu) ?:
		  binbuf_put_svarint(b, r->app_cpu) ?: binbuf_put_svarint(b, r->exit_status) ?:
		  binbuf_put_svarint(b, r->pid) ?:
		  binbuf_put_uvarint(b, r->period_req_ns) ?: put_double(b, r->ratio_lo) ?:
		  put_double(b, r->ratio_hi) ?: binbuf_put_uvarint(b, r->samples) ?:
		  binbuf_put_uvarint(b, r->samples_app) ?: binbuf_put_uvarint(b, r->samples_other) ?:
		  binbuf_put_uvarint(b, r->samples_gap) ?: binbuf_put_uvarint(b, r->app_ns) ?:
		  binbuf_put_uvarint(b, r->first_tsc) ?: binbuf_put_uvarint(b, r->last_tsc) ?:
		  binbuf_put_str(b, r->note) ?: binbuf_put_uvarint(b, r->ncounters) ?:
		  binbuf_put_uvarint(b, r->ntags);
	for (uint32_t i = 0; !err && i < r->ncounters + r->ntags; i++)
		err = put_signal(b, &r->signals[i]);
	if (!err)
		err = binbuf_put_uvarint(b, r->nlog) ?: binbuf_reserve(b, r->nlog * words * 8 + 4);
	for (uint64_t i = 0; !err && i < r->nlog * words; i++)
		err = binbuf_put_le64(b, r->log[i]);
	if (!err)
		err = binbuf_put_le32(b, binio_crc32(0, b->data, b->len));
	return err;
}

int shim_file_write(const char *path, const struct shim_result *r)
{
	struct binbuf b;
	binbuf_init(&b);
	int err = put_result(&b, r);
	if (!err)
		err = outfile_write(path, b.data, b.len, OUTFILE_MODE);
	binbuf_release(&b);
	return err;
}
