/* core/buildid_cache.h - spent's build-id cache (perf's ~/.debug): what a report needs to name
 * an image's functions (its sorted symbol table) and lines (its line table) saved at record time, keyed by the image's
 * build-id (or content hash), so a profile still has its names after the binary was rebuilt
 * or removed. Shared between profiles. Location: $SPENT_BUILDID_DIR, else
 * $XDG_CACHE_HOME/spent/buildid, else ~/.cache/spent/buildid; SPENT_BUILDID_DIR=off disables. */
#ifndef SPENT_CORE_BUILDID_CACHE_H
#define SPENT_CORE_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

/* A cache directory of spent's into BUF: $ENV_VAR, else $XDG_CACHE_HOME/spent/NAME, else
 * ~/.cache/spent/NAME. 0, -ENOENT (no HOME), -ECANCELED (ENV_VAR is "off"), -ENAMETOOLONG. */
int user_cache_dir(const char *env_var, const char *name, char *buf, size_t len);
/* mkdir -p PATH, each directory made 0700 (PATH is modified and restored). 0 or -errno. */
int user_cache_make_dirs(char *path);
/* The cache directory into BUF. 0, -ENOENT (no HOME to put it in), -ECANCELED (disabled),
 * -ENAMETOOLONG. */
int buildid_cache_dir(char *buf, size_t len);
/* The key of IMG ("b-HEX" for a build-id, "h-HEX" for a content hash) into BUF; -EINVAL when
 * IMG has no identity. */
int buildid_cache_key(const struct spent_profile_image *img, char *buf, size_t len);
/* DIR/KEY/symtab for IMG into BUF, making DIR/KEY (0700) when MAKE. 0 or -errno. */
int buildid_cache_symtab_path(const struct spent_profile_image *img, int make, char *buf, size_t len);

/* What record keeps the cache to (least recently used entries removed beyond it). */
#define BUILDID_CACHE_DEFAULT_MAX (256ull << 20)

struct buildid_entry {
	char key[2 * SPENT_PROFILE_ID_MAX + 3];
	char image[SPENT_PROFILE_PATH_MAX];	/* the image's path when it was saved ("" unknown) */
	uint64_t bytes;
	int64_t last_used;		/* seconds since the epoch: saved or last read */
};

/* IMG's entry was read: it becomes the most recently used. */
void buildid_cache_touch(const char *symtab_path);
/* The entries of the cache, least recently used first, into *OUT (caller frees). 0 (no
 * entries when the directory does not exist) or -errno. */
int buildid_cache_list(struct buildid_entry **out, size_t *n);
/* Remove least recently used entries until the cache holds at most MAX_BYTES; *REMOVED and
 * *FREED (may be NULL) say what went. 0 or -errno. */
int buildid_cache_prune(uint64_t max_bytes, size_t *removed, uint64_t *freed);
/* The entry's file NAME ("lines": core/linetable) beside SYMTAB_PATH into BUF. 0 or -errno. */
int buildid_cache_entry_file(const char *symtab_path, const char *name, char *buf, size_t len);
/* Record IMAGE_PATH as the image of the entry holding SYMTAB_PATH (for the listing). */
int buildid_cache_note_image(const char *symtab_path, const char *image_path);

#endif
