/* cli/cmd_trace.c - `spent trace`: run a command under the spent Valgrind tool and write its
 * compact log (`spent trace -- CMD`), print the reconstructed stream (`spent trace dump LOG`)
 * or its totals (`spent trace stats LOG`). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/helper_path.h"
#include "cli/parse_options.h"
#include "cli/trace_cli.h"
#include "core/binio.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/workload.h"
#include "spent/trace.h"
#include "trace/log_io.h"

struct trace_opts {
	const char *output;
	int data;
	const char *start;
	uint64_t max_insns;
	uint64_t limit;
	int json;
	int children;
	long pid;
	const char *comm;
};

static const char *default_log = "spent-trace.log";

/* The VALGRIND_LIB directory holding the spent tool: $SPENT_VALGRIND_LIB, else found among the
 * helper directories (valgrind/lib/ in the build tree, valgrind/ when installed). On failure
 * OUT says where it looked. */
static int find_vglib(char *out, size_t len)
{
	static const char *const names[] = { "valgrind/lib/spent-amd64-linux",
					     "valgrind/spent-amd64-linux", NULL };
	const char *env = getenv("SPENT_VALGRIND_LIB");
	char probe[PATH_MAX + 64];
	if (env && *env) {
		snprintf(out, len, "%s", env);
		snprintf(probe, sizeof(probe), "%s/spent-amd64-linux", out);
		return access(probe, X_OK) == 0 ? 0 : -ENOENT;
	}
	int err = helper_find(names, X_OK, out, len);
	if (err == 0)
		*strrchr(out, '/') = 0;
	return err;
}

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

/*
 * SIGINT, SIGTERM or SIGHUP to `spent trace` stops the program: the signal is passed on to
 * valgrind (whose client dies of it and flushes the log), and when the program survives it
 * for STOP_GRACE_S seconds, or a second signal comes, valgrind is killed. The log keeps what
 * arrived and is marked incomplete.
 */
#define STOP_GRACE_S 3
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t tool_pid;	/* 0 once reaped: never signal a reused pid */

static void on_stop(int sig)
{
	int saved = errno;
	if (sig == SIGALRM || stop_signal) {
		if (tool_pid > 0)
			kill((pid_t)tool_pid, SIGKILL);
	} else {
		stop_signal = sig;
		if (tool_pid > 0)
			kill((pid_t)tool_pid, sig);
		alarm(STOP_GRACE_S);
	}
	errno = saved;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM };

static void catch_stop_signals(void)
{
	/* no SA_RESTART: the pump's read returns and the loop carries on reading to EOF */
	struct sigaction sa = { .sa_handler = on_stop };
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
}

/* Wait for the tool to exit, then forget its pid before reaping it. */
static void reap_tool(pid_t pid, int *status)
{
	siginfo_t si;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	tool_pid = 0;
	alarm(0);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* Copy the tool's frames from the FIFO into the log until every process of the tree has
 * closed it. HOLD, our own write end, keeps the FIFO open until the command's valgrind exits
 * (before its tool opens the FIFO, an EOF would come at once); then it is closed and the
 * read runs to the EOF the last process of the tree gives. 0 at a clean EOF. */
#define PUMP_BUF (1u << 20)
static int pump(int fd, int *hold, pid_t pid, struct log_collector *c)
{
	uint8_t *buf = malloc(PUMP_BUF);
	int err = 0, stop_waits = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		/* stopped: processes the command left running (they got no signal from us) must
		 * not keep the recording open; what they sent so far stays */
		if (stop_signal && *hold < 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			if (poll(&pfd, 1, 200) <= 0) {
				if (++stop_waits >= STOP_GRACE_S * 5) {
					err = -ETIMEDOUT;
					break;
				}
				continue;
			}
		}
		if (*hold >= 0) {
			siginfo_t si = { 0 };
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				close(*hold);
				*hold = -1;
			}
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			if (poll(&pfd, 1, 200) <= 0)
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
			err = log_collector_finish(c);
			break;
		}
		if ((err = log_collector_feed(c, buf, (size_t)n)) < 0)
			break;
	}
	free(buf);
	return err;
}

