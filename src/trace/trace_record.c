/* trace/trace_record.c - the public tracer (spent/trace_record.h): runs a command under
 * valgrind's spent tool with a private FIFO every tool instance of the process tree writes its
 * records to, copies them into the log (each image's identity filled in), and reaps valgrind.
 * `spent trace -- CMD` is a caller of this; nothing here prints. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/errmsg.h"
#include "core/outfile.h"
#include "core/workload.h"
#include "spent/trace_record.h"
#include "trace/log_io.h"

/* After a stop, processes the command left running get this long to close the stream. */
#define TRACE_STOP_GRACE_S 3

struct spent_trace {
	struct spent_trace_opts o;
	struct log_writer *w;
	struct log_collector *c;
	char dir[PATH_MAX], fifo[PATH_MAX + 16];
	char ring_dir[PATH_MAX];	/* the tools' ring files (tmpfs), "" when the FIFO carries all */
	int rfd, hold;		/* the FIFO's read end, and our write end holding it open */
	pid_t pid;
	volatile sig_atomic_t tool_pid;	/* 0 once reaped: never signal a reused pid */
	volatile sig_atomic_t stop_signal;
	bool write_failed;	/* the pump stopped on the log writer's error, not the stream's */
	bool committed;
	spent_trace_progress_fn progress;
	void *progress_arg;
	uint64_t progress_last_ns;
	char err[512];
};

/* the reason for a failure, kept for the *_error() call */
#define fail(h, code, ...) errmsg_set((h)->err, sizeof((h)->err), code, __VA_ARGS__)

/* The recorder fills in each image's identity (build-id, else a content hash) so readers can
 * tell a changed binary, one rebuilt without a build-id too. */
static void add_identity(uint32_t type, uint8_t *payload, uint32_t len)
{
	if (type != LOG_REC_IMAGE)
		return;
	struct log_image li;
	char path[4096];
	if (len < sizeof(li))
		return;
	memcpy(&li, payload, sizeof(li));
	if (li.path_len == 0 || li.path_len >= sizeof(path) || sizeof(li) + li.path_len > len ||
	    (li.flags & LOG_IMG_BYTES))
		return;
	memcpy(path, payload + sizeof(li), li.path_len);
	path[li.path_len] = 0;
	uint8_t n = 0;
	uint32_t kind = 0;
	if (log_image_identity(path, li.build_id, &n, &kind) == 0 && n > 0) {
		li.build_id_len = n;
		li.flags |= kind;
		memcpy(payload, &li, sizeof(li));
	}
}

/* Make PARENT/NAME.tmp.PID.XXXXXX, mode 0700, into DIR, first removing those of recorders
 * that died without cleaning up (SIGKILL): a ring directory can hold 16 MiB files of tmpfs
 * memory. The pid in the name tells a live recorder's directory from a dead one's. */
