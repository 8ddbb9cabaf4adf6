/* cli/cmd_citcat.c - `spent citcat record [-o DIR] [--cpuid MODE] [--no-copy] -- CMD` and
 * `spent citcat replay DIR [--dump] [--json] [--stdout FILE]`: each subcommand's options in a
 * parse_options table (help, man page, errors from it), the summary and the --dump printer. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/helper_path.h"
#include "cli/parse_options.h"
#include "citcat/citcat.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/text.h"
#include "core/workload.h"

/* Each subcommand parses into its own table; the top-level table (for `spent citcat --man`
 * and `-h`) lists both under headings and points at the same fields. */
struct citcat_record_cli_opts {
	const char *out;
	int cpuid;	/* enum citcat_cpuid_mode: the CHOICE index follows the enum's order */
	int copy;	/* --no-copy clears it */
	int syscallbuf;	/* --no-syscallbuf clears it */
	double time_slice_ms;
};

struct citcat_replay_opts {
	const char *stdout_file;
	int dump;
	int json;
};

/* the defaults: the table's help shows them, and each `citcat record` starts from them */
#define REC_DEFAULTS { .out = "citcat.rec", .copy = 1, .syscallbuf = 1, \
		       .time_slice_ms = CITCAT_TIME_SLICE_MS }
static struct citcat_record_cli_opts rec_opts = REC_DEFAULTS;
static struct citcat_replay_opts rep_opts;

#define CITCAT_RECORD_OPTIONS \
	OPT_STRING('o', "output", &rec_opts.out, "DIR", "the recording directory (replaced " \
		   "only if it holds a recording)"), \
	OPT_CHOICE(0, "cpuid", &rec_opts.cpuid, "auto|fault|patch", "how cpuid traps to the " \
		   "recorder: CPUID faulting, or its sites patched to ud2; auto: fault where the CPU has it"), \
	OPT_BOOL(0, "copy", &rec_opts.copy, "keep a copy of every mapped file (default); " \
		 "--no-copy names them by path and identity instead (replayable only while they stay unchanged)"), \
	OPT_BOOL(0, "syscallbuf", &rec_opts.syscallbuf, "run the common syscalls of a single-threaded " \
		 "program without a ptrace stop, through a preloaded buffer (default); --no-syscallbuf stops " \
		 "the program at every syscall"), \
	OPT_DOUBLE(0, "time-slice", &rec_opts.time_slice_ms, "MS", "how long a thread of a " \
		   "threaded program runs while another is ready before the recorder switches " \
		   "(0.001 to 1000); shorter slices interleave the threads more finely")
#define CITCAT_REPLAY_OPTIONS \
	OPT_BOOL(0, "dump", &rep_opts.dump, "print every instruction (pc, length), data " \
		 "reference, syscall, signal, image load"), \
	OPT_BOOL(0, "json", &rep_opts.json, "print the summary as one JSON object"), \
	OPT_STRING(0, "stdout", &rep_opts.stdout_file, "FILE", "write what the replayed program " \
		   "wrote to its stdout into FILE (mode 0600, only when the replay completes; -: to " \
		   "standard output, the summary then on stderr)")

