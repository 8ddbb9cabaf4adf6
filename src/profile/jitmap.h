/* profile/jitmap.h - perf's JIT symbol maps (/tmp/perf-PID.map, written by V8, JVM agents,
 * `python3 -X perf`, LuaJIT...): one "START SIZE NAME" line (hex, no 0x) per piece of generated
 * code. record files samples in anonymous executable memory that a map covers under the map's
 * path (offset = the address); every view names them from the map. */
#ifndef SPENT_PROFILE_JITMAP_H
#define SPENT_PROFILE_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "/tmp/perf-PID.map" into OUT. */
void jitmap_path(pid_t pid, char *out, size_t len);
/* Whether PATH is named as a perf JIT map. */
bool jitmap_is_map_path(const char *path);
/*
 * The symbol of the map at PATH covering ADDR: its name into NAME and its start. The map is
 * read once and again when it grows (JITs append). 0, -ENOENT (no map, or no line covers
 * ADDR) or -ENOMEM. Not thread-safe: one cached map per process.
 */
int jitmap_lookup(const char *path, uint64_t addr, char *name, size_t len, uint64_t *start);

#endif
