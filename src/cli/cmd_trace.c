/* cli/cmd_trace.c - `spent trace`: run a command under the spent Valgrind tool and write its
 * compact log (`spent trace -- CMD`, through the library's spent/trace_record.h: here are the
 * options, the stop signals and the messages), print the reconstructed stream
 * (`spent trace dump LOG`) or its totals (`spent trace stats LOG`). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "cli/studies_util.h"
#include "cli/trace_cli.h"
#include "core/alloc.h"
#include "core/binio.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/text.h"
#include "spent/trace.h"
#include "spent/trace_record.h"
#include "trace/log_io.h"

struct trace_opts {
	const char *output;
	int data;
	const char *start;
	uint64_t max_insns;
	uint64_t limit;
	int json;
	int progress;	/* stats --progress */
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

/*
 * SIGINT, SIGTERM or SIGHUP to `spent trace` stops the program: the signal is passed on to
 * valgrind (whose client dies of it and flushes the log), and when the program survives it
 * for STOP_GRACE_S seconds, or a second signal comes, valgrind is killed. The log keeps what
 * arrived and is marked incomplete.
 */
#define STOP_GRACE_S 3
static struct spent_trace *volatile tracing;
static volatile sig_atomic_t early_signal;	/* came before the tracer existed */

static void on_stop(int sig)
{
	if (!tracing) {
		early_signal = sig;
		return;
	}
	bool first = !spent_trace_stopped(tracing);
	spent_trace_stop(tracing, sig == SIGALRM ? SIGKILL : sig);
	if (first && sig != SIGALRM)
		alarm(STOP_GRACE_S);
}

static void catch_stop_signals(void)
{
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM };
	/* no SA_RESTART: the pump's read returns and the loop carries on reading to EOF */
	struct sigaction sa = { .sa_handler = on_stop };
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
}

/* The exit code after a log that cannot be used: the command's failure, else 1. */
static int failed_run_code(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
}

