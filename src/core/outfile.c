/* core/outfile.c - the output policy of core/outfile.h: checks before the run, temporaries
 * created beside the output with O_EXCL|O_NOFOLLOW, checked fsync/close, rename (or an atomic
 * exchange for directories), and the removal of temporaries whose writer died. */
#include "core/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEMP_TAG ".tmp."
#define TEMP_RANDOM 6

struct outfile {
	int fd;
	int dfd;		/* the output's directory (temp mode), -1 in place */
	FILE *stream;
	int write_err;		/* the stream's first failed write: -errno (stdio keeps no errno) */
	char *path;
	char *tmp_path;		/* after outfile_prepare: the temporary's path (dfd closed) */
	int prepared;		/* outfile_prepare: 1 done, -1 failed, 0 not called */
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];	/* the temporary's name in dfd; "" in place */
};

int outfile_split_path(const char *path, char *dir, size_t dlen, char *base)
{
	size_t l = strlen(path);
	while (l > 1 && path[l - 1] == '/')
		l--;
	if (!l)
		return -ENOENT;
	size_t b = l;
	while (b > 0 && path[b - 1] != '/')
		b--;
	if (l - b > NAME_MAX)
		return -ENAMETOOLONG;
	if (l - b == 0 || (l - b == 1 && path[b] == '.') || (l - b == 2 && !strncmp(path + b, "..", 2)))
		return -EISDIR;
	memcpy(base, path + b, l - b);
	base[l - b] = 0;
	size_t d = b;
	while (d > 1 && path[d - 1] == '/')
		d--;
	int n = d == 0 ? snprintf(dir, dlen, ".") : snprintf(dir, dlen, "%.*s", (int)d, path);
	return n < 0 || (size_t)n >= dlen ? -ENAMETOOLONG : 0;
}

/* The directory a temporary goes to must exist and take new entries. */
static int dir_writable(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0 ? -errno : 0;
}

static void random_suffix(char *out)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t r[TEMP_RANDOM];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		for (size_t i = 0; i < sizeof(r); i++, x >>= 8)
			r[i] = (uint8_t)x;
	}
	for (size_t i = 0; i < TEMP_RANDOM; i++)
		out[i] = chars[r[i] % (sizeof(chars) - 1)];
	out[TEMP_RANDOM] = 0;
}

/* BASE.tmp.PID.XXXXXX: the pid lets a later run tell a dead writer's leftovers. */
static int temp_name(const char *base, char *out)
{
	char rnd[TEMP_RANDOM + 1];
	random_suffix(rnd);
	int n = snprintf(out, NAME_MAX + 1, "%s" TEMP_TAG "%d.%s", base, (int)getpid(), rnd);
	return n < 0 || n > NAME_MAX ? -ENAMETOOLONG : 0;
}

/* NAME is BASE.tmp.PID.XXXXXX: *BASELEN and *PID from it. */
static bool parse_temp_name(const char *name, size_t *baselen, pid_t *pid)
{
	size_t l = strlen(name), tl = strlen(TEMP_TAG);
	if (l < TEMP_RANDOM + 3 + tl)
		return false;
	for (size_t i = l - TEMP_RANDOM; i < l; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z')))
			return false;
	size_t e = l - TEMP_RANDOM - 1, d = e;
	if (name[e] != '.')
		return false;
	long v = 0;
	while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9' && e - d < 9)
		d--;
	if (d == e || d < tl + 1 || strncmp(name + d - tl, TEMP_TAG, tl))
		return false;
	for (size_t i = d; i < e; i++)
		v = v * 10 + (name[i] - '0');
	if (v <= 0)
		return false;
	*baselen = d - tl;
	*pid = (pid_t)v;
	return true;
}

static bool pid_alive(pid_t pid)
{
	return pid == getpid() || kill(pid, 0) == 0 || errno == EPERM;
}

int outdir_remove_flat(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	while (dh && (de = readdir(dh)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(dh), de->d_name, 0);
	if (dh)
		closedir(dh);
	return rmdir(dir) < 0 ? -errno : 0;
}

int outfile_clean_stale(const char *dir, const char *base, outdir_kind_fn remove)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	DIR *dh = fdopendir(dfd);
	if (!dh) {
		int err = -errno;
		close(dfd);
		return err;
	}
	struct dirent *de;
	int removed = 0;
	while ((de = readdir(dh))) {
		size_t bl;
		pid_t pid;
		struct stat st;
		if (!parse_temp_name(de->d_name, &bl, &pid) ||
		    (base && (strlen(base) != bl || strncmp(de->d_name, base, bl))) || pid_alive(pid) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != geteuid())
			continue;
		if (S_ISREG(st.st_mode)) {
			removed += unlinkat(dfd, de->d_name, 0) == 0;
		} else if (S_ISDIR(st.st_mode) && remove) {
			char p[PATH_MAX];
			if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) < (int)sizeof(p))
				removed += remove(p) == 0;
		}
	}
	closedir(dh);
	return removed;
}

