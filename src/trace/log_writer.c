/* trace/log_writer.c - writes `spent trace` logs: records batched into LZ4 blocks with a CRC,
 * into a temporary file renamed into place on commit (core/outfile.h: nothing partial is ever
 * left at PATH); an interrupted recording is committed with LOG_F_INCOMPLETE in its header.
 * Also the copies of CODE payloads that CODE_SAME records name, kept alike by writer and
 * readers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/outfile.h"
#include "trace/log_io.h"

/* every block this writer can make passes the reader's length check */
_Static_assert(LZ4_COMPRESSBOUND(LOG_BLOCK_MAX) == LOG_BLOCK_COMP_MAX, "LZ4's bound is the format's");

struct log_writer {
	struct outfile *out;
	int fd;
	uint32_t flags, commit_flags;	/* in the header now; to be there after commit */
	uint8_t hdr[LOG_HEADER_SIZE];	/* as written: rewritten whole (CRC too) when flags change */
	struct binbuf raw;
	uint8_t *comp;		/* LOG_BLOCK_COMP_MAX bytes: a compressed block */
	uint64_t n_records, bytes;
	void *lz4_state;	/* LZ4_compress_fast_extState's scratch */
	int accel;		/* LZ4 acceleration of the next block (log_block_accel) */
};

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The header's CRC over bytes 0..35 (log_format.h). */
static void header_seal(uint8_t *hdr)
{
	uint32_t crc = binio_crc32(0, hdr, LOG_HEADER_CRC_OFF);
	memcpy(hdr + LOG_HEADER_CRC_OFF, &crc, 4);
}

int log_writer_new(const char *path, uint32_t flags, uint64_t max_insns, struct log_writer **out)
{
	int err = -ENOMEM;
	struct log_writer *w = calloc(1, sizeof(*w));
	struct timespec ts;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->flags = w->commit_flags = flags;
	w->accel = 1;
	binbuf_init(&w->raw);
	w->comp = malloc(LOG_BLOCK_COMP_MAX);
	w->lz4_state = malloc((size_t)LZ4_sizeofState());
	if (!w->comp || !w->lz4_state || binbuf_reserve(&w->raw, LOG_BLOCK_MAX) < 0)
		goto out;
	if ((err = outfile_open(path, OUTFILE_MODE, &w->out)) < 0)
		goto out;
	w->fd = outfile_fd(w->out);
	clock_gettime(CLOCK_REALTIME, &ts);
	uint8_t *hdr = w->hdr;
	memcpy(hdr, LOG_MAGIC, 8);
	uint32_t v = LOG_VERSION;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	memcpy(hdr + 8, &v, 4);
	memcpy(hdr + 12, &flags, 4);
	memcpy(hdr + 16, &now, 8);
	memcpy(hdr + 24, &max_insns, 8);
	header_seal(hdr);
	err = write_all(w->fd, hdr, LOG_HEADER_SIZE);
	if (err < 0)
		goto out;
	w->bytes = LOG_HEADER_SIZE;
	*out = w;
	return 0;
out:
	log_writer_free(w);
	return err;
}

/* Each block's LZ4 acceleration follows how well the block before it compressed (every
 * setting reads back the same). Measured in process on the records of whole runs (1 MiB
 * blocks, CPU s, session 13): gzip's 114 MB (hard-to-predict data addresses) took 0.31 s at
 * zstd -10, the fastest level used before, 0.38 at LZ4 1 and 0.11 at LZ4 64 (1.43x against
 * zstd's 1.64x); bzip2's 339 MB 0.98 / 0.78 / 0.31 s; --no-data control bytes compress
 * about 2.8x at every acceleration in the same 0.08 s (zstd 1: 0.18 s, 6.9x); python3's
 * mixed records (6x at LZ4 1, 3.4x at 64) keep 1, where the log stays within 2x of zstd's. */
