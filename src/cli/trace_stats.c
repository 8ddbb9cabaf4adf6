/* cli/trace_stats.c - `spent trace stats LOG`: a trace log's totals, and per process of the
 * traced tree (each fork child and each exec'd program is one process stream): its pid,
 * parent, command line, instructions, data references and exit. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/alloc.h"
#include "core/text.h"
#include "cli/cli.h"
#include "cli/studies_util.h"
#include "cli/trace_cli.h"
#include "citcat/recording_format.h"
#include "core/json.h"
#include "spent/trace.h"
#include "trace/log_io.h"

/* "SIGTERM" for 15 (sigabbrev_np), "SIG65" for one glibc has no name for */
static const char *signal_name(int sig)
{
	static char buf[16];
	const char *abbrev = sigabbrev_np(sig);
	snprintf(buf, sizeof(buf), "SIG%s", abbrev ? abbrev : "");
	if (!abbrev)
		snprintf(buf, sizeof(buf), "SIG%d", sig);
	return buf;
}

struct proc_stat {
	uint32_t stream, pid, ppid, parent_stream;
	int forked, exited, status;
	int signo, core_dumped;	/* killed: the signal its reaper's wait gave (0: unknown) */
	char cmdline[256];	/* argv joined by spaces, cut to fit */
	char exe[256];
	uint64_t insns, refs, last_time;
	int time_disorder;	/* an event went back in time within the process */
};

struct trace_totals {
	uint64_t insns, refs, events, syscalls, signals;
	uint64_t threads[256];	/* pid << 32 | tid */
	size_t n_threads;
	struct proc_stat *procs;
	size_t n_procs, cap_procs;
	size_t cur;		/* procs[] index of the last pid looked up */
};

/* The current process stream of PID: the latest one started (an exec starts another in the
 * same pid). Logs without process records count as one process of pid 0. */
static struct proc_stat *proc_of(struct trace_totals *t, uint32_t pid)
{
	if (t->cur < t->n_procs && t->procs[t->cur].pid == pid)
		return &t->procs[t->cur];
	for (size_t i = t->n_procs; i-- > 0;)
		if (t->procs[i].pid == pid) {
			t->cur = i;
			return &t->procs[i];
		}
	return NULL;
}

