/* core/binio.c - varints, bounded readers, opening and reading regular files only (never
 * blocking on a FIFO a profile or log names), atomic file replacement. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/outfile.h"

void binbuf_init(struct binbuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void binbuf_release(struct binbuf *b)
{
	free(b->data);
	binbuf_init(b);
}

int binbuf_reserve(struct binbuf *b, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return -ENOMEM;
	return ALLOC_GROW(b->data, b->len + n, b->cap);
}

int binbuf_put(struct binbuf *b, const void *p, size_t n)
{
	int err = binbuf_reserve(b, n);
	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int binbuf_put_u8(struct binbuf *b, uint8_t v)
{
	return binbuf_put(b, &v, 1);
}

int binbuf_put_le32(struct binbuf *b, uint32_t v)
{
	uint8_t x[4] = { v, v >> 8, v >> 16, v >> 24 };
	return binbuf_put(b, x, 4);
}

int binbuf_put_le64(struct binbuf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return binbuf_put(b, x, 8);
}

size_t uvarint_encode(uint64_t v, uint8_t *out)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

int binbuf_put_uvarint(struct binbuf *b, uint64_t v)
{
	uint8_t x[10];
	return binbuf_put(b, x, uvarint_encode(v, x));
}

int binbuf_put_svarint(struct binbuf *b, int64_t v)
{
	/* zigzag so small negative deltas stay small */
	return binbuf_put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

int binbuf_put_str(struct binbuf *b, const char *s)
{
	size_t n = strlen(s);
	int err = binbuf_put_uvarint(b, n);
	return err ? err : binbuf_put(b, s, n);
}

void binreader_init(struct binreader *r, const void *data, size_t len)
{
	r->p = data;
	r->end = r->p + len;
}

size_t binreader_left(const struct binreader *r)
{
	return (size_t)(r->end - r->p);
}

int binreader_get(struct binreader *r, void *out, size_t n)
{
	if (binreader_left(r) < n)
		return -EBADMSG;
	if (n)
		memcpy(out, r->p, n);
	r->p += n;
	return 0;
}

int binreader_skip(struct binreader *r, size_t n)
{
	if (binreader_left(r) < n)
		return -EBADMSG;
	r->p += n;
	return 0;
}

int binreader_get_u8(struct binreader *r, uint8_t *v)
{
	return binreader_get(r, v, 1);
}

int binreader_get_le32(struct binreader *r, uint32_t *v)
{
	uint8_t x[4];
	int err = binreader_get(r, x, 4);
	if (!err)
		*v = x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
	return err;
}

int binreader_get_le64(struct binreader *r, uint64_t *v)
{
	uint8_t x[8];
	int err = binreader_get(r, x, 8);
	if (!err) {
		*v = 0;
		for (int i = 7; i >= 0; i--)
			*v = (*v << 8) | x[i];
	}
	return err;
}

int binreader_get_uvarint(struct binreader *r, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -EBADMSG;
		uint8_t c = *r->p++;
		if (shift == 63 && c > 1)
			return -EBADMSG; /* overflows 64 bits */
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

int binreader_get_svarint(struct binreader *r, int64_t *v)
{
	uint64_t u;
	int err = binreader_get_uvarint(r, &u);
	if (!err)
		*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return err;
}

int binreader_get_str(struct binreader *r, size_t maxlen, char **out)
{
	uint64_t n;
	int err = binreader_get_uvarint(r, &n);
	if (err)
		return err;
	if (n > maxlen || n > binreader_left(r))
		return -EBADMSG;
	if (memchr(r->p, 0, n))
		return -EBADMSG;
	char *s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, r->p, n);
	s[n] = 0;
	r->p += n;
	*out = s;
	return 0;
}

int binio_open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err, fl;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

FILE *binio_fopen_regular(const char *path)
{
	int fd = binio_open_regular(path);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "re");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int binio_read_fd(int fd, size_t maxlen, uint8_t **out, size_t *len)
{
	int err = 0;
	uint8_t *buf = NULL;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > maxlen)
		return -EFBIG;
	size_t size = (size_t)st.st_size;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			free(buf);
			return err;
		}
		if (n == 0)
			break; /* shrank under us: return what is there */
		got += (size_t)n;
	}
	*out = buf;
	*len = got;
	return 0;
}

int binio_read_file(const char *path, size_t maxlen, uint8_t **out, size_t *len)
{
	int fd = binio_open_regular(path);
	if (fd < 0)
		return fd;
	int err = binio_read_fd(fd, maxlen, out, len);
	close(fd);
	return err;
}

int binio_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return outfile_write(path, data, len, mode);
}

/* zlib's crc32_z: the spent binary links Unicorn statically, whose own (different) crc32
 * would take the plain name's references (Makefile) */
uint32_t binio_crc32(uint32_t crc, const void *data, size_t len)
{
	return (uint32_t)crc32_z(crc, data, len);
}

uint64_t binio_fnv64(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
