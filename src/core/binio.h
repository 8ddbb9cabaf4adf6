/* core/binio.h - binary file helpers shared by every on-disk format: LEB128 varints,
 * bounded readers, whole-file reads, atomic file replacement, checksums. */
#ifndef SPENT_CORE_BINIO_H
#define SPENT_CORE_BINIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Append-only growable byte buffer. */
struct binbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

void binbuf_init(struct binbuf *b);
void binbuf_release(struct binbuf *b);
/* Ensure room for N more bytes; 0 or -ENOMEM. */
int binbuf_reserve(struct binbuf *b, size_t n);
int binbuf_put(struct binbuf *b, const void *p, size_t n);
int binbuf_put_u8(struct binbuf *b, uint8_t v);
int binbuf_put_le32(struct binbuf *b, uint32_t v);
int binbuf_put_le64(struct binbuf *b, uint64_t v);
int binbuf_put_uvarint(struct binbuf *b, uint64_t v);
int binbuf_put_svarint(struct binbuf *b, int64_t v);
/* Length-prefixed (uvarint) string. */
int binbuf_put_str(struct binbuf *b, const char *s);

/* Encode V as an unsigned LEB128 varint into OUT (at least 10 bytes); returns bytes used. */
size_t uvarint_encode(uint64_t v, uint8_t *out);

/*
 * Bounded reader over untrusted bytes: every get checks the remaining length and returns
 * -EBADMSG on truncation or overlong encodings, so parsers never read past the end.
 */
struct binreader {
	const uint8_t *p;
	const uint8_t *end;
};

void binreader_init(struct binreader *r, const void *data, size_t len);
size_t binreader_left(const struct binreader *r);
int binreader_get(struct binreader *r, void *out, size_t n);
int binreader_skip(struct binreader *r, size_t n);
int binreader_get_u8(struct binreader *r, uint8_t *v);
int binreader_get_le32(struct binreader *r, uint32_t *v);
int binreader_get_le64(struct binreader *r, uint64_t *v);
int binreader_get_uvarint(struct binreader *r, uint64_t *v);
int binreader_get_svarint(struct binreader *r, int64_t *v);
/* Length-prefixed string copied into a new NUL-terminated buffer (caller frees); rejects
 * lengths above MAXLEN and embedded NULs. */
int binreader_get_str(struct binreader *r, size_t maxlen, char **out);

/*
 * Open PATH for reading only when it is a regular file: opened with O_NONBLOCK first and
 * checked with fstat, so a FIFO, a device or a socket named by a profile, a trace log or a
 * database never blocks the reader (-EINVAL; a directory is -EISDIR). Returns the fd
 * (blocking again, close-on-exec) or -errno.
 */
int binio_open_regular(const char *path);
/* The same as a stdio stream ("re"); NULL with errno set. */
FILE *binio_fopen_regular(const char *path);

/* Read a whole regular file (at most MAXLEN bytes) into a new buffer the caller frees. */
int binio_read_file(const char *path, size_t maxlen, uint8_t **out, size_t *len);
/* The same from the open regular file FD, from its start (pread: FD's offset is kept). */
int binio_read_fd(int fd, size_t maxlen, uint8_t **out, size_t *len);

/*
 * Write LEN bytes to PATH atomically: outfile_write (core/outfile.h), the one output policy:
 * a temporary file in the same directory, fsync, rename, fsync of the directory; a symlink at
 * PATH is refused. On any error the temporary is removed and PATH is untouched. MODE is the
 * new file's permission bits.
 */
int binio_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* CRC-32 (zlib polynomial) of LEN bytes, continuing from CRC (start with 0). */
uint32_t binio_crc32(uint32_t crc, const void *data, size_t len);
/* 64-bit FNV-1a, continuing from H (start with BINIO_FNV64_INIT). */
#define BINIO_FNV64_INIT 0xcbf29ce484222325ULL
uint64_t binio_fnv64(uint64_t h, const void *data, size_t len);

#endif
