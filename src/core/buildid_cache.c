/* core/buildid_cache.c - where the build-id cache lives, how an image's entry is named, and
 * its upkeep (see buildid_cache.h): an entry is a directory DIR/KEY holding `symtab` (a
 * core/symtable file, its mtime the entry's last use), `lines` (a core/linetable file, when
 * the image had line information) and `image` (the path it was saved from); listing least recently used first and pruning to a size. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buildid_cache.h"
#include "core/outfile.h"

int user_cache_dir(const char *env_var, const char *name, char *buf, size_t len)
{
	const char *env = getenv(env_var), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (env && !strcmp(env, "off"))
		return -ECANCELED;
	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/spent/%s", xdg, name);
	else if (home && home[0])
		n = snprintf(buf, len, "%s/.cache/spent/%s", home, name);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int buildid_cache_dir(char *buf, size_t len)
{
	return user_cache_dir("SPENT_BUILDID_DIR", "buildid", buf, len);
}

int buildid_cache_key(const struct spent_profile_image *img, char *buf, size_t len)
{
	if (img->id_kind == SPENT_PROFILE_ID_NONE || !img->id_len || len < 3 + 2u * img->id_len)
		return -EINVAL;
	buf[0] = img->id_kind == SPENT_PROFILE_ID_BUILDID ? 'b' : 'h';
	buf[1] = '-';
	for (unsigned i = 0; i < img->id_len; i++)
		snprintf(buf + 2 + 2 * i, 3, "%02x", img->id[i]);
	return 0;
}

int user_cache_make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		int r = mkdir(path, OUTDIR_MODE);
		*p = c;
		if (r && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
	}
}

int buildid_cache_symtab_path(const struct spent_profile_image *img, int make, char *buf, size_t len)
{
	char key[2 * SPENT_PROFILE_ID_MAX + 3];
	int err = buildid_cache_key(img, key, sizeof(key));
	if (err || (err = buildid_cache_dir(buf, len)))
		return err;
	size_t l = strlen(buf);
	int n = snprintf(buf + l, len - l, "/%s", key);
	if (n < 0 || (size_t)n >= len - l)
		return -ENAMETOOLONG;
	if (make && (err = user_cache_make_dirs(buf)))
		return err;
	l = strlen(buf);
	n = snprintf(buf + l, len - l, "/symtab");
	return n < 0 || (size_t)n >= len - l ? -ENAMETOOLONG : 0;
}

void buildid_cache_touch(const char *symtab_path)
{
	utimensat(AT_FDCWD, symtab_path, NULL, 0);
}

int buildid_cache_entry_file(const char *symtab_path, const char *name, char *buf, size_t len)
{
	const char *slash = strrchr(symtab_path, '/');
	if (!slash)
		return -EINVAL;
	int n = snprintf(buf, len, "%.*s/%s", (int)(slash - symtab_path), symtab_path, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int buildid_cache_note_image(const char *symtab_path, const char *image_path)
{
	char path[PATH_MAX];
	int err = buildid_cache_entry_file(symtab_path, "image", path, sizeof(path));
	return err ? err : outfile_write(path, image_path, strlen(image_path), OUTFILE_MODE);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct buildid_entry *x = a, *y = b;
	if (x->last_used != y->last_used)
		return x->last_used < y->last_used ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Fill E from the entry directory DIR/E->key: sizes of its files, its symtab's mtime. */
static void entry_describe(int dirfd, struct buildid_entry *e)
{
	struct stat st;
	char name[sizeof(e->key) + 16];
	snprintf(name, sizeof(name), "%s/symtab", e->key);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		e->bytes += (uint64_t)st.st_size;
		e->last_used = (int64_t)st.st_mtime;
	}
	snprintf(name, sizeof(name), "%s/lines", e->key);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		e->bytes += (uint64_t)st.st_size;
	snprintf(name, sizeof(name), "%s/image", e->key);
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			e->bytes += (uint64_t)st.st_size;
			ssize_t r = read(fd, e->image, sizeof(e->image) - 1);
			e->image[r > 0 ? r : 0] = 0;
		}
		close(fd);
	}
}

static bool is_key(const char *name)
{
	if ((name[0] != 'b' && name[0] != 'h') || name[1] != '-' || !name[2])
		return false;
	size_t l = strlen(name);
	return l < 2 * SPENT_PROFILE_ID_MAX + 3 && strspn(name + 2, "0123456789abcdef") == l - 2;
}

int buildid_cache_list(struct buildid_entry **out, size_t *n)
{
	char dir[PATH_MAX];
	int err = buildid_cache_dir(dir, sizeof(dir));
	*out = NULL;
	*n = 0;
	if (err)
		return err;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_key(de->d_name))
			continue;	/* only entries: temporaries and strangers are left alone */
		if ((err = ALLOC_GROW(*out, *n + 1, cap)))
			break;
		struct buildid_entry *e = &(*out)[*n];
		memset(e, 0, sizeof(*e));
		memcpy(e->key, de->d_name, strlen(de->d_name) + 1);	/* is_key: it fits */
		entry_describe(dirfd(d), e);
		(*n)++;
	}
	closedir(d);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
		return err;
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), entry_cmp);
	return 0;
}

static int remove_entry(const char *dir, const char *key)
{
	char path[PATH_MAX + 2 * SPENT_PROFILE_ID_MAX + 16];	/* DIR is < PATH_MAX */
	static const char *const files[] = { "symtab", "lines", "image" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, key, files[i]);
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	return rmdir(path) ? -errno : 0;
}

int buildid_cache_prune(uint64_t max_bytes, size_t *removed, uint64_t *freed)
{
	struct buildid_entry *e = NULL;
	size_t n = 0, gone = 0;
	uint64_t total = 0, out = 0;
	char dir[PATH_MAX];
	int err = buildid_cache_dir(dir, sizeof(dir));
	if (!err)
		err = buildid_cache_list(&e, &n);
	for (size_t i = 0; i < n; i++)
		total += e[i].bytes;
	for (size_t i = 0; i < n && !err && total > max_bytes; i++) {
		if ((err = remove_entry(dir, e[i].key)))
			break;
		total -= e[i].bytes;
		out += e[i].bytes;
		gone++;
	}
	free(e);
	if (removed)
		*removed = gone;
	if (freed)
		*freed = out;
	return err;
}