static const char *const record_usage[] = {
	"spent citcat record [-o DIR] [--cpuid auto|fault|patch] [--no-copy] [--no-syscallbuf] "
	"[--time-slice MS] -- CMD [ARGS...]", NULL
};
static const char *const replay_usage[] = {
	"spent citcat replay DIR [--dump] [--json] [--stdout FILE]", NULL
};
static const char *const citcat_usage[] = {
	"spent citcat record [-o DIR] [--cpuid auto|fault|patch] [--no-copy] [--no-syscallbuf] "
	"[--time-slice MS] -- CMD [ARGS...]",
	"spent citcat replay DIR [--dump] [--json] [--stdout FILE]", NULL
};
static const struct parse_usage record_u = {
	"citcat record", record_usage,
	"run CMD natively, recording its inputs into DIR (default citcat.rec); exits with CMD's status",
	NULL
};
static const struct parse_usage replay_u = {
	"citcat replay", replay_usage,
	"recompute the recorded run in a simulator, check it against the real one; exit 0 when verified",
	NULL
};
static const struct parse_usage citcat_u = {
	"citcat", citcat_usage,
	"record a run's inputs, recompute its instruction trace in a simulator (CITCAT)",
	"record runs CMD natively under ptrace and writes its initial state, syscalls, signals, "
	"rdtsc and cpuid answers, and copies of the files it mapped into DIR. replay starts a "
	"simulator from that state, feeds it the recorded inputs in order and verifies the output "
	"bytes, exit status and syscall count against the real run. See docs/citcat.md."
};
static const struct option record_options[] = { CITCAT_RECORD_OPTIONS, OPT_END() };
static const struct option replay_options[] = { CITCAT_REPLAY_OPTIONS, OPT_END() };
static const struct option citcat_options[] = {
	OPT_GROUP("citcat record"), CITCAT_RECORD_OPTIONS,
	OPT_GROUP("citcat replay"), CITCAT_REPLAY_OPTIONS,
	OPT_END()
};

static int parse_result_code(int n)
{
	return n == PARSE_OPT_HELP ? 0 : 2;
}

static int status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* Signals while recording or replaying. A terminal's ^C reaches the recorded program too (one
 * process group): its end is then recorded like any other, so spent outlives it (it died of
 * it and left DIR.tmp.PID). SIGTERM and SIGHUP to spent are passed on to the program (a second
 * one kills it), as spent record does. A replay stops, says where, and keeps nothing
 * half-written. Only signals not ignored at the start are handled: an ignored one stays
 * ignored, and the recorded program inherits that as it would without spent. */
static volatile pid_t recorded_pid;
static volatile sig_atomic_t stop_signals, stop_signo;
static struct citcat_replay *volatile replaying;

static void on_stop_signal(int sig)
{
	stop_signo = sig;
	if (replaying) {
		citcat_replay_interrupt(replaying);
		return;
	}
	pid_t p = recorded_pid;
	if (sig != SIGINT && p > 0)
		kill(p, stop_signals++ ? SIGKILL : sig);
}

static void handle_stop_signals(bool on)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static struct sigaction old[3];
	static bool installed[3];
	for (int i = 0; i < 3; i++) {
		if (on) {
			struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };
			sigemptyset(&sa.sa_mask);
			installed[i] = sigaction(sigs[i], NULL, &old[i]) == 0 &&
				       old[i].sa_handler != SIG_IGN && sigaction(sigs[i], &sa, NULL) == 0;
		} else if (installed[i]) {
			sigaction(sigs[i], &old[i], NULL);
			installed[i] = false;
		}
	}
}

