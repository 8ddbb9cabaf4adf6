/* cli/cmd_daemon.c - `spent daemon`: options, default events and rate, signals, logging,
 * detaching into the background; the loop itself is collect/daemon.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "collect/daemon.h"
#include "profile/db.h"
#include "spent/events.h"

#define DEFAULT_DB SPENT_DEFAULT_DB
/* Software timers exit the VM on every sample: bench/daemon.sh measured the bare cpu-clock
 * timer at this rate to keep the total slowdown within 1% (see docs/daemon.md). */
#define DEFAULT_SW_HZ 250
#define DEFAULT_HW_HZ 5000
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_PER_PROCESS 16
/* Entries stay in the kernel maps this long (or until a map is 3/4 full): every drain re-reads
 * each hot key once, so the reduction is the samples per key between drains (DCPI drained every
 * 5 minutes). A drain starts a merge, so kill -9 loses at most this interval plus the merge. */
#define DEFAULT_DRAIN_MS 60000

struct daemon_opts {
	const char *db;
	const char *events;
	uint64_t period, lo, hi, freq;
	const char *freq_arg;	/* -F as given */
	int no_bpf, foreground, bare;
	struct opt_string_list per_process;
	long drain_ms, merge_ms, map_entries;
	const char *log_file;
};

static volatile sig_atomic_t stop_flag, reopen_flag;

static void on_signal(int sig)
{
	stop_flag = 1;
}

/* SIGHUP with --log: the file is opened again before the next line (log rotation) */
static void on_hangup(int sig)
{
	reopen_flag = 1;
}

/* The --log file: appended to, never replaced; a root daemon never writes through a
 * symlink. NULL with errno. */
static FILE *log_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, DB_FILE_MODE);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "a");
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	fchmod(fd, DB_FILE_MODE);
	return f;
}

struct daemon_log {
	FILE *f;
	const char *path;	/* --log, or NULL (stderr in the foreground) */
	bool stderr_to_log;	/* detached: fd 2 is the log too (what libraries print) */
	unsigned long lost;	/* lines the log could not take (a full disk) since the last one */
};

static void log_line(void *arg, const char *msg)
{
	struct daemon_log *l = arg;
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	if (reopen_flag && l->path) {
		reopen_flag = 0;
		FILE *nf = log_open(l->path);
		if (nf) {	/* else the old file goes on: better than losing the lines */
			if (l->stderr_to_log)
				dup2(fileno(nf), 2);
			fclose(l->f);
			l->f = nf;
		}
	}
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
	if (l->lost)
		fprintf(l->f, "spent daemon: %s %lu line(s) of this log were lost: it could not be "
			"written\n", ts, l->lost);
	errno = 0;
	if (fprintf(l->f, "spent daemon: %s %s\n", ts, msg) < 0 || fflush(l->f) || ferror(l->f)) {
		/* a log nobody can read says nothing: the system log says it failed, once */
		if (!l->lost++)
			syslog(LOG_ERR, "spent daemon: cannot write its log '%s': %s: lines are lost "
			       "until it can", l->path ? l->path : "stderr", errno ? strerror(errno) : "write error");
		clearerr(l->f);
	} else {
		l->lost = 0;
	}
}