static struct proc_stat *proc_add(struct trace_totals *t, uint32_t pid)
{
	if (ALLOC_GROW(t->procs, t->n_procs + 1, t->cap_procs))
		return NULL;
	struct proc_stat *p = &t->procs[t->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	t->cur = t->n_procs++;
	return p;
}

static void on_process(struct trace_totals *t, const struct spent_trace_event *e)
{
	struct proc_stat *p = proc_add(t, e->pid);
	if (!p)
		return;
	p->stream = e->u.process.stream;
	p->ppid = e->u.process.ppid;
	p->parent_stream = e->u.process.parent_stream;
	p->forked = e->u.process.forked;
	snprintf(p->exe, sizeof(p->exe), "%s", e->u.process.path);
	size_t n = 0;
	const char *a = e->u.process.argv;
	for (uint32_t i = 0; i < e->u.process.argc && n + 1 < sizeof(p->cmdline); i++) {
		n += (size_t)snprintf(p->cmdline + n, sizeof(p->cmdline) - n, "%s%s", i ? " " : "", a);
		if (n >= sizeof(p->cmdline))
			n = sizeof(p->cmdline) - 1;
		a += strlen(a) + 1;
	}
}

static void on_event(struct trace_totals *t, const struct spent_trace_event *e)
{
	t->events++;
	t->syscalls += e->kind == SPENT_TRACE_EV_SYSCALL;
	t->signals += e->kind == SPENT_TRACE_EV_SIGNAL;
	if (e->kind == SPENT_TRACE_EV_PROCESS_START) {
		on_process(t, e);
		return;
	}
	if (e->kind == SPENT_TRACE_EV_CHILD_KILLED) {	/* the reaped process's, not the reaper's */
		struct proc_stat *k = proc_of(t, e->u.child_killed.pid);
		if (k) {
			k->exited = 1;
			k->status = -1;
			k->signo = e->u.child_killed.signo;
			k->core_dumped = e->u.child_killed.core_dumped;
		}
	}
	struct proc_stat *p = proc_of(t, e->pid);
	if (!p && !(p = proc_add(t, e->pid)))
		return;
	if (e->time_ns) {
		if (e->time_ns < p->last_time)
			p->time_disorder = 1;
		p->last_time = e->time_ns;
	}
	if (e->kind == SPENT_TRACE_EV_EXIT) {
		p->exited = 1;
		p->status = e->u.exit.status;
	}
}

static void note_thread(struct trace_totals *t, uint64_t key)
{
	for (size_t k = 0; k < t->n_threads; k++)
		if (t->threads[k] == key)
			return;
	if (t->n_threads < 256)
		t->threads[t->n_threads++] = key;
}

/* Instructions [I, END) of B: runs of one process counted at once (references from ref0). */
static void count_range(struct trace_totals *t, const struct spent_trace_batch *b, size_t i, size_t end)
{
	while (i < end) {
		uint32_t pid = b->insns[i].pid;
		uint64_t key = ((uint64_t)pid << 32) | b->insns[i].tid, last = key;
		note_thread(t, key);
		size_t j = i + 1;
		for (; j < end && b->insns[j].pid == pid; j++) {
			uint64_t k = ((uint64_t)pid << 32) | b->insns[j].tid;
			if (k != last)
				note_thread(t, last = k);
		}
		uint64_t r1 = j < b->n_insns ? b->insns[j].ref0 : b->n_refs;
		uint64_t refs = r1 - b->insns[i].ref0;
		struct proc_stat *p = proc_of(t, pid);
		if (!p)
			p = proc_add(t, pid);
		if (p) {
			p->insns += j - i;
			p->refs += refs;
		}
		t->insns += j - i;
		t->refs += refs;
		i = j;
	}
}

static void count_batch(struct trace_totals *t, const struct spent_trace_batch *b)
{
	size_t i = 0;
	for (size_t ev = 0; ev < b->n_events; ev++) {
		size_t stop = b->events[ev].before < b->n_insns ? b->events[ev].before : b->n_insns;
		count_range(t, b, i, stop);
		i = stop > i ? stop : i;
		on_event(t, &b->events[ev]);
	}
	count_range(t, b, i, b->n_insns);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_json(const struct trace_totals *t, uint64_t log_bytes, int data, double secs,
		       int complete, int ordered)
{
	struct json_writer w;
	double bpi = t->insns ? (double)log_bytes / (double)t->insns : 0;
	json_init(&w, stdout);
	json_object_begin(&w);
	json_ku64(&w, "instructions", t->insns);
	json_ku64(&w, "data_refs", t->refs);
	json_ku64(&w, "threads", t->n_threads);
	json_ku64(&w, "log_bytes", log_bytes);
	json_kdouble(&w, "bytes_per_instruction", bpi, 4);
	json_kbool(&w, "data_addresses", data);
	json_ku64(&w, "syscalls", t->syscalls);
	json_ku64(&w, "signals", t->signals);
	json_kdouble(&w, "reconstruct_cpu_s", secs, 3);
	json_kdouble(&w, "reconstruct_minstr_per_s", secs > 0 ? (double)t->insns / secs / 1e6 : 0, 1);
	json_kbool(&w, "time_ordered", ordered);
	json_kbool(&w, "complete", complete);
	json_key(&w, "processes");
	json_array_begin(&w);
	for (size_t i = 0; i < t->n_procs; i++) {
		const struct proc_stat *p = &t->procs[i];
		json_object_begin(&w);
		json_ku64(&w, "stream", p->stream);
		json_ku64(&w, "pid", p->pid);
		json_ku64(&w, "ppid", p->ppid);
		json_ku64(&w, "parent_stream", p->parent_stream);
		json_kstr(&w, "start", p->forked ? "fork" : "exec");
		json_kstr(&w, "exe", p->exe);
		json_kstr(&w, "cmdline", p->cmdline);
		json_ku64(&w, "instructions", p->insns);
		json_ku64(&w, "data_refs", p->refs);
		if (p->exited && p->status >= 0)
			json_ki64(&w, "exit_status", p->status);
		else
			json_knull(&w, "exit_status");
		json_kbool(&w, "killed", p->exited && p->status < 0);
		if (p->signo) {
			json_ki64(&w, "signal", p->signo);
			json_kstr(&w, "signal_name", signal_name(p->signo));
			json_kbool(&w, "core_dumped", p->core_dumped);
		} else {
			json_knull(&w, "signal");
		}
		json_object_end(&w);
	}
	json_array_end(&w);
	json_object_end(&w);
	json_newline(&w);
}

/* How P ended, for the table: its exit status, the signal that killed it (+core when it
 * dumped one), "killed" when no wait said which, "-" while it runs on */
static void exit_text(const struct proc_stat *p, char *buf, size_t len)
{
	if (p->exited && p->status >= 0)
		snprintf(buf, len, "%d", p->status);
	else if (p->signo)
		snprintf(buf, len, "%s%s", signal_name(p->signo), p->core_dumped ? "+core" : "");
	else
		snprintf(buf, len, "%s", p->exited ? "killed" : "-");
}

static void print_text(const struct trace_totals *t, uint64_t log_bytes, int data, double secs,
		       const char *complete)
{
	double bpi = t->insns ? (double)log_bytes / (double)t->insns : 0;
	double mips = secs > 0 ? (double)t->insns / secs / 1e6 : 0;
	printf("%-24s %llu\n%-24s %llu\n%-24s %zu\n%-24s %zu\n%-24s %llu\n%-24s %.4f\n%-24s %s\n"
	       "%-24s %llu\n%-24s %llu\n%-24s %.1f\n%-24s %s\n",
	       "instructions", (unsigned long long)t->insns, "data_refs", (unsigned long long)t->refs,
	       "threads", t->n_threads, "processes", t->n_procs, "log_bytes",
	       (unsigned long long)log_bytes, "bytes_per_instruction", bpi, "data_addresses",
	       data ? "yes" : "no", "syscalls", (unsigned long long)t->syscalls, "signals",
	       (unsigned long long)t->signals, "reconstruct_Minstr/s", mips, "complete", complete);
	char ex[32];
	if (t->n_procs == 1) {	/* one process: how it ended, which the table says for a tree */
		exit_text(&t->procs[0], ex, sizeof(ex));
		printf("%-24s %s\n", "exit", ex);
	}
	if (t->n_procs < 2)
		return;
	printf("\n%-7s %-8s %-8s %-7s %-5s %14s %14s %-7s %s\n", "stream", "pid", "ppid", "parent",
	       "start", "instructions", "data_refs", "exit", "command");
	for (size_t i = 0; i < t->n_procs; i++) {
		const struct proc_stat *p = &t->procs[i];
		char shown[TEXT_SHOWN_MAX];	/* a `python3 -c` script's newlines, say */
		exit_text(p, ex, sizeof(ex));
		printf("%-7u %-8u %-8u %-7u %-5s %14llu %14llu %-7s %s\n", p->stream, p->pid, p->ppid,
		       p->parent_stream, p->forked ? "fork" : "exec", (unsigned long long)p->insns,
		       (unsigned long long)p->refs, ex, text_for_terminal(p->cmdline, shown, sizeof(shown)));
	}
}

int trace_stats(const char *path, int json, int progress)
{
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	struct trace_totals t = { 0 };
	struct log_reader *rd;
	struct stat st;
	char err[512], rec[PATH_MAX];
	int rc, ret = 0, data = 1, cut_short = 0;
	uint64_t log_bytes = 0;
	/* opened as dump and the studies open it, so a bad path gets their error line, and a
	 * citcat recording is taken as they take it */
	if (spent_trace_source_open(path, &src, err, sizeof(err)) < 0)
		return cli_error("%s", err), 1;
	if (strcmp(spent_trace_source_name(src), "patchwrx-log")) {
		/* a citcat recording: its recording file's size stands for the log's, it always has
		 * data addresses */
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(rec, sizeof(rec), "%s/%s", path, CC_FILE_NAME);
			log_bytes = stat(rec, &st) == 0 ? (uint64_t)st.st_size : 0;
		} else {
			log_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
		}
	} else {
		/* the header's flags, which the source does not expose */
		if (log_reader_new_file(path, &rd, err, sizeof(err)) < 0) {
			spent_trace_source_free(src);
			return cli_error("%s", err), 1;
		}
		log_bytes = log_reader_size(rd);
		data = (log_reader_flags(rd) & LOG_F_DATA) != 0;
		cut_short = (log_reader_flags(rd) & LOG_F_INCOMPLETE) != 0;
		log_reader_free(rd);
	}
	struct studies_progress prog;
	studies_progress_begin(&prog, "trace stats", path, progress);
	double t0 = cpu_seconds();
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		count_batch(&t, &b);
		studies_progress_update(&prog, src);
	}
	double secs = cpu_seconds() - t0;
	studies_progress_end(&prog);
	int ordered = 1;
	for (size_t i = 0; i < t.n_procs; i++)
		ordered &= !t.procs[i].time_disorder;
	if (json)
		print_json(&t, log_bytes, data, secs, !(rc < 0 || cut_short), ordered);
	else
		print_text(&t, log_bytes, data, secs,
			   rc < 0 ? "no (the log is cut or corrupt)"
			   : cut_short ? "no (the recording was interrupted or the program killed)" : "yes");
	fflush(stdout);
	if (rc < 0) {
		cli_error("'%s': %s", path, spent_trace_source_error(src));
		ret = 1;
	}
	free(t.procs);
	spent_trace_source_free(src);
	return ret;
}
