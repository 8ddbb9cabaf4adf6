/* collect/daemon.c - `spent daemon`'s set-up and main loop: side-band and /proc scan, the BPF
 * aggregator or the perf-ring fallback with DCPI tables, period redraws, drains, incremental
 * merges, and the final flush on SIGTERM. */
#include "collect/daemon_int.h"
#include "collect/daemon_kernel.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "profile/db.h"

#define MAX_POLL 520
#define PERIOD_REDRAW_MS 100	/* >= 10 redraws per second per CPU */
#define STATUS_MS 1000
/* Fallback table per CPU: 16K buckets of 4 entries (1 MiB): with drains a minute apart the table
 * holds the hot keys and evicts the cold ones (DCPI's mod-4 eviction) into the overflow pair. */
#define FALLBACK_BUCKETS 16384

uint64_t daemon_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t daemon_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void daemon_log(struct daemon *d, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!d->cfg->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->cfg->log(d->cfg->log_arg, msg);
}

static void on_entry(void *arg, pid_t pid, uint64_t pc, uint32_t event, uint64_t count)
{
	struct daemon *d = arg;

	d->entries++;
	dmerge_add(d->merge, pid, pc, event, count);
	if (d->tap)
		daemon_tap_add(d, pid, pc, event, count);
}

static void on_dcpi_entry(void *arg, const struct dcpi_entry *e)
{
	on_entry(arg, (pid_t)e->pid, e->pc, e->event, e->count);
}

/* ---- side-band and fallback samples ------------------------------------------------------ */

static void sb_mmap(void *arg, const struct dmaps_mmap *mm)
{
	struct daemon *d = arg;

	dmaps_mmap(d->maps, mm);
}

static void sb_fork(void *arg, pid_t pid, pid_t ppid)
{
	struct daemon *d = arg;

	dmaps_fork(d->maps, pid, ppid);
}

static void sb_exec(void *arg, pid_t pid)
{
	struct daemon *d = arg;

	dmaps_exec(d->maps, pid);
}

static void sb_comm(void *arg, pid_t pid, const char *comm, bool exec)
{
	struct daemon *d = arg;

	dmaps_comm(d->maps, pid, comm, exec);
}

static void sb_exit(void *arg, pid_t pid)
{
	struct daemon *d = arg;

	dmaps_exit(d->maps, pid, d->gen);
}

static void sb_sample(void *arg, int cpu, uint32_t event, pid_t pid, uint64_t pc)
{
	struct daemon *d = arg;
	const struct dcpi_entry *e;
	size_t n;

	d->ring_samples++;
	if (pc >= DMAPS_KERNEL_START)
		d->ring_kernel++;
	if (cpu < 0 || cpu >= d->ntables || !d->tables[cpu])
		return;
	if (dcpi_table_add(d->tables[cpu], (uint32_t)pid, pc, (uint16_t)event) == 0)
		return;
	/* an overflow buffer filled up: the daemon copies it out (DCPI's wake-up) */
	while ((n = dcpi_table_take_overflow(d->tables[cpu], &e)) > 0) {
		for (size_t i = 0; i < n; i++)
			on_dcpi_entry(d, &e[i]);
		dcpi_table_release_overflow(d->tables[cpu]);
	}
}

static void sb_lost(void *arg, uint64_t n, bool samples)
{
	struct daemon *d = arg;

	if (samples)
		dmerge_add_lost(d->merge, 0, n);
	else
		d->sideband_lost += n;
}

static const struct dperf_handlers sb_handlers = {
	.mmap = sb_mmap, .fork = sb_fork, .exec = sb_exec, .comm = sb_comm, .exit = sb_exit,
	.sample = sb_sample, .lost = sb_lost,
};

static void read_rings(struct daemon *d)
{
	struct dperf_handlers h = sb_handlers;

	h.arg = d;
	dperf_read(d->perf, &h);
}

uint64_t daemon_samples(struct daemon *d)
{
	struct agg_stats st;

	if (d->bpf && dbpf_stats(d->bpf, &st) == 0)
		return st.samples;
	return d->ring_samples;
}