static int citcat_record_main(int argc, char **argv)
{
	rec_opts = (struct citcat_record_cli_opts)REC_DEFAULTS;
	int n = parse_options(argc, argv, record_options, &record_u, PARSE_STOP_AT_NON_OPTION);
	if (n < 0)
		return parse_result_code(n);
	if (n == 0) {
		cli_error("no command to record: use 'spent citcat record [-o DIR] [--cpuid MODE] "
			  "[--no-copy] -- CMD'");
		return 2;
	}
	struct citcat_record_cli_opts o = rec_opts;
	if (!(o.time_slice_ms >= 0.001 && o.time_slice_ms <= 1000)) {
		parse_options_error(&record_u, "--time-slice %g: give 0.001 to 1000 ms", o.time_slice_ms);
		return 2;
	}
	char **cmd_argv = argv;
	struct citcat_record_opts ro = { .out_dir = o.out, .argv = cmd_argv, .cpuid = o.cpuid,
					  .no_copy = !o.copy, .time_slice_ns = (int64_t)llround(o.time_slice_ms * 1e6) };
	char sb_lib[4096];
	static const char *const sb_names[] = { "libspent-citcat-syscallbuf.so", NULL };
	if (o.syscallbuf && helper_find(sb_names, R_OK, sb_lib, sizeof(sb_lib)) == 0)
		ro.syscallbuf_lib = sb_lib;
	else if (o.syscallbuf)
		cli_warn("no syscall buffer library (libspent-citcat-syscallbuf.so in %s): every syscall "
			 "stops the program", sb_lib);
	struct citcat_record_result res;
	char err[512];
	ro.started_pid = &recorded_pid;
	handle_stop_signals(true);
	int e = citcat_record(&ro, &res, err, sizeof(err));
	handle_stop_signals(false);
	recorded_pid = 0;
	if (e) {
		cli_error("cannot record '%s' into '%s': %s", cmd_argv[0], o.out, err);
		/* as the shell, stat and record: 127 not found, 126 not runnable */
		return res.not_run ? workload_exec_exit_code(e) : 1;
	}
	if (res.unknown_syscalls)
		cli_warn("'%s' made %" PRIu64 " syscalls whose memory outputs citcat does not know "
			 "(first: %ld): the replay may diverge there", cmd_argv[0], res.unknown_syscalls,
			 res.first_unknown_nr);
	if (res.cpuid_unconfirmed)
		cli_warn("%" PRIu64 " cpuid-like byte pairs (0f a2) in mapped code were left unpatched "
			 "(first in '%s'): no decode confirmed them as instructions; if the program ran "
			 "one, the replay stops there", res.cpuid_unconfirmed, res.cpuid_unconfirmed_file);
	char how[64] = "cpuid faulting";
	if (res.cpuid_mode == CITCAT_CPUID_PATCH)
		snprintf(how, sizeof(how), "%" PRIu64 " cpuid sites patched", res.cpuid_patched);
	fprintf(stderr, "spent: recorded '%s' into '%s': %" PRIu64 " syscalls (%" PRIu64
		" buffered, %" PRIu64 " signals waited for one), %" PRIu64
		" rdtsc, %" PRIu64 " cpuid (%s), %" PRIu64 " signals at exact points, %" PRIu64 " threads (%"
		PRIu64 " switches, %" PRIu64 " preemptions), %" PRIu64 " bytes + %" PRIu64 " bytes of copies of %"
		PRIu64 " mapped files%s\n", cmd_argv[0], o.out, res.syscalls, res.buffered_syscalls,
		res.buffered_signal_waits, res.rdtsc, res.cpuid, how,
		res.signal_points, res.threads, res.switches, res.preemptions, res.bytes, res.copy_bytes, res.copies, !o.copy ? " (--no-copy)" : "");
	return status_code(res.wait_status);
}

static int dump_batches(struct spent_trace_source *src)
{
	char shown[TEXT_SHOWN_MAX];	/* a recording's image paths are its writer's */
	struct spent_trace_batch b;
	int r;
	while ((r = spent_trace_source_next(src, &b)) > 0) {
		size_t ev = 0;
		for (size_t i = 0; i <= b.n_insns; i++) {
			for (; ev < b.n_events && b.events[ev].before == i; ev++) {
				const struct spent_trace_event *e = &b.events[ev];
				if (e->kind == SPENT_TRACE_EV_SYSCALL)
					printf("# syscall %" PRId64 " = %" PRId64 "\n", e->u.syscall.nr,
					       e->u.syscall.ret);
				else if (e->kind == SPENT_TRACE_EV_SIGNAL)
					printf("# signal %d handler %#" PRIx64 " resume %#" PRIx64 "\n",
					       e->u.signal.signo, e->u.signal.handler, e->u.signal.resume_pc);
				else if (e->kind == SPENT_TRACE_EV_IMAGE_LOAD)
					printf("# image %s [%#" PRIx64 ", %#" PRIx64 ") base %#" PRIx64 "\n",
					       text_for_terminal(e->u.image.path, shown, sizeof(shown)),
					       e->u.image.start, e->u.image.end, e->u.image.base);
				else if (e->kind == SPENT_TRACE_EV_THREAD_SWITCH)
					printf("# thread %" PRIu32 " (from %" PRIu32 ")\n",
					       e->u.thread_switch.to_tid, e->u.thread_switch.from_tid);
				else if (e->kind == SPENT_TRACE_EV_EXIT)
					printf("# exit %d\n", status_code(e->u.exit.status));
			}
			if (i == b.n_insns)
				break;
			const struct spent_trace_insn *in = &b.insns[i];
			printf("%#" PRIx64 " %u\n", in->pc, in->len);
			for (unsigned k = 0; k < in->nrefs; k++) {
				const struct spent_trace_ref *rf = &b.refs[in->ref0 + k];
				printf("  %c %#" PRIx64 " %u\n", "?RWM"[rf->kind & 3], rf->addr, rf->size);
			}
		}
	}
	return r;
}