static int parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	char a[64];
	const char *dash = strchr(s, '-');

	if (!dash || (size_t)(dash - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	/* the kernel refuses periods with bit 63 set */
	if (cli_parse_u64(a, lo) || cli_parse_u64(dash + 1, hi) || *lo == 0 || *hi < *lo ||
	    *hi > INT64_MAX)
		return -EINVAL;
	return 0;
}

/* -c N: a period the kernel takes (positive, bit 63 clear) */
static int on_count(const struct option *opt, const char *arg, int unset)
{
	struct daemon_opts *o = opt->value;

	if (cli_parse_u64(arg, &o->period) || o->period == 0 || o->period > INT64_MAX) {
		cli_error("bad period '%s' for -c: give a positive number of events", arg);
		return -EINVAL;
	}
	return 0;
}

static int on_period_range(const struct option *opt, const char *arg, int unset)
{
	struct daemon_opts *o = opt->value;

	if (parse_range(arg, &o->lo, &o->hi)) {
		cli_error("bad --period-range '%s': give LO-HI with 0 < LO <= HI", arg);
		return -EINVAL;
	}
	return 0;
}

static const char *const daemon_usage[] = {
	"spent daemon [--db DIR] [-e EV,...] [-F HZ | -c N] [--period-range LO-HI] [--no-bpf] "
	"[--per-process IMAGE]... [--foreground] [--drain-interval MS] [--merge-interval MS] "
	"[--map-entries N] [--log FILE]",
	NULL,
};

static const struct parse_usage daemon_parse_usage = {
	"daemon", daemon_usage, "continuous system-wide profiling into an epoch database (DCPI)",
	"Samples the PC on every cpu for every process and the kernel, aggregates the counts in "
	"the kernel (eBPF) and merges them into the profile database DIR, organised in epochs; "
	"control it with spent db DIR. Without -e: cycles,instructions at " STR(DEFAULT_HW_HZ) " Hz per cpu with a "
	"PMU, cpu-clock at " STR(DEFAULT_SW_HZ) " Hz per cpu without one (a software timer costs a VM exit per "
	"sample). Detaches into the background unless --foreground; set-up errors are reported "
	"before it does. Must run as root. See docs/daemon.md.",
};

/* 1: help was printed; 0: parsed; -EINVAL: an error line was printed */
static int parse_opts(int argc, char **argv, struct daemon_opts *o)
{
	const struct option opts[] = {
		OPT_STRING(0, "db", &o->db, "DIR", "the profile database directory"),
		{ .type = OPTION_STRING, .short_name = 'e', .long_name = "event", .value = &o->events,
		  .argh = "EV,...", .help = "events to sample, 1 to 4",
		  .defval = "cycles,instructions with a PMU, else cpu-clock" },
		{ .type = OPTION_STRING, .short_name = 'F', .long_name = "freq", .value = &o->freq_arg,
		  .argh = "HZ", .help = "samples per second per cpu (or -c)",
		  .defval = STR(DEFAULT_HW_HZ) " with a PMU, " STR(DEFAULT_SW_HZ) " without" },
		{ .type = OPTION_CALLBACK, .short_name = 'c', .long_name = "count", .value = o,
		  .argh = "N", .help = "sample every N events (instead of -F)",
		  .callback = on_count },
		{ .type = OPTION_CALLBACK, .long_name = "period-range", .value = o, .argh = "LO-HI",
		  .help = "draw each period uniformly from LO-HI events", .callback = on_period_range,
		  .defval = "the mean period +-1/32" },
		{ .type = OPTION_BOOL, .long_name = "no-bpf", .value = &o->no_bpf,
		  .help = "count in user space from perf ring buffers, not in the eBPF aggregator",
		  .flags = PARSE_OPT_NONEG },
		OPT_STRING_LIST(0, "per-process", &o->per_process, "IMAGE",
				"keep the per-process detail rows of IMAGE only (repeatable, up to 16; "
				"default: of every image)"),
		OPT_BOOL(0, "foreground", &o->foreground, "stay in the foreground, log to stderr"),
		OPT_INT(0, "drain-interval", &o->drain_ms, "MS",
			"drain the kernel maps every MS milliseconds", 10, 3600000),
		OPT_INT(0, "merge-interval", &o->merge_ms, "MS",
			"merge the drained counts into the database every MS milliseconds", 10, 86400000),
		{ .type = OPTION_INT, .long_name = "map-entries", .value = &o->map_entries,
		  .argh = "N", .help = "keys per kernel map", .min = 1024, .max = 1 << 24,
		  .defval = "sized from the cpu count" },
		OPT_STRING(0, "log", &o->log_file, "FILE",
			   "append the log here (root: never through a symlink)"),
		OPT_BOOL(0, "bare", &o->bare,
			 "benchmark floor: open the sampling events, attach nothing (no root needed)"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &daemon_parse_usage, 0);

	if (n == PARSE_OPT_HELP)
		return 1;
	if (n < 0)
		return -EINVAL;
	if (n > 0) {
		cli_error("unexpected argument '%s': spent daemon takes options only", argv[0]);
		return -EINVAL;
	}
	if (o->freq_arg && cli_parse_frequency(o->freq_arg, &o->freq)) {
		cli_error("bad frequency '%s': give samples per second", o->freq_arg);
		return -EINVAL;
	}
	if (o->freq && o->period) {
		cli_error("both -F and -c given: choose a frequency or a period");
		return -EINVAL;
	}
	if (o->per_process.n > MAX_PER_PROCESS) {
		cli_error("too many --per-process images: at most %d", MAX_PER_PROCESS);
		return -EINVAL;
	}
	return 0;
}

/* Parse -e (or the default) into EVS, falling back to cpu-clock without a PMU. */
static int resolve_events(const struct daemon_opts *o, struct spent_event **evs, size_t *nev)
{
	char err[512];
	bool pmu = spent_pmu_present() == 1;
	const char *list = o->events ? o->events : pmu ? "cycles,instructions" : "cpu-clock";
	size_t k = 0;
	int r = spent_event_parse_list(list, evs, nev, err, sizeof(err));

	if (r) {
		cli_error("bad event list '%s': %s", list, err);
		return r;
	}
	for (size_t i = 0; i < *nev; i++) {
		struct spent_event *ev = &(*evs)[i];
		if (spent_event_needs_pmu(ev) && !pmu) {
			char was[160];
			snprintf(was, sizeof(was), "%s", ev->spec);
			if (spent_event_fallback(ev, true)) {
				cli_warn("no hardware PMU on this machine: dropping '%s'", was);
				continue;
			}
			cli_warn("no hardware PMU on this machine: sampling '%s' instead of '%s'",
				 ev->spec, was);
		}
		bool dup = false;
		for (size_t j = 0; j < k; j++)
			dup = dup || !strcmp((*evs)[j].spec, ev->spec);
		if (!dup)
			(*evs)[k++] = *ev;
	}
	*nev = k;
	if (k == 0 || k > 4) {
		cli_error("'%s' leaves %zu events to sample: give 1 to 4", list, k);
		free(*evs);
		*evs = NULL;
		return -EINVAL;
	}
	return 0;
}

static void default_rate(struct daemon_opts *o, const struct spent_event *evs, size_t nev,
			 char *note, size_t len)
{
	bool hw = false;

	for (size_t i = 0; i < nev; i++)
		hw = hw || spent_event_needs_pmu(&evs[i]);
	if (o->freq || o->period) {
		snprintf(note, len, "set by %s", o->freq ? "-F" : "-c");
		cli_clamp_frequency(&o->freq);
		return;
	}
	o->freq = hw ? DEFAULT_HW_HZ : DEFAULT_SW_HZ;
	snprintf(note, len, hw ? "default for hardware counters (DCPI's ~5 kHz)" :
		 "default for a software timer without a PMU: keeps the total slowdown <= 1%% "
		 "on this kind of VM (bench/daemon.sh)");
}

struct ready_pipe {
	int fd;
};

static void on_ready(void *arg, int err, const char *msg)
{
	struct ready_pipe *rp = arg;
	char buf[600];
	int n = snprintf(buf, sizeof(buf), "%d %s", err, msg ? msg : "");

	if (rp->fd >= 0) {
		if (write(rp->fd, buf, (size_t)n) < 0)
			err = 0;
		close(rp->fd);
		rp->fd = -1;
	}
}

/* Close every descriptor above stderr but KEEP1 and KEEP2: a detached daemon holding the
 * caller's pipe kept its reader waiting for an EOF until the daemon stopped. */
static void close_inherited_fds(int keep1, int keep2)
{
	int fds[1024], n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL && n < (int)(sizeof(fds) / sizeof(fds[0]));) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != keep1 && fd != keep2 && fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* Detach: the parent exits with the child's set-up result. Returns in the child only. */
static int detach(struct ready_pipe *rp, FILE **log)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		char buf[600] = "";
		close(p[1]);
		ssize_t n = read(p[0], buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		int err = n > 0 ? atoi(buf) : -EIO;
		const char *msg = strchr(buf, ' ');
		if (err)
			cli_error("%s", msg && msg[1] ? msg + 1 : "the daemon did not start");
		_exit(err ? 1 : 0);
	}
	close(p[0]);
	setsid();
	if (fork() > 0)
		_exit(0);
	rp->fd = p[1];
	/* Let go of every descriptor of the caller's terminal or pipe: stdin and stdout to
	 * /dev/null, stderr to the --log file (what libraries print lands there) or /dev/null.
	 * Keeping the caller's stderr made `out=$(spent daemon --log F 2>&1)` wait until the
	 * daemon stopped. */
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(*log == stderr ? nul : fileno(*log), 2);
		close(nul);
	}
	if (*log == stderr)
		*log = NULL;
	close_inherited_fds(p[1], *log ? fileno(*log) : -1);
	/* nor its working directory (a file system it keeps busy): --db was made absolute */
	if (chdir("/") < 0)
		return -errno;
	return 0;
}