int daemon_drain(struct daemon *d)
{
	int n = 0;
	uint64_t wall = daemon_wall_ns();

	read_rings(d);	/* every exit seen so far is marked with this generation */
	/* what this drain hands over was sampled since the last one: its rows get that time,
	 * and the epoch covers it */
	dmerge_set_interval(d->merge, d->wall_drain, wall);
	if (d->bpf) {
		struct agg_stats st;
		if (dbpf_stats(d->bpf, &st) == 0)
			d->new_at_flip = st.new_entries;
		n = dbpf_drain(d->bpf, on_entry, d);
		if (n >= 0)
			dbpf_read_overflow(d->bpf, on_entry, d);
	} else {
		for (int c = 0; c < d->ntables; c++)
			if (d->tables[c])
				dcpi_table_drain(d->tables[c], on_dcpi_entry, d);
	}
	/* the samples of processes that exited before this drain are all in now */
	dmaps_reap(d->maps, d->gen);
	d->gen++;
	d->drains++;
	d->t_drain = daemon_now_ms();
	/* overflow records read between drains were sampled after this one */
	d->wall_drain = wall;
	dmerge_set_interval(d->merge, wall, wall);
	return n < 0 ? n : 0;
}

/* ---- set-up ------------------------------------------------------------------------------- */