static int make_private_dir(const char *parent, const char *name, char *dir, size_t dlen)
{
	char abs[PATH_MAX], path[PATH_MAX];
	/* absolute: the tools of processes that changed directory open the FIFO by this path */
	if (!realpath(parent, abs))
		return -errno;
	if (snprintf(path, sizeof(path), "%s/%s", abs, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	outfile_clean_stale(abs, name, outdir_remove_flat);
	return outdir_make_temp(path, 0700, dir, dlen);
}

static const char *fifo_parent(void)
{
	const char *tmp = getenv("TMPDIR");
	return tmp && *tmp ? tmp : "/tmp";
}

/* A private directory holding the FIFO every tool instance of the tree writes to. */
static int make_fifo(char *dir, size_t dlen, char *fifo, size_t flen)
{
	int err = make_private_dir(fifo_parent(), "spent-trace", dir, dlen);
	if (err < 0)
		return err;
	snprintf(fifo, flen, "%s/records", dir);
	if (mkfifo(fifo, 0600) < 0) {
		err = -errno;
		rmdir(dir);
	}
	return err;
}

/* The FIFO, opened for reading without blocking on a writer, then held open by our own write
 * end, with a big pipe: fewer context switches both sides (the default 64 KiB when the limit in
 * /proc/sys/fs/pipe-max-size is lower). */
static int open_fifo(struct spent_trace *t)
{
	int err = make_fifo(t->dir, sizeof(t->dir), t->fifo, sizeof(t->fifo));
	if (err)
		return err;
	t->rfd = open(t->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	t->hold = t->rfd < 0 ? -1 : open(t->fifo, O_WRONLY | O_CLOEXEC);
	if (t->hold < 0)
		return -errno;
	fcntl(t->rfd, F_SETFL, 0);	/* blocking reads from here on */
	fcntl(t->rfd, F_SETPIPE_SZ, 1 << 20);
	return 0;
}

/* The directory for the tools' shared rings (log_format.h, LOG_PIPE_RING), made in
 * SPENT_TRACE_RING when set (tests), else /dev/shm, only when that is a tmpfs (a ring on a
 * disk file system would be written back to the disk). With SPENT_TRACE_RING=0, or without
 * such a directory, the records go through the FIFO. */
static void make_ring_dir(struct spent_trace *t)
{
	struct statfs sf;
	const char *parent = getenv("SPENT_TRACE_RING");
	if (!parent || !*parent)
		parent = "/dev/shm";
	t->ring_dir[0] = 0;
	if (strcmp(parent, "0") == 0 || statfs(parent, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
		return;
	if (make_private_dir(parent, "spent-ring", t->ring_dir, sizeof(t->ring_dir)) < 0)
		t->ring_dir[0] = 0;
	else if (log_collector_set_ring_dir(t->c, t->ring_dir) < 0) {
		rmdir(t->ring_dir);
		t->ring_dir[0] = 0;
	}
}

/* A private directory made by make_private_dir and what it holds (the FIFO; the ring files
 * the recorder did not take, of a tool that died before its note came); "" after. */
static void remove_private_dir(char *dir)
{
	if (!dir[0])
		return;
	outdir_remove_flat(dir);
	dir[0] = 0;
}

int spent_trace_new(const struct spent_trace_opts *opts, const char *path, struct spent_trace **out)
{
	struct spent_trace *t = calloc(1, sizeof(*t));
	int err;
	*out = t;
	if (!t)
		return -ENOMEM;
	t->o = *opts;
	t->rfd = t->hold = -1;
	if (!path || !opts->valgrind_lib)	/* the tool cannot be found without it (it crashed) */
		return fail(t, -EINVAL, "%s", !path ? "no log path" :
			    "no valgrind_lib: the directory of the spent tool (spent-amd64-linux)");
	uint32_t flags = (opts->no_data ? 0 : LOG_F_DATA) | (opts->start ? LOG_F_START : 0);
	if ((err = outfile_check(path)) < 0 || (err = log_writer_new(path, flags, opts->max_insns, &t->w)) < 0)
		return fail(t, err, "cannot write '%s': %s", path, outfile_strerror(err));
	if ((err = log_collector_new(t->w, add_identity, &t->c)) < 0)
		return fail(t, err, "%s", strerror(-err));
	if ((err = open_fifo(t)) < 0)
		return fail(t, err, "cannot create the tool's FIFO in '%s' (TMPDIR): %s", fifo_parent(),
			    strerror(-err));
	make_ring_dir(t);
	return 0;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGQUIT };

/* In the child before exec: a shell starts background jobs with SIGINT ignored, and the
 * program must not be; the caller's stop handlers are not the program's; valgrind finds the
 * spent tool in VALGRIND_LIB. */
static int tool_setup(void *vglib)
{
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		signal(stop_signals[i], SIG_DFL);
	return setenv("VALGRIND_LIB", vglib, 1) ? errno : 0;
}

int spent_trace_start(struct spent_trace *t, char *const argv[])
{
	const struct spent_trace_opts *o = &t->o;
	char fdopt[PATH_MAX + 32], maxopt[48], startopt[512], ringopt[PATH_MAX + 32];
	char *pre[16];
	int n = 0;
	t->err[0] = 0;
	if (!t->c || t->hold < 0 || t->pid > 0)
		return fail(t, -EINVAL, "the tracer is not ready");
	snprintf(fdopt, sizeof(fdopt), "--spent-pipe=%s", t->fifo);
	pre[n++] = "valgrind";
	pre[n++] = "--tool=spent";
	pre[n++] = "-q";
	/* no gdbserver: each process would make three FIFOs in TMPDIR, left there when it is
	 * killed (a thousand piled up in a day of tests) */
	pre[n++] = "--vgdb=no";
	pre[n++] = fdopt;
	pre[n++] = o->no_children ? "--spent-children=no" : "--trace-children=yes";
	if (o->no_data)
		pre[n++] = "--spent-data=no";
	if (t->ring_dir[0]) {
		snprintf(ringopt, sizeof(ringopt), "--spent-ring-dir=%s", t->ring_dir);
		pre[n++] = ringopt;
	}
	if (o->start) {
		snprintf(startopt, sizeof(startopt), "--spent-start=%s", o->start);
		pre[n++] = startopt;
		pre[n++] = "--vex-guest-chase=no";
	}
	if (t->progress)	/* the tool counts instructions only when asked: it costs */
		pre[n++] = "--spent-progress=yes";
	if (o->max_insns) {
		snprintf(maxopt, sizeof(maxopt), "--spent-max=%llu", (unsigned long long)o->max_insns);
		pre[n++] = maxopt;
	}
	const struct workload_opts wo = { .setup = tool_setup, .setup_arg = (void *)o->valgrind_lib };
	struct workload w;
	char **vargv = workload_argv_join(pre, (size_t)n, (char *const *)argv);
	int err = vargv ? workload_spawn(&w, vargv, &wo) : -ENOMEM;
	free(vargv);
	if (err)
		return fail(t, err, "cannot start valgrind: %s", strerror(-err));
	/* after a failed exec it exits 127, reaped as any run */
	if ((err = workload_start(&w)))
		fail(t, err, "cannot run 'valgrind': %s: install the valgrind package", strerror(-err));
	t->pid = w.pid;
	t->tool_pid = w.pid;
	if (t->stop_signal)	/* came before the pid was known */
		kill(w.pid, t->stop_signal);
	return 0;
}

#define PROGRESS_INTERVAL_NS 250000000ull

/* Tell the caller's progress callback how far the trace is, at most every interval. */
static void report_progress(struct spent_trace *t)
{
	struct timespec ts;
	if (!t->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (t->progress_last_ns == 0)	/* the first call starts the clock: a short run shows none */
		t->progress_last_ns = now;
	if (now - t->progress_last_ns < PROGRESS_INTERVAL_NS)
		return;
	t->progress_last_ns = now;
	const struct log_collect_totals *c = log_collector_totals(t->c);
	struct spent_trace_progress p = { .instructions = c->instructions, .processes = c->streams,
					  .bytes = log_writer_bytes(t->w) };
	t->progress(t->progress_arg, &p);
}

void spent_trace_set_progress(struct spent_trace *t, spent_trace_progress_fn fn, void *arg)
{
	t->progress = fn;
	t->progress_arg = arg;
}

/* Whether PID runs (exists and is not a zombie). */
static bool pid_runs(uint32_t pid)
{
	char path[32], buf[256];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *e = strrchr(buf, ')');	/* the state follows the command name */
	return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

/* Copy the tool's frames from the FIFO into the log until every process of the tree has
 * closed it. HOLD, our own write end, keeps the FIFO open until the command's valgrind exits
 * (before its tool opens the FIFO, an EOF would come at once); then it is closed and the
 * read runs to the EOF the last process of the tree gives. An EOF while a process that
 * announced an exec a new tool instance follows still runs is the gap between the two (the
 * old instance closed the FIFO, the new one opens it by name): HOLD is taken again until that
 * process sends or ends, at most LOG_EXEC_GAP_MAX_NS (an orphan that exec'd after the command
 * ended went untraced). 0 at a clean EOF. */
#define PUMP_BUF (1u << 20)
static int pump(struct spent_trace *t)
{
	uint8_t *buf = malloc(PUMP_BUF);
	int fd = t->rfd, *hold = &t->hold;
	pid_t pid = t->pid;
	struct log_collector *c = t->c;
	int err = 0;
	bool rehold = false;	/* HOLD taken again after an EOF (not the command's) */
	uint64_t deadline_ms = 0;
	/* the command's valgrind ending wakes the wait for records too, so HOLD goes at once
	 * rather than at the next 200 ms tick (every trace ended up to 200 ms late); -1 on
	 * kernels without pidfds */
	if (!buf)
		return -ENOMEM;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		report_progress(t);
		/* stopped: processes the command left running (they got no signal from us) must
		 * not keep the recording open past the grace period from the stop, whether they
		 * send or not (counting quiet spells only, an orphan that kept sending kept it
		 * open until it ended); what they sent so far stays */
		if (t->stop_signal && *hold < 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
			if (!deadline_ms)
				deadline_ms = now + TRACE_STOP_GRACE_S * 1000u;
			if (now >= deadline_ms) {
				err = -ETIMEDOUT;
				break;
			}
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			uint64_t left = deadline_ms - now;
			if (poll(&pfd, 1, left < 200 ? (int)left : 200) <= 0)
				continue;
		}
		if (*hold >= 0) {
			siginfo_t si = { 0 };
			bool done = rehold ? t->stop_signal || !log_collector_awaits(c, pid_runs) :
					     waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
						     si.si_pid == pid;
			if (done) {
				close(*hold);
				*hold = -1;
			}
			struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
						 { .fd = pidfd, .events = POLLIN } };
			if (poll(pfd, !rehold && pidfd >= 0 ? 2 : 1, 200) <= 0 || !pfd[0].revents)
				continue;
		}
		ssize_t n = read(fd, buf, PUMP_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			if (!t->stop_signal && log_collector_awaits(c, pid_runs) &&
			    (*hold = open(t->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
				rehold = true;
				continue;
			}
			err = log_collector_finish(c);
			break;
		}
		if ((err = log_collector_feed(c, buf, (size_t)n)) < 0) {
			t->write_failed = err != -EBADMSG;	/* else the log's writer said it */
			break;
		}
	}
	free(buf);
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

/* Wait for valgrind to exit, then forget its pid before reaping it. */
static void reap_tool(struct spent_trace *t, int *status)
{
	siginfo_t si;
	while (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	t->tool_pid = 0;
	workload_wait(t->pid, status, 0);
}

int spent_trace_wait(struct spent_trace *t, int *status)
{
	int st = 0;
	t->err[0] = 0;
	if (t->pid <= 0 || !t->tool_pid)	/* never started, or waited for already */
		return fail(t, -EINVAL, "not tracing");
	int err = pump(t);
	if (t->hold >= 0)
		close(t->hold);
	close(t->rfd);
	t->hold = t->rfd = -1;
	remove_private_dir(t->dir);
	remove_private_dir(t->ring_dir);
	reap_tool(t, &st);
	if (status)
		*status = st;
	/* the command killed by a signal: which one, into its stream (the tool's EXIT record only
	 * says "killed"; a child's reaper logs its own) */
	int rerr = err >= 0 && t->c ? log_collector_add_reaped(t->c, (uint32_t)t->pid, st) : 0;
	if (rerr < 0)
		return fail(t, rerr, "cannot write the log: %s", strerror(-rerr));
	if (err == -EBADMSG)
		return fail(t, err, "the valgrind tool sent a malformed record");
	if (err < 0 && t->write_failed)
		return fail(t, err, "cannot write the log: %s", strerror(-err));
	if (err < 0)
		return fail(t, err, "the record stream of a traced process broke off (%s: its valgrind died?)",
			    strerror(-err));
	return 0;
}

void spent_trace_stop(struct spent_trace *t, int sig)
{
	int saved = errno;
	if (sig == SIGKILL || t->stop_signal) {
		if (t->tool_pid > 0)
			kill((pid_t)t->tool_pid, SIGKILL);
	} else {
		t->stop_signal = sig;
		if (t->tool_pid > 0)
			kill((pid_t)t->tool_pid, sig);
	}
	errno = saved;
}

int spent_trace_stopped(const struct spent_trace *t)
{
	return t->stop_signal;
}

void spent_trace_get_totals(const struct spent_trace *t, struct spent_trace_totals *tot)
{
	const struct log_collect_totals *c = t->c ? log_collector_totals(t->c) : NULL;
	*tot = (struct spent_trace_totals){ 0 };
	if (c)
		*tot = (struct spent_trace_totals){ .records = c->records, .data = c->data,
						    .streams = c->streams };
}

uint64_t spent_trace_unended(const struct spent_trace *t, int *first_pid)
{
	const struct log_collect_totals *c = t->c ? log_collector_totals(t->c) : NULL;
	if (first_pid)
		*first_pid = c && c->unended ? (int)c->unended_pid : 0;
	return c ? c->unended : 0;
}

void spent_trace_mark_incomplete(struct spent_trace *t)
{
	if (t->w)
		log_writer_mark_incomplete(t->w);
}

int spent_trace_commit(struct spent_trace *t)
{
	t->err[0] = 0;
	if (t->committed)
		return fail(t, -EINVAL, "the log is committed already");
	int err = t->w ? log_writer_commit(t->w) : -EINVAL;
	t->committed = err == 0;
	return err < 0 ? fail(t, err, "%s", strerror(-err)) : 0;
}

uint64_t spent_trace_bytes(const struct spent_trace *t)
{
	return t->w ? log_writer_bytes(t->w) : 0;
}

const char *spent_trace_error(const struct spent_trace *t)
{
	return t ? t->err : "out of memory";
}

void spent_trace_free(struct spent_trace *t)
{
	if (!t)
		return;
	if (t->tool_pid > 0) {	/* still running, never waited for: no unreaped child left */
		int st;
		kill((pid_t)t->tool_pid, SIGKILL);
		reap_tool(t, &st);
	}
	if (t->rfd >= 0)
		close(t->rfd);
	if (t->hold >= 0)
		close(t->hold);
	remove_private_dir(t->dir);
	remove_private_dir(t->ring_dir);
	log_collector_free(t->c);
	log_writer_free(t->w);
	free(t);
}
