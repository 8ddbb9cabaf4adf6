/* collect/record.c - the public recorder (spent/record.h): turns event specs into sampled
 * events (presets, periods, frequencies, fallbacks without a PMU), starts the command held
 * until its events are open (or attaches to a pid), reads the rings until it ends, and writes
 * the profile directory. `spent record` is a thin caller of this; nothing here prints. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/event_fallback.h"
#include "collect/sampling.h"
#include "collect/thread_tracker.h"
#include "core/alloc.h"
#include "core/number.h"
#include "core/errmsg.h"
#include "core/kallsyms_file.h"
#include "core/outfile.h"
#include "core/symbols.h"
#include "core/workload.h"
#include "spent/record.h"

#define RECORD_MAX_EVENTS 64

struct spent_record {
	struct spent_record_opts o;
	struct sampling_event evs[RECORD_MAX_EVENTS];
	size_t nev;
	struct sampling *s;
	struct workload wl;
	pid_t target;		/* the attached pid (0 for a command) */
	bool all_cpus;		/* every task on every CPU (SPENT_RECORD_ALL_CPUS) */
	int status;		/* the command's wait status */
	int exit_code;
	bool waited, user_fallback_said;
	volatile sig_atomic_t stop;
	volatile sig_atomic_t reaped;	/* the command was waited for: its pid is no longer ours */
	uint64_t enable_at_ms;	/* delay_ms: CLOCK_MONOTONIC ms when sampling starts (0: started) */
	/* --per-thread with a command: this process is a child subreaper while it records */
	bool made_subreaper;	/* by us (cleared at the end), not already by the caller */
	struct pid_list { pid_t *v; size_t n, cap; } adopted, foreign;
	char err[512];
};

/* the reason for a failure, kept for the *_error() call */
#define fail(h, code, ...) errmsg_set((h)->err, sizeof((h)->err), code, __VA_ARGS__)

static void warn(struct spent_record *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct spent_record *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!r->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o.warn(r->o.warn_arg, msg);
}

/* perf's -F above kernel.perf_event_max_sample_rate: the kernel refuses the event, so the
 * rate is lowered to the maximum and the user told, as perf record does. */
static void clamp_frequency(struct spent_record *r)
{
	char msg[256];
	uint64_t hz = r->o.freq;
	sampling_clamp_frequency(&hz, msg, sizeof(msg));
	if (msg[0])
		warn(r, "%s", msg);
	r->o.freq = hz;
}

int spent_record_new(const struct spent_record_opts *opts, struct spent_record **out)
{
	struct spent_record *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *opts;
	r->wl = (struct workload)WORKLOAD_INIT;
	*out = r;
	if (r->o.freq && r->o.period)
		return fail(r, -EINVAL, "a frequency and a period both given: choose one");
	/* the kernel refuses periods with bit 63 set */
	if (r->o.period > INT64_MAX)
		return fail(r, -EINVAL, "bad period %llu: give a positive event count",
			    (unsigned long long)r->o.period);
	/* the kernel says only EINVAL at the first event's open for a bad size */
	if (r->o.dwarf_stack_bytes % 8 || r->o.dwarf_stack_bytes > 65528)
		return fail(r, -EINVAL, "bad user stack size %u for dwarf call graphs: a multiple "
			    "of 8 up to 65528", r->o.dwarf_stack_bytes);
	clamp_frequency(r);
	return 0;
}

enum period_kind { P_DEFAULT, P_FAST, P_SLOW, P_EXPLICIT };

/* Split EV@fast, EV@slow, EV:PERIOD in BUF (the spec, modified) into the name and the kind. */
static int split_period(struct spent_record *r, const char *spec, char *buf, enum period_kind *how,
			uint64_t *period)
{
	size_t l = strlen(buf);
	char *colon = strrchr(buf, ':');
	*how = P_DEFAULT;
	if (l > 5 && !strcmp(buf + l - 5, "@fast")) {
		*how = P_FAST;
		buf[l - 5] = 0;
	} else if (l > 5 && !strcmp(buf + l - 5, "@slow")) {
		*how = P_SLOW;
		buf[l - 5] = 0;
	} else if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		if (num_parse_u64(colon + 1, NUM_SI, period) || !*period || *period > INT64_MAX)
			return fail(r, -EINVAL, "bad period in event '%s': give a positive count", spec);
		*how = P_EXPLICIT;
		*colon = 0;
	}
	return 0;
}

