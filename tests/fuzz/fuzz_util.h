/* tests/fuzz/fuzz_util.h - what the fuzz targets and seedtool.c share:
 *  - the mutation-friendly forms of the checksummed formats: a target recomputes every CRC
 *    (and compresses trace-log blocks itself) before the unchanged library parses the
 *    input, so mutations reach the parsers beneath the checks instead of dying at them;
 *  - the file bundle a directory target unpacks into a scratch directory.
 * Everything is static inline: each target is one translation unit and uses a part. */
#ifndef SPENT_FUZZ_UTIL_H
#define SPENT_FUZZ_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

#include "citcat/recording_format.h"
#include "core/binio.h"
#include "trace/log_io.h"

/* ---- trailing CRC (shim sample files, profile files): CRC-32 of every byte before it ---- */

static inline void fuzz_fix_trailing_crc(uint8_t *d, size_t len)
{
	if (len < 4)
		return;
	uint32_t crc = htole32(binio_crc32(0, d, len - 4));
	memcpy(d + len - 4, &crc, 4);
}

/* A private copy of D with its trailing CRC recomputed (free it), or NULL. */
static inline uint8_t *fuzz_copy_fixed_crc(const uint8_t *d, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	if (copy) {
		memcpy(copy, d, len);
		fuzz_fix_trailing_crc(copy, len);
	}
	return copy;
}

/* ---- citcat recordings: every frame (kind, uvarint len, payload, le32 crc) refixed ---- */

static inline void fuzz_fix_citcat_crcs(uint8_t *d, size_t len)
{
	size_t pos = CC_HEADER_LEN;
	while (pos < len) {
		struct binreader r;
		uint64_t plen;
		binreader_init(&r, d + pos + 1, len - pos - 1);
		if (binreader_get_uvarint(&r, &plen) || plen > binreader_left(&r) ||
		    binreader_left(&r) - plen < 4)
			return;	/* a cut frame: the reader treats it as the end */
		const uint8_t *payload = r.p;
		uint32_t crc = binio_crc32(binio_crc32(0, d + pos, 1), payload, plen);
		crc = htole32(crc);
		memcpy((uint8_t *)payload + plen, &crc, 4);
		pos = (size_t)(payload - d) + plen + 4;
	}
}

/* ---- trace logs ----
 * The raw form: the 40-byte header, then the records exactly as they lie in decompressed
 * blocks (struct log_rec_hdr, payload, zero padding to 8), END included. The target cuts it
 * into blocks of about FUZZ_LOG_BLOCK bytes at record boundaries (so block changes happen
 * often), compresses each and writes its header with the CRC. A record header claiming more
 * than is left ends the last block as it is: the reader must refuse it. */
#define FUZZ_LOG_BLOCK 4096u

/* The header as the target passes it on, its CRC (bytes 36-39, over 0-35) recomputed: a
 * mutation of the header reaches the reader's checks of its fields (and fuzz_trace_sinks'
 * choice of preset and cores in bytes 16-17) instead of dying at the checksum. */
static inline int fuzz_log_put_header(struct binbuf *out, const uint8_t *raw)
{
	uint8_t h[LOG_HEADER_SIZE];
	memcpy(h, raw, LOG_HEADER_SIZE);
	uint32_t crc = htole32(binio_crc32(0, h, LOG_HEADER_CRC_OFF));
	memcpy(h + LOG_HEADER_CRC_OFF, &crc, 4);
	return binbuf_put(out, h, LOG_HEADER_SIZE);
}

/* One block of RAW (N bytes): LZ4, or zstd when the header says version 3 (ZSTD), so both
 * decoders see the fuzzer's records. */