/* What is at PATH, without following a symlink: 0 with *ST, or -errno (-ENOENT: nothing). */
static int lstat_path(const char *path, struct stat *st)
{
	return lstat(path, st) < 0 ? -errno : 0;
}

/* The file-output rules on what is at PATH now. *IN_PLACE: a device or FIFO. */
static int file_rules(const char *path, const char *dir, bool *in_place)
{
	struct stat st;
	int err = lstat_path(path, &st);
	*in_place = false;
	if (err == -ENOENT || (!err && S_ISREG(st.st_mode)))
		return dir_writable(dir);
	if (err)
		return err;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		*in_place = true;
		return 0;
	}
	return -EINVAL;
}

int outfile_check(const char *path)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	bool in_place;
	int err = outfile_split_path(path, dir, sizeof(dir), base);
	err = err ? err : file_rules(path, dir, &in_place);
	if (!err && !in_place)
		outfile_clean_stale(dir, base, NULL);
	return err;
}

const char *outfile_strerror(int err)
{
	switch (-err) {
	case ELOOP: return "it is a symlink: spent never writes through one (remove it or give its target)";
	case EISDIR: return "it is a directory";
	case EINVAL: return "it is neither a regular file nor a character device or FIFO";
	case EEXIST: return "it exists and is not a directory";
	case ENOENT: return "its directory does not exist";
	case EOPNOTSUPP: return "its directory takes no new files (a /proc or /sys directory?)";
	case ENOTDIR: return "a component of its directory is not a directory";
	case EACCES: return "its directory is not writable";
	case EROFS: return "its directory is on a read-only file system";
	case ENOSPC: return "no space left on the device";
	default: return strerror(err < 0 ? -err : err);
	}
}

static void outfile_free(struct outfile *f)
{
	if (f->dfd >= 0)
		close(f->dfd);
	free(f->tmp_path);
	free(f->path);
	free(f);
}

