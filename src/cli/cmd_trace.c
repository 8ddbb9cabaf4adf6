/* cli/cmd_trace.c - `spent trace`: run a command under the spent Valgrind tool and write its
 * compact log (`spent trace -- CMD`), print the reconstructed stream (`spent trace dump LOG`)
 * or its totals (`spent trace stats LOG`). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/helper_path.h"
#include "core/binio.h"
#include "core/json.h"
#include "core/outfile.h"
#include "spent/trace.h"
#include "trace/log_io.h"

struct trace_opts {
	const char *output;
	int data;
	const char *start;
	uint64_t max_insns;
	uint64_t limit;
	int json;
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
static void add_identity(uint8_t *payload, uint32_t len)
{
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

/* Copy records from the tool's pipe into the log; 0 at a clean EOF. The pipe is read in big
 * chunks (one read per pipe-full, not two per record) and records go to the writer in place. */
#define PUMP_BUF (4u << 20)
static int pump(int fd, struct log_writer *w, uint64_t *n_records, uint64_t *n_data)
{
	uint8_t *buf = malloc(PUMP_BUF);
	size_t have = 0, pos = 0;
	int err = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct log_rec_hdr h;
		if (have - pos >= sizeof(h)) {
			memcpy(&h, buf + pos, sizeof(h));
			if (h.type < LOG_REC_CODE || h.type >= LOG_REC_END || h.len > LOG_REC_MAX) {
				err = -EBADMSG;
				break;
			}
			size_t padded = ((size_t)h.len + 7u) & ~(size_t)7u;
			if (have - pos - sizeof(h) >= padded) {
				uint8_t *payload = buf + pos + sizeof(h);
				if (h.type == LOG_REC_IMAGE)
					add_identity(payload, h.len);
				if ((err = log_writer_add(w, h.type, payload, h.len)) < 0)
					break;
				(*n_records)++;
				*n_data += h.type == LOG_REC_DATA;
				pos += sizeof(h) + padded;
				continue;
			}
		}
		if (pos > 0) {	/* keep the incomplete record at the front */
			memmove(buf, buf + pos, have - pos);
			have -= pos;
			pos = 0;
		}
		ssize_t n = read(fd, buf + have, PUMP_BUF - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			if (have > 0)
				err = -EPIPE;
			break;
		}
		have += (size_t)n;
	}
	free(buf);
	return err;
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