static inline int fuzz_log_put_block(struct binbuf *out, const uint8_t *raw, size_t n, bool zstd)
{
	size_t cap = zstd ? ZSTD_compressBound(n) : (size_t)LZ4_compressBound((int)n);
	int err = binbuf_reserve(out, LOG_BLOCK_HDR_SIZE + cap);
	if (err)
		return err;
	uint8_t *frame = out->data + out->len + LOG_BLOCK_HDR_SIZE;
	size_t c;
	if (zstd) {
		c = ZSTD_compress(frame, cap, raw, n, 1);
		if (ZSTD_isError(c))
			return -EIO;
	} else {
		int k = LZ4_compress_default((const char *)raw, (char *)frame, (int)n, (int)cap);
		if (k <= 0)
			return -EIO;
		c = (size_t)k;
	}
	uint32_t h[4] = { htole32(zstd ? LOG_BLOCK_MAGIC_ZSTD : LOG_BLOCK_MAGIC), htole32((uint32_t)n),
			  htole32((uint32_t)c), htole32(binio_crc32(0, frame, c)) };
	memcpy(out->data + out->len, h, sizeof(h));
	out->len += LOG_BLOCK_HDR_SIZE + c;
	return 0;
}

static inline int fuzz_trace_log_encode(const uint8_t *raw, size_t len, struct binbuf *out)
{
	if (len < LOG_HEADER_SIZE)
		return binbuf_put(out, raw, len);
	int err = fuzz_log_put_header(out, raw);
	size_t pos = LOG_HEADER_SIZE;
	uint32_t version;
	memcpy(&version, raw + 8, 4);
	while (!err && pos < len) {
		size_t start = pos;
		while (pos < len) {
			struct log_rec_hdr h;
			if (len - pos < sizeof(h)) {
				pos = len;
				break;
			}
			memcpy(&h, raw + pos, sizeof(h));
			size_t total = sizeof(h) + (((size_t)h.len + 7u) & ~(size_t)7u);
			if (total > len - pos) {
				pos = len;
				break;
			}
			if (pos > start && pos - start + total > FUZZ_LOG_BLOCK)
				break;
			pos += total;
		}
		if (pos - start > LOG_BLOCK_MAX)
			pos = start + LOG_BLOCK_MAX;
		err = fuzz_log_put_block(out, raw + start, pos - start, le32toh(version) == LOG_VERSION_ZSTD);
	}
	return err;
}

/* The raw form of a real log (for seeds): every record the reader returns, then END. */
static inline int fuzz_trace_log_decode(const uint8_t *log, size_t len, struct binbuf *raw,
					char *err, size_t errlen)
{
	static const uint8_t zeros[8];
	struct log_reader *rd;
	struct log_record rec;
	uint64_t n = 0;
	int e = log_reader_new_mem(log, len, &rd, err, errlen);
	if (e)
		return e;
	e = binbuf_put(raw, log, LOG_HEADER_SIZE);
	while (!e && (e = log_reader_next(rd, &rec)) > 0) {
		struct log_rec_hdr h = { .type = (uint8_t)rec.type, .len = rec.len };
		e = binbuf_put(raw, &h, sizeof(h)) ?: binbuf_put(raw, rec.payload, rec.len) ?:
		    binbuf_put(raw, zeros, ((rec.len + 7u) & ~7u) - rec.len);
		n++;
	}
	if (e < 0)
		snprintf(err, errlen, "%s", log_reader_error(rd));
	log_reader_free(rd);
	if (e < 0)
		return e;
	struct log_rec_hdr h = { .type = LOG_REC_END, .len = sizeof(struct log_end) };
	struct log_end end = { .n_records = n };
	return binbuf_put(raw, &h, sizeof(h)) ?: binbuf_put(raw, &end, sizeof(end));
}

/* ---- file bundles ----
 * Entries back to back: u8 name length, the name (a relative path), le32 data length, the
 * data; a length running past the input is cut to what is left. */

static inline int fuzz_bundle_add(struct binbuf *b, const char *name, const void *data,
				  size_t len)
{
	size_t nl = strlen(name);
	if (nl > 255 || len > UINT32_MAX)
		return -ENAMETOOLONG;
	return binbuf_put_u8(b, (uint8_t)nl) ?: binbuf_put(b, name, nl) ?:
	       binbuf_put_le32(b, (uint32_t)len) ?: binbuf_put(b, data, len);
}

