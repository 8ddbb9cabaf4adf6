/* collect/live.h - live system-wide sampling for `spent top`: the daemon's per-CPU perf events
 * (collect/daemon_perf.h, samples delivered into the side-band rings) and its map table
 * (collect/daemon_maps.h), with no database behind them: each read hands every new sample to
 * the caller already placed in (pid, comm, image, offset). */
#ifndef SPENT_COLLECT_LIVE_H
#define SPENT_COLLECT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/events.h"
#include "spent/profile.h"

struct live_config {
	const struct spent_event *ev;	/* the one event sampled */
	uint64_t freq;			/* samples per second per cpu */
};

/* One sample as the caller gets it: strings and IMG live until the next live_read call. */
struct live_sample {
	pid_t pid;			/* tgid; 0 for the idle task */
	const char *comm;		/* the process's name, "[PID]" when it is gone unread */
	const struct profile_image *img;	/* NULL when the pc is in no known mapping */
	uint64_t offset;		/* image offset (link-time address) or the pc itself */
};

typedef void (*live_sample_fn)(void *arg, const struct live_sample *s);

struct live;

/* Open the events on every online cpu, enable them, scan /proc. 0 or -errno (-EACCES when
 * perf_event_paranoid keeps this user from system-wide events). */
int live_open(const struct live_config *cfg, struct live **out);
void live_close(struct live *l);
int live_ncpus(const struct live *l);
/* Read every ring up to now, calling FN for each sample. Returns the samples delivered. */
size_t live_read(struct live *l, live_sample_fn fn, void *arg);
/* Samples the kernel dropped (rings full) since live_open. */
uint64_t live_lost(const struct live *l);

#endif
