/* cli/cmd_top.c - `spent top`: a live view of where the machine's time goes, refreshed every
 * interval over a sliding window (analysis/top.h), from a running daemon's counts or its own
 * system-wide sampling (collect/live.h). Options, the choice of source, the refresh loop, keys
 * and signals; the table and the terminal are cli/top_display.c. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/top.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/top_display.h"
#include "collect/live.h"
#include "core/symbols.h"
#include "spent/events.h"

#define DEFAULT_HZ 1000
#define STR_(x) #x
#define STR(x) STR_(x)
#define READ_MS 100	/* rings are read this often between refreshes: names of short-lived
			 * processes are read while they still run */

struct top_opts {
	double interval, window;
	long pid, iterations, rows;
	const char *freq_arg;	/* -F as given */
	uint64_t freq;
	const char *comm, *event, *db;
	int batch, json, view, no_daemon;
};

static volatile sig_atomic_t stop_flag, resized, suspended;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static void on_tstp(int sig)
{
	(void)sig;
	suspended = 1;
}

/* Ctrl-Z: the terminal as it was while stopped, the screen back after fg. */
static void suspend(void)
{
	suspended = 0;
	top_tty_leave();
	kill(getpid(), SIGSTOP);
	top_tty_enter();
	resized = 1;	/* redraw */
}

static const char *const top_usage_lines[] = {
	"spent top [--db DIR | --no-daemon] [-d SECS] [--window SECS] [-e EVENT] [-F HZ] "
	"[-p PID] [--comm NAME] [-s VIEW] [-b [-n N] [--rows N] [--json]]",
	NULL,
};

static const struct parse_usage top_usage = {
	"top", top_usage_lines, "a live view of the top functions, images and processes",
	"Shows, refreshed every interval, the functions, images, process names or processes with "
	"the most samples over a sliding window of the last intervals: the counts of the daemon "
	"serving --db DIR (or " SPENT_DEFAULT_DB " when a daemon serves it and neither -e nor -F "
	"is given), else its own sampling of every cpu. Keys: f functions, i images, c comms, "
	"P processes, s or Tab the next view, space or p pause, q or Ctrl-C quit. When standard "
	"output is not a terminal, or with -b, one table per interval is printed instead (-n: "
	"that many). Needs root or kernel.perf_event_paranoid <= 0. See docs/top.md.",
};

/* 1: help printed; 0: parsed; -EINVAL: an error line printed */
/* -e: top samples one event; a second one was dropped without a word (the last one won) */
static int set_one_event(const struct option *opt, const char *arg, int unset)
{
	const char **ev = opt->value;
	if (unset) {
		*ev = NULL;
		return 0;
	}
	if (*ev && strcmp(*ev, arg)) {
		cli_error("top samples one event: -e '%s' and -e '%s' both given", *ev, arg);
		return -1;
	}
	*ev = arg;
	return 0;
}

