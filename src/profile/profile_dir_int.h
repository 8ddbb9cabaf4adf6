/* profile/profile_dir_int.h - what the profile directory's reading side (profile_dir.c) and
 * its merge-writes of an epoch (profile_dir_write.c) share; nothing outside src/profile
 * includes it. */
#ifndef SPENT_PROFILE_DIR_INT_H
#define SPENT_PROFILE_DIR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/profile.h"

#define SPAN_NAME "span"

struct spent_profile_dir {
	char *path;
	mode_t dir_mode;	/* for epoch directories (0700 unless spent_profile_dir_set_modes) */
	mode_t file_mode;	/* for profile files (0600 unless spent_profile_dir_set_modes) */
	/* a database (db_open) keeps each image's counts file: its daemon writes an image's
	 * counts at a time, and folding them into the samples file at each flush would read and
	 * remove them over and over; a recorded profile lets the samples file carry them */
	bool keep_counts_files;
};

/* DIR/epoch-NNNN of EPOCH into OUT (LEN bytes): 0, -EINVAL (EPOCH > SPENT_PROFILE_EPOCH_MAX)
 * or -ENAMETOOLONG. */
int profile_dir_epoch_path(const struct spent_profile_dir *d, uint32_t epoch, char *out, size_t len);
/* spent_profile_dir_write_epoch into the epoch directory DIR (made when missing) instead of
 * D's epoch-NNNN: db_merge writes a copy of an epoch and puts it in place once all are written. */
int profile_dir_write_epoch_at(struct spent_profile_dir *d, const char *dir, const struct spent_profile *p,
			       spent_profile_warn_fn warn, void *ctx);
/* Whether DIR/epoch-NNNN is a directory (not through a symlink). */
bool profile_dir_epoch_is_dir(const struct spent_profile_dir *d, uint32_t epoch);
/* The span file of the epoch directory DIR into *START, *END (both 0 when there is none):
 * 0, -EBADMSG (not a span file), or -errno. */
int profile_dir_read_span(const char *dir, uint64_t *start, uint64_t *end);

#endif
