/* collect/daemon_ctl.c - the daemon's lock (one daemon per database), its root-only control
 * socket (flush, epoch, status, stop; recent is daemon_tap.c) and its status counters (DB/status.json). */
#include "collect/daemon_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/binio.h"
#include "core/json.h"
#include "profile/db.h"

/* The lock is the database directory's flock: a file can be removed ("a stale lock") while
 * its daemon runs, which let a second daemon start on the same database, every sample then
 * merged twice. DB_LOCK_NAME holds the pid for the messages and is flocked too (the lock of
 * daemons before the directory's). */
int daemon_lock(struct daemon *d, char *err, size_t errlen)
{
	char path[4096], buf[32];
	int fd, r;

	if ((r = db_file_path(d->cfg->db, DB_LOCK_NAME, path, sizeof(path))))
		return r;
	d->dir_lock_fd = open(d->cfg->db, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (d->dir_lock_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open the database '%s': %s", d->cfg->db, strerror(errno));
		return r;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, DB_FILE_MODE);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open the lock file '%s': %s", path, strerror(errno));
		return r;
	}
	bool dir_held = flock(d->dir_lock_fd, LOCK_EX | LOCK_NB) < 0;
	bool file_held = flock(fd, LOCK_EX | LOCK_NB) < 0;
	if (dir_held && !file_held && !db_control_answers(d->cfg->db, 1000)) {
		/* the directory's lock without the lock file's, and no daemon's socket: a `db
		 * merge` (it takes the directory's only; a daemon whose lock file was removed
		 * still answers on its socket) */
		close(fd);
		snprintf(err, errlen, "a merge is writing '%s' (spent db %s merge): start the daemon "
			 "when it is done", d->cfg->db, d->cfg->db);
		return -EBUSY;
	}
	if (dir_held || file_held) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(err, errlen, "another daemon (pid %s) already uses '%s': stop it first, or "
			 "use another --db", buf[0] ? buf : "?", d->cfg->db);
		close(fd);
		return -EBUSY;
	}
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		r = 0;	/* the pid is informational; the flock is the lock */
	fchmod(fd, DB_FILE_MODE);
	d->lock_fd = fd;
	return 0;
}

int daemon_socket_open(struct daemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if ((r = db_file_path(d->cfg->db, DB_SOCKET_NAME, sa.sun_path, sizeof(sa.sun_path))))
		return r;
	unlink(sa.sun_path);	/* stale from a killed daemon: we hold the lock */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 ||
	    listen(fd, 8) < 0 || stat(sa.sun_path, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	d->sock_fd = fd;
	d->sock_dev = st.st_dev;
	d->sock_ino = st.st_ino;
	return 0;
}

int daemon_socket_renew(struct daemon *d)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;

	if (db_file_path(d->cfg->db, DB_SOCKET_NAME, path, sizeof(path)))
		return 0;
	if (d->sock_fd >= 0 && stat(path, &st) == 0 && st.st_dev == d->sock_dev &&
	    st.st_ino == d->sock_ino)
		return 0;
	if (d->sock_fd >= 0)
		close(d->sock_fd);	/* its name is gone: nobody can reach it */
	d->sock_fd = -1;
	int r = daemon_socket_open(d);
	return r ? r : 1;
}

