/* core/kallsyms_file.c - reading a saved kallsyms plain or zstd-compressed (bounded: a hostile
 * frame cannot make the reader allocate more than KALLSYMS_FILE_MAX), writing it compressed. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/outfile.h"

static const uint8_t zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

/* Kernel names repeat long prefixes. A profile's subset is kilobytes, where the strongest level
 * is cheap; a daemon's copy of all text symbols is ~5 MB, which -19 takes ~14 s to compress here
 * (0.70 MB) and -9 0.5 s (0.82 MB): the daemon writes it as it starts. */
#define KALLSYMS_ZSTD_LEVEL(len) ((len) <= (1u << 20) ? 19 : 9)

/* Decompress the frame(s) Z into K->text, streaming so that a frame whose header states no
 * size (the zstd tool writing from a pipe) reads too, and stopping at KALLSYMS_FILE_MAX: a
 * header's size is not trusted for the allocation. */
static int decompress(const uint8_t *z, size_t zlen, struct kallsyms_file *k, size_t *len)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	ZSTD_inBuffer in = { z, zlen, 0 };
	size_t cap = 0, ret = 1;
	int err = ds ? 0 : -ENOMEM;
	*len = 0;
	while (!err && ret) {
		size_t room = cap < KALLSYMS_FILE_MAX ? cap : KALLSYMS_FILE_MAX;
		if (*len == room && room == KALLSYMS_FILE_MAX)
			err = -EFBIG;
		else if (*len == room && ALLOC_GROW(k->text, cap + (cap ? cap : 1u << 16), cap))
			err = -ENOMEM;
		else {
			ZSTD_outBuffer out = { k->text, cap < KALLSYMS_FILE_MAX ? cap : KALLSYMS_FILE_MAX, *len };
			ret = ZSTD_decompressStream(ds, &out, &in);
			*len = out.pos;
			if (ZSTD_isError(ret) || (ret && in.pos == zlen && out.pos < out.size))
				err = -EINVAL;	/* not zstd, or a truncated frame */
		}
	}
	if (!err && in.pos != zlen)
		err = -EINVAL;	/* bytes after the frame */
	ZSTD_freeDStream(ds);
	return err;
}

/* The compressed file open as FD (closed here) into K. */
static int open_compressed(int fd, struct kallsyms_file *k)
{
	uint8_t *z = NULL;
	size_t zlen = 0, len = 0;
	/* a frame of KALLSYMS_FILE_MAX bytes of text is far smaller than that */
	int err = binio_read_fd(fd, KALLSYMS_FILE_MAX, &z, &zlen);
	close(fd);
	if (err)
		return err;
	unsigned long long size = ZSTD_getFrameContentSize(z, zlen);
	if (size == ZSTD_CONTENTSIZE_ERROR)
		err = -EINVAL;
	else if (size != ZSTD_CONTENTSIZE_UNKNOWN && size > KALLSYMS_FILE_MAX)
		err = -EFBIG;	/* said at once, nothing decompressed */
	else if (!(err = decompress(z, zlen, k, &len)) && !len)
		err = -ENODATA;	/* as a plain empty file, no symbols; fmemopen needs a byte */
	else if (!err && !(k->f = fmemopen(k->text, len, "r")))
		err = -errno;
	free(z);
	if (err) {
		free(k->text);
		k->text = NULL;
	}
	return err;
}

int kallsyms_file_open(const char *path, struct kallsyms_file *k)
{
	uint8_t head[4];
	k->f = NULL;
	k->text = NULL;
	/* one open for both forms: the file checked is the file read */
	int fd = binio_open_regular(path);
	if (fd < 0)
		return fd;
	ssize_t n;
	while ((n = pread(fd, head, sizeof(head), 0)) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(head) && !memcmp(head, zstd_magic, sizeof(head)))
		return open_compressed(fd, k);
	if (!(k->f = fdopen(fd, "re"))) {
		int err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

void kallsyms_file_close(struct kallsyms_file *k)
{
	if (k->f)
		fclose(k->f);
	free(k->text);
	k->f = NULL;
	k->text = NULL;
}

int kallsyms_file_write_zst(const char *path, const void *text, size_t len, mode_t mode)
{
	size_t cap = ZSTD_compressBound(len);
	void *z = malloc(cap);
	if (!z)
		return -ENOMEM;
	size_t n = ZSTD_compress(z, cap, text, len, KALLSYMS_ZSTD_LEVEL(len));
	int err = ZSTD_isError(n) ? -EIO : outfile_write(path, z, n, mode);
	free(z);
	return err;
}
