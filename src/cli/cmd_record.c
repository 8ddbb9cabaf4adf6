/* cli/cmd_record.c - `spent record`: sample a command (or a pid) into a profile directory,
 * SpeedShop-style: counter overflows with preset prime periods, aggregated while recording. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "collect/sampling.h"
#include "core/outfile.h"
#include "core/symbols.h"
#include "spent/profile.h"

struct record_opts {
	const char *events;	/* -e list or NULL for the default */
	uint64_t freq;		/* -F */
	uint64_t period;	/* -c */
	enum sampling_callchain callchain;
	bool per_thread;
	pid_t pid;		/* -p */
	const char *output;
	char **argv;		/* the command after -- */
};

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (a[0] != '-') {
			break;
		} else if (!strcmp(a, "-e") && v) {
			o->events = v;
			i++;
		} else if (!strcmp(a, "-F") && v) {
			if (cli_parse_u64(v, &n) || !n || n > 1000000) {
				cli_error("bad frequency '%s': give samples per second, 1..1000000", v);
				return -EINVAL;
			}
			o->freq = n;
			i++;
		} else if (!strcmp(a, "-c") && v) {
			/* the kernel refuses periods with bit 63 set */
			if (cli_parse_u64(v, &n) || !n || n > INT64_MAX) {
				cli_error("bad period '%s': give a positive event count", v);
				return -EINVAL;
			}
			o->period = n;
			i++;
		} else if (!strcmp(a, "-g") || !strcmp(a, "--call-graph")) {
			o->callchain = SAMPLING_CG_FP;
			if (v && (!strcmp(v, "fp") || !strcmp(v, "dwarf"))) {
				o->callchain = !strcmp(v, "fp") ? SAMPLING_CG_FP : SAMPLING_CG_DWARF;
				i++;
			}
		} else if (!strcmp(a, "-p") && v) {
			long p;
			if (cli_parse_int_opt("-p", v, 1, INT_MAX, &p))
				return -EINVAL;
			o->pid = (pid_t)p;
			i++;
		} else if (!strcmp(a, "-o") && v) {
			o->output = v;
			i++;
		} else if (!strcmp(a, "--force") || !strcmp(a, "-f")) {
			/* kept for old scripts: a profile directory is replaced without it now */
		} else if (!strcmp(a, "--per-thread")) {
			o->per_thread = true;
		} else {
			cli_error("unknown or incomplete option '%s': see 'spent help record'", a);
			return -EINVAL;
		}
	}
	if (o->freq && o->period) {
		cli_error("'-F' and '-c' both given: choose a frequency or a period");
		return -EINVAL;
	}
	o->argv = argv + i;
	if (!o->pid && !argv[i]) {
		cli_error("no command to record: give one after '--' or a pid with '-p'");
		return -EINVAL;
	}
	if (o->pid && argv[i]) {
		cli_error("both '-p %d' and a command given: choose one", (int)o->pid);
		return -EINVAL;
	}
	return 0;
}

/* One spec: EV, EV:PERIOD, EV@fast, EV@slow. */
static int parse_one_event(const char *spec, const struct record_opts *o, struct sampling_event *se)
{
	char buf[200], err[256];
	enum { P_DEFAULT, P_FAST, P_SLOW, P_EXPLICIT } how = P_DEFAULT;
	uint64_t period = 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	size_t l = strlen(buf);
	char *colon = strrchr(buf, ':');
	if (l > 5 && !strcmp(buf + l - 5, "@fast")) {
		how = P_FAST;
		buf[l - 5] = 0;
	} else if (l > 5 && !strcmp(buf + l - 5, "@slow")) {
		how = P_SLOW;
		buf[l - 5] = 0;
	} else if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		if (cli_parse_u64(colon + 1, &period) || !period || period > INT64_MAX) {
			cli_error("bad period in event '%s': give a positive count", spec);
			return -EINVAL;
		}
		how = P_EXPLICIT;
		*colon = 0;
	}
	memset(se, 0, sizeof(*se));
	int r = spent_event_parse(buf, &se->ev, err, sizeof(err));
	if (r) {
		cli_error("%s", err);
		return r;
	}
	if (spent_event_needs_pmu(&se->ev) && !spent_pmu_present()) {
		if (spent_event_fallback(&se->ev, true)) {
			cli_error("event '%s' needs a hardware PMU and this machine has none: "
				  "sample a software event such as 'cpu-clock'", buf);
			return -ENODEV;
		}
		cli_warn("no hardware PMU on this machine: sampling 'cpu-clock' instead of '%s'", buf);
	}
	cli_user_space_fallback(&se->ev);
	if (how == P_EXPLICIT) {
		se->period = period;
	} else if (how == P_FAST || how == P_SLOW) {
		se->period = sampling_preset_period(&se->ev, how == P_FAST);
	} else if (o->freq) {
		se->period = o->freq;
		se->freq = true;
	} else {
		se->period = o->period ? o->period : sampling_preset_period(&se->ev, true);
	}
	return 0;
}