/* The entry at *POS: NAME (NUL-terminated), its data; *POS moves past it. 0 at the end. */
static inline int fuzz_bundle_next(const uint8_t *d, size_t len, size_t *pos, char name[256],
				   const uint8_t **data, size_t *dlen)
{
	size_t p = *pos;
	if (p >= len)
		return 0;
	size_t nl = d[p++];
	if (nl > len - p)
		nl = len - p;
	memcpy(name, d + p, nl);
	name[nl] = 0;
	p += nl;
	uint32_t l = 0;
	if (len - p >= 4) {
		memcpy(&l, d + p, 4);
		l = le32toh(l);
		p += 4;
	} else {
		p = len;
	}
	*dlen = l < len - p ? l : len - p;
	*data = d + p;
	*pos = p + *dlen;
	return 1;
}

/* A name the bundle may create: one or two components of [A-Za-z0-9._@+-], none starting
 * with '.', so nothing escapes the scratch directory. */
static inline int fuzz_bundle_name_ok(const char *name)
{
	int comps = 1;
	if (!name[0] || name[0] == '.' || strlen(name) > 200)
		return 0;
	for (const char *c = name; *c; c++) {
		if (*c == '/') {
			if (++comps > 2 || c[1] == '.' || !c[1])
				return 0;
			continue;
		}
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') && !(*c >= '0' && *c <= '9') &&
		    !strchr("._@+-", *c))
			return 0;
	}
	return 1;
}

/* Remove what DIR holds (two levels deep at most, as bundles create). */
static inline void fuzz_dir_clear(const char *dir, int depth)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	char p[4096];
	if (!dh)
		return;
	while ((de = readdir(dh))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (unlink(p) < 0 && errno == EISDIR && depth > 0) {
			fuzz_dir_clear(p, depth - 1);
			rmdir(p);
		}
	}
	closedir(dh);
}

static char fuzz_scratch_path[64];

static inline void fuzz_scratch_remove(void)
{
	fuzz_dir_clear(fuzz_scratch_path, 2);
	rmdir(fuzz_scratch_path);
}

/* A private directory on tmpfs when there is one, removed at exit; NULL when none can be
 * made. */
static inline const char *fuzz_scratch_dir(void)
{
	if (fuzz_scratch_path[0])
		return fuzz_scratch_path;
	snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "/dev/shm/spent-fuzz.XXXXXX");
	if (!mkdtemp(fuzz_scratch_path)) {
		snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "/tmp/spent-fuzz.XXXXXX");
		if (!mkdtemp(fuzz_scratch_path)) {
			fuzz_scratch_path[0] = 0;
			return NULL;
		}
	}
	atexit(fuzz_scratch_remove);
	return fuzz_scratch_path;
}

/* Write every acceptable entry of the bundle under DIR (emptied first); FIX, when not NULL,
 * may rewrite an entry's bytes (a private copy) before it is written. */
static inline void fuzz_bundle_unpack(const uint8_t *d, size_t len, const char *dir,
				      void (*fix)(const char *name, uint8_t *data, size_t n))
{
	char name[256], path[4096];
	const uint8_t *data;
	size_t dlen, pos = 0;
	fuzz_dir_clear(dir, 2);
	while (fuzz_bundle_next(d, len, &pos, name, &data, &dlen)) {
		if (!fuzz_bundle_name_ok(name))
			continue;
		char *slash = strchr(name, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			mkdir(path, 0755);
			*slash = '/';
		}
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		uint8_t *copy = malloc(dlen ? dlen : 1);
		if (!copy)
			continue;
		memcpy(copy, data, dlen);
		if (fix)
			fix(name, copy, dlen);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (write(fd, copy, dlen) < 0)
				(void)0;	/* a short scratch file is one more odd input */
			close(fd);
		}
		free(copy);
	}
}

#endif
