/* core/buildid_cache.c - where the build-id cache lives and how an image's entry is named
 * (see buildid_cache.h); the entries themselves are core/symtable files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buildid_cache.h"
#include "core/outfile.h"

int buildid_cache_dir(char *buf, size_t len)
{
	const char *env = getenv("SPENT_BUILDID_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (env && !strcmp(env, "off"))
		return -ECANCELED;
	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/spent/buildid", xdg);
	else if (home && home[0])
		n = snprintf(buf, len, "%s/.cache/spent/buildid", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int buildid_cache_key(const struct profile_image *img, char *buf, size_t len)
{
	if (img->id_kind == PROFILE_ID_NONE || !img->id_len || len < 3 + 2u * img->id_len)
		return -EINVAL;
	buf[0] = img->id_kind == PROFILE_ID_BUILDID ? 'b' : 'h';
	buf[1] = '-';
	for (unsigned i = 0; i < img->id_len; i++)
		snprintf(buf + 2 + 2 * i, 3, "%02x", img->id[i]);
	return 0;
}

/* mkdir -p PATH (each made 0700) */
static int make_dirs(char *path)
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

int buildid_cache_symtab_path(const struct profile_image *img, int make, char *buf, size_t len)
{
	char key[2 * PROFILE_ID_MAX + 3];
	int err = buildid_cache_key(img, key, sizeof(key));
	if (err || (err = buildid_cache_dir(buf, len)))
		return err;
	size_t l = strlen(buf);
	int n = snprintf(buf + l, len - l, "/%s", key);
	if (n < 0 || (size_t)n >= len - l)
		return -ENAMETOOLONG;
	if (make && (err = make_dirs(buf)))
		return err;
	l = strlen(buf);
	n = snprintf(buf + l, len - l, "/symtab");
	return n < 0 || (size_t)n >= len - l ? -ENAMETOOLONG : 0;
}