bool daemon_db_moved(const struct daemon *d)
{
	struct stat a, b;
	if (d->dir_lock_fd < 0 || fstat(d->dir_lock_fd, &b) < 0)
		return false;
	return stat(d->cfg->db, &a) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

void daemon_socket_drop_moved(struct daemon *d, const char *db)
{
	char path[4096];
	struct stat st;
	if (d->sock_fd >= 0 && db_file_path(db, DB_SOCKET_NAME, path, sizeof(path)) == 0 &&
	    stat(path, &st) == 0 && st.st_dev == d->sock_dev && st.st_ino == d->sock_ino)
		unlink(path);
}

void daemon_socket_close(struct daemon *d)
{
	char path[4096];

	if (d->sock_fd < 0)
		return;
	close(d->sock_fd);
	d->sock_fd = -1;
	struct stat st;
	if (db_file_path(d->cfg->db, DB_SOCKET_NAME, path, sizeof(path)) == 0 && stat(path, &st) == 0 &&
	    st.st_dev == d->sock_dev && st.st_ino == d->sock_ino)
		unlink(path);
}

static void reply(int fd, const char *s)
{
	size_t n = strlen(s), off = 0;

	while (off < n) {
		ssize_t w = write(fd, s + off, n - off);
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

/* drain + merge everything, and the kernel's symbols a full disk kept back (a user who asks for
 * a flush wants everything on disk now, not at the next 10 s retry); 0 or -errno */
static int flush_all(struct daemon *d)
{
	int r = daemon_drain(d);

	if (!r && !(r = dmerge_finish(d->merge)))
		daemon_retry_kallsyms(d, daemon_now_ms());
	return r;
}

static void handle(struct daemon *d, int fd, const char *cmd)
{
	char out[4096];
	int r;

	if (!strcmp(cmd, "status")) {
		char *st = NULL;
		if (daemon_status_json(d, true, &st) == 0) {
			reply(fd, st);
			free(st);
			return;
		}
		snprintf(out, sizeof(out), "error status failed: %s\n", strerror(ENOMEM));
	} else if (!strcmp(cmd, "flush")) {
		r = flush_all(d);
		if (r)
			snprintf(out, sizeof(out), "error flush failed: %s\n", strerror(-r));
		else
			snprintf(out, sizeof(out), "ok flushed epoch %u\n", dmerge_epoch(d->merge));
	} else if (!strcmp(cmd, "epoch")) {
		uint32_t ep = 0;
		r = flush_all(d);
		r = r ? r : spent_profile_dir_new_epoch(d->db, &ep);
		if (r) {
			snprintf(out, sizeof(out), "error new epoch failed: %s\n", strerror(-r));
		} else {
			dmerge_set_epoch(d->merge, ep);
			snprintf(out, sizeof(out), "ok epoch %u\n", ep);
			daemon_log(d, "epoch %u started", ep);
		}
	} else if (!strcmp(cmd, "recent")) {
		daemon_tap_serve(d, fd);
		return;
	} else if (!strcmp(cmd, "stop")) {
		d->stop_requested = true;
		snprintf(out, sizeof(out), "ok stopping\n");
	} else {
		/* echoed for the operator's terminal: no control bytes of a client's choosing
		 * (nor bytes >= 0x80: UTF-8's U+009B is a CSI to xterm-like terminals) */
		char shown[65];
		size_t i = 0;
		for (; cmd[i] && i < sizeof(shown) - 1; i++) {
			unsigned char c = (unsigned char)cmd[i];
			shown[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
		}
		shown[i] = '\0';
		snprintf(out, sizeof(out), "error unknown command '%s'\n", shown);
	}
	reply(fd, out);
}

void daemon_socket_serve(struct daemon *d)
{
	int fd;

	while ((fd = accept4(d->sock_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		char line[256];
		size_t got = 0;

		/* a client that does not read its reply (a `recent` of MBs) must not block the
		 * daemon, nor SIGTERM: its writes give up after a while */
		struct timeval snd = { .tv_sec = 2 };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != 0) {
			reply(fd, "error permission denied: the control socket is root-only\n");
			close(fd);
			continue;
		}
		/* the whole line within one deadline: a client sending a byte a second held the
		 * daemon (no drains, no merges) for minutes */
		uint64_t deadline = daemon_now_ms() + 1000;
		while (got < sizeof(line) - 1) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			uint64_t now = daemon_now_ms();
			if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
				break;
			ssize_t n = read(fd, line + got, sizeof(line) - 1 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
			if (memchr(line, '\n', got))
				break;
		}
		/* the command is the bytes up to the line's end (\n, \r\n or the last byte); a NUL
		 * or a lone \r inside them would end it early ("flush\0junk" ran flush): refused
		 * whole instead */
		size_t len = 0;
		while (len < got && line[len] != '\n')
			len++;
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (memchr(line, '\0', len) || memchr(line, '\r', len)) {
			reply(fd, "error malformed command: it holds a NUL byte or a carriage return\n");
			close(fd);
			continue;
		}
		line[len] = '\0';
		handle(d, fd, line);
		close(fd);
	}
}

static uint64_t cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static uint64_t rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* The images with the most samples and their own reduction, as one string:
 * "PATH RED x (SAMPLES/ENTRIES); ..." (the JSON writer escapes it). Caller frees. */
static char *top_images(struct daemon *d)
{
	struct dmerge_image_stats top[3];
	size_t n = dmerge_top_images(d->merge, top, 3), len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s %.1fx (%llu/%llu)", i ? "; " : "", dmaps_image(d->maps, top[i].image)->path,
			(double)top[i].samples / (double)top[i].entries,
			(unsigned long long)top[i].samples, (unsigned long long)top[i].entries);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int daemon_status_json(struct daemon *d, bool running, char **out)
{
	const struct daemon_config *c = d->cfg;
	struct dmerge_stats ms;
	struct dbuildid_stats bs;
	struct dmaps_stats mp;
	struct agg_stats ks = { 0 };
	uint64_t samples = daemon_samples(d), overflowed = 0, dropped = 0, evictions = 0;
	double attributed, unknown_pct, reduction;
	struct json_writer w;
	char rate[48], *top, *buf = NULL;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	dmerge_get_stats(d->merge, &ms);
	dmerge_get_buildid_stats(d->merge, &bs);
	dmaps_get_stats(d->maps, &mp);
	if (d->bpf && dbpf_stats(d->bpf, &ks) == 0) {
		overflowed = ks.overflowed;
		dropped = ks.dropped;
	} else if (!d->bpf) {	/* the fallback counts them as it reads the rings */
		ks.kernel = d->ring_kernel;
	}
	for (int i = 0; i < d->ntables; i++) {
		struct dcpi_table_stats ts;
		if (!d->tables[i])
			continue;
		dcpi_table_get_stats(d->tables[i], &ts);
		evictions += ts.evictions;
		dropped += ts.dropped;
	}
	attributed = (double)(ms.placed + ms.unknown + ms.anon);
	unknown_pct = attributed > 0 ? 100.0 * (double)ms.unknown / attributed : 0.0;
	reduction = d->entries ? (double)samples / (double)d->entries : 0.0;
	snprintf(rate, sizeof(rate), "%s%llu", d->freq ? "F=" : "period=",
		 (unsigned long long)(d->freq ? d->freq : (d->period_lo + d->period_hi) / 2));
	top = top_images(d);
	f = open_memstream(&buf, &len);
	if (!top || !f) {
		free(top);
		if (f)
			fclose(f);
		free(buf);
		return -ENOMEM;
	}
	json_init(&w, f);
	json_object_begin(&w);
	json_kbool(&w, "running", running);
	json_ki64(&w, "pid", (int)getpid());
	json_kstr(&w, "db", c->db);
	json_ku64(&w, "epoch", dmerge_epoch(d->merge));
	json_kstr(&w, "aggregator", d->bpf ? "bpf" : "perf-ring+dcpi-table");
	json_kstr(&w, "event", c->evs[0].spec);
	json_ku64(&w, "events", c->nev);
	json_kstr(&w, "rate", rate);
	json_kstr(&w, "rate_note", c->rate_note ? c->rate_note : "");
	json_kdouble(&w, "uptime_s", (double)(daemon_now_ms() - d->t_start) / 1000.0, 1);
	json_ku64(&w, "samples", samples);
	json_kdouble(&w, "samples_per_s", d->samples_per_s, 1);
	json_ku64(&w, "entries", d->entries);
	json_kdouble(&w, "reduction", reduction, 1);
	json_ku64(&w, "kernel_samples", ks.kernel);
	json_ku64(&w, "overflowed", overflowed);
	json_ku64(&w, "evictions", evictions);
	json_ku64(&w, "dropped", dropped);
	json_ku64(&w, "lost", ms.lost);
	json_ku64(&w, "sideband_lost", d->sideband_lost);
	json_ku64(&w, "placed", ms.placed);
	json_ku64(&w, "unknown", ms.unknown);
	json_ku64(&w, "anon", ms.anon);
	json_kdouble(&w, "unknown_pct", unknown_pct, 4);
	json_kdouble(&w, "cpu_pct", d->cpu_pct, 2);
	json_ku64(&w, "rss_kb", rss_kb());
	json_ku64(&w, "processes", mp.processes);
	json_ku64(&w, "exited_pending", mp.exited_pending);
	json_ku64(&w, "images", mp.images);
	json_ku64(&w, "drains", d->drains);
	json_ku64(&w, "merges", ms.merges);
	json_ku64(&w, "files_written", ms.files_written);
	json_ku64(&w, "write_errors", ms.write_errors);
	json_kstr(&w, "last_error", ms.last_error ? strerror(-ms.last_error) : "");
	json_ku64(&w, "pending_cells", ms.pending_cells);
	json_kstr(&w, "buildid_cache", bs.off ? "off" : "on");
	json_ku64(&w, "buildid_saved", bs.saved);
	json_ku64(&w, "buildid_bytes", bs.bytes);
	json_ku64(&w, "buildid_queued", bs.queued);
	json_ku64(&w, "buildid_errors", bs.errors);
	json_kstr(&w, "buildid_last_error", bs.last_error ? strerror(-bs.last_error) : "");
	json_ku64(&w, "map_entries", d->bpf ? dbpf_map_entries(d->bpf) : 0u);
	json_kbool(&w, "map_on_demand", d->bpf && dbpf_maps_on_demand(d->bpf));
	json_ku64(&w, "drain_ms", c->drain_ms);
	json_kstr(&w, "reduction_by_image", top);
	json_object_end(&w);
	json_newline(&w);
	free(top);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

void daemon_status_update(struct daemon *d, bool running)
{
	uint64_t now = daemon_now_ms(), s = daemon_samples(d), cpu = cpu_us();
	char path[4096], *buf;

	if (d->win_t && now > d->win_t) {
		double dt = (double)(now - d->win_t) / 1000.0;
		d->samples_per_s = (double)(s - d->win_samples) / dt;
		d->cpu_pct = (double)(cpu - d->win_cpu_us) / 1e4 / dt;
	}
	d->win_t = now;
	d->win_samples = s;
	d->win_cpu_us = cpu;
	if (daemon_status_json(d, running, &buf))
		return;
	/* best effort: a full disk must not stop sampling */
	if (db_file_path(d->cfg->db, DB_STATUS_NAME, path, sizeof(path)) == 0)
		binio_write_file_atomic(path, buf, strlen(buf), DB_FILE_MODE);
	free(buf);
}