/* *PATH made absolute from the working directory when it is not (*BUF holds it, to free).
 * 0, or -1 with errno. */
static int absolute_path(const char **path, char **buf)
{
	char cwd[4096];
	if ((*path)[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(buf, "%s/%s", cwd, *path) < 0) {
		*buf = NULL;
		return -1;
	}
	*path = *buf;
	return 0;
}

/* The run, once the options are good: 0, or 1 or 2 as the exit status. */
static int daemon_main(struct daemon_opts *po)
{
	struct daemon_opts o = *po;
	struct spent_event *evs = NULL;
	struct ready_pipe rp = { .fd = -1 };
	char note[200], err[600];
	FILE *log = stderr;
	size_t nev = 0;
	char *db_abs = NULL, *log_abs = NULL;
	int r;

	if (geteuid() != 0 && !o.bare) {
		cli_error("'spent daemon' samples every cpu and owns a root-only database: run it as root");
		return 1;
	}
	if (resolve_events(&o, &evs, &nev))
		return 2;
	default_rate(&o, evs, nev, note, sizeof(note));
	if (o.log_file && !(log = log_open(o.log_file))) {
		cli_error("cannot open log file '%s': %s", o.log_file,
			  errno == ELOOP ? "it is a symlink" : strerror(errno));
		free(evs);
		return 1;
	}
	bool detaching = !o.foreground && !o.bare;
	/* the detached daemon works from /: --db, and --log opened again on SIGHUP, absolute */
	if (detaching && (absolute_path(&o.db, &db_abs) ||
			  (o.log_file && absolute_path(&o.log_file, &log_abs)))) {
		cli_error("cannot make the paths of --db and --log absolute: %s", strerror(errno));
		r = 1;
		goto out;
	}
	if (detaching && (r = detach(&rp, &log))) {
		cli_error("cannot detach into the background: %s: try --foreground", strerror(-r));
		r = 1;
		goto out;
	}
	struct daemon_log dl = { .f = log, .path = o.log_file, .stderr_to_log = detaching && log };
	struct sigaction sa = { .sa_handler = on_signal }, hup = { .sa_handler = on_hangup };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* SIGHUP opens --log again (logrotate's postrotate); without --log it stops the daemon
	 * as SIGTERM does, drained (its default killed it with up to a drain of samples) */
	sigaction(SIGHUP, o.log_file ? &hup : &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct daemon_config cfg = {
		.db = o.db, .evs = evs, .nev = nev, .freq = o.freq, .period = o.period,
		.period_lo = o.lo, .period_hi = o.hi, .no_bpf = o.no_bpf, .bare = o.bare,
		.per_process = o.per_process.items, .nper = (size_t)o.per_process.n, .tick_ms = 100,
		.drain_ms = (unsigned)o.drain_ms, .merge_ms = (unsigned)o.merge_ms, .slice_files = 8,
		.map_entries = (uint32_t)o.map_entries,
		.rate_note = note, .log = log ? log_line : NULL, .log_arg = &dl,
		.ready = rp.fd >= 0 ? on_ready : NULL, .ready_arg = &rp,
	};
	r = daemon_run(&cfg, &stop_flag, err, sizeof(err));
	if (r && o.foreground)
		cli_error("%s", err[0] ? err : strerror(-r));
	if (dl.f && dl.f != stderr)
		fclose(dl.f);
	r = r ? 1 : 0;
out:
	free(db_abs);
	free(log_abs);
	free(evs);
	return r;
}

int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o = { .db = DEFAULT_DB, .drain_ms = DEFAULT_DRAIN_MS, .merge_ms = 30000 };
	int r = parse_opts(argc, argv, &o);

	if (r) {
		opt_string_list_release(&o.per_process);
		return r > 0 ? 0 : 2;
	}
	r = daemon_main(&o);
	opt_string_list_release(&o.per_process);
	return r;
}
