/* core/buildid_cache.h - spent's build-id cache (perf's ~/.debug): what a report needs to name
 * an image's functions (its sorted symbol table) saved at record time, keyed by the image's
 * build-id (or content hash), so a profile still has its names after the binary was rebuilt
 * or removed. Shared between profiles. Location: $SPENT_BUILDID_DIR, else
 * $XDG_CACHE_HOME/spent/buildid, else ~/.cache/spent/buildid; SPENT_BUILDID_DIR=off disables. */
#ifndef SPENT_CORE_BUILDID_CACHE_H
#define SPENT_CORE_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

/* The cache directory into BUF. 0, -ENOENT (no HOME to put it in), -ECANCELED (disabled),
 * -ENAMETOOLONG. */
int buildid_cache_dir(char *buf, size_t len);
/* The key of IMG ("b-HEX" for a build-id, "h-HEX" for a content hash) into BUF; -EINVAL when
 * IMG has no identity. */
int buildid_cache_key(const struct profile_image *img, char *buf, size_t len);
/* DIR/KEY/symtab for IMG into BUF, making DIR/KEY (0700) when MAKE. 0 or -errno. */
int buildid_cache_symtab_path(const struct profile_image *img, int make, char *buf, size_t len);

#endif
