/* collect/stat_session.c - the public counting session (spent/stat.h): start the command held
 * at a barrier so counting begins at its exec (or attach to a pid, a thread, the CPUs), wait on
 * a pidfd (or through ptrace when its threads are followed) calling back at every interval,
 * and read the totals. `spent stat` is a caller of this; nothing here prints. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/stat_session.h"
#include "core/errmsg.h"
#include "core/workload.h"

struct spent_stat {
	struct spent_stat_opts o;
	struct workload wl;
	struct counting *c;
	struct thread_tracker *tt;
	const char *cmd;	/* argv[0], for messages */
	double start_ns, end_ns;
	double enable_at_ns;	/* delay_ms: when the counters are to be enabled (0: they are) */
	int status, exit_code;
	bool reaped;		/* the command was waited for */
	/* 1: Ctrl-C arrived; 2: passed on to the command */
	volatile sig_atomic_t interrupted;	/* 0, 1 when a signal is to be passed on, 2 once it was */
	volatile sig_atomic_t pass_sig;		/* the signal passed on to the command */
	char err[512];
};

/* the reason for a failure, kept for the *_error() call */
#define fail(h, code, ...) errmsg_set((h)->err, sizeof((h)->err), code, __VA_ARGS__)

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int spent_stat_new(const struct spent_stat_opts *opts, struct spent_stat **out)
{
	struct spent_stat *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *opts;
	s->wl = (struct workload)WORKLOAD_INIT;
	*out = s;
	return 0;
}

static int open_counting(struct spent_stat *s, bool command)
{
	const struct spent_stat_opts *o = &s->o;
	struct counting_config cfg = {
		.events = o->events,
		.n_events = o->n_events,
		.group = o->group,
		.mode = o->system_wide ? COUNTING_CPUS : o->pid ? COUNTING_THREADS : COUNTING_TASK,
		.pid = o->tid ? o->tid : o->pid ? o->pid : s->wl.pid,
		.enable_on_exec = !o->system_wide && !o->pid && !o->tid && !(command && o->delay_ms),
		.inherit = !o->tid && !o->no_inherit,	/* a thread alone, as perf stat -t */
		.cpus = o->cpus,
		.n_cpus = o->n_cpus,
	};
	size_t bad = 0;
	int err = counting_new(&cfg, &s->c, &bad);
	if (err == -ESRCH)
		return fail(s, err, "%s '%ld' not found", o->tid ? "thread" : "process",
			    (long)(o->tid ? o->tid : o->pid));
	if (err)
		return fail(s, err, "cannot open event '%s': %s%s", o->events[bad].spec, strerror(-err),
			    err == -EACCES || err == -EPERM
				    ? " (run as root or lower kernel.perf_event_paranoid)" : "");
	if ((cfg.mode != COUNTING_TASK || o->tid || !command) && !(command && o->delay_ms))
		err = counting_enable(s->c);
	return err ? fail(s, err, "cannot enable the counters: %s", strerror(-err)) : 0;
}

/* The command, held before its exec while its counters (and thread tracking) open. */
static int start_command(struct spent_stat *s, char *const argv[])
{
	const struct workload_opts held = { .hold = true };
	size_t bad = 0;
	int err;
	s->cmd = argv[0];
	if ((err = workload_spawn(&s->wl, argv, &held))) {
		s->exit_code = 1;
		return fail(s, err, "cannot start '%s': %s", argv[0], strerror(-err));
	}
	if (s->o.follow_threads &&
	    ((err = thread_tracker_new(s->o.events, s->o.group, s->o.n_events, &s->tt)) ||
	     (err = thread_tracker_attach(s->tt, s->wl.pid, &bad)))) {
		workload_abort(&s->wl);
		return fail(s, err, "cannot follow the threads of '%s': %s", argv[0], strerror(-err));
	}
	/* no events: a null run (perf stat --null), the command only timed */
	if (s->o.n_events && (err = open_counting(s, true))) {
		workload_abort(&s->wl);
		return err;
	}
	s->start_ns = now_ns();
	if (s->o.delay_ms)
		s->enable_at_ns = s->start_ns + (double)s->o.delay_ms * 1e6;
	if ((err = workload_start(&s->wl))) {
		workload_wait(s->wl.pid, NULL, 0);
		s->wl.pid = -1;
		s->exit_code = workload_exec_exit_code(err);
		/* nothing is counting: a wait would have waited for nothing for ever, and a
		 * second start said "already counting" */
		counting_free(s->c);
		thread_tracker_free(s->tt);
		s->c = NULL;
		s->tt = NULL;
		s->start_ns = 0;
		s->enable_at_ns = 0;
		return fail(s, err, "workload failed: cannot run '%s': %s", argv[0], strerror(-err));
	}
	return 0;
}

