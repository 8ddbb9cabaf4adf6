/* trace/log_reader.c - validating reader of `spent trace` logs: header, blocks (length, CRC,
 * LZ4, or zstd in version 3 logs) and records; a truncated or corrupt log yields every
 * complete block first, then one error naming the byte offset. Also the ELF build-id helper
 * used to detect changed images. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

#include "core/binio.h"
#include "core/procmaps.h"
#include "trace/log_io.h"

struct log_reader {
	const uint8_t *data;
	size_t len;
	void *map;		/* file mapping to unmap, or NULL */
	size_t pos;		/* next block */
	uint32_t flags;
	uint64_t max_insns;
	uint8_t *raw;		/* current block, decompressed */
	size_t raw_len, raw_pos;
	uint64_t block_off;
	uint64_t n_records;
	int done;		/* 1 after END, <0 after an error */
	char err[256];
	uint32_t version;	/* LOG_VERSION_ZSTD (3): zstd blocks; else LZ4 */
	ZSTD_DCtx *dctx;	/* zstd blocks only */
};

static int fail(struct log_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct log_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->done = err;
	return err;
}

int log_reader_new_mem(const uint8_t *data, size_t len, struct log_reader **out, char *err,
		       size_t errlen)
{
	struct log_reader *r = calloc(1, sizeof(*r));
	uint32_t version;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->len = len;
	r->raw = malloc(LOG_BLOCK_MAX);
	if (!r->raw) {
		log_reader_free(r);
		return -ENOMEM;
	}
	if (len < 12 || memcmp(data, LOG_MAGIC, 8) != 0) {
		if (err)
			snprintf(err, errlen, "not a spent trace log (bad magic or shorter than its header)");
		log_reader_free(r);
		return -EINVAL;
	}
	memcpy(&version, data + 8, 4);
	/* a version far past this one whose header fails this layout's checksum is a damaged
	 * version field, not a newer spent (which would count up from here): say corrupt */
	uint32_t hcrc = 0;
	if (len >= LOG_HEADER_SIZE)
		memcpy(&hcrc, data + LOG_HEADER_CRC_OFF, 4);
	bool known = version == LOG_VERSION || version == LOG_VERSION_NO_REAPED ||
		     version == LOG_VERSION_LZ4 || version == LOG_VERSION_ZSTD;
	if (!known && (version > LOG_VERSION + 64 || version == 0) &&
	    (len < LOG_HEADER_SIZE || binio_crc32(0, data, LOG_HEADER_CRC_OFF) != hcrc)) {
		if (err)
			snprintf(err, errlen, "corrupt log: header checksum mismatch (bytes 0-%u; its "
				 "version field reads %u)", LOG_HEADER_CRC_OFF - 1, version);
		log_reader_free(r);
		return -EBADMSG;
	}
	if (!known) {
		if (err)
			snprintf(err, errlen, "trace log format version %u is not supported: this spent "
				 "reads versions %u to %u only%s", version, LOG_VERSION_ZSTD, LOG_VERSION,
				 version < LOG_VERSION ?
				 " (record the trace again)" : " (written by a newer spent)");
		log_reader_free(r);
		return -EPROTONOSUPPORT;
	}
	if (len < LOG_HEADER_SIZE) {
		if (err)
			snprintf(err, errlen, "log truncated in its %u-byte header", LOG_HEADER_SIZE);
		log_reader_free(r);
		return -EBADMSG;
	}
	uint32_t crc, reserved;
	memcpy(&reserved, data + 32, 4);
	memcpy(&crc, data + LOG_HEADER_CRC_OFF, 4);
	if (binio_crc32(0, data, LOG_HEADER_CRC_OFF) != crc || reserved) {
		if (err)
			snprintf(err, errlen, "corrupt log: header checksum mismatch (bytes 0-%u)",
				 LOG_HEADER_CRC_OFF - 1);
		log_reader_free(r);
		return -EBADMSG;
	}
	r->version = version;
	if (version == LOG_VERSION_ZSTD && !(r->dctx = ZSTD_createDCtx())) {
		log_reader_free(r);
		return -ENOMEM;
	}
	memcpy(&r->flags, data + 12, 4);
	memcpy(&r->max_insns, data + 24, 8);
	r->pos = LOG_HEADER_SIZE;
	*out = r;
	return 0;
}

int log_reader_new_file(const char *path, struct log_reader **out, char *err, size_t errlen)
{
	struct stat st;
	void *map = NULL;
	int fd = binio_open_regular(path);
	int e;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		e = fd < 0 ? fd : -errno;
		if (err)
			snprintf(err, errlen, "cannot open trace log '%s': %s", path,
				 e == -EINVAL ? "not a regular file" : strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			e = -errno;
			close(fd);
			if (err)
				snprintf(err, errlen, "cannot map trace log '%s': %s", path, strerror(-e));
			return e;
		}
	}
	close(fd);
	char sub[200] = "";
	e = log_reader_new_mem(map ? map : (const uint8_t *)"", (size_t)st.st_size, out, sub, sizeof(sub));
	if (e < 0) {
		if (map)
			munmap(map, (size_t)st.st_size);
		if (err)
			snprintf(err, errlen, "'%s': %s", path, sub);
		return e;
	}
	(*out)->map = map;
	return 0;
}

