/* collect/daemon_perf.h - the daemon's perf events: per-CPU sampling events with randomized
 * periods, per-CPU side-band rings (MMAP2/COMM/FORK/EXIT), and, without BPF, the samples
 * themselves delivered into those rings. */
#ifndef SPENT_COLLECT_DAEMON_PERF_H
#define SPENT_COLLECT_DAEMON_PERF_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/daemon_maps.h"
#include "spent/events.h"

struct dperf_config {
	const struct spent_event *evs;	/* events to sample (at most AGG_MAX_EVENTS) */
	size_t nev;
	uint64_t period_lo, period_hi;	/* random period range (events per sample); 0: use freq */
	uint64_t freq;		/* samples/s per CPU when the period is not fixed */
	bool samples_to_ring;	/* fallback: samples go to the side-band rings */
	bool sideband;		/* open the side-band rings (false for the bare benchmark mode) */
	size_t ring_pages;	/* data pages per CPU ring (power of two) */
};

/* What the ring reader calls for each record. */
struct dperf_handlers {
	void *arg;
	void (*mmap)(void *arg, const struct dmaps_mmap *mm);
	void (*fork)(void *arg, pid_t pid, pid_t ppid);
	void (*exec)(void *arg, pid_t pid);
	/* process PID's main thread is now named COMM (EXEC: by an exec, after exec()) */
	void (*comm)(void *arg, pid_t pid, const char *comm, bool exec);
	void (*exit)(void *arg, pid_t pid);
	void (*sample)(void *arg, int cpu, uint32_t event, pid_t pid, uint64_t pc);
	void (*lost)(void *arg, uint64_t n, bool samples);
};

struct dperf;

/* Open everything (disabled) on every online CPU. Caller frees with dperf_close. */
int dperf_open(const struct dperf_config *cfg, struct dperf **out);
void dperf_close(struct dperf *p);
int dperf_enable(struct dperf *p);
/* Stop sampling on every cpu (the sideband ring stays on): nothing lands after the last
 * drain. 0 or the first -errno. */
int dperf_disable_samples(struct dperf *p);
int dperf_ncpus(const struct dperf *p);
/* The sampling fd of event EV on CPU index I (the BPF program attaches there). */
int dperf_sample_fd(const struct dperf *p, int i, size_t ev);
/* Draw a new period for every sampling event on every CPU (no-op in frequency mode). */
int dperf_redraw_periods(struct dperf *p, uint64_t *rng);
/* Fill PFDS with the ring fds (at most MAX); returns how many. */
size_t dperf_pollfds(const struct dperf *p, struct pollfd *pfds, size_t max);
/* Read every ring up to its head, calling H; returns the number of records read. */
size_t dperf_read(struct dperf *p, const struct dperf_handlers *h);

/* A uniform random number in [LO, HI] from xorshift state *RNG. */
uint64_t dperf_random_period(uint64_t *rng, uint64_t lo, uint64_t hi);

#endif
