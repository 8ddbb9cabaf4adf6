/* citcat/filecache.h - the recorder's cache of mapped files across recordings: the zstd copy
 * of each mapped file (the same DIR/files/<hash>.zst a recording holds), and the content hash
 * of each file identity, so a second recording of the same program neither hashes nor
 * compresses its libraries again: it hard-links (or reflinks, or copies) the cached copy into
 * its own DIR/files. Recordings stay self-contained; the cache only saves work.
 *
 * Location: $SPENT_CITCAT_CACHE, else $XDG_CACHE_HOME/spent/citcat, else
 * ~/.cache/spent/citcat; SPENT_CITCAT_CACHE=off disables it. Layout (docs/citcat.md):
 *   CACHE/files/<hash>.zst      a copy (mode 0600), written to a temporary and renamed in
 *   CACHE/ident/<dev>-<ino>-<size>-<mtime_ns>-<ctime_ns>
 *                               a symlink to "<hash>-<copy size>-<copy mtime_ns>": the file
 *                               with that identity had that content hash, and its copy was the
 *                               file of that size and mtime (a copy written to since is not
 *                               trusted: the entry is recomputed)
 * The copies' ctime (updated by every link) orders them for pruning: beyond CC_CACHE_MAX
 * bytes ($SPENT_CITCAT_CACHE_MAX when set) the least recently linked go, down to 3/4 of it. */
#ifndef SPENT_CITCAT_FILECACHE_H
#define SPENT_CITCAT_FILECACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define CC_CACHE_MAX ((uint64_t)1 << 30)	/* bytes of copies kept */
/* a file changed within this many seconds before it was hashed may change again within the
 * same timestamp tick without its mtime or ctime showing it: no identity entry for it */
#define CC_CACHE_SETTLED_SEC 2

/* The cache directory into BUF (made, 0700, with its files/ and ident/). 0, -ECANCELED
 * (disabled), -ENOENT (no HOME), or -errno when it cannot be made. */
int cc_cache_open(char *buf, size_t len);
/* The content hash of the file whose identity is ST, when the cache has it and its copy is
 * intact: 1 with *HASH, 0 when not (a missing or changed copy, no entry). */
int cc_cache_lookup(const char *cache, const struct stat *st, uint64_t *hash);
/* Store DATA (LEN bytes, content hash HASH) of the file whose identity was ST when read: its
 * copy, and its identity entry unless it changed too recently (CC_CACHE_SETTLED_SEC). Prunes
 * the cache beyond CC_CACHE_MAX. 0 or -errno (nothing half-written left). */
int cc_cache_store(const char *cache, const struct stat *st, uint64_t hash,
		   const uint8_t *data, size_t len);
/* Put the cached copy with HASH into DIR/files: a hard link, else a reflink, else a copy of
 * its compressed bytes (fsync'd). *BYTES: the copy's size. 0 or -errno (-ENOENT: no copy). */
int cc_cache_link(const char *cache, const char *dir, uint64_t hash, uint64_t *bytes);

#endif