int spent_stat_start(struct spent_stat *s, char *const argv[])
{
	int err;
	s->err[0] = 0;
	if (s->end_ns)	/* waited for: its counts stay readable, so it is not started over */
		return fail(s, -EBUSY, "this session has counted already: a session runs once "
			    "(make a new one with spent_stat_new)");
	if (s->c || s->start_ns)
		return fail(s, -EBUSY, "already counting");
	if (!s->o.n_events && (!argv || !argv[0] || s->o.follow_threads))
		return fail(s, -EINVAL, "no events to count (a command alone may be timed with none)");
	if (s->o.delay_ms && (!argv || !argv[0] || s->o.follow_threads))
		return fail(s, -EINVAL, "delay_ms delays the counting of a command (not with %s)",
			    s->o.follow_threads ? "follow_threads: its threads' counters open as they start" :
			    "a pid, a thread or the CPUs alone");
	if (s->o.no_inherit && (s->o.system_wide || s->o.follow_threads))
		return fail(s, -EINVAL, "no_inherit counts the first threads alone: not with %s",
			    s->o.system_wide ? "system_wide" : "follow_threads (it follows new threads)");
	if (argv && argv[0])
		return start_command(s, argv);
	if (!s->o.system_wide && !s->o.pid && !s->o.tid)
		return fail(s, -EINVAL, "nothing to count: give a command, a pid, a tid or system-wide");
	if ((err = open_counting(s, false)))
		return err;
	s->start_ns = now_ns();
	return 0;
}

static void tick_interval(struct spent_stat *s)
{
	if (s->o.interval)
		s->o.interval(s->o.interval_arg, s, (now_ns() - s->start_ns) / 1e9);
}

/* True when WATCH (no pidfd: an old kernel) has ended: a command is waited for without
 * being reaped, a pid is probed. */
static bool ended_without_pidfd(pid_t watch, bool command)
{
	siginfo_t si = { 0 };
	if (!command)
		return kill(watch, 0) < 0;
	return waitid(P_PID, watch, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == watch;
}

/* Wait for WATCH to end (or an interrupt without a command), calling back every interval;
 * with UNTIL_NS (not 0), only until then and without intervals. True when the wait ended
 * for WATCH (or the interrupt), false at UNTIL_NS. */
static bool wait_loop(struct spent_stat *s, pid_t watch, bool command, double until_ns)
{
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	double step = until_ns ? 0 : (double)s->o.interval_ms * 1e6, next = s->start_ns + step;
	bool ended = true;
	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		int timeout = -1;
		if (step > 0 || until_ns) {
			double ms = ((until_ns ? until_ns : next) - now_ns()) / 1e6;
			timeout = ms < 0 ? 0 : (int)ms + 1;
		}
		if (pidfd < 0 && watch > 0 && timeout < 0)
			timeout = 100; /* no pidfd (old kernel): poll the child's state */
		int r = poll(&pfd, pidfd >= 0 ? 1 : 0, timeout);
		if (s->interrupted && (!command || watch <= 0))
			break;
		if (s->interrupted == 1 && command) {
			/* a terminal's Ctrl-C reaches the command too; a kill aimed at the caller
			 * alone is passed on so the command stops and the counts stay readable */
			kill(watch, s->pass_sig);
			s->interrupted = 2;
		}
		if (step > 0 && now_ns() >= next) {
			tick_interval(s);
			next += step;
		}
		if (r > 0 && pidfd >= 0 && (pfd.revents & (POLLIN | POLLHUP)))
			break;
		if (pidfd < 0 && watch > 0 && ended_without_pidfd(watch, command))
			break;
		if (until_ns && now_ns() >= until_ns) {
			ended = false;
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return ended;
}

static volatile sig_atomic_t tick;

static void on_tick(int sig)
{
	(void)sig;
	tick = 1;
}

static void set_timer(uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	struct itimerval it = { tv, tv };
	setitimer(ITIMER_REAL, &it, NULL);
}

/* The followed threads' wait: every stop of the traced tree comes through waitpid; a timer
 * interrupts it for the intervals. Returns the root's wait status. */
static int wait_loop_traced(struct spent_stat *s)
{
	struct sigaction sa = { .sa_handler = on_tick }, old;
	int status = 0, first_err = 0;
	sigaction(SIGALRM, &sa, &old);
	if (s->o.interval_ms)
		set_timer(s->o.interval_ms);
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);
		if (tid < 0 && errno == EINTR) {
			if (tick && s->o.interval_ms)
				tick_interval(s);
			tick = 0;
			if (s->interrupted == 1) {
				kill(s->wl.pid, s->pass_sig);
				s->interrupted = 2;
			}
			continue;
		}
		if (tid < 0)
			break; /* no children left */
		int r = thread_tracker_handle(s->tt, tid, st, &status);
		if (r < 0 && !first_err)
			first_err = r;
		if (r == 1)
			break;
	}
	if (s->o.interval_ms)
		set_timer(0);
	sigaction(SIGALRM, &old, NULL);
	if (first_err && s->o.warn) {
		char msg[256];
		snprintf(msg, sizeof(msg), "a new thread could not be counted: %s", strerror(-first_err));
		s->o.warn(s->o.warn_arg, msg);
	}
	return status;
}

