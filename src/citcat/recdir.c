/* citcat/recdir.c - the recording directory (layout in recording_format.h): the zstd copies of
 * mapped files in DIR/files (written by the recorder, read back and verified by the replay), and
 * recognising and removing a recording directory without touching anything not part of it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "citcat/citcat.h"
#include "core/binio.h"
#include "core/outfile.h"
#include "citcat/recdir.h"
#include "citcat/recording_format.h"

#define COPY_LEVEL 3			/* zstd's default: ~2.2x on libc in ~10 ms */
#define COPY_MAX ((uint64_t)8 << 30)	/* the largest file the replay loads */
#define HASH_DIGITS 16

void cc_copy_path(char *buf, size_t len, const char *dir, uint64_t hash)
{
	snprintf(buf, len, "%s/%s/%016" PRIx64 "%s", dir, CC_COPY_DIR, hash, CC_COPY_SUFFIX);
}

/* Compress LEN bytes of DATA as one zstd frame (its content size in the header) into F. */
static int compress_to(FILE *f, const uint8_t *data, size_t len, uint64_t *written)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t cap = ZSTD_CStreamOutSize();
	uint8_t *buf = malloc(cap);
	int err = cc && buf ? 0 : -ENOMEM;
	if (!err && (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, COPY_LEVEL)) ||
		     ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cc, len))))
		err = -EINVAL;
	ZSTD_inBuffer in = { data, len, 0 };
	for (size_t left = 1; !err && left;) {
		ZSTD_outBuffer out = { buf, cap, 0 };
		left = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(left))
			err = -EINVAL;
		else if (fwrite(buf, 1, out.pos, f) != out.pos)
			err = -errno;
		*written += out.pos;
	}
	free(buf);
	ZSTD_freeCCtx(cc);
	return err;
}

int cc_copy_create(const char *path, const uint8_t *data, size_t len, uint64_t *written)
{
	*written = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = -errno;
		close(fd);
		unlink(path);
		return e;
	}
	int err = compress_to(f, data, len, written);
	if (!err && (fflush(f) || fsync(fd)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		unlink(path);
		*written = 0;
	}
	return err;
}

int cc_copy_write(const char *dir, uint64_t hash, const uint8_t *data, size_t len,
		  uint64_t *written)
{
	char path[CC_MAX_PATH + 64];
	*written = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, CC_COPY_DIR);
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	cc_copy_path(path, sizeof(path), dir, hash);
	int err = cc_copy_create(path, data, len, written);
	return err == -EEXIST ? 0 : err;	/* equal content, stored already */
}

int cc_copy_read(const char *dir, uint64_t hash, uint64_t size, uint8_t **out, size_t *stored)
{
	char path[CC_MAX_PATH + 64];
	uint8_t *z = NULL, *data = NULL;
	size_t zlen = 0;
	*out = NULL;
	*stored = 0;
	if (size > COPY_MAX)
		return -EFBIG;
	cc_copy_path(path, sizeof(path), dir, hash);
	int err = binio_read_file(path, COPY_MAX, &z, &zlen);
	if (err)
		return err;
	/* exactly one frame that says it holds SIZE bytes and does */
	if (ZSTD_findFrameCompressedSize(z, zlen) != zlen ||
	    ZSTD_getFrameContentSize(z, zlen) != size) {
		err = -EBADMSG;
	} else if (!(data = malloc(size ? size : 1))) {
		err = -ENOMEM;
	} else {
		size_t n = ZSTD_decompress(data, size, z, zlen);
		if (ZSTD_isError(n) || n != size || binio_fnv64(BINIO_FNV64_INIT, data, n) != hash)
			err = -EBADMSG;
	}
	free(z);
	if (err) {
		free(data);
		return err;
	}
	*out = data;
	*stored = zlen;
	return 0;
}

static int is_copy_name(const char *name)
{
	size_t n = strlen(name);
	if (n != HASH_DIGITS + strlen(CC_COPY_SUFFIX) || strcmp(name + HASH_DIGITS, CC_COPY_SUFFIX))
		return 0;
	for (int i = 0; i < HASH_DIGITS; i++)
		if (!strchr("0123456789abcdef", name[i]) || !name[i])
			return 0;
	return 1;
}

static int entry_type(int dfd, const char *name, mode_t want)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == want;
}

/* Walk the directory open as DFD: 1 when every entry is a recording's own (with FILES set, the
 * entries of DIR/files: copies only), 0 when one is not, -errno. With REMOVE, also delete
 * each (the caller checked first). */
static int walk(int dfd, int files, int remove)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int own = 1;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (own > 0 && (e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (files ? is_copy_name(n) && entry_type(dfd, n, S_IFREG) :
		    !strcmp(n, CC_FILE_NAME) && entry_type(dfd, n, S_IFREG)) {
			if (remove && unlinkat(dfd, n, 0))
				own = -errno;
		} else if (!files && !strcmp(n, CC_COPY_DIR) && entry_type(dfd, n, S_IFDIR)) {
			int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			own = sub < 0 ? -errno : walk(sub, 1, remove);
			if (sub >= 0)
				close(sub);
			if (own > 0 && remove && unlinkat(dfd, n, AT_REMOVEDIR))
				own = -errno;
		} else {
			own = 0;
		}
	}
	closedir(d);
	return own;
}

static int walk_dir(const char *dir, int remove)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int own = walk(dfd, 0, remove);
	close(dfd);
	return own;
}

int cc_recdir_only_own(const char *dir)
{
	return walk_dir(dir, 0);
}

int cc_recdir_remove(const char *dir)
{
	int own = walk_dir(dir, 0);
	if (own > 0)
		own = walk_dir(dir, 1);
	if (own == 0)
		return -ENOTEMPTY;
	if (own < 0)
		return own;
	return rmdir(dir) ? -errno : 0;
}

/* An existing -o may be replaced only when it is a recording holding nothing but its own
 * files (outdir_check's IS_OWN). */
static int recording_replaceable(const char *path)
{
	if (citcat_probe(path) != 1)
		return -EBADMSG;
	int own = cc_recdir_only_own(path);
	return own < 0 ? own : own ? 0 : -ENOTEMPTY;
}

int cc_recdir_check_out(const char *out, char *err, size_t errlen)
{
	int e = outdir_check(out, recording_replaceable, NULL);
	if (e)
		snprintf(err, errlen, "%s",
			 e == -EBADMSG ? "output exists and is not a citcat recording: choose another -o" :
			 e == -ENOTEMPTY ? "output is a citcat recording but holds other files too: "
					   "move them or choose another -o" :
			 e == -EEXIST ? "output exists and is not a directory: choose another -o" :
			 outfile_strerror(e));
	return e;
}
