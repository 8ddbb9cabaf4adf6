/* collect/daemon_merge.h - the daemon's in-memory profiles and their incremental merge into
 * the database: samples accumulate in a pending profile; a merge hands it to a writer that
 * writes a bounded slice of (image, event) files per tick, so there are no bursts. */
#ifndef SPENT_COLLECT_DAEMON_MERGE_H
#define SPENT_COLLECT_DAEMON_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/daemon_buildid.h"
#include "collect/daemon_maps.h"
#include "spent/profile.h"

struct dmerge_event {
	const char *name;	/* as the user wrote it */
	uint64_t period;	/* or the frequency when FREQ */
	bool freq;
};

struct dmerge_stats {
	uint64_t placed;	/* samples attributed to an image */
	uint64_t unknown;	/* samples the daemon could not place: no mapping, process gone */
	uint64_t anon;		/* samples in anonymous executable memory (JIT code): placed
				 * in the unknown profile with their own reason, not a failure */
	uint64_t lost;		/* samples lost before aggregation */
	uint64_t merges;	/* merges completed */
	uint64_t files_written;
	uint64_t write_errors;
	int last_error;		/* -errno of the last failed write, 0 after a success */
	uint64_t pending_cells;	/* (image, offset, event) cells not yet on disk */
};

/* What the aggregator handed over for one image since the daemon started. */
struct dmerge_image_stats {
	uint32_t image;		/* dimage id (dmaps_image) */
	uint64_t samples;	/* samples in those entries */
	uint64_t entries;	/* aggregated entries: samples / entries is this image's reduction */
};

struct dmerge;

/* A merger for database D (borrowed) and the events EVS; MAPS is borrowed for image and
 * process data. Every sample also gets a detail row (process name, pid, cgroup; the time of
 * its drain in buckets of BUCKET_NS); when PER_PROCESS names images (path or basename), only
 * the samples in those images do. */
int dmerge_new(struct spent_profile_dir *d, struct dmaps *maps, const struct dmerge_event *evs,
	       size_t nev, const char *const *per_process, size_t nper, uint64_t bucket_ns,
	       struct dmerge **out);
void dmerge_free(struct dmerge *g);
/* Lines for the daemon's log (a corrupt file set aside), through LOG(ARG, MESSAGE). */
void dmerge_set_log(struct dmerge *g, void (*log)(void *arg, const char *msg), void *arg);

/* Attribute COUNT samples of (PID, PC, EVENT). */
void dmerge_add(struct dmerge *g, pid_t pid, uint64_t pc, uint32_t event, uint64_t count);
/* The entries added from now on were sampled from START_NS (wall clock, Unix ns); the
 * current epoch covers [START_NS, END_NS]. */
void dmerge_set_interval(struct dmerge *g, uint64_t start_ns, uint64_t end_ns);
/* Count samples lost before they could be attributed. */
void dmerge_add_lost(struct dmerge *g, uint32_t event, uint64_t count);

/* Start a merge of everything pending (no-op when one is running or nothing is pending). */
int dmerge_start(struct dmerge *g);
/* Write at most MAX_FILES (image, event) files of the running merge: 1 when the merge is
 * finished (or none runs), 0 when more remain, -errno when a write failed (the merge stays
 * where it was and is retried by the next call). */
int dmerge_step(struct dmerge *g, size_t max_files);
/* Start and finish a merge now (flush, epoch, exit). 0 or the first -errno. */
int dmerge_finish(struct dmerge *g);
/* Write into epoch EPOCH from now on (after dmerge_finish). */
void dmerge_set_epoch(struct dmerge *g, uint32_t epoch);
uint32_t dmerge_epoch(const struct dmerge *g);
void dmerge_get_stats(const struct dmerge *g, struct dmerge_stats *st);
/* How filling the build-id cache went (collect/daemon_buildid.h). */
void dmerge_get_buildid_stats(const struct dmerge *g, struct dbuildid_stats *st);
/* The (at most) N images with the most samples into TOP, most first; returns how many. */
size_t dmerge_top_images(const struct dmerge *g, struct dmerge_image_stats *top, size_t n);

#endif
