/* profile/jitmap.c - reading perf's JIT maps (/tmp/perf-PID.map): parsed into a table sorted
 * by start address, cached for the last map used and reloaded when the file changes size or
 * time (the JIT keeps appending while it runs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/search.h"
#include "profile/jitmap.h"

struct jit_sym {
	uint64_t start, size;
	char *name;
};

static struct {
	char *path;
	off_t size;
	struct timespec mtime;
	struct jit_sym *syms;
	size_t n;
} cache;

void jitmap_path(pid_t pid, char *out, size_t len)
{
	snprintf(out, len, "/tmp/perf-%d.map", (int)pid);
}

bool jitmap_is_map_path(const char *path)
{
	int pid, end = 0;
	return sscanf(path, "/tmp/perf-%d.map%n", &pid, &end) == 1 && end > 0 && !path[end];
}

static void cache_clear(void)
{
	for (size_t i = 0; i < cache.n; i++)
		free(cache.syms[i].name);
	free(cache.syms);
	free(cache.path);
	memset(&cache, 0, sizeof(cache));
}

static int sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int load(const char *path, const struct stat *st)
{
	FILE *f = binio_fopen_regular(path);	/* a FIFO in /tmp must not block us */
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	int err = 0;
	cache_clear();
	if (!f)
		return -ENOENT;
	if (!(cache.path = strdup(path)))
		err = -ENOMEM;
	while (!err && getline(&line, &cap, f) >= 0) {
		unsigned long long start, size;
		int name_at = 0;
		if (sscanf(line, "%llx %llx %n", &start, &size, &name_at) != 2 || !name_at || !size)
			continue;	/* not a map line: skipped, as perf does */
		line[strcspn(line, "\n")] = 0;
		if (ALLOC_GROW(cache.syms, cache.n + 1, alloc)) {
			err = -ENOMEM;
			break;
		}
		char *name = strdup(line + name_at);
		if (!name) {
			err = -ENOMEM;
			break;
		}
		cache.syms[cache.n++] = (struct jit_sym){ start, size, name };
	}
	free(line);
	fclose(f);
	if (err) {
		cache_clear();
		return err;
	}
	if (cache.n > 1)
		qsort(cache.syms, cache.n, sizeof(*cache.syms), sym_cmp);
	cache.size = st->st_size;
	cache.mtime = st->st_mtim;
	return 0;
}

int jitmap_lookup(const char *path, uint64_t addr, char *name, size_t len, uint64_t *start)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	if (!cache.path || strcmp(cache.path, path) || cache.size != st.st_size ||
	    cache.mtime.tv_sec != st.st_mtim.tv_sec || cache.mtime.tv_nsec != st.st_mtim.tv_nsec) {
		int err = load(path, &st);
		if (err)
			return err;
	}
	/* the last symbol starting at or below ADDR; a later line wins on overlap (code reused) */
	size_t lo = SEARCH_UPPER_BOUND(cache.syms, cache.n, .start, addr);
	if (!lo || addr - cache.syms[lo - 1].start >= cache.syms[lo - 1].size)
		return -ENOENT;
	snprintf(name, len, "%s", cache.syms[lo - 1].name);
	*start = cache.syms[lo - 1].start;
	return 0;
}
