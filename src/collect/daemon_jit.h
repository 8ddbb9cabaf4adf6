/* collect/daemon_jit.h - the daemon's side of perf's JIT maps (profile/jitmap.h): a sample in
 * anonymous executable memory that /tmp/perf-PID.map of its process covers is filed under the
 * map (image = the map's path, offset = the address), as `spent record` does; what no map
 * covers stays unknown (anonymous). */
#ifndef SPENT_COLLECT_DAEMON_JIT_H
#define SPENT_COLLECT_DAEMON_JIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether PID's perf map covers PC: the map's path into PATH (LEN >= 64). The daemon runs as
 * root and /tmp is anyone's: only a regular file (not a symlink) owned by root or by the
 * process's owner (when the process still exists) is read. 0 or -ENOENT. */
int djit_lookup(pid_t pid, uint64_t pc, char *path, size_t len);

#endif