/* One spec: EV, EV:PERIOD, EV@fast, EV@slow. */
static int add_event(struct spent_record *r, const char *spec)
{
	char buf[200], msg[512];
	enum period_kind how;
	uint64_t period = 0;
	if (r->nev == RECORD_MAX_EVENTS)
		return fail(r, -E2BIG, "too many events: at most %d", RECORD_MAX_EVENTS);
	struct sampling_event *se = &r->evs[r->nev++];
	snprintf(buf, sizeof(buf), "%s", spec);
	int err = split_period(r, spec, buf, &how, &period);
	if (err)
		return err;
	memset(se, 0, sizeof(*se));
	if ((err = spent_event_parse(buf, &se->ev, r->err, sizeof(r->err))))
		return err;
	if (spent_event_needs_pmu(&se->ev) && !spent_pmu_present()) {
		if (spent_event_fallback(&se->ev, true))
			return fail(r, -ENODEV, "event '%s' needs a hardware PMU and this machine has "
				    "none: sample a software event such as 'cpu-clock'", buf);
		/* a period given in the event's units is now one of nanoseconds: said, since 100003
		 * cycles (~30 us) became 100003 ns (~100 us) without a word */
		bool given = how == P_EXPLICIT || (how != P_FAST && how != P_SLOW && !r->o.freq && r->o.period);
		warn(r, "no hardware PMU on this machine: sampling 'cpu-clock' instead of '%s'%s", buf,
		     given ? " (its period is taken as nanoseconds)" : "");
	}
	if (event_user_space_fallback(&se->ev, msg, sizeof(msg)) && !r->user_fallback_said) {
		warn(r, "%s", msg);
		r->user_fallback_said = true;
	}
	if (how == P_EXPLICIT) {
		se->period = period;
	} else if (how == P_FAST || how == P_SLOW) {
		se->period = sampling_preset_period(&se->ev, how == P_FAST);
	} else if (r->o.freq) {
		se->period = r->o.freq;
		se->freq = true;
	} else {
		se->period = r->o.period ? r->o.period : sampling_preset_period(&se->ev, true);
	}
	return 0;
}

/* Every spec, in order, each possibly a comma-separated list; none: the default event. */
static int add_events(struct spent_record *r)
{
	int err = 0;
	r->nev = 0;	/* a start after a failed one lists them afresh */
	if (!r->o.n_events) {
		if (!spent_pmu_present())
			warn(r, "no hardware PMU on this machine: sampling 'cpu-clock' instead of 'cycles'");
		return add_event(r, spent_pmu_present() ? "cycles" : "cpu-clock");
	}
	for (size_t i = 0; i < r->o.n_events && !err; i++) {
		char *list = strdup(r->o.events[i]), *save = NULL;
		size_t before = r->nev;
		if (!list)
			return fail(r, -ENOMEM, "out of memory");
		for (char *t = strtok_r(list, ",", &save); t && !err; t = strtok_r(NULL, ",", &save))
			err = add_event(r, t);
		if (!err && r->nev == before)
			err = fail(r, -EINVAL, "empty event list '%s'", r->o.events[i]);
		free(list);
	}
	return err;
}

static const enum sampling_callchain callchain_of[] = {
	[SPENT_RECORD_CG_NONE] = SAMPLING_CG_NONE,
	[SPENT_RECORD_CG_FP] = SAMPLING_CG_FP,
	[SPENT_RECORD_CG_DWARF] = SAMPLING_CG_DWARF,
};

/*
 * Orphans under --per-thread. A process whose parent ends before the parent's events are open
 * (`(cmd &)`: the subshell forks and exits at once) made its FORK record in no ring, and is
 * not in any followed task's children when the scan looks: it went unsampled (6 samples of a
 * 0.5 s burner, against 4994 inherited). So the recording process is a child subreaper while
 * the command runs: the tree's orphans become its children, and each poll follows those not
 * followed yet and reaps those that ended. Children it had before the command are the
 * caller's, never touched; one the caller forks during the recording is taken for an orphan.
 */
static bool pid_list_has(const struct pid_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == pid)
			return true;
	return false;
}

static int pid_list_add(struct pid_list *l, pid_t pid)
{
	if (ALLOC_GROW(l->v, l->n + 1, l->cap))
		return -ENOMEM;
	l->v[l->n++] = pid;
	return 0;
}