static const char *cpuid_mode_name(int mode)
{
	return mode == CITCAT_CPUID_FAULT ? "fault" : mode == CITCAT_CPUID_PATCH ? "patch" : "unknown";
}

static void print_summary(const struct citcat_replay_opts *o, const struct citcat_replay *rp,
			  const struct citcat_summary *s, double secs, double cpu, const char *error)
{
	uint32_t tid;
	uint64_t n;
	/* stdout holds the trace (--dump) or the program's output (--stdout -) */
	FILE *f = o->dump || (o->stdout_file && !strcmp(o->stdout_file, "-")) ? stderr : stdout;
	if (o->json) {
		struct json_writer w;
		json_init(&w, f);
		json_object_begin(&w);
		json_ku64(&w, "instructions", s->instructions);
		json_ku64(&w, "syscalls", s->syscalls);
		json_ku64(&w, "buffered_syscalls", s->buffered_syscalls);
		json_ku64(&w, "events", s->events);
		json_ki64(&w, "exit_status", s->exit_status >= 0 ? status_code(s->exit_status) : -1);
		json_ki64(&w, "recorded_exit_status",
			  s->recorded_status >= 0 ? status_code(s->recorded_status) : -1);
		json_ku64(&w, "output_bytes", s->out_bytes);
		json_kbool(&w, "verified", s->verified);
		json_ku64(&w, "recording_bytes", s->recording_bytes);
		json_ku64(&w, "copy_bytes", s->copy_bytes);
		json_kdouble(&w, "seconds", secs, 6);
		json_kdouble(&w, "cpu_seconds", cpu, 6);
		json_kstr(&w, "cpuid_mode", cpuid_mode_name(s->cpuid_mode));
		json_ku64(&w, "signal_points", s->signal_points);
		json_ku64(&w, "point_near_misses", s->point_near_misses);
		json_ku64(&w, "threads", s->threads);
		json_ku64(&w, "switches", s->switches);
		json_ku64(&w, "preemption_points", s->preemption_points);
		json_key(&w, "thread_instructions");
		json_array_begin(&w);
		for (size_t i = 0; citcat_replay_thread(rp, i, &tid, &n) == 0; i++) {
			json_object_begin(&w);
			json_ku64(&w, "tid", tid);
			json_ku64(&w, "instructions", n);
			json_object_end(&w);
		}
		json_array_end(&w);
		json_kstr(&w, "error", error);
		json_object_end(&w);
		json_newline(&w);
		return;
	}
	fprintf(f, "instructions   %" PRIu64 "\nsyscalls       %" PRIu64 " (%" PRIu64 " buffered)\n"
		"exit status    %d "
		"(recorded %d)\noutput bytes   %" PRIu64 "\nverified       %s\ncpuid          %s\n"
		"signal points  %" PRIu64 " (near misses %" PRIu64 ")\n"
		"replay speed   %.1f M instructions per cpu second\n", s->instructions, s->syscalls,
		s->buffered_syscalls,
		s->exit_status >= 0 ? status_code(s->exit_status) : -1,
		s->recorded_status >= 0 ? status_code(s->recorded_status) : -1, s->out_bytes,
		s->verified ? "yes" : "no", cpuid_mode_name(s->cpuid_mode), s->signal_points,
		s->point_near_misses, cpu > 0 ? s->instructions / cpu / 1e6 : 0.0);
	if (s->threads < 2)
		return;
	fprintf(f, "threads        %" PRIu64 " (%" PRIu64 " switches, %" PRIu64 " at exact points)\n",
		s->threads, s->switches, s->preemption_points);
	for (size_t i = 0; citcat_replay_thread(rp, i, &tid, &n) == 0; i++)
		fprintf(f, "  thread %-6" PRIu32 " %" PRIu64 " instructions\n", tid, n);
}