/* What the run left, said to the user; the exit code. */
static int finish_log(const struct trace_opts *o, struct spent_trace *t, int err, int status)
{
	struct spent_trace_totals tot;
	int stop = spent_trace_stopped(t);
	spent_trace_get_totals(t, &tot);
	if (err == -EBADMSG) {
		cli_error("the valgrind tool sent a malformed record: '%s' not written", o->output);
		return 1;
	}
	if (stop && tot.records == 0) {
		cli_error("interrupted by SIG%s before anything was recorded: '%s' not written",
			  sigabbrev_np(stop), o->output);
		return 128 + stop;
	}
	if (stop)
		cli_warn("interrupted by SIG%s: the program was stopped and the log is marked incomplete",
			 sigabbrev_np(stop));
	int lost_pid = 0;
	uint64_t unended = err < 0 ? 0 : spent_trace_unended(t, &lost_pid);
	if (unended)
		cli_warn("%llu process%s of the tree (pid %d%s) ended without its exit record, killed "
			 "by SIGKILL or an exec valgrind could not start: %s last records are lost and "
			 "the log is marked incomplete", (unsigned long long)unended,
			 unended == 1 ? "" : "es", lost_pid, unended == 1 ? "" : " first",
			 unended == 1 ? "its" : "their");
	if (stop || err < 0 || WIFSIGNALED(status) || unended)
		spent_trace_mark_incomplete(t);
	if (tot.records == 0) {
		cli_error("'%s' recorded nothing: valgrind did not run the command (see its messages above)",
			  o->output);
		return failed_run_code(status);
	}
	if (o->start && tot.data == 0) {
		/* nothing ran from the symbol on: a log of 0 instructions would look like a trace */
		cli_error("--start '%s': no function of that name was entered (misspelt, not in the "
			  "program or its libraries, or never called): nothing traced, no log written",
			  o->start);
		return 1;
	}
	if (spent_trace_commit(t) < 0) {
		cli_error("cannot write '%s': %s", o->output, spent_trace_error(t));
		return 1;
	}
	fprintf(stderr, "spent: wrote trace log '%s' (%llu bytes, %llu records, %llu process%s)\n",
		o->output, (unsigned long long)spent_trace_bytes(t), (unsigned long long)tot.records,
		(unsigned long long)tot.streams, tot.streams == 1 ? "" : "es");
	if (stop)
		return 128 + stop;
	if (err < 0) {
		/* the command may have succeeded, the trace did not */
		cli_error("'%s' is incomplete: %s", o->output, spent_trace_error(t));
		return failed_run_code(status);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/* The progress line on a terminal's stderr: instructions so far (the tools count them at
 * superblock granularity, hence "at least" in the docs), processes, log bytes. */
static int progress_shown;

static void show_progress(void *arg, const struct spent_trace_progress *p)
{
	fprintf(stderr, "\rspent: trace: %.1f M instructions, %llu process%s, %.1f MB of log\033[K",
		(double)p->instructions / 1e6, (unsigned long long)p->processes,
		p->processes == 1 ? "" : "es", (double)p->bytes / 1e6);
	fflush(stderr);
	progress_shown = 1;
}

static void clear_progress(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = 0;
}

/* Trace through the library (spent/trace_record.h); the messages and exit codes are here. */
static int trace_record(const struct trace_opts *o, char **cmd)
{
	char vglib[PATH_MAX];
	struct spent_trace_opts to = { .valgrind_lib = vglib, .no_data = !o->data,
				       .no_children = !o->children, .start = o->start,
				       .max_insns = o->max_insns };
	struct spent_trace *t = NULL;
	int status = 0, rc = 1, err;

	if (find_vglib(vglib, sizeof(vglib)) < 0) {
		cli_error("no spent valgrind tool in %s: build it with make, install it with make install, "
			  "or set SPENT_LIB_DIR", vglib);
		return 1;
	}
	catch_stop_signals();	/* from here on a signal must not leave the temporary behind */
	if (spent_trace_new(&to, o->output, &t) < 0) {
		cli_error("%s", spent_trace_error(t));
		goto out;
	}
	tracing = t;
	if (early_signal)
		spent_trace_stop(t, early_signal);
	if (isatty(2))
		spent_trace_set_progress(t, show_progress, NULL);
	if (spent_trace_start(t, cmd) < 0) {
		cli_error("%s", spent_trace_error(t));
		goto out;
	}
	if (*spent_trace_error(t))	/* valgrind could not be run: its empty log is said below */
		cli_error("%s", spent_trace_error(t));
	err = spent_trace_wait(t, &status);
	clear_progress();
	alarm(0);
	rc = finish_log(o, t, err, status);
out:
	tracing = NULL;
	spent_trace_free(t);
	return rc;
}

static const char *flag_names(uint16_t f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s%s%s", (f & SPENT_TRACE_INSN_COND_BRANCH) ? " jcc" : "",
		 (f & SPENT_TRACE_INSN_CALL) ? " call" : "", (f & SPENT_TRACE_INSN_RET) ? " ret" : "",
		 (f & SPENT_TRACE_INSN_INDIRECT) ? " indirect" : "", (f & SPENT_TRACE_INSN_SYSCALL) ? " syscall" : "",
		 (f & SPENT_TRACE_INSN_LOCKED) ? " locked" : "", (f & SPENT_TRACE_INSN_PAUSE) ? " pause" : "",
		 (f & SPENT_TRACE_INSN_EXCHANGE) ? " xchg" : "", (f & SPENT_TRACE_INSN_CMPXCHG) ? " cmpxchg" : "");
	return buf;
}

/* A dump is one record per line: names from the log (paths, argv) are shown escaped. */
static void print_event(const struct spent_trace_event *e)
{
	char shown[TEXT_SHOWN_MAX];
	printf("# %llu.%09llu ", (unsigned long long)(e->time_ns / 1000000000u),
	       (unsigned long long)(e->time_ns % 1000000000u));
	switch (e->kind) {
	case SPENT_TRACE_EV_SYSCALL:
		printf("%u syscall %lld = %lld\n", e->tid, (long long)e->u.syscall.nr, (long long)e->u.syscall.ret);
		break;
	case SPENT_TRACE_EV_SIGNAL:
		printf("%u signal %d handler %08llx resume %08llx\n", e->tid, e->u.signal.signo,
		       (unsigned long long)e->u.signal.handler, (unsigned long long)e->u.signal.resume_pc);
		break;
	case SPENT_TRACE_EV_THREAD_SWITCH:
		printf("switch %u -> %u\n", e->u.thread_switch.from_tid, e->u.thread_switch.to_tid);
		break;
	case SPENT_TRACE_EV_THREAD_START:
		printf("%u thread start\n", e->tid);
		break;
	case SPENT_TRACE_EV_THREAD_EXIT:
		printf("%u thread exit\n", e->tid);
		break;
	case SPENT_TRACE_EV_IMAGE_LOAD:
		printf("image %s %08llx-%08llx base %08llx\n",
		       text_for_terminal(e->u.image.path, shown, sizeof(shown)),
		       (unsigned long long)e->u.image.start, (unsigned long long)e->u.image.end,
		       (unsigned long long)e->u.image.base);
		break;
	case SPENT_TRACE_EV_EXIT:
		if (e->u.exit.status < 0)
			printf("exit killed by a signal\n");
		else
			printf("exit %d\n", e->u.exit.status);
		break;
	case SPENT_TRACE_EV_CHILD_KILLED:	/* a wait's (the command's: spent trace's) */
		printf("reaped pid %u killed by signal %d (%s)%s\n", e->u.child_killed.pid,
		       e->u.child_killed.signo, strsignal(e->u.child_killed.signo),
		       e->u.child_killed.core_dumped ? ", core dumped" : "");
		break;
	case SPENT_TRACE_EV_PROCESS_START: {
		printf("process %u pid %u ppid %u parent %u %s %s:", e->u.process.stream, e->pid,
		       e->u.process.ppid, e->u.process.parent_stream,
		       e->u.process.forked ? "fork" : "exec",
		       text_for_terminal(e->u.process.path, shown, sizeof(shown)));
		const char *a = e->u.process.argv;
		for (uint32_t i = 0; i < e->u.process.argc; i++, a += strlen(a) + 1)
			printf(" %s", text_for_terminal(a, shown, sizeof(shown)));
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

static int dump_batch(const struct spent_trace_batch *b, uint64_t *printed, uint64_t limit,
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
		const struct spent_trace_insn *in = &b->insns[i];
		note_pid(in->pid, last_pid);
		printf("%u I  %08llx,%u%s\n", in->tid, (unsigned long long)in->pc, in->len,
		       flag_names(in->flags, fl, sizeof(fl)));
		for (uint32_t k = 0; k < in->nrefs; k++) {
			const struct spent_trace_ref *r = &b->refs[in->ref0 + k];
			printf("%u  %c %08llx,%u\n", in->tid, ref_letter[r->kind & 3],
			       (unsigned long long)r->addr, r->size);
		}
		(*printed)++;
	}
	return 0;
}

static int open_log(const char *path, struct spent_trace_source **src)
{
	char err[512] = "";
	int e = spent_trace_source_open(path, src, err, sizeof(err));
	if (e < 0) {	/* ERR names PATH: the line trace stats and the studies print too */
		cli_error("%s", err);
		return 1;
	}
	return 0;
}

static int trace_dump(const struct trace_opts *o, const char *path)
{
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	uint64_t printed = 0;
	uint32_t last_pid = UINT32_MAX;
	int rc, ret = 0;
	if (open_log(path, &src))
		return 1;
	if ((o->pid || o->comm) && spent_trace_source_select(src, (uint32_t)o->pid, o->comm, 0, &src) < 0) {
		cli_error("out of memory");
		return 1;
	}
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		if (dump_batch(&b, &printed, o->limit, &last_pid))
			break;
	fflush(stdout);
	if (rc < 0) {
		cli_error("'%s': %s", path, spent_trace_source_error(src));
		ret = 1;
	} else if (rc == 0 && !printed && (o->pid || o->comm)) {
		/* empty is the answer, but a typo'd selection read as one with nothing said */
		char sel[160];
		studies_selection_text(sel, sizeof(sel), o->pid, o->comm);
		cli_warn("'%s': no process matches %s (its processes: spent trace stats %s)", path,
			 sel, path);
	}
	spent_trace_source_free(src);
	return ret;
}

static const char *const record_usage[] = {
	"spent trace [-o LOG] [--no-data] [--no-children] [--start SYMBOL] [--max-instructions N] [--] CMD [ARGS]",
	"spent trace dump [--limit N] [--pid PID] [--comm NAME] LOG",
	"spent trace stats [--json] [--progress] LOG",
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
static const char *const stats_usage[] = { "spent trace stats [--json] [--progress] LOG", NULL };
static const struct parse_usage stats_u = {
	"trace stats", stats_usage, "print a trace log's totals", NULL,
};

/* Whether the options before the command ask for the help (-h, --help, --man). */
static bool asks_help(int argc, char **argv)
{
	for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "--man"))
			return true;
	return false;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .output = default_log, .data = 1, .children = 1 };
#define TRACE_RECORD_OPTIONS \
		OPT_STRING('o', "output", &o.output, "LOG", "the log to write"), \
		OPT_BOOL(0, "data", &o.data, "record data addresses (--no-data: instructions only)"), \
		OPT_BOOL(0, "children", &o.children, \
			 "trace every process the command starts (--no-children: the command only)"), \
		OPT_STRING(0, "start", &o.start, "SYMBOL", \
			   "record from the first entry to this function on"), \
		OPT_COUNT(0, "max-instructions", &o.max_insns, "N", \
			"stop recording each process after N of its instructions (0: no limit)")
#define TRACE_DUMP_OPTIONS \
		OPT_COUNT(0, "limit", &o.limit, "N", "print at most N instructions (0: all)"), \
		OPT_INT(0, "pid", &o.pid, "PID", "only the process(es) of this pid (0: all)", 0, INT32_MAX), \
		OPT_STRING(0, "comm", &o.comm, "NAME", \
			   "only processes running the program of this file name (e.g. sort)")
#define TRACE_STATS_OPTIONS \
		OPT_BOOL(0, "json", &o.json, "print one JSON object"), \
		OPT_BOOL(0, "progress", &o.progress, \
			 "show the percentage of the log read on stderr (default: when it is a terminal)")
	const struct option record_opts[] = { TRACE_RECORD_OPTIONS, OPT_END() };
	const struct option dump_opts[] = { TRACE_DUMP_OPTIONS, OPT_END() };
	const struct option stats_opts[] = { TRACE_STATS_OPTIONS, OPT_END() };
	/* `spent trace -h` and the man page list every action's options, as citcat's do */
	const struct option help_opts[] = {
		OPT_GROUP("trace (record)"), TRACE_RECORD_OPTIONS,
		OPT_GROUP("trace dump"), TRACE_DUMP_OPTIONS,
		OPT_GROUP("trace stats"), TRACE_STATS_OPTIONS,
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
		return dump ? trace_dump(&o, argv[1]) : trace_stats(argv[1], o.json, o.progress);
	}
	int n = parse_options(argc, argv, asks_help(argc, argv) ? help_opts : record_opts, &record_u,
			      PARSE_STOP_AT_NON_OPTION);
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