static pid_t spawn_tool(const struct trace_opts *o, const char *vglib, int wfd, char **cmd)
{
	char fdopt[32], maxopt[48], startopt[512];
	char *argv[16 + 256];
	int n = 0;
	snprintf(fdopt, sizeof(fdopt), "--spent-fd=%d", wfd);
	argv[n++] = "valgrind";
	argv[n++] = "--tool=spent";
	argv[n++] = "-q";
	argv[n++] = fdopt;
	if (!o->data)
		argv[n++] = "--spent-data=no";
	if (o->start) {
		snprintf(startopt, sizeof(startopt), "--spent-start=%s", o->start);
		argv[n++] = startopt;
		argv[n++] = "--vex-guest-chase=no";
	}
	if (o->max_insns) {
		snprintf(maxopt, sizeof(maxopt), "--spent-max=%llu", (unsigned long long)o->max_insns);
		argv[n++] = maxopt;
	}
	for (int i = 0; cmd[i] && n < 16 + 254; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		/* a shell starts background jobs with SIGINT ignored: the program must not be */
		for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
			signal(stop_signals[i], SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		setenv("VALGRIND_LIB", vglib, 1);
		execvp("valgrind", argv);
		fprintf(stderr, "spent: cannot run 'valgrind': %s: install the valgrind package\n",
			strerror(errno));
		_exit(127);
	}
	return pid;
}

static int trace_record(const struct trace_opts *o, char **cmd)
{
	char vglib[PATH_MAX];
	struct log_writer *w = NULL;
	int fds[2], status = 0, err;
	uint64_t n_records = 0, n_data = 0;

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
	if (pipe2(fds, O_CLOEXEC) < 0) {
		cli_error("cannot create a pipe: %s", strerror(errno));
		log_writer_free(w);
		return 1;
	}
	/* a big pipe: the tool writes 2 MiB at a time, fewer context switches both sides (the
	 * default 64 KiB when the limit in /proc/sys/fs/pipe-max-size is lower) */
	fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
	int wfd = fcntl(fds[1], F_DUPFD, 3);	/* without close-on-exec: the tool's end */
	pid_t pid = wfd < 0 ? -1 : spawn_tool(o, vglib, wfd, cmd);
	if (pid > 0) {
		tool_pid = pid;
		if (stop_signal)	/* came before the pid was known */
			kill(pid, stop_signal);
	}
	close(fds[1]);
	if (wfd >= 0)
		close(wfd);
	if (pid < 0) {
		cli_error("cannot start valgrind: %s", strerror(errno));
		close(fds[0]);
		log_writer_free(w);
		return 1;
	}
	err = pump(fds[0], w, &n_records, &n_data);
	close(fds[0]);
	reap_tool(pid, &status);
	if (err < 0)
		cli_warn("log stream from the valgrind tool broke off: %s: the log keeps what arrived before",
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
	fprintf(stderr, "spent: trace: wrote '%s' (%llu bytes, %llu records)\n", o->output,
		(unsigned long long)log_writer_bytes(w), (unsigned long long)n_records);
	log_writer_free(w);
	if (stop_signal)
		return 128 + stop_signal;
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
	default:
		break;
	}
}

static const char ref_letter[4] = { '?', 'L', 'S', 'M' };

/* Print instructions up to LIMIT (0: all); returns 1 when the limit was reached. */
static int dump_batch(const struct trace_batch *b, uint64_t *printed, uint64_t limit)
{
	size_t ev = 0;
	char fl[96];
	for (size_t i = 0; i <= b->n_insns; i++) {
		while (ev < b->n_events && b->events[ev].before == i)
			print_event(&b->events[ev++]);
		if (i == b->n_insns)
			break;
		if (limit && *printed >= limit)
			return 1;
		const struct trace_insn *in = &b->insns[i];
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
	int rc, ret = 0;
	if (open_log(path, &src))
		return 1;
	while ((rc = trace_source_next(src, &b)) > 0)
		if (dump_batch(&b, &printed, o->limit))
			break;
	fflush(stdout);
	if (rc < 0) {
		cli_error("'%s': %s", path, trace_source_error(src));
		ret = 1;
	}
	trace_source_free(src);
	return ret;
}

struct trace_totals {
	uint64_t insns, refs, events, syscalls, signals;
	uint32_t tids[256];
	size_t n_tids;
	uint64_t last_time;
	int time_disorder;	/* a chunk timestamp went backwards in stream order */
};

static void check_time(struct trace_totals *t, uint64_t ns)
{
	if (!ns)
		return;
	if (ns < t->last_time)
		t->time_disorder = 1;
	t->last_time = ns;
}

static void count_batch(struct trace_totals *t, const struct trace_batch *b)
{
	t->insns += b->n_insns;
	t->refs += b->n_refs;
	t->events += b->n_events;
	check_time(t, b->time_ns);
	for (size_t i = 0; i < b->n_events; i++) {
		check_time(t, b->events[i].time_ns);
		t->syscalls += b->events[i].kind == TRACE_EV_SYSCALL;
		t->signals += b->events[i].kind == TRACE_EV_SIGNAL;
	}
	uint32_t last = 0;
	for (size_t i = 0; i < b->n_insns; i++) {
		/* runs of one thread are long: skip four at a time while nothing changes */
		while (i + 4 <= b->n_insns && ((b->insns[i].tid ^ last) | (b->insns[i + 1].tid ^ last) |
					       (b->insns[i + 2].tid ^ last) | (b->insns[i + 3].tid ^ last)) == 0)
			i += 4;
		if (i == b->n_insns)
			break;
		uint32_t tid = b->insns[i].tid;
		if (tid == last)
			continue;
		last = tid;
		size_t k = 0;
		while (k < t->n_tids && t->tids[k] != tid)
			k++;
		if (k == t->n_tids && t->n_tids < 256)
			t->tids[t->n_tids++] = tid;
	}
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int trace_stats(const struct trace_opts *o, const char *path)
{
	struct trace_source *src;
	struct trace_batch b;
	struct trace_totals t = { 0 };
	struct log_reader *rd;
	char err[512];
	int rc, ret = 0;
	if (log_reader_new_file(path, &rd, err, sizeof(err)) < 0)
		return cli_error("%s", err), 1;
	uint64_t log_bytes = log_reader_size(rd);
	int data = (log_reader_flags(rd) & LOG_F_DATA) != 0;
	int cut_short = (log_reader_flags(rd) & LOG_F_INCOMPLETE) != 0;
	log_reader_free(rd);
	if (open_log(path, &src))
		return 1;
	double t0 = cpu_seconds();
	while ((rc = trace_source_next(src, &b)) > 0)
		count_batch(&t, &b);
	double secs = cpu_seconds() - t0;
	double bpi = t.insns ? (double)log_bytes / (double)t.insns : 0;
	double mips = secs > 0 ? (double)t.insns / secs / 1e6 : 0;
	if (o->json) {
		struct json_writer w;
		json_init(&w, stdout);
		json_object_begin(&w);
		json_ku64(&w, "instructions", t.insns);
		json_ku64(&w, "data_refs", t.refs);
		json_ku64(&w, "threads", t.n_tids);
		json_ku64(&w, "log_bytes", log_bytes);
		json_kdouble(&w, "bytes_per_instruction", bpi, 4);
		json_kbool(&w, "data_addresses", data);
		json_ku64(&w, "syscalls", t.syscalls);
		json_ku64(&w, "signals", t.signals);
		json_kdouble(&w, "reconstruct_cpu_s", secs, 3);
		json_kdouble(&w, "reconstruct_minstr_per_s", mips, 1);
		json_kbool(&w, "time_ordered", !t.time_disorder);
		json_kbool(&w, "complete", !(rc < 0 || cut_short));
		json_object_end(&w);
		json_newline(&w);
	} else
		printf("%-24s %llu\n%-24s %llu\n%-24s %zu\n%-24s %llu\n%-24s %.4f\n%-24s %s\n"
		       "%-24s %llu\n%-24s %llu\n%-24s %.1f\n%-24s %s\n",
		       "instructions", (unsigned long long)t.insns, "data_refs", (unsigned long long)t.refs,
		       "threads", t.n_tids, "log_bytes", (unsigned long long)log_bytes,
		       "bytes_per_instruction", bpi, "data_addresses", data ? "yes" : "no",
		       "syscalls", (unsigned long long)t.syscalls, "signals", (unsigned long long)t.signals,
		       "reconstruct_Minstr/s", mips, "complete",
		       rc < 0 ? "no (the log is cut or corrupt)"
		       : cut_short ? "no (the recording was interrupted or the program killed)" : "yes");
	fflush(stdout);
	if (rc < 0) {
		cli_error("'%s': %s", path, trace_source_error(src));
		ret = 1;
	}
	trace_source_free(src);
	return ret;
}

static int parse_opts(int argc, char **argv, struct trace_opts *o, int permute)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-data", no_argument, NULL, 'D' },
		{ "start", required_argument, NULL, 's' },
		{ "max-instructions", required_argument, NULL, 'm' },
		{ "limit", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, permute ? "o:" : "+o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'D': o->data = 0; break;
		case 's': o->start = optarg; break;
		case 'm':
			if (cli_parse_u64(optarg, &o->max_insns) < 0 || o->max_insns == 0) {
				cli_error("bad --max-instructions '%s': give a positive count", optarg);
				return -1;
			}
			break;
		case 'l':
			if (cli_parse_u64(optarg, &o->limit) < 0) {
				cli_error("bad --limit '%s': give a count", optarg);
				return -1;
			}
			break;
		case 'j': o->json = 1; break;
		default:
			cli_error("unknown option for 'trace': see 'spent help trace'");
			return -1;
		}
	}
	return optind;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .output = default_log, .data = 1 };
	const char *sub = argc > 1 ? argv[1] : NULL;
	if (sub && (strcmp(sub, "dump") == 0 || strcmp(sub, "stats") == 0)) {
		int i = parse_opts(argc - 1, argv + 1, &o, 1);
		if (i < 0)
			return 2;
		if (argc - 1 - i != 1) {
			cli_error("'spent trace %s' takes one LOG: spent trace %s LOG", sub, sub);
			return 2;
		}
		const char *path = argv[1 + i];
		return sub[0] == 'd' ? trace_dump(&o, path) : trace_stats(&o, path);
	}
	int i = parse_opts(argc, argv, &o, 0);
	if (i < 0)
		return 2;
	if (i >= argc) {
		cli_error("no command to trace: spent trace [-o LOG] [--no-data] -- CMD");
		return 2;
	}
	return trace_record(&o, argv + i);
}