int outfile_open(const char *path, mode_t mode, struct outfile **out)
{
	char dir[PATH_MAX];
	bool in_place;
	struct outfile *f = calloc(1, sizeof(*f));
	int err = f ? 0 : -ENOMEM;
	*out = NULL;
	if (err)
		return err;
	f->fd = f->dfd = -1;
	if (!(f->path = strdup(path)))
		err = -ENOMEM;
	err = err ? err : outfile_split_path(path, dir, sizeof(dir), f->base);
	err = err ? err : file_rules(path, dir, &in_place);
	if (!err && in_place) {
		f->fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		struct stat st;
		if (f->fd < 0)
			err = -errno;
		else if (fstat(f->fd, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
			err = -EINVAL;	/* replaced under us: never write into a regular file in place */
	} else if (!err) {
		f->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = f->dfd < 0 ? -errno : 0;
		for (int tries = 0; !err && f->fd < 0 && tries < 100; tries++) {
			if ((err = temp_name(f->base, f->tmp)))
				break;
			f->fd = openat(f->dfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
			err = f->fd < 0 && errno != EEXIST ? -errno : 0;
			/* the directory is open, so it exists: /proc and /sys say ENOENT to a new name */
			if (err == -ENOENT)
				err = -EOPNOTSUPP;
		}
		if (!err && f->fd < 0)
			err = -EEXIST;
		/* exactly MODE, whatever the umask */
		if (!err && fchmod(f->fd, mode) < 0)
			err = -errno;
	}
	if (err) {
		if (f->fd >= 0 && f->tmp[0])
			unlinkat(f->dfd, f->tmp, 0);
		if (f->fd >= 0)
			close(f->fd);
		outfile_free(f);
		return err;
	}
	*out = f;
	return 0;
}

int outfile_fd(const struct outfile *f)
{
	return f->fd;
}

/* The stream's writes go through here so the first error keeps its cause: stdio only sets a
 * flag, and by the close errno says nothing (a full disk came out as "Input/output error"). */
static ssize_t outfile_cookie_write(void *cookie, const char *buf, size_t len)
{
	struct outfile *f = cookie;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(f->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!f->write_err)
				f->write_err = n < 0 ? -errno : -EIO;
			/* what was written, 0 on error: glibc takes a negative count for a length
			 * (and read one byte past the caller's buffer) */
			return (ssize_t)done;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int outfile_cookie_close(void *cookie)
{
	struct outfile *f = cookie;
	int r = close(f->fd);
	f->fd = -1;
	return r;
}

FILE *outfile_stream(struct outfile *f)
{
	if (!f->stream)
		f->stream = fopencookie(f, "w", (cookie_io_functions_t){
			.write = outfile_cookie_write, .close = outfile_cookie_close });
	return f->stream;
}

/* Close F's descriptor (through its stream when it has one); 0 or the first error. */
static int close_checked(struct outfile *f)
{
	int err = 0;
	if (f->stream) {
		if (fflush(f->stream) != 0 || ferror(f->stream))
			err = f->write_err ? f->write_err : errno ? -errno : -EIO;
	}
	if (!err && f->tmp[0] && fsync(f->fd) < 0)
		err = -errno;
	int r = f->stream ? fclose(f->stream) : close(f->fd);
	if (!err && r != 0)
		err = -errno;
	f->stream = NULL;
	f->fd = -1;
	return err;
}

int outfile_prepare(struct outfile *f)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	errno = 0;
	int err = close_checked(f);
	/* a merge prepares thousands of files: each must not keep its directory open */
	if (!err && f->tmp[0]) {
		err = outfile_split_path(f->path, dir, sizeof(dir), base);
		size_t n = strlen(dir) + strlen(f->tmp) + 2;
		if (!err && !(f->tmp_path = malloc(n)))
			err = -ENOMEM;
		if (!err)
			snprintf(f->tmp_path, n, "%s/%s", dir, f->tmp);
	}
	if (err && f->tmp[0]) {
		unlinkat(f->dfd, f->tmp, 0);
		f->tmp[0] = '\0';
	}
	if (!err && f->tmp[0]) {
		close(f->dfd);
		f->dfd = -1;
	}
	f->prepared = err ? -1 : 1;
	return err;
}

/* Rename a prepared temporary over its path; 0 or -errno (the temporary is removed). */
static int commit_prepared(struct outfile *f)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	int err = 0;
	if (rename(f->tmp_path, f->path) < 0) {
		err = -errno;
		unlink(f->tmp_path);
	} else if (!outfile_split_path(f->path, dir, sizeof(dir), base)) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	outfile_free(f);
	return err;
}

int outfile_commit(struct outfile *f)
{
	int err = 0;
	errno = 0;
	if (f->tmp_path)
		return commit_prepared(f);
	if (f->prepared < 0)
		err = -EIO;	/* its prepare failed (and said why) */
	else if (!f->prepared)
		err = close_checked(f);
	if (!err && f->tmp[0]) {
		if (renameat(f->dfd, f->tmp, f->dfd, f->base) < 0)
			err = -errno;
		else
			fsync(f->dfd);	/* the rename is durable once the directory is */
	}
	if (err && f->tmp[0])
		unlinkat(f->dfd, f->tmp, 0);
	outfile_free(f);
	return err;
}

void outfile_abort(struct outfile *f)
{
	if (!f)
		return;
	if (f->stream)
		fclose(f->stream);
	else if (f->fd >= 0)
		close(f->fd);
	if (f->tmp_path)
		unlink(f->tmp_path);
	else if (f->tmp[0])
		unlinkat(f->dfd, f->tmp, 0);
	outfile_free(f);
}

int outfile_write_prepared(const char *path, const void *data, size_t len, mode_t mode,
			   struct outfile **out)
{
	struct outfile *f;
	int err = outfile_open(path, mode, &f);
	const uint8_t *p = data;
	while (!err && len) {
		ssize_t w = write(f->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	err = err ? err : outfile_prepare(f);
	if (err) {
		if (f)
			outfile_abort(f);
		return err;
	}
	*out = f;
	return 0;
}

int outfile_write(const char *path, const void *data, size_t len, mode_t mode)
{
	struct outfile *f;
	int err = outfile_write_prepared(path, data, len, mode, &f);
	return err ? err : outfile_commit(f);
}

int outdir_check(const char *path, outdir_kind_fn is_own, outdir_kind_fn remove)
{
	char dir[PATH_MAX], base[NAME_MAX + 1];
	struct stat st;
	int err = outfile_split_path(path, dir, sizeof(dir), base);
	if (err)
		return err;
	err = lstat_path(path, &st);
	if (err == -ENOENT)
		err = 0;
	else if (!err && S_ISLNK(st.st_mode))
		err = -ELOOP;
	else if (!err && !S_ISDIR(st.st_mode))
		err = -EEXIST;
	else if (!err)
		err = is_own(path);
	err = err ? err : dir_writable(dir);
	if (!err)
		outfile_clean_stale(dir, base, remove);
	return err;
}

int outdir_make_temp(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
	char dir[PATH_MAX], base[NAME_MAX + 1], name[NAME_MAX + 1];
	int err = outfile_split_path(path, dir, sizeof(dir), base);
	for (int tries = 0; !err && tries < 100; tries++) {
		if ((err = temp_name(base, name)))
			break;
		int n = snprintf(tmp, tmplen, "%s/%s", dir, name);
		if (n < 0 || (size_t)n >= tmplen)
			return -ENAMETOOLONG;
		if (mkdir(tmp, mode) == 0)
			return chmod(tmp, mode) < 0 ? -errno : 0;
		if (errno == ENOENT && dir_writable(dir) == 0)
			return -EOPNOTSUPP;	/* as in outfile_open: /proc, /sys */
		if (errno != EEXIST)
			return -errno;
	}
	return err ? err : -EEXIST;
}

int outdir_commit(const char *tmp, const char *path, outdir_kind_fn is_own, bool *replaced)
{
	struct stat st;
	int err = lstat_path(path, &st);
	*replaced = false;
	if (err == -ENOENT)
		return rename(tmp, path) < 0 ? -errno : 0;
	if (err)
		return err;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -EEXIST;
	if ((err = is_own(path)))
		return err;
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
		*replaced = true;
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* no atomic exchange on this file system: move the old one aside first */
	char aside[PATH_MAX];
	if ((err = outdir_make_temp(path, OUTDIR_MODE, aside, sizeof(aside))))
		return err;
	if (rename(path, aside) < 0) {
		err = -errno;
		rmdir(aside);
		return err;
	}
	if (rename(tmp, path) < 0) {
		err = -errno;
		rename(aside, path);
		return err;
	}
	/* when this fails the old one stays at ASIDE: a stale temporary the next run removes */
	*replaced = rename(aside, tmp) == 0;
	return 0;
}
