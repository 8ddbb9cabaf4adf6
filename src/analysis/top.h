/* analysis/top.h - the sliding window of `spent top`: samples keyed by (comm, pid, image,
 * function), counted per interval in a ring of slots, and the views over the last N intervals
 * by function, image, comm or process. Fed by live sampling (collect/live.h) or by a daemon's
 * counts; symbolized with core/symbols. */
#ifndef SPENT_ANALYSIS_TOP_H
#define SPENT_ANALYSIS_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/symbols.h"
#include "spent/profile.h"

enum top_view {
	TOP_BY_FUNCTION,
	TOP_BY_IMAGE,
	TOP_BY_COMM,
	TOP_BY_PROCESS,		/* comm and pid */
	TOP_NVIEWS,
};

/* "functions", "images", "comms", "processes" */
const char *top_view_name(enum top_view v);

struct top;

/* A window of SLOTS closed intervals (1..3600), symbolized with SYM (the caller's, outlives T). */
int top_new(unsigned slots, struct symbols *sym, struct top **out);
void top_free(struct top *t);

/* COUNT samples of process PID called COMM at OFFSET of IMG (NULL: unplaced) into the open
 * interval. PID < 0 with COMM NULL: a process-less count (a daemon's (image, offset) data).
 * 0 or -ENOMEM. */
int top_add(struct top *t, const char *comm, pid_t pid, const struct spent_profile_image *img,
	    uint64_t offset, uint64_t count);
/* Close the open interval (it joins the window, the oldest leaves) and open a new one. */
void top_tick(struct top *t);

/* Distinct image paths T has been given so far (NULL images not counted). core/symbols keeps
 * every image it read open (its file, and libdw's debuginfod client: two sockets), so a view
 * that runs for hours over short-lived programs renews its symbols when this has grown
 * (cmd_top.c); names already shown are T's own copies and stay. */
size_t top_images_seen(const struct top *t);
/* Symbolize with SYM from now on (the caller's, outlives T; the old one is the caller's to
 * free). */
void top_set_symbols(struct top *t, struct symbols *sym);

/* One row of a view: the strings live until the next top_tick or top_free. */
struct top_row {
	const char *function;	/* function view; "[unknown]" when no symbol covers the pc */
	const char *image;	/* function and image views: the image path */
	const char *comm;	/* comm and process views; the function and image views: the one
				 * comm the row's samples came from, NULL when several */
	pid_t pid;		/* process view; -1 otherwise */
	uint64_t count;		/* samples in the window */
	uint64_t last;		/* samples in the last closed interval */
};

struct top_stats {
	uint64_t window;	/* samples in the window */
	uint64_t last;		/* samples in the last closed interval */
	unsigned filled;	/* closed intervals in the window so far (<= slots) */
	size_t keys;		/* distinct (comm, pid, image, function) in the window */
};

/* The rows of view V over the window, most samples first: *ROWS is new memory the caller
 * frees (free()). 0 or -ENOMEM. */
int top_rows(const struct top *t, enum top_view v, struct top_row **rows, size_t *n);
void top_get_stats(const struct top *t, struct top_stats *st);

#endif
