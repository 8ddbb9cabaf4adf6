/* citcat/filecache.c - the recorder's cache of mapped files across recordings (layout and
 * rules in filecache.h): looking a file identity up, storing a new copy and identity entry,
 * putting a cached copy into a recording, and pruning the cache to its size. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "citcat/filecache.h"
#include "citcat/recdir.h"
#include "citcat/recording_format.h"
#include "core/alloc.h"
#include "core/buildid_cache.h"

#define IDENT_DIR "ident"

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

int cc_cache_open(char *buf, size_t len)
{
	char sub[CC_MAX_PATH + 16];
	int n = user_cache_dir("SPENT_CITCAT_CACHE", "citcat", buf, len);
	if (n)
		return n;
	if (strlen(buf) + 8 > CC_MAX_PATH)
		return -ENAMETOOLONG;
	/* each 0700: the copies hold the bytes of what users ran */
	if ((n = user_cache_make_dirs(buf)))
		return n;
	static const char *const subs[] = { CC_COPY_DIR, IDENT_DIR };
	for (size_t i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", buf, subs[i]);
		if (mkdir(sub, 0700) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

static void ident_path(char *buf, size_t len, const char *cache, const struct stat *st)
{
	snprintf(buf, len, "%s/%s/%" PRIx64 "-%" PRIu64 "-%" PRIu64 "-%" PRIu64 "-%" PRIu64, cache,
		 IDENT_DIR, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		 ns_of(&st->st_mtim), ns_of(&st->st_ctim));
}

int cc_cache_lookup(const char *cache, const struct stat *st, uint64_t *hash)
{
	char path[CC_MAX_PATH + 128], target[128];
	uint64_t h, size, mtime;
	struct stat cst;
	ident_path(path, sizeof(path), cache, st);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	if (sscanf(target, "%16" SCNx64 "-%" SCNu64 "-%" SCNu64, &h, &size, &mtime) != 3)
		return 0;
	/* the copy must be the very file the entry was made with: written to since, it is not
	 * trusted (its hash would only be checked at replay) */
	cc_copy_path(path, sizeof(path), cache, h);
	if (lstat(path, &cst) || !S_ISREG(cst.st_mode) || (uint64_t)cst.st_size != size ||
	    ns_of(&cst.st_mtim) != mtime)
		return 0;
	*hash = h;
	return 1;
}

struct cached_copy {
	char name[32];
	uint64_t bytes, ctime_ns;
};

static int by_ctime(const void *a, const void *b)
{
	const struct cached_copy *x = a, *y = b;
	return x->ctime_ns < y->ctime_ns ? -1 : x->ctime_ns > y->ctime_ns;
}

/* Beyond CC_CACHE_MAX bytes of copies ($SPENT_CITCAT_CACHE_MAX when set), remove the least recently linked down to 3/4 of it
 * (identity entries naming a removed copy are then misses, and go in the next prune). */
static void prune(const char *cache)
{
	char path[CC_MAX_PATH + 64];
	struct cached_copy *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	snprintf(path, sizeof(path), "%s/%s", cache, CC_COPY_DIR);
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		size_t len = strlen(e->d_name);
		if (len >= sizeof(v->name) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || ALLOC_GROW(v, n + 1, cap))
			continue;
		memcpy(v[n].name, e->d_name, len + 1);
		v[n].bytes = (uint64_t)st.st_size;
		v[n].ctime_ns = ns_of(&st.st_ctim);
		total += v[n++].bytes;
	}
	size_t removed = 0;
	const char *env = getenv("SPENT_CITCAT_CACHE_MAX");
	uint64_t max = env && env[0] ? strtoull(env, NULL, 10) : CC_CACHE_MAX;
	if (total > max) {
		qsort(v, n, sizeof(*v), by_ctime);
		for (size_t i = 0; i < n && total > max / 4 * 3; i++)
			if (!unlinkat(dfd, v[i].name, 0))
				total -= v[i].bytes, removed++;
	}
	closedir(d);
	free(v);
	if (removed) {
		/* drop identity entries whose copy went */
		snprintf(path, sizeof(path), "%s/%s", cache, IDENT_DIR);
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = dfd >= 0 ? fdopendir(dfd) : NULL;
		while (d && (e = readdir(d))) {
			char target[128], copy[64];
			ssize_t len = readlinkat(dfd, e->d_name, target, sizeof(target) - 1);
			if (len < 16)
				continue;
			snprintf(copy, sizeof(copy), "../%s/%.16s%s", CC_COPY_DIR, target, CC_COPY_SUFFIX);
			if (faccessat(dfd, copy, F_OK, 0))
				unlinkat(dfd, e->d_name, 0);
		}
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
	}
}

int cc_cache_store(const char *cache, const struct stat *st, uint64_t hash,
		   const uint8_t *data, size_t len)
{
	char path[CC_MAX_PATH + 64], tmp[CC_MAX_PATH + 96], target[96];
	uint64_t written = 0;
	struct stat cst;
	struct timespec now;
	cc_copy_path(path, sizeof(path), cache, hash);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	unlink(tmp);
	/* a new copy replaces any old one with that name: one that fails the lookup's check */
	int err = cc_copy_create(tmp, data, len, &written);
	if (err)
		return err;
	if (rename(tmp, path) || stat(path, &cst)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t changed = ns_of(&st->st_mtim) > ns_of(&st->st_ctim) ? ns_of(&st->st_mtim) :
			   ns_of(&st->st_ctim);
	if (ns_of(&now) < changed + CC_CACHE_SETTLED_SEC * 1000000000ULL)
		return 0;	/* the copy serves this recording; the identity is not trusted */
	snprintf(target, sizeof(target), "%016" PRIx64 "-%" PRIu64 "-%" PRIu64, hash,
		 (uint64_t)cst.st_size, ns_of(&cst.st_mtim));
	ident_path(path, sizeof(path), cache, st);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	unlink(tmp);
	if (symlink(target, tmp) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	prune(cache);
	return 0;
}

/* Bytes [OFF, SIZE) of IN to OUT at the same offsets through a buffer. 0 or -errno. */
static int copy_by_reading(int in, int out, off_t off, uint64_t size)
{
	char buf[1 << 16];
	while ((uint64_t)off < size) {
		size_t want = size - (uint64_t)off < sizeof(buf) ? (size_t)(size - (uint64_t)off) : sizeof(buf);
		ssize_t n = pread(in, buf, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off + done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += w;
		}
		off += n;
	}
	return 0;
}

/* Copy the file open as IN into a new PATH: a reflink where the file system can, else its
 * bytes (copy_file_range, or read and write where that cannot cross the file systems: the
 * cache in the home directory, the recording on a tmpfs), fsync'd. 0 or -errno, no partial
 * file left. */
static int copy_into(int in, const char *path, uint64_t size)
{
	int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	int err = 0;
	if (ioctl(out, FICLONE, in)) {
		off_t ioff = 0, ooff = 0;
		while (!err && (uint64_t)ooff < size) {
			ssize_t n = copy_file_range(in, &ioff, out, &ooff, size - (uint64_t)ooff, 0);
			if (n < 0 && (errno == EXDEV || errno == EOPNOTSUPP || errno == EINVAL ||
				      errno == ENOSYS)) {
				err = copy_by_reading(in, out, ooff, size);
				break;
			}
			if (n <= 0)
				err = n < 0 ? -errno : -EIO;
		}
	}
	if (!err && fsync(out))
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

int cc_cache_link(const char *cache, const char *dir, uint64_t hash, uint64_t *bytes)
{
	char from[CC_MAX_PATH + 64], to[CC_MAX_PATH + 64];
	struct stat st;
	*bytes = 0;
	snprintf(to, sizeof(to), "%s/%s", dir, CC_COPY_DIR);
	if (mkdir(to, 0700) && errno != EEXIST)
		return -errno;
	cc_copy_path(from, sizeof(from), cache, hash);
	cc_copy_path(to, sizeof(to), dir, hash);
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0 || fstat(in, &st)) {
		int e = -errno;
		if (in >= 0)
			close(in);
		return e;
	}
	int err = 0;
	/* linkat on the open file: the inode checked is the one linked, whatever renames do */
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", in);
	if (linkat(AT_FDCWD, fdpath, AT_FDCWD, to, AT_SYMLINK_FOLLOW)) {
		err = -errno;
		if (err == -EEXIST) {
			close(in);
			return 0;	/* equal content in the recording already */
		}
		if (err == -EXDEV || err == -EPERM || err == -EMLINK)
			err = copy_into(in, to, (uint64_t)st.st_size);
	}
	close(in);
	if (!err)
		*bytes = (uint64_t)st.st_size;
	return err;
}