static int citcat_replay_main(int argc, char **argv)
{
	rep_opts = (struct citcat_replay_opts){ 0 };
	int n = parse_options(argc, argv, replay_options, &replay_u, 0);
	if (n < 0)
		return parse_result_code(n);
	if (n == 0) {
		cli_error("no recording to replay: use 'spent citcat replay DIR'");
		return 2;
	}
	if (n > 1)
		return parse_result_code(parse_options_error(&replay_u, "one recording directory, "
					 "not also '%s'", argv[1]));
	struct citcat_replay_opts o = rep_opts;
	const char *dir = argv[0];
	char err[600];
	struct citcat_summary s;
	struct citcat_replay *rp = NULL;
	struct spent_trace_source *src = NULL;
	struct timespec t0, t1, c0, c1;
	struct outfile *of = NULL;
	FILE *pout = NULL;
	int e, werr = 0;
	if (o.stdout_file && !strcmp(o.stdout_file, "-")) {	/* the program's output is ours */
		if (o.dump) {
			cli_error("--stdout - and --dump both write to standard output: choose one");
			return 2;
		}
		pout = stdout;
	} else if (o.stdout_file) {	/* refused before the replay, put in place after it */
		if (cli_check_output_from(o.stdout_file, dir))
			return 1;
		e = outfile_open(o.stdout_file, OUTFILE_MODE, &of);
		if (!e && !(pout = outfile_stream(of)))
			e = -ENOMEM;
		if (e) {
			cli_error("cannot write '%s': %s", o.stdout_file, outfile_strerror(e));
			outfile_abort(of);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	if (o.dump)
		e = citcat_source_new(dir, 1, &src, &rp, err, sizeof(err));
	else
		e = citcat_replay_new(dir, &rp, err, sizeof(err));
	if (e) {
		cli_error("cannot replay '%s': %s", dir, err);
		outfile_abort(of);
		return 1;
	}
	citcat_replay_set_stdout(rp, pout);
	replaying = rp;
	handle_stop_signals(true);
	if (o.dump) {
		e = dump_batches(src);
		snprintf(err, sizeof(err), "%s", spent_trace_source_error(src));
		citcat_replay_summary(rp, &s);
	} else {
		e = citcat_replay_run(rp, &s, err, sizeof(err));
	}
	handle_stop_signals(false);
	replaying = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	citcat_replay_set_stdout(rp, NULL);
	if (e < 0)
		outfile_abort(of);	/* a replay that stopped: no partial output at --stdout */
	else if (of && (werr = outfile_commit(of)))
		cli_error("cannot write '%s': %s", o.stdout_file, outfile_strerror(werr));
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
	fflush(stdout);
	print_summary(&o, rp, &s, secs, cpu, e < 0 ? err : NULL);
	if (e < 0)
		cli_error("replay of '%s' stopped: %s", dir, err);
	else if (!s.verified)
		cli_error("replay of '%s' does not match the real run (output or exit status differ)", dir);
	if (src)
		spent_trace_source_free(src);
	else
		citcat_replay_free(rp);
	if (e == -EINTR && stop_signo)
		return 128 + stop_signo;	/* stopped by a signal, as the shell says it */
	return e < 0 || !s.verified || werr ? 1 : 0;
}

int cmd_citcat(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "record"))
		return citcat_record_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "replay"))
		return citcat_replay_main(argc - 1, argv + 1);
	/* no subcommand: the top-level table answers -h, --help and --man */
	int n = parse_options(argc, argv, citcat_options, &citcat_u, PARSE_STOP_AT_NON_OPTION);
	if (n < 0)
		return parse_result_code(n);
	if (n == 0)
		cli_error("missing subcommand: use 'spent citcat record [-o DIR] [--cpuid MODE] "
			  "[--no-copy] -- CMD' or 'spent citcat replay DIR'");
	else
		cli_error("unknown subcommand '%s': use 'record' or 'replay'", argv[0]);
	return 2;
}