static int parse_events(const struct record_opts *o, struct sampling_event **out, size_t *n)
{
	char *list = strdup(o->events ? o->events : "");
	struct sampling_event *evs = calloc(64, sizeof(*evs));
	size_t k = 0;
	int err = 0;
	if (!list || !evs) {
		err = -ENOMEM;
		goto out;
	}
	if (!o->events) {
		const char *def = spent_pmu_present() ? "cycles" : "cpu-clock";
		if (!spent_pmu_present())
			cli_warn("no hardware PMU on this machine: sampling 'cpu-clock' instead of 'cycles'");
		err = parse_one_event(def, o, &evs[k++]);
		goto out;
	}
	char *save = NULL;
	for (char *t = strtok_r(list, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
		if (k == 64) {
			cli_error("too many events: at most 64");
			err = -E2BIG;
			break;
		}
		err = parse_one_event(t, o, &evs[k++]);
	}
	if (!err && !k) {
		cli_error("empty event list '%s'", o->events);
		err = -EINVAL;
	}
out:
	free(list);
	if (err) {
		free(evs);
		return err;
	}
	*out = evs;
	*n = k;
	return 0;
}

/* True when CMD can be executed (a path, or found in $PATH). */
static bool command_exists(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t l = strcspn(p, ":");
		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, l ? p : ".", cmd) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		p += l + (p[l] == ':');
	}
	return false;
}

/* Fork CMD held before exec until *GO_FD is written. */
static pid_t spawn_held(char **cmd, int *go_fd)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "spent: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	return pid;
}

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig) { stop_requested = 1; }

static void warn_file(void *ctx, const char *path, const char *why)
{
	cli_warn("'%s': %s", path, why);
}

/* Why -o cannot take the profile, for the user. */
static const char *output_error(int err)
{
	return err == -EBADMSG || err == -ENOTEMPTY
		       ? "it is a directory but not a spent profile, or holds other files too: only a "
			 "profile directory is replaced"
		       : outfile_strerror(err);
}

/* Write P into a temporary sibling of -o and put it in place; an existing profile directory
 * there is exchanged with it atomically, then removed (it holds only what spent writes). */
static int write_output(const struct record_opts *o, const struct profile *p)
{
	char tmp[PATH_MAX], ksyms[PATH_MAX + 16];
	struct profile_dir *d = NULL;
	struct symbols *sym = NULL;
	bool replaced = false;
	int err = outdir_make_temp(o->output, OUTDIR_MODE, tmp, sizeof(tmp));
	if (err) {
		cli_error("cannot write profile '%s': %s", o->output, output_error(err));
		return err;
	}
	if ((err = profile_dir_create(tmp, &d)) ||
	    (err = profile_dir_write_epoch(d, 0, p, warn_file, NULL))) {
		cli_error("cannot write profile '%s': %s", tmp, strerror(-err));
		goto out;
	}
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", tmp);
	if (symbols_new(&sym) == 0 && (err = symbols_save_kernel(sym, p, ksyms)))
		cli_warn("cannot save kernel symbols in '%s': %s", ksyms, strerror(-err));
	/* the images' names outlive a rebuild of the binaries: the build-id cache */
	if (sym && (err = symbols_cache_images(sym, p)))
		cli_warn("cannot save symbols in the build-id cache: %s", strerror(-err));
	symbols_free(sym);
	if ((err = outdir_commit(tmp, o->output, profile_dir_check_replaceable, &replaced))) {
		cli_error("cannot write profile '%s': %s", o->output, output_error(err));
		goto out;
	}
	if (replaced && (err = profile_dir_remove(tmp)))
		cli_warn("cannot remove the replaced profile, now '%s': %s: remove it by hand", tmp,
			 strerror(-err));
	err = 0;
out:
	profile_dir_close(d);
	if (err)
		profile_dir_remove(tmp);
	return err;
}