/* Load the next block; 1 loaded, 0 clean end of data, <0 error. */
static int load_block(struct log_reader *r)
{
	uint32_t h[4];
	if (r->pos == r->len)
		return fail(r, -EBADMSG, "log truncated at byte %zu: it ends without its end record "
			    "(the recording was interrupted?)", r->pos);
	if (r->len - r->pos < LOG_BLOCK_HDR_SIZE)
		return fail(r, -EBADMSG, "log truncated at byte %zu: the block header at byte %zu is "
			    "incomplete", r->len, r->pos);
	memcpy(h, r->data + r->pos, sizeof(h));
	if (h[0] != (r->version == LOG_VERSION_ZSTD ? LOG_BLOCK_MAGIC_ZSTD : LOG_BLOCK_MAGIC))
		return fail(r, -EBADMSG, "corrupt log: no block magic at byte %zu", r->pos);
	if (h[1] == 0 || h[1] > LOG_BLOCK_MAX || h[2] == 0 || h[2] > LOG_BLOCK_COMP_MAX)
		return fail(r, -EBADMSG, "corrupt log: impossible block lengths at byte %zu", r->pos);
	if (r->len - r->pos - LOG_BLOCK_HDR_SIZE < h[2])
		return fail(r, -EBADMSG, "log truncated at byte %zu: block of %u bytes at byte %zu is "
			    "incomplete", r->len, h[2], r->pos);
	const uint8_t *frame = r->data + r->pos + LOG_BLOCK_HDR_SIZE;
	if (binio_crc32(0, frame, h[2]) != h[3])
		return fail(r, -EBADMSG, "corrupt log: checksum mismatch in block at byte %zu", r->pos);
	size_t n;
	if (r->version == LOG_VERSION_ZSTD) {
		n = ZSTD_decompressDCtx(r->dctx, r->raw, LOG_BLOCK_MAX, frame, h[2]);
		if (ZSTD_isError(n))
			n = 0;
	} else {
		/* the safe decoder: a hostile block is refused, never read or written past */
		int d = LZ4_decompress_safe((const char *)frame, (char *)r->raw, (int)h[2], (int)LOG_BLOCK_MAX);
		n = d > 0 ? (size_t)d : 0;
	}
	if (n == 0 || n != h[1])
		return fail(r, -EBADMSG, "corrupt log: block at byte %zu does not decompress", r->pos);
	r->block_off = r->pos;
	r->pos += LOG_BLOCK_HDR_SIZE + h[2];
	r->raw_len = n;
	r->raw_pos = 0;
	return 1;
}

int log_reader_next(struct log_reader *r, struct log_record *rec)
{
	struct log_rec_hdr h;
	if (r->done)
		return r->done > 0 ? 0 : r->done;
	if (r->raw_pos == r->raw_len) {
		int e = load_block(r);
		if (e <= 0)
			return e;
	}
	if (r->raw_len - r->raw_pos < sizeof(h))
		return fail(r, -EBADMSG, "corrupt log: record header cut at byte %zu of block at byte %llu",
			    r->raw_pos, (unsigned long long)r->block_off);
	memcpy(&h, r->raw + r->raw_pos, sizeof(h));
	size_t padded = ((size_t)h.len + 7u) & ~(size_t)7u;
	if (h.type < LOG_REC_CODE || h.type > LOG_REC_LAST || padded > r->raw_len - r->raw_pos - sizeof(h))
		return fail(r, -EBADMSG, "corrupt log: bad record (type %u, %u bytes) at byte %zu of block "
			    "at byte %llu", h.type, h.len, r->raw_pos, (unsigned long long)r->block_off);
	rec->type = h.type;
	rec->len = h.len;
	rec->payload = r->raw + r->raw_pos + sizeof(h);
	rec->block_offset = r->block_off;
	r->raw_pos += sizeof(h) + padded;
	if (h.type == LOG_REC_END) {
		/* the end record ends the log: anything after it was not written by spent */
		if (r->raw_pos != r->raw_len || r->pos != r->len)
			return fail(r, -EBADMSG, "corrupt log: %zu bytes after the end record (block at "
				    "byte %llu)", (r->raw_len - r->raw_pos) + (r->len - r->pos),
				    (unsigned long long)r->block_off);
		r->done = 1;
		return 0;
	}
	r->n_records++;
	return 1;
}

const char *log_reader_error(const struct log_reader *r)
{
	return r->err;
}

uint32_t log_reader_flags(const struct log_reader *r)
{
	return r->flags;
}

uint32_t log_reader_version(const struct log_reader *r)
{
	return r->version;
}

uint64_t log_reader_max_insns(const struct log_reader *r)
{
	return r->max_insns;
}

uint64_t log_reader_size(const struct log_reader *r)
{
	return r->len;
}

uint64_t log_reader_pos(const struct log_reader *r)
{
	return r->pos;
}

void log_reader_free(struct log_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->len);
	ZSTD_freeDCtx(r->dctx);
	free(r->raw);
	free(r);
}

int log_image_identity(const char *path, uint8_t id[20], uint8_t *len, uint32_t *kind)
{
	struct spent_profile_image pi;
	int err = image_identify(path, &pi);

	*len = 0;
	*kind = 0;
	if (err)
		return err;
	/* the log keeps 20 bytes: a longer build-id is compared by its first 20 */
	*len = pi.id_len > 20 ? 20 : pi.id_len;
	memcpy(id, pi.id, *len);
	*kind = pi.id_kind == SPENT_PROFILE_ID_BUILDID ? LOG_IMG_BUILD_ID : LOG_IMG_CONTENT_HASH;
	return 0;
}

int trace_log_probe(const char *path)
{
	char m[8];
	int fd = binio_open_regular(path);
	if (fd < 0)
		return fd;
	ssize_t n = read(fd, m, sizeof(m));
	close(fd);
	return n == 8 && memcmp(m, LOG_MAGIC, 8) == 0;
}