/* A private directory holding the FIFO every tool instance of the tree writes to. */
static int make_fifo(char *dir, size_t dlen, char *fifo, size_t flen)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, dlen, "%s/spent-trace.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(fifo, flen, "%s/records", dir);
	if (mkfifo(fifo, 0600) < 0) {
		int err = -errno;
		rmdir(dir);
		return err;
	}
	return 0;
}

static void remove_fifo(const char *dir, const char *fifo)
{
	unlink(fifo);
	rmdir(dir);
}

/* In the child before exec: a shell starts background jobs with SIGINT ignored, and the
 * program must not be; valgrind finds the spent tool in VALGRIND_LIB. */
static int tool_setup(void *vglib)
{
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		signal(stop_signals[i], SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	return setenv("VALGRIND_LIB", vglib, 1) ? errno : 0;
}

static pid_t spawn_tool(const struct trace_opts *o, const char *vglib, const char *fifo, char **cmd)
{
	char fdopt[PATH_MAX + 32], maxopt[48], startopt[512];
	char *pre[16];
	int n = 0;
	snprintf(fdopt, sizeof(fdopt), "--spent-pipe=%s", fifo);
	pre[n++] = "valgrind";
	pre[n++] = "--tool=spent";
	pre[n++] = "-q";
	pre[n++] = fdopt;
	pre[n++] = o->children ? "--trace-children=yes" : "--spent-children=no";
	if (!o->data)
		pre[n++] = "--spent-data=no";
	if (o->start) {
		snprintf(startopt, sizeof(startopt), "--spent-start=%s", o->start);
		pre[n++] = startopt;
		pre[n++] = "--vex-guest-chase=no";
	}
	if (o->max_insns) {
		snprintf(maxopt, sizeof(maxopt), "--spent-max=%llu", (unsigned long long)o->max_insns);
		pre[n++] = maxopt;
	}
	const struct workload_opts wo = { .setup = tool_setup, .setup_arg = (void *)vglib };
	struct workload w;
	char **argv = workload_argv_join(pre, n, cmd);
	int err = argv ? workload_spawn(&w, argv, &wo) : -ENOMEM;
	free(argv);
	if (err) {
		errno = -err;
		return -1;
	}
	if ((err = workload_start(&w)))
		cli_error("cannot run 'valgrind': %s: install the valgrind package", strerror(-err));
	return w.pid;	/* after a failed exec it exits 127, reaped as any run */
}

static int trace_record(const struct trace_opts *o, char **cmd)
{
	char vglib[PATH_MAX], dir[PATH_MAX], fifo[PATH_MAX + 16];
	struct log_writer *w = NULL;
	struct log_collector *c = NULL;
	int status = 0, err;

	if (find_vglib(vglib, sizeof(vglib)) < 0) {
		cli_error("no spent valgrind tool in %s: build it with make, install it with make install, "
			  "or set SPENT_LIB_DIR", vglib);
		return 1;
	}
	uint32_t flags = (o->data ? LOG_F_DATA : 0) | (o->start ? LOG_F_START : 0);
	catch_stop_signals();	/* from here on a signal must not leave the temporary behind */
	if ((err = outfile_check(o->output)) < 0 ||
	    (err = log_writer_new(o->output, flags, o->max_insns, &w)) < 0) {
		cli_error("cannot write '%s': %s", o->output, outfile_strerror(err));
		return 1;
	}
	if ((err = log_collector_new(w, add_identity, &c)) < 0 ||
	    (err = make_fifo(dir, sizeof(dir), fifo, sizeof(fifo))) < 0) {
		cli_error("cannot create the tool's FIFO: %s", strerror(-err));
		log_collector_free(c);
		log_writer_free(w);
		return 1;
	}
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int hold = rfd < 0 ? -1 : open(fifo, O_WRONLY | O_CLOEXEC);
	if (rfd >= 0)
		fcntl(rfd, F_SETFL, 0);	/* blocking reads from here on */
	/* a big pipe: fewer context switches both sides (the default 64 KiB when the limit in
	 * /proc/sys/fs/pipe-max-size is lower) */
	if (rfd >= 0)
		fcntl(rfd, F_SETPIPE_SZ, 1 << 20);
	pid_t pid = hold < 0 ? -1 : spawn_tool(o, vglib, fifo, cmd);
	if (pid > 0) {
		tool_pid = pid;
		if (stop_signal)	/* came before the pid was known */
			kill(pid, stop_signal);
	}
	if (pid < 0) {
		cli_error("cannot start valgrind: %s", strerror(errno));
		if (rfd >= 0)
			close(rfd);
		if (hold >= 0)
			close(hold);
		remove_fifo(dir, fifo);
		log_collector_free(c);
		log_writer_free(w);
		return 1;
	}
	err = pump(rfd, &hold, pid, c);
	if (hold >= 0)
		close(hold);
	close(rfd);
	remove_fifo(dir, fifo);
	reap_tool(pid, &status);
	const struct log_collect_totals *tot = log_collector_totals(c);
	uint64_t n_records = tot->records, n_data = tot->data, n_streams = tot->streams;
	log_collector_free(c);
	if (err == -EBADMSG) {
		cli_error("the valgrind tool sent a malformed record: '%s' not written", o->output);
		log_writer_free(w);
		return 1;
	}
	if (err < 0 && !stop_signal)
		cli_warn("the record stream of a traced process broke off (%s: its valgrind died?)",
			 strerror(-err));
	if (stop_signal && n_records == 0) {
		cli_error("interrupted by SIG%s before anything was recorded: '%s' not written",
			  sigabbrev_np(stop_signal), o->output);
		log_writer_free(w);
		return 128 + stop_signal;
	}
	if (stop_signal)
		cli_warn("interrupted by SIG%s: the program was stopped and the log is marked incomplete",
			 sigabbrev_np(stop_signal));
	if (stop_signal || err < 0 || WIFSIGNALED(status))
		log_writer_mark_incomplete(w);
	if (n_records == 0) {
		cli_error("'%s' recorded nothing: valgrind did not run the command (see its messages above)",
			  o->output);
		log_writer_free(w);
		return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
	}
	if (o->start && n_data == 0) {
		/* nothing ran from the symbol on: a log of 0 instructions would look like a trace */
		cli_error("--start '%s': no function of that name was entered (misspelt, not in the "
			  "program or its libraries, or never called): nothing traced, no log written",
			  o->start);
		log_writer_free(w);
		return 1;
	}
	if ((err = log_writer_commit(w)) < 0) {
		cli_error("cannot write '%s': %s", o->output, strerror(-err));
		log_writer_free(w);
		return 1;
	}
	fprintf(stderr, "spent: trace: wrote '%s' (%llu bytes, %llu records, %llu process%s)\n",
		o->output, (unsigned long long)log_writer_bytes(w), (unsigned long long)n_records,
		(unsigned long long)n_streams, n_streams == 1 ? "" : "es");
	log_writer_free(w);
	if (stop_signal)
		return 128 + stop_signal;
	if (err < 0 && !stop_signal) {
		/* the command may have succeeded, the trace did not */
		cli_error("'%s' is incomplete: a process's record stream was cut off", o->output);
		return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

static const char *flag_names(uint16_t f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s", (f & TRACE_INSN_COND_BRANCH) ? " jcc" : "",
		 (f & TRACE_INSN_CALL) ? " call" : "", (f & TRACE_INSN_RET) ? " ret" : "",
		 (f & TRACE_INSN_INDIRECT) ? " indirect" : "", (f & TRACE_INSN_SYSCALL) ? " syscall" : "",
		 (f & TRACE_INSN_LOCKED) ? " locked" : "", (f & TRACE_INSN_PAUSE) ? " pause" : "");
	return buf;
}

static void print_event(const struct trace_event *e)
{
	printf("# %llu.%09llu ", (unsigned long long)(e->time_ns / 1000000000u),
	       (unsigned long long)(e->time_ns % 1000000000u));
	switch (e->kind) {
	case TRACE_EV_SYSCALL:
		printf("%u syscall %lld = %lld\n", e->tid, (long long)e->u.syscall.nr, (long long)e->u.syscall.ret);
		break;
	case TRACE_EV_SIGNAL:
		printf("%u signal %d handler %08llx resume %08llx\n", e->tid, e->u.signal.signo,
		       (unsigned long long)e->u.signal.handler, (unsigned long long)e->u.signal.resume_pc);
		break;
	case TRACE_EV_THREAD_SWITCH:
		printf("switch %u -> %u\n", e->u.thread_switch.from_tid, e->u.thread_switch.to_tid);
		break;
	case TRACE_EV_THREAD_START:
		printf("%u thread start\n", e->tid);
		break;
	case TRACE_EV_THREAD_EXIT:
		printf("%u thread exit\n", e->tid);
		break;
	case TRACE_EV_IMAGE_LOAD:
		printf("image %s %08llx-%08llx base %08llx\n", e->u.image.path,
		       (unsigned long long)e->u.image.start, (unsigned long long)e->u.image.end,
		       (unsigned long long)e->u.image.base);
		break;
	case TRACE_EV_EXIT:
		printf("exit %d\n", e->u.exit.status);
		break;
	case TRACE_EV_PROCESS_START: {
		printf("process %u pid %u ppid %u parent %u %s %s:", e->u.process.stream, e->pid,
		       e->u.process.ppid, e->u.process.parent_stream,
		       e->u.process.forked ? "fork" : "exec", e->u.process.path);
		const char *a = e->u.process.argv;
		for (uint32_t i = 0; i < e->u.process.argc; i++, a += strlen(a) + 1)
			printf(" %s", a);
		printf("\n");
		break;
	}
	default:
		break;
	}
}

static const char ref_letter[4] = { '?', 'L', 'S', 'M' };

/* Print instructions up to LIMIT (0: all); returns 1 when the limit was reached. */
/* Lines that follow a "# pid N" line are process N's (thread numbers restart in each). */
static void note_pid(uint32_t pid, uint32_t *last_pid)
{
	if (pid != *last_pid)
		printf("# pid %u\n", pid);
	*last_pid = pid;
}

static int dump_batch(const struct trace_batch *b, uint64_t *printed, uint64_t limit,
		      uint32_t *last_pid)
{
	size_t ev = 0;
	char fl[96];
	for (size_t i = 0; i <= b->n_insns; i++) {
		while (ev < b->n_events && b->events[ev].before == i) {
			note_pid(b->events[ev].pid, last_pid);
			print_event(&b->events[ev++]);
		}
		if (i == b->n_insns)
			break;
		if (limit && *printed >= limit)
			return 1;
		const struct trace_insn *in = &b->insns[i];
		note_pid(in->pid, last_pid);
		printf("%u I  %08llx,%u%s\n", in->tid, (unsigned long long)in->pc, in->len,
		       flag_names(in->flags, fl, sizeof(fl)));
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct trace_ref *r = &b->refs[in->ref0 + k];
			printf("%u  %c %08llx,%u\n", in->tid, ref_letter[r->kind & 3],
			       (unsigned long long)r->addr, r->size);
		}
		(*printed)++;
	}
	return 0;
}

static int open_log(const char *path, struct trace_source **src)
{
	char err[512];
	int e = trace_source_open(path, src, err, sizeof(err));
	if (e < 0) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}

static int trace_dump(const struct trace_opts *o, const char *path)
{
	struct trace_source *src;
	struct trace_batch b;
	uint64_t printed = 0;
	uint32_t last_pid = UINT32_MAX;
	int rc, ret = 0;
	if (open_log(path, &src))
		return 1;
	if ((o->pid || o->comm) && trace_source_select(src, (uint32_t)o->pid, o->comm, 0, &src) < 0) {
		cli_error("out of memory");
		return 1;
	}
	while ((rc = trace_source_next(src, &b)) > 0)
		if (dump_batch(&b, &printed, o->limit, &last_pid))
			break;
	fflush(stdout);
	if (rc < 0) {
		cli_error("'%s': %s", path, trace_source_error(src));
		ret = 1;
	}
	trace_source_free(src);
	return ret;
}

static const char *const record_usage[] = {
	"spent trace [-o LOG] [--no-data] [--no-children] [--start SYMBOL] [--max-instructions N] [--] CMD [ARGS]",
	"spent trace dump [--limit N] [--pid PID] [--comm NAME] LOG",
	"spent trace stats [--json] LOG",
	NULL,
};
static const struct parse_usage record_u = {
	"trace", record_usage,
	"run a command under the spent Valgrind tool and write its compact execution log",
	"The log is reconstructed exactly into every instruction and data reference by "
	"'spent trace dump' and 'spent trace stats', and by the trace sinks (cachesim, hitcurve, "
	"memmap, locks). See docs/trace.md.",
};
static const char *const dump_usage[] = { "spent trace dump [--limit N] [--pid PID] [--comm NAME] LOG", NULL };
static const struct parse_usage dump_u = {
	"trace dump", dump_usage, "print a trace log's reconstructed instructions and events", NULL,
};
static const char *const stats_usage[] = { "spent trace stats [--json] LOG", NULL };
static const struct parse_usage stats_u = {
	"trace stats", stats_usage, "print a trace log's totals", NULL,
};

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .output = default_log, .data = 1, .children = 1 };
	const struct option record_opts[] = {
		OPT_STRING('o', "output", &o.output, "LOG", "the log to write"),
		OPT_BOOL(0, "data", &o.data, "record data addresses (--no-data: instructions only)"),
		OPT_BOOL(0, "children", &o.children,
			 "trace every process the command starts (--no-children: the command only)"),
		OPT_STRING(0, "start", &o.start, "SYMBOL",
			   "record from the first entry to this function on"),
		OPT_U64(0, "max-instructions", &o.max_insns, "N",
			"stop recording after N instructions (0: no limit)"),
		OPT_END(),
	};
	const struct option dump_opts[] = {
		OPT_U64(0, "limit", &o.limit, "N", "print at most N instructions (0: all)"),
		OPT_INT(0, "pid", &o.pid, "PID", "only the process(es) of this pid (0: all)", 0, INT32_MAX),
		OPT_STRING(0, "comm", &o.comm, "NAME",
			   "only processes running the program of this file name (e.g. sort)"),
		OPT_END(),
	};
	const struct option stats_opts[] = {
		OPT_BOOL(0, "json", &o.json, "print one JSON object"),
		OPT_END(),
	};
	const char *sub = argc > 1 ? argv[1] : NULL;
	if (sub && (strcmp(sub, "dump") == 0 || strcmp(sub, "stats") == 0)) {
		int dump = sub[0] == 'd';
		const struct parse_usage *u = dump ? &dump_u : &stats_u;
		int n = parse_options(argc - 1, argv + 1, dump ? dump_opts : stats_opts, u, 0);
		if (n == PARSE_OPT_HELP)
			return 0;
		if (n < 0)
			return 2;
		if (n != 1) {
			parse_options_error(u, "takes one LOG: %s", u->usage[0]);
			return 2;
		}
		return dump ? trace_dump(&o, argv[1]) : trace_stats(argv[1], o.json);
	}
	int n = parse_options(argc, argv, record_opts, &record_u, PARSE_STOP_AT_NON_OPTION);
	if (n == PARSE_OPT_HELP)
		return 0;
	if (n < 0)
		return 2;
	if (n == 0) {
		parse_options_error(&record_u, "no command to trace: %s", record_usage[0]);
		return 2;
	}
	return trace_record(&o, argv);
}