static int run_loop(struct sampling *s, pid_t child, pid_t target, int *status)
{
	int err = 0;
	for (;;) {
		if ((err = sampling_poll(s, 50)))
			return err;
		if (child > 0) {
			pid_t w = waitpid(child, status, WNOHANG);
			if (w == child)
				break;
		} else if (stop_requested || kill(target, 0) < 0) {
			break;
		}
	}
	return sampling_finish(s);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = "spent.profile" };
	struct sampling_event *evs = NULL;
	struct sampling *s = NULL;
	size_t nev = 0, failed = 0;
	int status = 0, go = -1, rc = 2, err;
	pid_t child = 0;
	if (parse_args(argc, argv, &o))
		goto out;
	/* refuse a bad -o now, not after the run: its samples would be lost */
	if ((err = outdir_check(o.output, profile_dir_check_replaceable, profile_dir_remove))) {
		cli_error("cannot write profile '%s': %s", o.output, output_error(err));
		goto out;
	}
	if (!o.pid && !command_exists(o.argv[0])) {
		cli_error("cannot run '%s': no such executable (check the name and PATH)", o.argv[0]);
		rc = 127;
		goto out;
	}
	if (parse_events(&o, &evs, &nev))
		goto out;
	struct sampling_config cfg = { .events = evs, .nevents = nev, .callchain = o.callchain,
				       .per_thread = o.per_thread };
	if ((err = sampling_new(&cfg, &s))) {
		cli_error("cannot set up sampling: %s", strerror(-err));
		goto out;
	}
	signal(SIGINT, o.pid ? on_stop : SIG_IGN);
	signal(SIGQUIT, o.pid ? on_stop : SIG_IGN);
	if (!o.pid && (child = spawn_held(o.argv, &go)) < 0) {
		cli_error("cannot start '%s': %s", o.argv[0], strerror((int)-child));
		goto out;
	}
	if ((err = sampling_attach(s, o.pid ? o.pid : child, !o.pid, &failed))) {
		cli_error("cannot open event '%s': %s", evs[failed].ev.spec, strerror(-err));
		if (child > 0) {
			close(go);
			waitpid(child, NULL, 0);
		}
		goto out;
	}
	if (child > 0) {
		if (write(go, "g", 1) != 1) {
			cli_error("cannot start '%s': %s", o.argv[0], strerror(errno));
			goto out;
		}
		close(go);
	}
	if ((err = run_loop(s, child, o.pid, &status))) {
		cli_error("reading samples failed: %s", strerror(-err));
		goto out;
	}
	struct sampling_stats st;
	sampling_get_stats(s, &st);
	if (write_output(&o, sampling_profile(s)))
		goto out;
	fprintf(stderr, "spent: %llu samples (%llu placed, %llu unknown, %llu lost, %llu throttled) in '%s'\n",
		(unsigned long long)st.samples, (unsigned long long)st.placed,
		(unsigned long long)st.unknown, (unsigned long long)st.lost,
		(unsigned long long)st.throttled, o.output);
	if (st.lost)
		cli_warn("%llu samples were lost in the ring buffers: use a longer period or -F lower",
			 (unsigned long long)st.lost);
	rc = 0;
	if (child > 0)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	sampling_free(s);
	free(evs);
	return rc;
}
