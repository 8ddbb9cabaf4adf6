/* trace/log_reader.c - validating reader of `spent trace` logs: header, blocks (length, CRC,
 * zstd) and records; a truncated or corrupt log yields every complete block first, then one
 * error naming the byte offset. Also the ELF build-id helper used to detect changed images. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "core/binio.h"
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
	ZSTD_DCtx *dctx;
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
	r->dctx = ZSTD_createDCtx();
	r->raw = malloc(LOG_BLOCK_MAX);
	if (!r->dctx || !r->raw) {
		log_reader_free(r);
		return -ENOMEM;
	}
	if (len < LOG_HEADER_SIZE || memcmp(data, LOG_MAGIC, 8) != 0) {
		if (err)
			snprintf(err, errlen, "not a spent trace log (bad magic or shorter than its header)");
		log_reader_free(r);
		return -EINVAL;
	}
	memcpy(&version, data + 8, 4);
	if (version != LOG_VERSION) {
		if (err)
			snprintf(err, errlen, "unsupported trace log version %u (this spent reads version %u)",
				 version, LOG_VERSION);
		log_reader_free(r);
		return -EPROTONOSUPPORT;
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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int e;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		e = -errno;
		if (err)
			snprintf(err, errlen, "cannot open trace log '%s': %s", path, strerror(errno));
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
		return fail(r, -EBADMSG, "log truncated at byte %zu: incomplete block header", r->pos);
	memcpy(h, r->data + r->pos, sizeof(h));
	if (h[0] != LOG_BLOCK_MAGIC)
		return fail(r, -EBADMSG, "corrupt log: no block magic at byte %zu", r->pos);
	if (h[1] == 0 || h[1] > LOG_BLOCK_MAX || h[2] == 0 || h[2] > LOG_BLOCK_MAX + 4096)
		return fail(r, -EBADMSG, "corrupt log: impossible block lengths at byte %zu", r->pos);
	if (r->len - r->pos - LOG_BLOCK_HDR_SIZE < h[2])
		return fail(r, -EBADMSG, "log truncated at byte %zu: block of %u bytes at byte %zu is "
			    "incomplete", r->len, h[2], r->pos);
	const uint8_t *frame = r->data + r->pos + LOG_BLOCK_HDR_SIZE;
	if (binio_crc32(0, frame, h[2]) != h[3])
		return fail(r, -EBADMSG, "corrupt log: checksum mismatch in block at byte %zu", r->pos);
	size_t n = ZSTD_decompressDCtx(r->dctx, r->raw, LOG_BLOCK_MAX, frame, h[2]);
	if (ZSTD_isError(n) || n != h[1])
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
	if (h.type < LOG_REC_CODE || h.type > LOG_REC_END || padded > r->raw_len - r->raw_pos - sizeof(h))
		return fail(r, -EBADMSG, "corrupt log: bad record (type %u, %u bytes) at byte %zu of block "
			    "at byte %llu", h.type, h.len, r->raw_pos, (unsigned long long)r->block_off);
	rec->type = h.type;
	rec->len = h.len;
	rec->payload = r->raw + r->raw_pos + sizeof(h);
	rec->block_offset = r->block_off;
	r->raw_pos += sizeof(h) + padded;
	if (h.type == LOG_REC_END) {
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

uint64_t log_reader_max_insns(const struct log_reader *r)
{
	return r->max_insns;
}

uint64_t log_reader_size(const struct log_reader *r)
{
	return r->len;
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

static int note_build_id(Elf *e, uint8_t id[20], uint32_t *len)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0) {
				*len = nh.n_descsz > 20 ? 20 : nh.n_descsz;
				memcpy(id, (char *)d->d_buf + doff, *len);
				return 0;
			}
		}
	}
	return -ENOENT;
}

int log_image_build_id(const char *path, uint8_t id[20], uint32_t *len)
{
	int err = -ENOENT;
	/* O_NONBLOCK: a log may name a FIFO, whose open would wait for a writer forever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	Elf *e = NULL;

	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		err = note_build_id(e, id, len);
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

int trace_log_probe(const char *path)
{
	char m[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, m, sizeof(m));
	close(fd);
	return n == 8 && memcmp(m, LOG_MAGIC, 8) == 0;
}