int log_block_accel(size_t raw_len, size_t comp_len)
{
	if (comp_len == 0 || raw_len < LOG_BLOCK_MAX / 2)
		return 1;	/* a short block (the last, a quiet spell) says little */
	return raw_len * 10 < comp_len * LOG_LZ4_POOR_TENTHS ? LOG_LZ4_ACCEL_POOR : 1;
}

static int flush_block(struct log_writer *w)
{
	uint32_t h[4];
	if (w->raw.len == 0)
		return 0;
	int c = LZ4_compress_fast_extState(w->lz4_state, (const char *)w->raw.data, (char *)w->comp,
					   (int)w->raw.len, (int)LOG_BLOCK_COMP_MAX, w->accel);
	if (c <= 0)
		return -EIO;
	size_t n = (size_t)c;
	w->accel = log_block_accel(w->raw.len, n);
	h[0] = LOG_BLOCK_MAGIC;
	h[1] = (uint32_t)w->raw.len;
	h[2] = (uint32_t)n;
	h[3] = binio_crc32(0, w->comp, n);
	int err = write_all(w->fd, h, sizeof(h));
	if (!err)
		err = write_all(w->fd, w->comp, n);
	if (err < 0)
		return err;
	w->bytes += sizeof(h) + n;
	w->raw.len = 0;
	return 0;
}

int log_writer_add(struct log_writer *w, uint32_t type, const void *payload, uint32_t len)
{
	struct log_rec_hdr h = { .type = (uint8_t)type, .len = len };
	static const uint8_t zeros[8];
	size_t total = sizeof(h) + ((len + 7u) & ~7u);

	if (len > LOG_REC_MAX)
		return -E2BIG;
	if (w->raw.len + total > LOG_BLOCK_MAX) {
		int err = flush_block(w);
		if (err < 0)
			return err;
	}
	binbuf_put(&w->raw, &h, sizeof(h));
	binbuf_put(&w->raw, payload, len);
	binbuf_put(&w->raw, zeros, ((len + 7u) & ~7u) - len);
	w->n_records++;
	return 0;
}

uint64_t log_writer_bytes(const struct log_writer *w)
{
	return w->bytes + w->raw.len;
}

void log_writer_mark_incomplete(struct log_writer *w)
{
	w->commit_flags |= LOG_F_INCOMPLETE;
}

int log_writer_commit(struct log_writer *w)
{
	struct log_end e = { .n_records = w->n_records };
	int err = log_writer_add(w, LOG_REC_END, &e, sizeof(e));
	if (!err)
		err = flush_block(w);
	/* the header was written first: rewritten whole, so its CRC covers the new flags; a pipe
	 * output (not seekable) keeps the flags it had */
	if (!err && w->commit_flags != w->flags) {
		memcpy(w->hdr + 12, &w->commit_flags, 4);
		header_seal(w->hdr);
		if (pwrite(w->fd, w->hdr, LOG_HEADER_SIZE, 0) != LOG_HEADER_SIZE && errno != ESPIPE)
			err = -errno;
	}
	if (!err) {
		err = outfile_commit(w->out);
		w->out = NULL;
		w->fd = -1;
	}
	return err;
}

void log_writer_free(struct log_writer *w)
{
	if (!w)
		return;
	outfile_abort(w->out);	/* not committed: the temporary goes */
	free(w->lz4_state);
	binbuf_release(&w->raw);
	free(w->comp);
	free(w);
}

int log_code_copies_add(struct log_code_copies *k, const uint8_t *p, uint32_t len, uint64_t *off)
{
	*off = UINT64_MAX;
	if (k->n + len > LOG_CODE_SAME_MAX_BYTES)
		return 0;
	if (ALLOC_GROW(k->bytes, k->n + len, k->cap))
		return -ENOMEM;
	if (len)	/* an empty payload (a corrupt log's) leaves bytes NULL: no memcpy to it */
		memcpy(k->bytes + k->n, p, len);
	*off = k->n;
	k->n += len;
	return 0;
}
