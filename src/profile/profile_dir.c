/* profile/profile_dir.c - the profile directory: DIR/meta, DIR/epoch-NNNN/, one file per
 * image x event (plus unknown, stacks and samples files, and the epoch's span); validating
 * reads that skip corrupt files; recognising and removing a directory of only that. The
 * merge-writes of an epoch are profile_dir_write.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"
#include "core/outfile.h"
#include "profile/profile_dir_int.h"
#include "profile/profile_file.h"
#include "profile/profile_int.h"

#define META_MAGIC "spent-profile-dir"
#define META_VERSION 1

void spent_profile_dir_set_modes(struct spent_profile_dir *d, mode_t dir_mode, mode_t file_mode)
{
	d->dir_mode = dir_mode;
	d->file_mode = file_mode;
	/* the directory and its meta were made before the caller could choose: they follow */
	int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	fchmod(fd, dir_mode);
	int meta = openat(fd, "meta", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (meta >= 0) {
		fchmod(meta, file_mode);
		close(meta);
	}
	close(fd);
}

const char *spent_profile_dir_path(const struct spent_profile_dir *d)
{
	return d->path;
}

void spent_profile_dir_close(struct spent_profile_dir *d)
{
	if (!d)
		return;
	free(d->path);
	free(d);
}

static int dir_new(const char *path, struct spent_profile_dir **out)
{
	struct spent_profile_dir *d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return -ENOMEM;
	}
	d->dir_mode = OUTDIR_MODE;
	d->file_mode = OUTFILE_MODE;
	*out = d;
	return 0;
}

static bool dir_is_empty(const char *path)
{
	DIR *dh = opendir(path);
	if (!dh)
		return false;
	struct dirent *de;
	bool empty = true;
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = false;
			break;
		}
	closedir(dh);
	return empty;
}