static int parse_opts(int argc, char **argv, struct top_opts *o)
{
	const struct option opts[] = {
		OPT_STRING(0, "db", &o->db, "DIR", "show the counts of the daemon serving DIR"),
		{ .type = OPTION_BOOL, .long_name = "no-daemon", .value = &o->no_daemon,
		  .help = "sample every cpu here even when a daemon serves " SPENT_DEFAULT_DB,
		  .flags = PARSE_OPT_NONEG },
		{ .type = OPTION_DOUBLE, .short_name = 'd', .long_name = "delay", .value = &o->interval,
		  .argh = "SECS", .help = "seconds between refreshes", .min = 0, .max = 3600 },
		{ .type = OPTION_DOUBLE, .long_name = "window", .value = &o->window, .argh = "SECS",
		  .help = "the view counts the samples of the last SECS seconds", .min = 0,
		  .max = 86400, .defval = "5 intervals" },
		{ .type = OPTION_CALLBACK, .short_name = 'e', .long_name = "event", .value = &o->event,
		  .argh = "EVENT", .help = "the event to sample (own sampling; one)", .defval = "cpu-clock",
		  .callback = set_one_event },
		{ .type = OPTION_STRING, .short_name = 'F', .long_name = "freq", .value = &o->freq_arg,
		  .argh = "HZ", .help = "samples per second per cpu (own sampling)",
		  .defval = STR(DEFAULT_HZ) },
		OPT_INT('p', "pid", &o->pid, "PID", "only this process", 1, 0x7fffffff),
		OPT_STRING(0, "comm", &o->comm, "NAME", "only processes called NAME"),
		OPT_CHOICE('s', "sort", &o->view, "functions|images|comms|processes",
			   "the view to start with"),
		OPT_BOOL('b', "batch", &o->batch, "print one table per interval (also when not a terminal)"),
		OPT_INT('n', "iterations", &o->iterations, "N", "stop after N refreshes (0: never)",
			0, 1000000),
		OPT_INT(0, "rows", &o->rows, "N", "rows per table in batch output (0: all)", 0, 1000000),
		OPT_BOOL(0, "json", &o->json, "batch output as one JSON object per interval"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &top_usage, 0);

	if (n == PARSE_OPT_HELP)
		return 1;
	if (n < 0)
		return -EINVAL;
	if (n > 0) {
		parse_options_error(&top_usage, "unexpected argument '%s': spent top takes options only",
				    argv[0]);
		return -EINVAL;
	}
	if (o->interval < 0.1) {
		parse_options_error(&top_usage, "-d %g: refresh at most 10 times a second", o->interval);
		return -EINVAL;
	}
	if (o->freq_arg && cli_parse_frequency(o->freq_arg, &o->freq)) {
		parse_options_error(&top_usage, "bad frequency '%s': give samples per second", o->freq_arg);
		return -EINVAL;
	}
	if (o->db && (o->no_daemon || o->event || o->freq_arg)) {
		parse_options_error(&top_usage, "--db shows what the daemon samples: -e, -F and "
				    "--no-daemon are for its own sampling");
		return -EINVAL;
	}
	/* a filter on a process that is not there shows nothing forever: say so (perf top -p too);
	 * a process that exits later keeps its samples in the window */
	if (o->pid && kill((pid_t)o->pid, 0) < 0 && errno == ESRCH) {
		parse_options_error(&top_usage, "-p %ld: no such process", o->pid);
		return -EINVAL;
	}
	if (o->window == -1)	/* not given (an explicit 0 is refused below: it was taken as 5) */
		o->window = 5 * o->interval;
	if (o->window < o->interval || o->window / o->interval > 3600) {
		parse_options_error(&top_usage, "--window %g: give 1 to 3600 intervals of %g s",
				    o->window, o->interval);
		return -EINVAL;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Where the counts come from, and what passes the filters. */
struct top_run {
	const struct top_opts *o;
	struct top *t;
	struct live *live;
	int err;		/* the first -errno of top_add */
	enum top_view view;
	bool paused, tty;
	bool daemon;		/* counts come from a daemon: asked once per interval */
	struct top_header h;
	char source[256], note[160];
	struct symbols *sym;	/* top's symbols: renewed as images pile up */
	size_t renew_at;	/* top_images_seen() at which they are renewed */
};

/* Every image core/symbols has read stays open (its file, and two sockets of libdw's
 * debuginfod client): a top left running over a machine that builds and runs new programs
 * all day reached 240 fds in a minute. After this many new images the symbols are dropped and
 * read again as samples need them (the hot images: a few, read once more). */
#define TOP_SYMBOLS_RENEW 64

static void renew_symbols(struct top_run *run)
{
	struct symbols *fresh = NULL;

	if (top_images_seen(run->t) < run->renew_at)
		return;
	run->renew_at = top_images_seen(run->t) + TOP_SYMBOLS_RENEW;
	if (symbols_new(&fresh))
		return;		/* no memory now: the old ones still name everything */
	top_set_symbols(run->t, fresh);
	symbols_free(run->sym);
	run->sym = fresh;
}

static void on_sample(void *arg, const struct live_sample *s)
{
	struct top_run *run = arg;
	int r;

	if (run->o->pid && s->pid != run->o->pid)
		return;
	if (run->o->comm && strcmp(s->comm, run->o->comm))
		return;
	if ((r = top_add(run->t, s->comm, s->pid, s->img, s->offset, s->count)) && !run->err)
		run->err = r;
}

static void pull(struct top_run *run)
{
	live_read(run->live, on_sample, run);
	uint64_t lost = live_lost(run->live);
	int err = live_last_error(run->live);
	run->note[0] = '\0';
	if (err)
		snprintf(run->note, sizeof(run->note), "the daemon does not answer: %s", strerror(-err));
	else if (lost)
		snprintf(run->note, sizeof(run->note), "%llu %s lost", (unsigned long long)lost,
			 run->daemon ? "daemon entries" : "samples");
	run->h.note = run->note[0] ? run->note : NULL;
}

static void show(struct top_run *run)
{
	struct top_text text = { 0 };
	unsigned cols, rows;

	run->h.paused = run->paused;
	if (!run->tty) {
		if (run->o->json) {
			top_format_json(stdout, run->t, run->view, &run->h, (size_t)run->o->rows);
		} else {
			top_format(&text, run->t, run->view, &run->h, 0, (size_t)run->o->rows);
			fwrite(text.buf ? text.buf : "", 1, text.len, stdout);
			fputc('\n', stdout);
		}
		fflush(stdout);
		top_text_release(&text);
		return;
	}
	top_tty_size(&cols, &rows);
	/* the last column stays empty: a character there leaves the cursor waiting to wrap */
	top_format(&text, run->t, run->view, &run->h, cols > 1 ? cols - 1 : 1, rows > 5 ? rows - 5 : 1);
	top_tty_draw(&text, rows);
	top_text_release(&text);
}

/* Keys waiting on the terminal: true when the screen should be redrawn now. */
static bool keys(struct top_run *run)
{
	char buf[64];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
	bool redraw = false;

	for (ssize_t i = 0; i < n; i++) {
		enum top_view v = run->view;
		switch (buf[i]) {
		case 'q': case 'Q':
			stop_flag = 1;
			return false;
		case 'f': v = TOP_BY_FUNCTION; break;
		case 'i': v = TOP_BY_IMAGE; break;
		case 'c': v = TOP_BY_COMM; break;
		case 'P': v = TOP_BY_PROCESS; break;
		case 's': case '\t': v = (run->view + 1) % TOP_NVIEWS; break;
		case ' ': case 'p':
			run->paused = !run->paused;
			redraw = true;
			break;
		default:
			break;	/* the rest of an escape sequence, or a key with no meaning */
		}
		if (v != run->view) {
			run->view = v;
			redraw = true;
		}
	}
	return redraw;
}

static void signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART: poll returns */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int loop(struct top_run *run)
{
	const struct top_opts *o = run->o;
	uint64_t step = (uint64_t)llround(o->interval * 1000), next = now_ms() + step;
	long done = 0;

	if (run->tty)
		show(run);	/* the frame at once, filled at the first refresh */
	while (!stop_flag) {
		uint64_t now = now_ms();
		int wait = next > now ? (int)(next - now) : 0;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		if (wait > READ_MS)
			wait = READ_MS;
		poll(&pfd, run->tty ? 1 : 0, wait);
		if (stop_flag)
			break;
		if (suspended && run->tty)
			suspend();
		bool redraw = run->tty && (pfd.revents & POLLIN) && keys(run);
		if (stop_flag)
			break;
		now = now_ms();
		if (!run->daemon || now >= next)	/* a daemon drains on every request */
			pull(run);
		if (run->err) {
			if (run->tty)
				top_tty_leave();
			parse_options_error(&top_usage, "%s", strerror(-run->err));
			return 1;
		}
		now = now_ms();
		if (now >= next) {
			top_tick(run->t);
			renew_symbols(run);
			next += step;
			if (next <= now)	/* stopped or starved: no burst of catch-up ticks */
				next = now + step;
			done++;
			redraw = !run->paused || !run->tty;
		}
		if (resized && run->tty) {
			resized = 0;
			redraw = true;
		}
		if (redraw)
			show(run);
		if (o->iterations && done >= o->iterations)
			break;
	}
	return 0;
}

static int open_event(const struct top_opts *o, struct spent_event *ev)
{
	char err[512];
	const char *spec = o->event ? o->event : "cpu-clock";
	int r = spent_event_parse(spec, ev, err, sizeof(err));

	if (r) {
		parse_options_error(&top_usage, "%s", err);
		return r;
	}
	if (spent_event_needs_pmu(ev) && spent_pmu_present() != 1) {
		if (spent_event_fallback(ev, true)) {
			parse_options_error(&top_usage, "no hardware PMU on this machine for '%s'", spec);
			return -ENOENT;
		}
		cli_warn("no hardware PMU on this machine: sampling '%s' instead of '%s'", ev->spec,
			 spec);
	}
	return 0;
}

/* The source: the daemon of --db, the default database's daemon, or own sampling. 0, or the
 * exit status after an error line. */
static int open_source(const struct top_opts *o, struct top_run *run)
{
	const char *db = o->db ? o->db : SPENT_DEFAULT_DB;
	struct spent_event ev;
	int r;

	if (o->db || (!o->no_daemon && !o->event && !o->freq_arg)) {
		r = live_open_daemon(db, &run->live);
		if (r == 0) {
			run->daemon = true;
			snprintf(run->source, sizeof(run->source), "%s of the daemon of %s",
				 live_event(run->live), db);
			return 0;
		}
		if (o->db || (r != -ENOENT && r != -ECONNREFUSED)) {
			const char *why = r == -ENOENT || r == -ECONNREFUSED ? "no daemon serves it" :
				r == -EACCES || r == -EPERM ? "its control socket is root-only" :
				r == -EPROTO ? "the daemon predates spent top: restart it" : strerror(-r);
			if (o->db) {
				parse_options_error(&top_usage, "cannot show '%s': %s", db, why);
				return 1;
			}
			cli_warn("not showing the daemon of '%s' (%s): sampling here", db, why);
		}
	}
	if (open_event(o, &ev))
		return 2;
	struct live_config lc = { .ev = &ev, .freq = o->freq_arg ? o->freq : DEFAULT_HZ };
	cli_clamp_frequency(&lc.freq);
	if ((r = live_open(&lc, &run->live))) {
		parse_options_error(&top_usage, "cannot sample every cpu: %s%s", strerror(-r),
				    r == -EACCES || r == -EPERM ?
				    " (run as root, or set kernel.perf_event_paranoid to 0 or less)" : "");
		return 1;
	}
	snprintf(run->source, sizeof(run->source), "%s at %llu Hz on %d cpus", ev.spec,
		 (unsigned long long)lc.freq, live_ncpus(run->live));
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { .interval = 1.0, .window = -1, .rows = 20 };
	struct top_run run = { .o = &o, .renew_at = TOP_SYMBOLS_RENEW };
	int r = parse_opts(argc, argv, &o), status = 1;

	if (r)
		return r > 0 ? 0 : 2;
	run.view = (enum top_view)o.view;
	run.tty = !o.batch && !o.json && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	unsigned slots = (unsigned)llround(o.window / o.interval);
	run.h = (struct top_header){ .source = run.source, .interval_s = o.interval,
		.slots = slots ? slots : 1, .keys = run.tty };
	if ((r = open_source(&o, &run)))
		return r;
	size_t len = strlen(run.source);
	if (o.comm)
		len += (size_t)snprintf(run.source + len, sizeof(run.source) - len, ", comm %s", o.comm);
	if (o.pid && len < sizeof(run.source))
		snprintf(run.source + len, sizeof(run.source) - len, ", pid %ld", o.pid);
	if ((r = symbols_new(&run.sym)) || (r = top_new(run.h.slots, run.sym, &run.t))) {
		parse_options_error(&top_usage, "%s", strerror(-r));
		goto out;
	}
	signals();
	if (run.tty && (r = top_tty_enter())) {
		parse_options_error(&top_usage, "cannot set up the terminal: %s", strerror(-r));
		goto out;
	}
	atexit(top_tty_leave);
	status = loop(&run);
	top_tty_leave();
out:
	top_free(run.t);
	symbols_free(run.sym);
	live_close(run.live);
	return status;
}
