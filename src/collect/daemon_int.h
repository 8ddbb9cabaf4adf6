/* collect/daemon_int.h - the daemon's state, shared by daemon.c (set-up, loop, drains) and
 * daemon_ctl.c (control socket, lock, status). Not a public header. */
#ifndef SPENT_COLLECT_DAEMON_INT_H
#define SPENT_COLLECT_DAEMON_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/daemon.h"
#include "collect/daemon_bpf.h"
#include "collect/daemon_maps.h"
#include "collect/daemon_merge.h"
#include "collect/daemon_perf.h"
#include "collect/dcpi_table.h"
#include "spent/profile.h"

struct daemon {
	const struct daemon_config *cfg;
	struct spent_profile_dir *db;
	int lock_fd, sock_fd;
	/* the control socket's node (it is unlinked at stop only while it is still ours: a daemon
	 * started on the path after the directory moved has its own) */
	dev_t sock_dev;
	ino_t sock_ino;
	int dir_lock_fd;	/* the database directory itself, flocked (daemon_lock) */
	struct dmaps *maps;
	struct dperf *perf;
	struct dbpf *bpf;	/* NULL in the fallback */
	struct dcpi_table **tables;	/* fallback: one per CPU number */
	int ntables;
	struct dmerge *merge;
	uint64_t period_lo, period_hi, freq;	/* what was opened */
	uint64_t gen;		/* drain generation (exited processes are kept one drain) */
	uint64_t rng;
	bool stop_requested;	/* by the `stop` command */
	bool merge_due;		/* a periodic drain happened: start a merge on this tick */
	/* counters */
	uint64_t ring_samples;	/* fallback: samples read from the perf rings */
	uint64_t ring_kernel;	/* fallback: those of them whose pc is in the kernel */
	uint64_t entries;	/* aggregated entries handed from the aggregator to the daemon */
	uint64_t drains;
	uint64_t sideband_lost;	/* side-band records lost (maps may be incomplete) */
	uint64_t new_at_flip;	/* BPF new_entries when the map was last flipped */
	/* times (ms, monotonic) */
	uint64_t wall_drain;	/* CLOCK_REALTIME ns of the last drain (or the start) */
	uint64_t t_start, t_drain, t_merge, t_period, t_status, t_merge_retry, t_logged_err;
	int logged_err;
	/* the kernel's symbols could not be saved at start (a full disk): retried after merges
	 * that wrote, at most every 10 s, and at once after a `flush` that wrote, so the epochs
	 * stay readable after a reboot */
	bool kallsyms_unsaved;
	bool db_moved;		/* the --db path stopped naming the locked directory */
	bool sock_lost;		/* the control socket could not be made again (logged once) */
	uint64_t t_kallsyms_retry;
	/* rates over the last status window */
	uint64_t win_t, win_samples, win_cpu_us;
	double samples_per_s, cpu_pct;
	struct daemon_tap *tap;	/* the `recent` command's entries, while a client asks */
};

uint64_t daemon_now_ms(void);
uint64_t daemon_wall_ns(void);
void daemon_log(struct daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Samples taken so far (kernel counter with BPF, ring records in the fallback). */
uint64_t daemon_samples(struct daemon *d);
/* Drain the aggregator into the pending profile (side-band first, then reap). */
int daemon_drain(struct daemon *d);
void daemon_retry_kallsyms(struct daemon *d, uint64_t now);

/* daemon_ctl.c */
int daemon_lock(struct daemon *d, char *err, size_t errlen);
int daemon_socket_open(struct daemon *d);
void daemon_socket_serve(struct daemon *d);
void daemon_socket_close(struct daemon *d);
/* The database moved to DB: its copy of the control socket (still ours) is removed there. */
void daemon_socket_drop_moved(struct daemon *d, const char *db);
/* Whether the --db path no longer names the directory the daemon locked (moved or removed):
 * it would write into whatever is there, beside another daemon. */
bool daemon_db_moved(const struct daemon *d);
/* The control socket made again when its name was removed or replaced (a cleaner of the
 * directory, an operator's rm): 0 when it is in place, 1 when made again, or -errno (the
 * next call tries again). Without it the daemon ran on with no way to flush or stop it
 * but a signal. */
int daemon_socket_renew(struct daemon *d);
/* The status as one JSON object line (newline included) in a new string *OUT the caller
 * frees; 0 or -ENOMEM. */
int daemon_status_json(struct daemon *d, bool running, char **out);
void daemon_status_update(struct daemon *d, bool running);

/* daemon_tap.c: the `recent` command (spent top) */
void daemon_tap_add(struct daemon *d, pid_t pid, uint64_t pc, uint32_t event, uint64_t count);
void daemon_tap_serve(struct daemon *d, int fd);
void daemon_tap_free(struct daemon *d);

#endif
