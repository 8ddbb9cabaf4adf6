/* collect/live.h - live system-wide samples for `spent top`, from either of two sources: its
 * own sampling, with the daemon's per-CPU perf events (collect/daemon_perf.h, samples
 * delivered into the side-band rings) and map table (collect/daemon_maps.h) and no database
 * behind them; or a running daemon's `recent` control command (collect/daemon_tap.c), the
 * counts its aggregator gathered since the last request. Each read hands every new count to
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
	const struct spent_profile_image *img;	/* NULL when the pc is in no known mapping */
	uint64_t offset;		/* image offset (link-time address) or the pc itself */
	uint64_t count;			/* samples: 1 from own sampling, summed from a daemon */
};

typedef void (*live_sample_fn)(void *arg, const struct live_sample *s);

struct live;

/* Open the events on every online cpu, enable them, scan /proc. 0 or -errno (-EACCES when
 * perf_event_paranoid keeps this user from system-wide events). */
int live_open(const struct live_config *cfg, struct live **out);
void live_close(struct live *l);
/* Attach to the daemon serving database DB instead; its first answer (everything since its
 * last drain) is read and dropped. 0, -ENOENT or -ECONNREFUSED (no daemon), -EACCES (the
 * socket is root-only), -EPROTO (a daemon without the `recent` command), -errno. */
int live_open_daemon(const char *db, struct live **out);
/* The cpus sampled (0 for a daemon's counts). */
int live_ncpus(const struct live *l);
/* The event sampled: EV's spec, or the daemon's first event. */
const char *live_event(const struct live *l);
/* Read every ring up to now (or ask the daemon), calling FN for each count. Returns the counts
 * delivered (a daemon that does not answer: none this time). */
size_t live_read(struct live *l, live_sample_fn fn, void *arg);
/* Why the daemon did not answer the last read (-errno), 0 when it did or for own sampling. */
int live_last_error(const struct live *l);
/* Samples the kernel dropped (rings full), or entries the daemon could not keep for us. */
uint64_t live_lost(const struct live *l);

#endif