static bool is_clock(const struct spent_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* A fixed base period (randomized around) when -c is given or the events are clocks. */
static void choose_periods(struct daemon *d)
{
	const struct daemon_config *c = d->cfg;
	uint64_t base = c->period;
	bool clocks = true;

	for (size_t e = 0; e < c->nev; e++)
		clocks = clocks && is_clock(&c->evs[e]);
	if (!base && clocks && c->freq)
		base = 1000000000ull / c->freq;	/* clocks count nanoseconds */
	d->freq = base ? 0 : c->freq;
	if (!base)
		return;
	d->period_lo = c->period_lo ? c->period_lo : base - base / 32;
	d->period_hi = c->period_hi ? c->period_hi : base + base / 32;
}

static int open_collectors(struct daemon *d, char *err, size_t errlen)
{
	const struct daemon_config *c = d->cfg;
	struct dperf_config pc = {
		.evs = c->evs, .nev = c->nev, .period_lo = d->period_lo, .period_hi = d->period_hi,
		.freq = d->freq, .samples_to_ring = c->no_bpf, .sideband = !c->bare,
		.ring_pages = 128,
	};
	int r = dperf_open(&pc, &d->perf);

	if (r) {
		snprintf(err, errlen, "cannot open the sampling events on every cpu: %s", strerror(-r));
		return r;
	}
	if (c->bare || c->no_bpf)
		goto fallback;
	r = dbpf_open(d->perf, c->nev, c->map_entries, &d->bpf);
	if (r == 0)
		return 0;
	daemon_log(d, "bpf aggregator refused (%s): falling back to perf ring buffers and the "
		      "user-space dcpi table", strerror(-r));
	dperf_close(d->perf);
	d->perf = NULL;
	pc.samples_to_ring = true;
	if ((r = dperf_open(&pc, &d->perf))) {
		snprintf(err, errlen, "cannot open the sampling events on every cpu: %s", strerror(-r));
		return r;
	}
fallback:
	if (c->bare)
		return 0;
	d->ntables = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (d->ntables < 1)
		d->ntables = 1;
	d->tables = calloc((size_t)d->ntables, sizeof(*d->tables));
	if (!d->tables)
		return -ENOMEM;
	for (int i = 0; i < d->ntables; i++)
		if ((r = dcpi_table_new(FALLBACK_BUCKETS, 1024, &d->tables[i])))
			return r;
	return 0;
}

static int setup(struct daemon *d, char *err, size_t errlen)
{
	const struct daemon_config *c = d->cfg;
	struct dmerge_event mev[AGG_MAX_EVENTS];
	int r;

	d->rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	d->rng |= 1;
	choose_periods(d);
	if (c->bare)
		goto collectors;
	/* checked before anything is made: the socket is created last, and a path too long for
	 * it left the directory holding a lock, a meta, an epoch and a kernel copy */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	if (db_file_path(c->db, DB_SOCKET_NAME, sock, sizeof(sock))) {
		snprintf(err, errlen, "cannot use '%s' as the database: its path is too long for "
			 "the control socket (%zu bytes, at most %zu)", c->db, strlen(c->db),
			 sizeof(sock) - sizeof("/" DB_SOCKET_NAME));
		return -ENAMETOOLONG;
	}
	umask(027);
	if ((r = db_open(c->db, true, &d->db))) {
		snprintf(err, errlen, "cannot use '%s' as the database: %s", c->db,
			 r == -ELOOP ? "it is a symlink" : r == -EPERM ? "not owned by root" :
			 r == -EEXIST || r == -EBADMSG ? "the directory is not empty and not a profile database" :
			 strerror(-r));
		return r;
	}
	if ((r = daemon_lock(d, err, errlen)))
		return r;
	/* before any epoch is written: a staged merge exchanged in later would drop our counts */
	if ((r = db_merge_recover(c->db, true))) {
		snprintf(err, errlen, "cannot finish the merge a crash interrupted in '%s/%s': %s", c->db,
			 DB_MERGE_PENDING_NAME, db_merge_recover_strerror(r));
		return r;
	}
	db_clean_stale(d->db);	/* a daemon killed mid-write left *.prof.tmp.PID.* behind */
	if ((r = dmaps_new(&d->maps)))
		return r;
	struct image_info kinfo = { 0 };
	image_describe_kernel(&kinfo);
	if ((r = dkernel_save_identity(c->db, "/proc/kallsyms", 0640, &kinfo.id))) {
		daemon_log(d, "cannot save the kernel's symbols in '%s': %s", c->db,
			   r == -ENOKEY ? "the kernel has no build-id or no _text symbol" :
			   strerror(-r));	/* reports use /proc/kallsyms then */
		/* a write the disk refused, not symbols that cannot be read */
		d->kallsyms_unsaved = r == -ENOSPC || r == -EDQUOT || r == -EIO || r == -EROFS;
	}
	dmaps_set_kernel_identity(d->maps, &kinfo.id);
collectors:
	if ((r = open_collectors(d, err, errlen)))
		return r;
	if (c->bare)
		return dperf_enable(d->perf);
	for (size_t e = 0; e < c->nev; e++)
		mev[e] = (struct dmerge_event){ .name = c->evs[e].spec,
			.period = d->freq ? d->freq : (d->period_lo + d->period_hi) / 2,
			.freq = d->freq != 0 };
	if ((r = dmerge_new(d->db, d->maps, mev, c->nev, c->per_process, c->nper,
			    SPENT_PROFILE_TIME_BUCKET_NS, &d->merge))) {
		snprintf(err, errlen, "cannot open the current epoch of '%s': %s", c->db, strerror(-r));
		return r;
	}
	if (c->log)
		dmerge_set_log(d->merge, c->log, c->log_arg);
	if ((r = daemon_socket_open(d))) {
		snprintf(err, errlen, "cannot create the control socket in '%s': %s", c->db, strerror(-r));
		return r;
	}
	/* side-band on first, then the scan: nothing falls in between */
	if ((r = dperf_enable(d->perf)))
		return r;
	if ((r = dmaps_scan_proc(d->maps, "/proc")))
		daemon_log(d, "scanning /proc failed: %s", strerror(-r));
	read_rings(d);
	dmerge_set_interval(d->merge, d->wall_drain, d->wall_drain);
	return 0;
}

static void teardown(struct daemon *d)
{
	daemon_tap_free(d);
	daemon_socket_close(d);
	dbpf_close(d->bpf);
	dperf_close(d->perf);
	for (int i = 0; i < d->ntables; i++)
		dcpi_table_free(d->tables[i]);
	free(d->tables);
	dmerge_free(d->merge);
	dmaps_free(d->maps);
	spent_profile_dir_close(d->db);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	if (d->dir_lock_fd >= 0)
		close(d->dir_lock_fd);
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* The kernel's symbols a refused write kept from being saved at start, tried again now (after a
 * merge that wrote: the disk takes files again). */
void daemon_retry_kallsyms(struct daemon *d, uint64_t now)
{
	if (!d->kallsyms_unsaved)
		return;
	struct image_info k = { 0 };
	image_describe_kernel(&k);
	d->t_kallsyms_retry = now + 10000;
	if (!dkernel_save_identity(d->cfg->db, "/proc/kallsyms", 0640, &k.id)) {
		d->kallsyms_unsaved = false;
		daemon_log(d, "saved the kernel's symbols in '%s' now", d->cfg->db);
	}
}

static void merge_tick(struct daemon *d, uint64_t now)
{
	int r;

	if (now - d->t_merge >= d->cfg->merge_ms || d->merge_due) {
		d->t_merge = now;
		d->merge_due = false;
		if ((r = dmerge_start(d->merge)))
			daemon_log(d, "starting a merge failed: %s", strerror(-r));
	}
	if (now < d->t_merge_retry)
		return;
	r = dmerge_step(d->merge, d->cfg->slice_files);
	if (r >= 0) {
		if (d->logged_err)
			daemon_log(d, "writing to '%s' works again", d->cfg->db);
		d->logged_err = 0;
		if (now >= d->t_kallsyms_retry)
			daemon_retry_kallsyms(d, now);
		return;
	}
	/* disk full, read-only, ...: keep sampling, keep the counts, retry in a second */
	d->t_merge_retry = now + 1000;
	if (r != d->logged_err || now - d->t_logged_err >= 10000) {
		struct dmerge_stats ms;
		dmerge_get_stats(d->merge, &ms);
		daemon_log(d, "writing epoch %u of '%s' failed: %s: still sampling, %llu cells kept "
			      "in memory, retrying", dmerge_epoch(d->merge), d->cfg->db, strerror(-r),
			   (unsigned long long)ms.pending_cells);
		d->logged_err = r;
		d->t_logged_err = now;
	}
}

static bool map_nearly_full(struct daemon *d)
{
	struct agg_stats st;

	if (!d->bpf || dbpf_stats(d->bpf, &st))
		return false;
	return st.new_entries - d->new_at_flip > (uint64_t)dbpf_map_entries(d->bpf) * 3 / 4;
}

static void tick(struct daemon *d)
{
	uint64_t now = daemon_now_ms();

	read_rings(d);
	if (d->bpf)
		dbpf_read_overflow(d->bpf, on_entry, d);
	if (now - d->t_period >= PERIOD_REDRAW_MS) {
		dperf_redraw_periods(d->perf, &d->rng);
		d->t_period = now;
	}
	if (now - d->t_drain >= d->cfg->drain_ms || map_nearly_full(d)) {
		daemon_drain(d);
		/* what left the kernel goes to disk now, not up to a merge interval later: kill -9
		 * loses at most one drain interval (plus the merge in progress) */
		d->merge_due = true;
	}
	merge_tick(d, now);
	if (now - d->t_status >= STATUS_MS) {
		if (daemon_db_moved(d)) {
			daemon_log(d, "the database directory '%s' was moved or removed: stopping (the "
				   "counts go to the moved directory; start a daemon on it again)", d->cfg->db);
			d->stop_requested = true;
			d->db_moved = true;
			return;
		}
		int s = daemon_socket_renew(d);
		if (s == 1)
			daemon_log(d, "the control socket of '%s' was removed: made again", d->cfg->db);
		else if (s < 0 && !d->sock_lost)
			daemon_log(d, "the control socket of '%s' was removed and cannot be made again: "
				   "%s (stop the daemon with SIGTERM)", d->cfg->db, strerror(-s));
		d->sock_lost = s < 0;
		daemon_status_update(d, true);
		d->t_status = now;
	}
}

static void loop(struct daemon *d, volatile sig_atomic_t *stop)
{
	struct pollfd pfds[MAX_POLL];

	while (!*stop && !d->stop_requested) {
		size_t n = 0;
		if (!d->cfg->bare) {
			n = dperf_pollfds(d->perf, pfds, MAX_POLL - 2);
			pfds[n++] = (struct pollfd){ .fd = d->sock_fd, .events = POLLIN };
			if (d->bpf)
				pfds[n++] = (struct pollfd){ .fd = dbpf_overflow_fd(d->bpf), .events = POLLIN };
		}
		int r = poll(pfds, n, (int)d->cfg->tick_ms);
		if (r < 0 && errno != EINTR)
			break;
		if (d->cfg->bare) {
			dperf_redraw_periods(d->perf, &d->rng);
			continue;
		}
		tick(d);
		for (size_t i = 0; i < n; i++)
			if (pfds[i].fd == d->sock_fd && (pfds[i].revents & POLLIN))
				daemon_socket_serve(d);
	}
}

int daemon_run(const struct daemon_config *cfg, volatile sig_atomic_t *stop, char *err,
	       size_t errlen)
{
	struct daemon d = { .cfg = cfg, .lock_fd = -1, .sock_fd = -1, .dir_lock_fd = -1 };
	char dummy[8];
	int r;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (cfg->nev == 0 || cfg->nev > AGG_MAX_EVENTS || (!cfg->db && !cfg->bare) ||
	    cfg->tick_ms == 0 || cfg->tick_ms > PERIOD_REDRAW_MS) {
		snprintf(err, errlen, "bad daemon configuration");
		return -EINVAL;
	}
	d.t_start = d.t_drain = d.t_merge = d.t_period = d.t_status = daemon_now_ms();
	d.wall_drain = daemon_wall_ns();
	r = setup(&d, err, errlen);
	if (cfg->ready)
		cfg->ready(cfg->ready_arg, r, err);
	if (r)
		goto out;
	if (!cfg->bare)
		daemon_log(&d, "sampling %zu event(s) on %d cpus with %s, %s %llu, into '%s' epoch %u",
			   cfg->nev, dperf_ncpus(d.perf),
			   d.bpf ? "the bpf aggregator" : "perf rings and dcpi tables",
			   d.freq ? "frequency (Hz)" : "mean period",
			   (unsigned long long)(d.freq ? d.freq : (d.period_lo + d.period_hi) / 2),
			   cfg->db, dmerge_epoch(d.merge));
	loop(&d, stop);
	if (cfg->bare)
		goto out;
	/* SIGTERM: everything sampled so far goes to disk. Sampling stops first: samples that
	 * landed after the last drain's flip were never drained (46 of 459 in a 5 s run), while
	 * the status counted them */
	dperf_disable_samples(d.perf);
	daemon_drain(&d);
	if (d.db_moved) {
		/* the path names another directory now, or none: nothing is written there; the
		 * counts go where the locked directory is now, when it still is somewhere */
		char now[PATH_MAX];
		if (!db_follow_move(d.db, d.dir_lock_fd, now, sizeof(now)) && !dmerge_finish(d.merge)) {
			daemon_socket_drop_moved(&d, now);
			snprintf(err, errlen, "the database directory '%s' was moved to '%s' while the "
				 "daemon ran: its last counts were written there; start a daemon on it "
				 "again", cfg->db, now);
			daemon_log(&d, "stopped; the last counts are in '%s'", now);
		} else {
			snprintf(err, errlen, "the database directory '%s' was moved or removed while "
				 "the daemon ran: the counts not merged yet are lost", cfg->db);
			daemon_log(&d, "stopped, counts lost");
		}
		r = -ENOENT;	/* it stopped without being asked: a service manager must see it */
		goto out;
	}
	if ((r = dmerge_finish(d.merge))) {
		/* everything not written yet: after failed retries that is more than an interval */
		struct dmerge_stats ms;
		dmerge_get_stats(d.merge, &ms);
		snprintf(err, errlen, "final merge into '%s' failed: %s: %llu cells of counts not "
			 "written are lost", cfg->db, strerror(-r), (unsigned long long)ms.pending_cells);
		daemon_log(&d, "%s", err);
	}
	daemon_status_update(&d, false);
	daemon_log(&d, r ? "stopped, counts lost" : "stopped");
	/* a failed final merge is the run's result: a service manager must see it */
out:
	teardown(&d);
	return r;
}