/* The children of every thread of this process, into L (emptied first). */
static int list_own_children(struct pid_list *l)
{
	pid_t *tids;
	size_t nt;
	int err = thread_list(getpid(), &tids, &nt);
	l->n = 0;
	if (err)	/* our own threads cannot be listed: no children seen */
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < nt && !err; i++) {
		pid_t *kids;
		size_t nk;
		err = thread_children(getpid(), tids[i], &kids, &nk);
		for (size_t k = 0; k < nk && !err; k++)
			err = pid_list_add(l, kids[k]);
		free(kids);
	}
	free(tids);
	return err;
}

static int adopt_orphans(struct spent_record *r)
{
	struct pid_list now = { 0 };
	int err = list_own_children(&now);
	for (size_t i = 0; i < now.n && !err; i++) {
		pid_t c = now.v[i];
		if (c == r->wl.pid || pid_list_has(&r->foreign, c) || pid_list_has(&r->adopted, c))
			continue;
		if (!(err = pid_list_add(&r->adopted, c)))
			err = sampling_follow_process(r->s, c);
	}
	free(now.v);
	/* an adopted orphan that ended is a zombie of ours until reaped */
	for (size_t i = 0; i < r->adopted.n; i++)
		if (waitpid(r->adopted.v[i], NULL, WNOHANG) != 0)
			r->adopted.v[i--] = r->adopted.v[--r->adopted.n];
	return err;
}

/* The end of the recording: no more orphans come here (those still running stay children of
 * this process; the CLI exits soon after). */
