/* collect/daemon.h - `spent daemon`: continuous system-wide sampling on every CPU into an
 * epoch profile database (DCPI). The library runs the loop; the CLI owns signals and logs. */
#ifndef SPENT_COLLECT_DAEMON_H
#define SPENT_COLLECT_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/events.h"

struct daemon_config {
	const char *db;		/* database directory */
	const struct spent_event *evs;	/* events to sample (1..4) */
	size_t nev;
	uint64_t freq;		/* -F: samples/s per CPU (0 when PERIOD is given) */
	uint64_t period;	/* -c: events per sample (0 when FREQ is given) */
	uint64_t period_lo, period_hi;	/* --period-range (0: derived, +-1/32 of the period) */
	bool no_bpf;		/* use perf ring buffers + the user-space DCPI table */
	bool bare;		/* benchmark floor: open the sampling events, attach nothing */
	const char *const *per_process;	/* images that also get per-process profiles */
	size_t nper;
	unsigned tick_ms;	/* loop period: side-band reads, period redraws (<= 100) */
	unsigned drain_ms;	/* aggregation maps drained this often */
	unsigned merge_ms;	/* a merge into the database starts this often */
	size_t slice_files;	/* files written per tick while a merge runs */
	uint32_t map_entries;	/* keys per BPF aggregation map (0: sized from the CPU count) */
	const char *rate_note;	/* why this sampling rate (shown by `spent db status`) */
	/* where messages go (one line each, no newline); may be NULL */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	/* called once set-up is done (ERR 0) or failed (-errno, MSG says why); may be NULL */
	void (*ready)(void *arg, int err, const char *msg);
	void *ready_arg;
};

/*
 * Run the daemon until *STOP becomes non-zero (or a `stop` command): set up (database checks,
 * lock, side-band, BPF or fallback, control socket), loop, then drain and merge everything and
 * return 0, or -errno when setting up failed (-EBUSY: another daemon holds the database).
 * ERR (ERRLEN bytes, may be NULL) says which step failed.
 */
int daemon_run(const struct daemon_config *cfg, volatile sig_atomic_t *stop, char *err,
	       size_t errlen);

#endif
