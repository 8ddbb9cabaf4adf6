/* cli/helper_path.c - where spent finds its helper files (the Valgrind tool directory, the
 * observer library libspent-shim.so). The build tree keeps them beside build/spent; `make
 * install` puts them in $(LIBDIR)/spent, whose path the Makefile compiles in twice: absolute
 * (SPENT_PKGLIBDIR) and relative to $(BINDIR) (SPENT_PKGLIBDIR_FROM_BINDIR), so a tree staged
 * with DESTDIR or unpacked elsewhere still finds its own helpers before any system copy. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/helper_path.h"

#ifndef SPENT_PKGLIBDIR
#define SPENT_PKGLIBDIR "/usr/local/lib/spent"
#endif
#ifndef SPENT_PKGLIBDIR_FROM_BINDIR
#define SPENT_PKGLIBDIR_FROM_BINDIR "../lib/spent"
#endif

enum { MAX_DIRS = 3 };

/* The directories to search, in order, without repeats; their number. */
static int helper_dirs(char dirs[MAX_DIRS][PATH_MAX])
{
	const char *env = getenv("SPENT_LIB_DIR");
	char exe[PATH_MAX], rel[PATH_MAX];
	int n = 0;

	/* an explicit choice is the only place looked at: a wrong one is an error, not a
	 * silent fall back to some other installed version */
	if (env && *env) {
		snprintf(dirs[n++], PATH_MAX, "%s", env);
		return n;
	}
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			slash[slash == exe] = 0;	/* "/spent" keeps its "/" */
		snprintf(dirs[n++], PATH_MAX, "%s", exe);
		int w = snprintf(rel, sizeof(rel), "%s/%s", exe, SPENT_PKGLIBDIR_FROM_BINDIR);
		/* shown resolved in messages when it exists: ../lib/spent means little */
		if (w > 0 && w < (int)sizeof(rel) && !realpath(rel, dirs[n]))
			memcpy(dirs[n], rel, (size_t)w + 1);
		if (w > 0 && w < (int)sizeof(rel))
			n++;
	}
	snprintf(dirs[n], PATH_MAX, "%s", SPENT_PKGLIBDIR);
	for (int i = 0; i < n; i++)
		if (strcmp(dirs[i], dirs[n]) == 0)
			return n;
	return n + 1;
}

int helper_find(const char *const names[], int mode, char *out, size_t len)
{
	char dirs[MAX_DIRS][PATH_MAX], path[2 * PATH_MAX];
	int ndirs = helper_dirs(dirs);
	size_t used = 0;

	for (int i = 0; i < ndirs; i++)
		for (int k = 0; names[k]; k++) {
			int w = snprintf(path, sizeof(path), "%s/%s", dirs[i], names[k]);
			if (w > 0 && w < (int)sizeof(path) && access(path, mode) == 0) {
				snprintf(out, len, "%s", path);
				return 0;
			}
		}
	if (len)
		out[0] = 0;
	for (int i = 0; i < ndirs && used < len; i++) {
		int w = snprintf(out + used, len - used, "%s%s", i ? ", " : "", dirs[i]);
		used += w > 0 ? (size_t)w : 0;
	}
	return -ENOENT;
}