int spent_stat_wait(struct spent_stat *s, int *status)
{
	bool command = s->wl.pid > 0;
	s->err[0] = 0;
	if (!s->start_ns || s->end_ns)
		return fail(s, -EINVAL, "not counting");
	pid_t watch = command ? s->wl.pid : s->o.pid ? s->o.pid : s->o.tid;
	if (s->enable_at_ns) {
		/* -D: the command runs uncounted until then; counting (and the elapsed time, as
		 * perf stat's) starts there, unless the command ended first */
		bool ended = wait_loop(s, watch, command, s->enable_at_ns);
		s->enable_at_ns = 0;
		int err = ended || !s->c ? 0 : counting_enable(s->c);
		if (err && s->o.warn) {
			char msg[256];
			snprintf(msg, sizeof(msg), "cannot enable the counters: %s", strerror(-err));
			s->o.warn(s->o.warn_arg, msg);
		}
		s->start_ns = now_ns();	/* ended first: nothing was counted, in no time */
	}
	if (s->tt) {
		s->status = wait_loop_traced(s);
	} else {
		wait_loop(s, watch, command, 0);
		if (command && workload_wait(s->wl.pid, &s->status, 0) < 0)
			s->status = 1 << 8;	/* cannot be waited for: exit code 1 */
		s->reaped = command;
	}
	/* the run ends here: counters that would go on (every CPU with -a, a -p process that
	 * lives on after Ctrl-C) stop, so the last -I row, the breakdowns and the totals, all
	 * read after this, are the same readings and add up */
	if (s->c)
		counting_disable(s->c);
	s->end_ns = now_ns();
	if (command)
		s->exit_code = workload_exit_code(s->status);
	if (status)
		*status = s->status;
	return 0;
}

void spent_stat_pass_signal(struct spent_stat *s, int sig)
{
	if (!s->interrupted) {
		s->pass_sig = sig;
		s->interrupted = 1;
	}
}

void spent_stat_interrupt(struct spent_stat *s)
{
	spent_stat_pass_signal(s, SIGINT);
}

int spent_stat_read(struct spent_stat *s, struct spent_stat_value *values, size_t n)
{
	if (n == 0)
		return 0;	/* nothing asked for (a null run has nothing to read) */
	if (!s->c || n > s->o.n_events)
		return -EINVAL;
	struct count_value *t = calloc(s->o.n_events, sizeof(*t));
	if (!t)
		return -ENOMEM;
	int err = counting_read_totals(s->c, t);
	for (size_t i = 0; i < n && !err; i++)
		values[i] = (struct spent_stat_value){ t[i].value, t[i].enabled, t[i].running };
	free(t);
	return err;
}

double spent_stat_scaled(const struct spent_stat_value *v)
{
	struct count_value cv = { v->value, v->enabled_ns, v->running_ns };
	return count_value_scaled(&cv);
}

uint64_t spent_stat_elapsed_ns(const struct spent_stat *s)
{
	if (!s->start_ns)
		return 0;
	return (uint64_t)((s->end_ns ? s->end_ns : now_ns()) - s->start_ns);
}

int spent_stat_exit_code(const struct spent_stat *s)
{
	return s->exit_code;
}

const char *spent_stat_error(const struct spent_stat *s)
{
	return s ? s->err : "out of memory";
}

struct counting *stat_session_counting(struct spent_stat *s)
{
	return s->c;
}

struct thread_tracker *stat_session_tracker(struct spent_stat *s)
{
	return s->tt;
}

void spent_stat_free(struct spent_stat *s)
{
	if (!s)
		return;
	if (s->wl.pid > 0 && !s->reaped && !s->tt) {	/* a command never waited for */
		kill(s->wl.pid, SIGKILL);
		workload_wait(s->wl.pid, NULL, 0);
	}
	counting_free(s->c);
	thread_tracker_free(s->tt);
	free(s);
}