int spent_profile_dir_create(const char *dir, struct spent_profile_dir **out)
{
	char meta[PATH_MAX], host[256] = "unknown", buf[512];
	int err = 0;
	if (mkdir(dir, OUTDIR_MODE) < 0) {
		if (errno != EEXIST)
			return -errno;
		struct stat st;
		if (stat(dir, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (!dir_is_empty(dir))
			return -EEXIST;
	}
	if (snprintf(meta, sizeof(meta), "%s/meta", dir) >= (int)sizeof(meta))
		return -ENAMETOOLONG;
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	for (char *c = host; *c; c++)
		if (*c == '\n' || *c == ' ')
			*c = '_';
	/* host + creation second can be equal for two directories: the id tells them apart
	 * (db merge's record of what it merged, its refusal to merge a database into itself) */
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
		id = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() ^ (uintptr_t)&id;
	int n = snprintf(buf, sizeof(buf), "%s %d\nhost %s\ncreated %lld\nid %016llx\n", META_MAGIC,
			 META_VERSION, host, (long long)time(NULL), (unsigned long long)id);
	if ((err = dir_new(dir, out)))
		return err;
	if ((err = binio_write_file_atomic(meta, buf, (size_t)n, (*out)->file_mode))) {
		spent_profile_dir_close(*out);
		*out = NULL;
	}
	return err;
}

int spent_profile_dir_open(const char *dir, struct spent_profile_dir **out)
{
	char meta[PATH_MAX];
	uint8_t *data = NULL;
	size_t len;
	struct stat st;
	int err;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (snprintf(meta, sizeof(meta), "%s/meta", dir) >= (int)sizeof(meta))
		return -ENAMETOOLONG;
	err = binio_read_file(meta, 4096, &data, &len);
	if (err == -ENOMEM || err == -EACCES || err == -EPERM)
		return err;	/* not "no meta file": the caller may not read it */
	if (err)
		return -EBADMSG;
	size_t ml = strlen(META_MAGIC);
	unsigned version = 0;
	if (len < ml + 2 || memcmp(data, META_MAGIC, ml) || data[ml] != ' ') {
		err = -EBADMSG;
		goto out;
	}
	/* the whole first line is "MAGIC VERSION": "1x" or "01" is not version 1 but a file we
	 * do not know (-EBADMSG); a well-formed other number is a later spent's (-EPROTONOSUPPORT) */
	size_t i = ml + 1, first = i;
	for (; i < len && data[i] >= '0' && data[i] <= '9'; i++)
		if (version < 1000000)	/* any larger number is as unknown */
			version = version * 10 + (unsigned)(data[i] - '0');
	if (i == first || (data[first] == '0') || (i < len && data[i] != '\n')) {
		err = -EBADMSG;
		goto out;
	}
	if (version != META_VERSION) {
		err = -EPROTONOSUPPORT;
		goto out;
	}
	err = dir_new(dir, out);
out:
	free(data);
	return err;
}

int spent_profile_dir_open_or_create(const char *dir, struct spent_profile_dir **out)
{
	int err = spent_profile_dir_open(dir, out);
	if (err == -ENOENT || (err == -EBADMSG && dir_is_empty(dir)))
		err = spent_profile_dir_create(dir, out);
	return err;
}

static int parse_epoch_name(const char *name, uint32_t *epoch)
{
	if (strncmp(name, "epoch-", 6))
		return -1;
	const char *s = name + 6;
	uint64_t v = 0;
	size_t nd = 0;
	for (; *s >= '0' && *s <= '9' && nd < 10; s++, nd++)
		v = v * 10 + (uint64_t)(*s - '0');
	if (*s || nd < 4 || v > SPENT_PROFILE_EPOCH_MAX)
		return -1;
	*epoch = (uint32_t)v;
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int spent_profile_dir_epochs(struct spent_profile_dir *d, uint32_t **epochs, size_t *n)
{
	DIR *dh = opendir(d->path);
	uint32_t *a = NULL;
	size_t k = 0, cap = 0;
	int err = 0;
	*epochs = NULL;
	*n = 0;
	if (!dh)
		return -errno;
	struct dirent *de;
	while ((de = readdir(dh))) {
		uint32_t e;
		if (parse_epoch_name(de->d_name, &e))
			continue;
		err = ALLOC_GROW(a, k + 1, cap);
		if (err)
			goto out;
		a[k++] = e;
	}
	if (k)
		qsort(a, k, sizeof(*a), u32_cmp);
	*epochs = a;
	*n = k;
	a = NULL;
out:
	free(a);
	closedir(dh);
	return err;
}

int profile_dir_epoch_path(const struct spent_profile_dir *d, uint32_t epoch, char *out, size_t len)
{
	/* parse_epoch_name never takes a higher one: such a directory could be neither read
	 * nor removed (check_replaceable and dir_remove would find a stranger in DIR) */
	if (epoch > SPENT_PROFILE_EPOCH_MAX)
		return -EINVAL;
	int n = snprintf(out, len, "%s/epoch-%04u", d->path, epoch);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int spent_profile_dir_new_epoch(struct spent_profile_dir *d, uint32_t *epoch)
{
	uint32_t *e = NULL;
	size_t n;
	char path[PATH_MAX];
	int err = spent_profile_dir_epochs(d, &e, &n);
	if (err)
		return err;
	bool full = n && e[n - 1] >= SPENT_PROFILE_EPOCH_MAX;
	uint32_t next = n && !full ? e[n - 1] + 1 : 0;
	free(e);
	if (full)
		return -EOVERFLOW;
	if ((err = profile_dir_epoch_path(d, next, path, sizeof(path))))
		return err;
	if (mkdir(path, d->dir_mode) < 0 || chmod(path, d->dir_mode) < 0)
		return -errno;
	*epoch = next;
	return 0;
}

int spent_profile_dir_current_epoch(struct spent_profile_dir *d, uint32_t *epoch)
{
	uint32_t *e = NULL;
	size_t n;
	int err = spent_profile_dir_epochs(d, &e, &n);
	if (err)
		return err;
	if (n)
		*epoch = e[n - 1];
	free(e);
	return n ? 0 : spent_profile_dir_new_epoch(d, epoch);
}

int profile_dir_read_span(const char *dir, uint64_t *start, uint64_t *end)
{
	char file[PATH_MAX];
	uint8_t *data = NULL;
	size_t len;
	*start = *end = 0;
	if (snprintf(file, sizeof(file), "%s/" SPAN_NAME, dir) >= (int)sizeof(file))
		return -ENAMETOOLONG;
	int err = binio_read_file(file, PROFILE_SPAN_TEXT_MAX, &data, &len);
	if (err == -ENOENT)
		return 0;
	if (err == -EFBIG)
		err = -EBADMSG;
	if (!err && (err = profile_span_parse(data, len, start, end)))
		*start = *end = 0;
	free(data);
	return err;
}

int spent_profile_dir_epoch_span(struct spent_profile_dir *d, uint32_t epoch, uint64_t *start_ns,
			   uint64_t *end_ns)
{
	char dir[PATH_MAX];
	struct stat st;
	*start_ns = *end_ns = 0;
	int err = profile_dir_epoch_path(d, epoch, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return profile_dir_read_span(dir, start_ns, end_ns);
}

static bool is_profile_name(const char *n)
{
	size_t l = strlen(n);
	return l > 5 && !strcmp(n + l - 5, ".prof") && n[0] != '.';
}

struct image_key {
	char name[320];		/* its counts file's name, "" when that has none */
	const char *path;
	uint32_t img;
};

static int image_key_cmp(const void *a, const void *b)
{
	const struct image_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	c = c ? c : strcmp(x->path, y->path);
	return c ? c : (x->img > y->img) - (x->img < y->img);
}

/* T's images interned into INTO in the order of their counts files' names: an image's number
 * (pprof's mapping ids follow it) is then the same whether its counts came from its own file
 * or from the samples file's leaf frames (PROFILE_SAMPLES_COUNTS). */
static int intern_images_sorted(struct spent_profile *into, const struct spent_profile *t)
{
	size_t n = spent_profile_nimages(t);
	struct image_key *k = malloc((n + 1) * sizeof(*k));
	uint32_t idx;
	int err = k ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < n && !err; i++) {
		k[i].img = i;
		k[i].path = spent_profile_image_get(t, i)->path;
		if (!spent_profile_nevents(t) ||
		    profile_file_name_counts(t, i, 0, k[i].name, sizeof(k[i].name)))
			k[i].name[0] = 0;
	}
	if (!err)
		qsort(k, n, sizeof(*k), image_key_cmp);
	for (size_t i = 0; i < n && !err; i++)
		err = spent_profile_image_intern(into, spent_profile_image_get(t, k[i].img), &idx);
	free(k);
	return err;
}

int spent_profile_dir_read_epoch(struct spent_profile_dir *d, uint32_t epoch, struct spent_profile *into,
			   spent_profile_warn_fn warn, void *ctx, size_t *nskipped)
{
	char dir[PATH_MAX], file[PATH_MAX];
	size_t skipped = 0;
	int err = profile_dir_epoch_path(d, epoch, dir, sizeof(dir));
	if (err)
		return err;
	/* the epoch is read into T, whose images INTO gets in a fixed order before the rest */
	struct spent_profile *t = spent_profile_new();
	if (!t)
		return -ENOMEM;
	/* sorted: events and images are interned in the order their files are read, and a
	 * directory's own order (a hash on most filesystems) would make the report's column
	 * order change from one machine to another */
	struct dirent **ents = NULL;
	int nent = scandir(dir, &ents, NULL, alphasort);
	if (nent < 0) {
		/* an epoch that is no directory (a dangling link, a file) is skipped as a corrupt
		 * file is, named: the other epochs are still the profile */
		int e = errno;
		spent_profile_free(t);
		if (e == ENOMEM)
			return -e;
		if (warn)
			warn(ctx, dir, strerror(e));
		if (nskipped)
			*nskipped = 1;
		return 0;
	}
	for (int k = 0; k < nent && !err; k++) {
		const struct dirent *de = ents[k];
		if (!is_profile_name(de->d_name))
			continue;
		uint8_t *data = NULL;
		size_t len;
		const char *why = NULL;
		if (snprintf(file, sizeof(file), "%s/%s", dir, de->d_name) >= (int)sizeof(file))
			continue;
		int e = binio_read_file(file, PROFILE_FILE_MAXLEN, &data, &len);
		if (!e)
			e = spent_profile_file_parse(data, len, t, &why);
		free(data);
		if (e == -ENOMEM) {
			err = e;
		} else if (e) {
			skipped++;
			if (warn)
				warn(ctx, file, why ? why : strerror(-e));
		}
	}
	for (int k = 0; k < nent; k++)
		free(ents[k]);
	free(ents);
	err = err ? err : intern_images_sorted(into, t);
	err = err ? err : spent_profile_merge(into, t);
	spent_profile_free(t);
	uint64_t s, e;
	int se = err ? 0 : profile_dir_read_span(dir, &s, &e);
	if (se == -ENOMEM) {
		err = se;
	} else if (se) {
		skipped++;
		if (warn && snprintf(file, sizeof(file), "%s/" SPAN_NAME, dir) < (int)sizeof(file))
			warn(ctx, file, se == -EBADMSG ? "bad span file" : strerror(-se));
	} else {
		spent_profile_extend_span(into, s, e);
	}
	if (nskipped)
		*nskipped = skipped;
	return err;
}

int spent_profile_dir_read_all(struct spent_profile_dir *d, struct spent_profile *into, spent_profile_warn_fn warn,
			 void *ctx, size_t *nskipped)
{
	uint32_t *e = NULL;
	size_t n, total = 0;
	int err = spent_profile_dir_epochs(d, &e, &n);
	for (size_t i = 0; i < n && !err; i++) {
		size_t s = 0;
		err = spent_profile_dir_read_epoch(d, e[i], into, warn, ctx, &s);
		total += s;
	}
	free(e);
	if (nskipped)
		*nskipped = total;
	return err;
}

/* ---- recognising and removing a profile directory: only what spent writes there ---------- */

/* NAME, or the NAME of a temporary NAME.tmp.PID.XXXXXX (core/outfile.c), into OUT. */
static void strip_temp(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s", name);
	char *t = strstr(out, ".tmp.");
	for (char *n = t; n; n = strstr(n + 1, ".tmp."))
		t = n;
	if (t)
		*t = 0;
}

/* A file spent writes: meta and kallsyms.zst (plain kallsyms before it; and a daemon's
 * kallsyms-HEX, one per kernel) at the top, profile files and the span (and NAME.corrupt set
 * aside by load_existing and write_span) in an epoch directory; their temporaries too. */
static bool own_file(const char *name, bool top)
{
	char n[NAME_MAX + 1];
	size_t l;
	strip_temp(name, n, sizeof(n));
	if (top)
		return !strcmp(n, "meta") || !strcmp(n, KALLSYMS_FILE_PLAIN) || !strcmp(n, KALLSYMS_FILE_ZST) ||
		       kernel_id_is_kallsyms_name(n);
	l = strlen(n);
	if (l > 8 && !strcmp(n + l - 8, ".corrupt"))
		n[l - 8] = 0;
	return is_profile_name(n) || !strcmp(n, SPAN_NAME);
}

/*
 * Check (REMOVE false) that the directory DFD holds only what spent writes into a profile
 * directory (TOP) or one of its epochs, or remove all of it (REMOVE true: run the check
 * first, so that nothing is removed from a directory holding anything else). Symlinks are
 * never followed: a symlink, a device or an unknown name is "anything else" (-ENOTEMPTY).
 */
static int walk_own(int dfd, bool top, bool remove)
{
	int fd = dup(dfd), err = 0;
	DIR *dh = fd < 0 ? NULL : fdopendir(fd);
	if (!dh) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	rewinddir(dh);
	struct dirent *de;
	while (!err && (de = readdir(dh))) {
		const char *name = de->d_name;
		struct stat st;
		uint32_t ep;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			err = -errno;
		} else if (S_ISDIR(st.st_mode) && top && !parse_epoch_name(name, &ep)) {
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			err = sub < 0 ? -errno : walk_own(sub, false, remove);
			if (sub >= 0)
				close(sub);
			if (!err && remove && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
				err = -errno;
		} else if (S_ISREG(st.st_mode) && own_file(name, top)) {
			if (remove && unlinkat(dfd, name, 0) < 0)
				err = -errno;
		} else {
			err = -ENOTEMPTY;
		}
	}
	closedir(dh);
	return err;
}

/* DIR itself, never through a symlink: a descriptor or -errno. */
static int open_dir_nofollow(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int spent_profile_dir_check_replaceable(const char *dir)
{
	char head[sizeof(META_MAGIC) + 1] = "";
	int fd = open_dir_nofollow(dir), err = 0;
	if (fd < 0)
		return fd;
	int meta = openat(fd, "meta", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (meta < 0 || read(meta, head, sizeof(head) - 1) != (ssize_t)sizeof(head) - 1 ||
	    memcmp(head, META_MAGIC " ", sizeof(head) - 1))
		err = -EBADMSG;
	if (meta >= 0)
		close(meta);
	if (err && dir_is_empty(dir))
		err = 0;	/* an empty directory (mkdir'ed for the output) loses nothing */
	err = err ? err : walk_own(fd, true, false);
	close(fd);
	return err;
}

int spent_profile_dir_remove(const char *dir)
{
	int fd = open_dir_nofollow(dir), err;
	if (fd < 0)
		return fd;
	err = walk_own(fd, true, false);
	err = err ? err : walk_own(fd, true, true);
	close(fd);
	if (!err && rmdir(dir) < 0)
		err = -errno;
	return err;
}

bool profile_dir_epoch_is_dir(const struct spent_profile_dir *d, uint32_t epoch)
{
	char dir[PATH_MAX];
	struct stat st;
	return !profile_dir_epoch_path(d, epoch, dir, sizeof(dir)) && lstat(dir, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

int spent_profile_dir_remove_epoch(struct spent_profile_dir *d, uint32_t epoch)
{
	char name[32];
	struct stat st;
	int err = 0;
	if (epoch > SPENT_PROFILE_EPOCH_MAX)
		return -EINVAL;	/* no such epoch can have been written (profile_dir_epoch_path) */
	snprintf(name, sizeof(name), "epoch-%04u", epoch);
	int dfd = open_dir_nofollow(d->path);
	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		err = -errno;
	} else if (!S_ISDIR(st.st_mode)) {
		/* a symlink named like an epoch: its name goes, never what it points to */
		if (unlinkat(dfd, name, 0) < 0)
			err = -errno;
	} else {
		int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = sub < 0 ? -errno : walk_own(sub, false, false);
		err = err ? err : walk_own(sub, false, true);
		if (sub >= 0)
			close(sub);
		if (!err && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
			err = -errno;
	}
	close(dfd);
	return err;
}
