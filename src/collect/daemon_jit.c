/* collect/daemon_jit.c - which perf JIT map (/tmp/perf-PID.map) names a sample of anonymous
 * executable memory in the daemon, and whether the daemon (root) may trust that file. */
#include "collect/daemon_jit.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "profile/jitmap.h"

/* A file in /tmp is anyone's to create: a map counts when it is a regular file (lstat: a
 * symlink could point anywhere) owned by root or by the owner of the process. A process gone
 * by the drain cannot be asked: its map is taken as it is (names only, never code or counts). */
static bool trusted_map(pid_t pid, const char *path)
{
	struct stat map, proc;
	char dir[32];
	if (lstat(path, &map) < 0 || !S_ISREG(map.st_mode))
		return false;
	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (stat(dir, &proc) < 0)
		return true;
	return map.st_uid == 0 || map.st_uid == proc.st_uid;
}

int djit_lookup(pid_t pid, uint64_t pc, char *path, size_t len)
{
	char name[8];
	uint64_t start;
	jitmap_path(pid, path, len);
	if (!trusted_map(pid, path) || jitmap_lookup(path, pc, name, sizeof(name), &start))
		return -ENOENT;
	return 0;
}