static void stop_adopting(struct spent_record *r)
{
	if (r->made_subreaper)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	r->made_subreaper = false;
	for (size_t i = 0; i < r->adopted.n; i++)
		waitpid(r->adopted.v[i], NULL, WNOHANG);
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The command is started held, its events opened on it, then released to exec. */
static int start_command(struct spent_record *r, char *const argv[])
{
	const struct workload_opts held = { .hold = true, .default_signals = true };
	size_t failed = 0;
	if (r->o.per_thread) {
		int already = 0;
		int err = list_own_children(&r->foreign);
		if (err)
			return fail(r, err, "out of memory");
		if (prctl(PR_GET_CHILD_SUBREAPER, &already, 0, 0, 0) == 0 && !already)
			r->made_subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
	}
	int err = workload_spawn(&r->wl, argv, &held);
	if (err)
		return fail(r, err, "cannot start '%s': %s", argv[0], strerror(-err));
	/* with every CPU's events open, the command needs none of its own */
	if (!r->all_cpus && (err = sampling_attach(r->s, r->wl.pid, true, &failed))) {
		workload_abort(&r->wl);
		r->wl.pid = -1;
		return fail(r, err, "cannot open event '%s': %s", r->evs[failed].ev.spec, strerror(-err));
	}
	if (r->o.delay_ms)
		r->enable_at_ms = monotonic_ms() + r->o.delay_ms;
	if ((err = workload_start(&r->wl))) {
		workload_wait(r->wl.pid, NULL, 0);
		r->wl.pid = -1;
		r->exit_code = workload_exec_exit_code(err);
		return fail(r, err, "cannot run '%s': %s", argv[0], strerror(-err));
	}
	return 0;
}

int spent_record_start(struct spent_record *r, char *const argv[], pid_t pid)
{
	char exe[PATH_MAX];
	int err;
	r->err[0] = 0;
	if (r->s)
		return fail(r, -EBUSY, "already recording");
	bool all = pid == SPENT_RECORD_ALL_CPUS;
	if (!all && (!argv || !argv[0]) == !(pid > 0))
		return fail(r, -EINVAL, "give a command or a pid to record");
	if (all && r->o.per_thread)
		return fail(r, -EINVAL, "per-thread events follow one process tree: not with every CPU");
	if (r->o.delay_ms && (!argv || !argv[0] || all || r->o.per_thread))
		return fail(r, -EINVAL, "delay_ms delays the sampling of a command (not with %s)",
			    r->o.per_thread ? "per-thread events: they open as threads start" :
			    all ? "every CPU" : "a pid");
	if (r->o.cpus && !all)
		return fail(r, -EINVAL, "cpus picks the CPUs of a recording of every CPU (SPENT_RECORD_ALL_CPUS)");
	if (r->o.cpus && !r->o.n_cpus)
		return fail(r, -EINVAL, "an empty list of cpus");
	if (r->o.no_inherit && (all || r->o.per_thread))
		return fail(r, -EINVAL, "no_inherit samples the first threads alone: not with %s",
			    all ? "every CPU" : "per-thread events (they follow new threads)");
	if (all && argv && !argv[0])
		argv = NULL;
	if (argv && (err = workload_find(argv[0], exe, sizeof(exe))) == -EACCES) {
		r->exit_code = 126;
		return fail(r, err, "cannot run '%s': %s", argv[0], strerror(EACCES));
	}
	if (argv && err) {
		r->exit_code = 127;
		return fail(r, -ENOENT, "cannot run '%s': no such executable (check the name and PATH)",
			    argv[0]);
	}
	if ((unsigned)r->o.callgraph >= sizeof(callchain_of) / sizeof(callchain_of[0]))
		return fail(r, -EINVAL, "bad call graph mode %d", (int)r->o.callgraph);
	if ((err = add_events(r)))
		return err;
	struct sampling_config cfg = { .events = r->evs, .nevents = r->nev,
				       .callchain = callchain_of[r->o.callgraph],
				       .per_thread = r->o.per_thread,
				       .no_inherit = r->o.no_inherit,
				       .start_disabled = r->o.delay_ms > 0,
				       .cpus = r->o.cpus, .n_cpus = r->o.n_cpus,
				       .stack_dump = r->o.dwarf_stack_bytes };
	if ((err = sampling_new(&cfg, &r->s)))
		return fail(r, err, "cannot set up sampling: %s", strerror(-err));
	if (all) {
		size_t failed = 0;
		r->all_cpus = true;
		err = sampling_attach_all_cpus(r->s, &failed);
		if (err)
			fail(r, err, "cannot open event '%s' on every CPU: %s", r->evs[failed].ev.spec,
			     strerror(-err));
		else if (argv)
			err = start_command(r, argv);
	} else if (argv) {
		err = start_command(r, argv);
	} else {
		size_t failed = 0;
		r->target = pid;
		/* a pid that is gone (or goes while its threads are listed): said as stat -p does */
		err = sampling_attach(r->s, pid, false, &failed);
		if (err == -ESRCH)
			fail(r, err, "process '%ld' not found", (long)pid);
		else if (err)
			fail(r, err, "cannot open event '%s': %s", r->evs[failed].ev.spec, strerror(-err));
	}
	if (err) {	/* nothing records: a wait would have polled for ever, a new start said busy */
		sampling_free(r->s);
		r->s = NULL;
		r->target = 0;
		r->all_cpus = false;
	}
	return err;
}

/* Poll the rings until the command (reaped here) or the pid ends, or a stop is asked for. */
static int read_until_end(struct spent_record *r)
{
	/* per-thread events are not inherited (the kernel refuses mmap of inherited any-CPU
	 * events): a new thread is sampled once its FORK record is read and its events opened,
	 * so that mode polls often enough to lose at most a couple of ms of each thread */
	int err, poll_ms = r->o.per_thread ? 2 : 50;
	for (;;) {
		int wait_ms = poll_ms;
		if (r->enable_at_ms) {	/* -D: the command runs unsampled until then */
			uint64_t now = monotonic_ms();
			if (now >= r->enable_at_ms) {
				r->enable_at_ms = 0;
				if ((err = sampling_enable(r->s)))
					return err;
			} else if (r->enable_at_ms - now < (uint64_t)wait_ms) {
				wait_ms = (int)(r->enable_at_ms - now);
			}
		}
		if ((err = sampling_poll(r->s, wait_ms)))
			return err;
		if (r->o.per_thread && r->wl.pid > 0 && (err = adopt_orphans(r)))
			return err;
		if (r->wl.pid > 0) {
			if (workload_wait(r->wl.pid, &r->status, WNOHANG) == r->wl.pid) {
				r->reaped = 1;
				r->exit_code = workload_exit_code(r->status);
				return 0;
			}
			if (r->stop)
				return 0;
		} else if (r->stop || (!r->all_cpus && kill(r->target, 0) < 0)) {
			return 0;	/* every CPU without a command: until a stop */
		}
	}
}

int spent_record_wait(struct spent_record *r, int *status)
{
	int err;
	r->err[0] = 0;
	if (!r->s || r->waited)
		return fail(r, -EINVAL, "not recording");
	r->waited = true;
	err = read_until_end(r);
	stop_adopting(r);
	if (err || (err = sampling_finish(r->s)))
		return fail(r, err, "reading samples failed: %s", strerror(-err));
	if (status)
		*status = r->status;
	return 0;
}

void spent_record_stop(struct spent_record *r)
{
	r->stop = 1;
}

void spent_record_signal(struct spent_record *r, int sig)
{
	if (r->wl.pid > 0 && !r->reaped && kill(r->wl.pid, sig) == 0)
		return;
	r->stop = 1;
}

struct spent_profile *spent_record_profile(struct spent_record *r)
{
	return r->s ? sampling_profile(r->s) : NULL;
}

void spent_record_get_stats(const struct spent_record *r, struct spent_record_stats *st)
{
	struct sampling_stats s = { 0 };
	if (r->s)
		sampling_get_stats(r->s, &s);
	*st = (struct spent_record_stats){ .samples = s.samples, .placed = s.placed,
					   .unknown = s.unknown, .lost = s.lost,
					   .throttled = s.throttled };
}

/* Why DIR cannot take the profile, for the user. */
static const char *output_error(int err)
{
	return err == -EBADMSG || err == -ENOTEMPTY
		       ? "it is a directory but not a spent profile, or holds other files too: only a "
			 "profile directory is replaced"
		       : outfile_strerror(err);
}

int spent_record_check_output(struct spent_record *r, const char *dir)
{
	int err = outdir_check(dir, spent_profile_dir_check_replaceable, spent_profile_dir_remove);
	r->err[0] = 0;
	return err ? fail(r, err, "cannot write profile '%s': %s", dir, output_error(err)) : 0;
}

static void warn_file(void *ctx, const char *path, const char *why)
{
	warn(ctx, "'%s': %s", path, why);
}

/* The kernel's symbols next to the profile, the images' in the build-id cache: the names
 * outlive a reboot and a rebuild of the binaries. Failures only warn. */
static void save_symbols(struct spent_record *r, const struct spent_profile *p, const char *tmp)
{
	char ksyms[PATH_MAX + 16];
	struct symbols *sym = NULL;
	int err;
	snprintf(ksyms, sizeof(ksyms), "%s/" KALLSYMS_FILE_ZST, tmp);
	if (symbols_new(&sym))
		return;
	if ((err = symbols_save_kernel(sym, p, ksyms)))
		warn(r, "cannot save kernel symbols in '%s': %s", ksyms, strerror(-err));
	if ((err = symbols_cache_images(sym, p)))
		warn(r, "cannot save symbols in the build-id cache: %s", strerror(-err));
	symbols_free(sym);
}

/* Write into a temporary sibling of DIR and put it in place; an existing profile directory
 * there is exchanged with it atomically, then removed (it holds only what spent writes). */
int spent_record_write(struct spent_record *r, const char *dir)
{
	const struct spent_profile *p = spent_record_profile(r);
	char tmp[PATH_MAX];
	struct spent_profile_dir *d = NULL;
	bool replaced = false;
	r->err[0] = 0;
	if (!p)
		return fail(r, -EINVAL, "nothing recorded");
	int err = outdir_make_temp(dir, OUTDIR_MODE, tmp, sizeof(tmp));
	if (err)
		return fail(r, err, "cannot write profile '%s': %s", dir, output_error(err));
	if ((err = spent_profile_dir_create(tmp, &d)) ||
	    (err = spent_profile_dir_write_epoch(d, 0, p, warn_file, r))) {
		fail(r, err, "cannot write profile '%s': %s", dir, strerror(-err));
		goto out;
	}
	save_symbols(r, p, tmp);
	if ((err = outdir_commit(tmp, dir, spent_profile_dir_check_replaceable, &replaced))) {
		fail(r, err, "cannot write profile '%s': %s", dir, output_error(err));
		goto out;
	}
	if (replaced && (err = spent_profile_dir_remove(tmp)))
		warn(r, "cannot remove the replaced profile, now '%s': %s: remove it by hand", tmp,
		     strerror(-err));
	err = 0;
out:
	spent_profile_dir_close(d);
	if (err)
		spent_profile_dir_remove(tmp);
	return err;
}

int spent_record_exit_code(const struct spent_record *r)
{
	return r->exit_code;
}

const char *spent_record_error(const struct spent_record *r)
{
	return r ? r->err : "out of memory";
}

/* A command still running is left to run (the caller may wait for it); one held before its
 * exec is given up. */
void spent_record_free(struct spent_record *r)
{
	if (!r)
		return;
	if (r->wl.go_fd >= 0 || r->wl.err_fd >= 0)
		workload_abort(&r->wl);
	else if (r->wl.pid > 0 && !r->reaped) {	/* a command never waited for */
		kill(r->wl.pid, SIGKILL);
		workload_wait(r->wl.pid, NULL, 0);
	}
	stop_adopting(r);
	free(r->adopted.v);
	free(r->foreign.v);
	sampling_free(r->s);
	free(r);
}
