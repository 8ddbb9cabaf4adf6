/* collect/daemon_buildid.h - the daemon fills the build-id cache (core/buildid_cache.h) as
 * `spent record` does: each image identity the database gets counts for has its symbol table
 * saved once, while its file still has that identity, so an epoch still has its function names
 * after the binary was rebuilt or removed. */
#ifndef SPENT_COLLECT_DAEMON_BUILDID_H
#define SPENT_COLLECT_DAEMON_BUILDID_H

#include <stdbool.h>
#include <stdint.h>

#include "spent/profile.h"

struct dbuildid;

struct dbuildid_stats {
	uint64_t saved;		/* symbol tables written to the cache */
	uint64_t bytes;		/* what those entries hold on disk (symbols and lines) */
	uint64_t errors;	/* saves that failed (the cache directory, a write) */
	int last_error;		/* -errno of the last failure, 0 when none */
	uint64_t queued;	/* images waiting for their turn */
	bool off;		/* the cache is off (SPENT_BUILDID_DIR=off) */
};

/* 0 or -ENOMEM. */
int dbuildid_new(struct dbuildid **out);
void dbuildid_free(struct dbuildid *b);
/* Queue IMG for the cache the first time its identity is seen (later calls return at once). */
void dbuildid_note(struct dbuildid *b, const struct spent_profile_image *img);
/* Save the symbols of at most MAX queued images (reading an image can take a while: a few per
 * tick keep the daemon's loop responsive), then prune when the queue is empty. Best effort:
 * a failure is counted, never returned, and not retried. */
void dbuildid_step(struct dbuildid *b, size_t max);
/* Prune the cache to its default size when entries were saved since the last call. */
void dbuildid_prune(struct dbuildid *b);
void dbuildid_get_stats(const struct dbuildid *b, struct dbuildid_stats *st);

#endif
