/* core/kallsyms_file.c - reading a saved kallsyms plain or zstd-compressed (bounded: a hostile
 * frame cannot make the reader allocate more than KALLSYMS_FILE_MAX), writing it compressed. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/outfile.h"
#include "core/strmap.h"

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
	if (n == 0) {	/* an empty file is no copy (it read as a kernel without symbols) */
		close(fd);
		return -ENODATA;
	}
	if (!(k->f = fdopen(fd, "re"))) {
		int err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

int kallsyms_file_text_size(const char *path, uint64_t *size)
{
	uint8_t head[18];	/* ZSTD_FRAMEHEADERSIZE_MAX, in zstd's static API only */
	struct stat st;
	int fd = binio_open_regular(path), err = 0;
	if (fd < 0)
		return fd;
	ssize_t n;
	while ((n = pread(fd, head, sizeof(head), 0)) < 0 && errno == EINTR)
		;
	if (n < 0 || fstat(fd, &st) < 0) {
		err = -errno;
	} else if (n >= 4 && !memcmp(head, zstd_magic, 4)) {
		unsigned long long c = ZSTD_getFrameContentSize(head, (size_t)n);
		if (c == ZSTD_CONTENTSIZE_ERROR || c == ZSTD_CONTENTSIZE_UNKNOWN)
			err = -ENODATA;
		else
			*size = c;
	} else {
		*size = (uint64_t)st.st_size;
	}
	close(fd);
	return err;
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

/* The text of PATH, NUL-terminated, into *OUT (malloc'd). */
static int read_text(const char *path, char **out, size_t *len)
{
	struct kallsyms_file k;
	int err = kallsyms_file_open(path, &k);
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (err)
		return err;
	for (int c; !err && (c = getc(k.f)) != EOF;) {
		if (n >= KALLSYMS_FILE_MAX)
			err = -EFBIG;
		else if (!(err = ALLOC_GROW(buf, n + 2, cap)))
			buf[n++] = (char)c;
	}
	kallsyms_file_close(&k);
	if (!err && !(err = ALLOC_GROW(buf, n + 1, cap)))
		buf[n] = 0;
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Each line of TEXT to FN (the line without its newline, in place). */
static int each_line(char *text, int (*fn)(void *, char *), void *ctx)
{
	for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		int err = *l ? fn(ctx, l) : 0;
		if (nl)
			*nl = '\n';
		if (err)
			return err;
	}
	return 0;
}

struct union_ctx {
	struct strmap lines, names;	/* whole lines; "NAME\tMODULE" -> its address below */
	uint64_t *addrs;
	size_t cap;
	bool second;		/* reading SRC: count its names DST has at the same address or not */
	size_t agree, differ;
	char *out;
	size_t len, outcap;
};

/* "ADDR TYPE NAME[\t[module]]": NAME (and module) and ADDR; 0, or -EINVAL for another line */
static int split_line(const char *l, uint64_t *addr, const char **name)
{
	char *end;
	*addr = strtoull(l, &end, 16);
	if (end == l || *end != ' ' || !end[1] || end[2] != ' ')
		return -EINVAL;
	*name = end + 3;
	return 0;
}

static int union_line(void *arg, char *l)
{
	struct union_ctx *u = arg;
	uint64_t addr;
	const char *name;
	size_t i, len = strlen(l);
	if (split_line(l, &addr, &name))
		return 0;	/* not a symbol line: not carried */
	int isnew;
	if (!u->second) {
		if ((isnew = strmap_intern(&u->names, name, &i)) < 0)
			return isnew;
		if (isnew && ALLOC_GROW(u->addrs, i + 1, u->cap))
			return -ENOMEM;
		if (isnew)
			u->addrs[i] = addr;
	} else {
		long k = strmap_find(&u->names, name);
		if (k >= 0 && u->addrs[k] == addr)
			u->agree++;
		else if (k >= 0)
			u->differ++;
	}
	if ((isnew = strmap_intern(&u->lines, l, &i)) <= 0)
		return isnew;	/* a line DST has */
	if (ALLOC_GROW(u->out, u->len + len + 2, u->outcap))
		return -ENOMEM;
	memcpy(u->out + u->len, l, len);
	u->len += len;
	u->out[u->len++] = '\n';
	return 0;
}

/* DST's text A with the lines of text B it lacks, written back to DST (B is changed in place
 * while read, then restored). */
static int union_texts(const char *dst, char *a, char *b, mode_t mode)
{
	struct union_ctx u = { .lines = STRMAP_INIT, .names = STRMAP_INIT };
	int err = each_line(a, union_line, &u);
	size_t had = u.len;
	u.second = true;
	err = err ? err : each_line(b, union_line, &u);
	/* static functions of two files may share a name, so one name at two addresses proves
	 * nothing; most of the common names moved proves another boot (KASLR) */
	if (!err && u.differ > u.agree)
		err = -EXDEV;
	if (!err && u.len != had)	/* nothing new: DST stays as it is */
		err = kallsyms_file_write_zst(dst, u.out, u.len, mode);
	strmap_release(&u.lines);
	strmap_release(&u.names);
	free(u.addrs);
	free(u.out);
	return err;
}

int kallsyms_file_union(const char *dst, const char *src, mode_t mode)
{
	char *a = NULL, *b = NULL;
	size_t la, lb;
	int err = read_text(dst, &a, &la);
	err = err ? err : read_text(src, &b, &lb);
	err = err ? err : union_texts(dst, a, b, mode);
	free(a);
	free(b);
	return err;
}

int kallsyms_file_union_text(const char *dst, const char *text, size_t len, mode_t mode)
{
	char *a = NULL, *b = malloc(len + 1);
	size_t la;
	int err = b ? read_text(dst, &a, &la) : -ENOMEM;
	if (!err) {
		memcpy(b, text, len);
		b[len] = 0;
		err = union_texts(dst, a, b, mode);
	}
	free(a);
	free(b);
	return err;
}
