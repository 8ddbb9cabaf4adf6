/* cli/profile_input.c - load a profile directory (all of it, one epoch DIR/epoch-NNNN, or the
 * epochs --epoch/--since/--until choose) for the views, with the error lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/report_detail.h"
#include "cli/cli.h"
#include "cli/profile_input.h"
#include "core/kallsyms_file.h"

static void warn_skip(void *ctx, const char *path, const char *why)
{
	cli_warn("skipping corrupt profile file '%s': %s", path, why);
}

/* Print why DIR could not be opened (ERR). */
static void open_error(const char *dir, int err)
{
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		cli_error("profile '%s' not found: record one with 'spent record -o %s -- CMD'", dir, dir);
		return;
	case -ENOTDIR:
		cli_error("'%s' is not a directory: give a profile directory written by spent record or spent daemon", dir);
		return;
	case -EBADMSG:
		cli_error("'%s' is not a spent profile directory (no valid 'meta' file): give the -o directory of spent record", dir);
		return;
	case -EACCES:
	case -EPERM:
		cli_error("cannot read profile '%s': permission denied (a daemon's database is readable "
			  "by root only)", dir);
		return;
	case -EPROTONOSUPPORT:
		cli_error("profile '%s' was written by a newer spent (format version): upgrade spent to read it", dir);
		return;
	default:
		cli_error("cannot open profile '%s': %s", dir, strerror(-err));
		return;
	}
}

/* DIR as DB/epoch-NNNN: 1 with the database's path in BASE and *EPOCH; 0 when DIR is not
 * named like an epoch. */
static int epoch_path(const char *dir, char *base, size_t len, uint32_t *epoch)
{
	size_t n = strlen(dir), b;
	unsigned long ep;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (b = n; b > 0 && dir[b - 1] != '/'; b--)
		;
	if (n - b < 7 || strncmp(dir + b, "epoch-", 6) != 0 ||
	    strspn(dir + b + 6, "0123456789") != n - b - 6 || n - b - 6 > 9)
		return 0;
	ep = strtoul(dir + b + 6, NULL, 10);
	if (b == 0)
		snprintf(base, len, ".");
	else
		snprintf(base, len, "%.*s", (int)(b > 1 ? b - 1 : 1), dir);
	*epoch = (uint32_t)ep;
	return 1;
}

int profile_input_kallsyms(struct symbols *sym, const char *dir)
{
	char base[PATH_MAX], path[PATH_MAX + 16];

	profile_input_base(dir, base, sizeof(base));
	int err = symbols_set_kallsyms_dir(sym, base);	/* the daemon's copy per kernel identity */
	/* spent record writes it compressed; profiles from before have it plain */
	snprintf(path, sizeof(path), "%s/" KALLSYMS_FILE_ZST, base);
	if (access(path, F_OK))
		snprintf(path, sizeof(path), "%s/" KALLSYMS_FILE_PLAIN, base);
	return err ? err : access(path, R_OK) == 0 ? symbols_set_kallsyms(sym, path) : 0;
}

void profile_input_base(const char *dir, char *buf, size_t len)
{
	struct spent_profile_dir *d;
	uint32_t ep;

	snprintf(buf, len, "%s", dir);
	if (spent_profile_dir_open(dir, &d) == 0) {
		spent_profile_dir_close(d);
		return;
	}
	if (!epoch_path(dir, buf, len, &ep))
		snprintf(buf, len, "%s", dir);
}

int profile_selection_check(struct profile_selection *sel, const struct parse_usage *pu)
{
	struct timespec ts;
	const char *why;
	uint64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (sel->epochs && epoch_set_parse(sel->epochs, &sel->set))
		return parse_options_error(pu, "--epoch '%s': give epoch numbers, ranges and lists "
					   "(3, 2-5, 1,4-6)", sel->epochs);
	if (sel->since && time_point_parse(sel->since, now, &sel->since_ns, &why))
		return parse_options_error(pu, "--since '%s': %s", sel->since, why);
	if (sel->until && time_point_parse(sel->until, now, &sel->until_ns, &why))
		return parse_options_error(pu, "--until '%s': %s", sel->until, why);
	/* 0 means "no bound" below: --until the Unix epoch itself selects nothing, as 1 ns does
	 * (it selected everything); --since 0 is no bound and means just that */
	if (sel->until && sel->until_ns == 0)
		sel->until_ns = 1;
	if (sel->since_ns && sel->until_ns && sel->until_ns < sel->since_ns)
		return parse_options_error(pu, "--until '%s' is before --since '%s'", sel->until,
					   sel->since);
	return 0;
}

void profile_selection_release(struct profile_selection *sel)
{
	epoch_set_release(&sel->set);
}

/* Does epoch EP of D hold no samples? Read only for an epoch without a span. */
static bool epoch_is_empty(struct spent_profile_dir *d, uint32_t ep)
{
	struct spent_profile *p = spent_profile_new();
	bool empty = p && !spent_profile_dir_read_epoch(d, ep, p, NULL, NULL, NULL) &&
		     profile_input_samples(p) == 0;

	spent_profile_free(p);
	return empty;
}

/* Does epoch EP of D pass SEL's window? Epochs without a span cannot be placed in time: left
 * out. One with samples was written before spans were kept: said in a warning. One without
 * (started by `spent db DIR epoch`, or a daemon's before its first merge) has nothing to
 * leave out: it said "written before spans were kept" of an epoch this version made. */
static bool in_window(struct spent_profile_dir *d, const char *dir, uint32_t ep,
		      const struct profile_selection *sel)
{
	uint64_t start, end;

	if (!sel->since_ns && !sel->until_ns)
		return true;
	if (spent_profile_dir_epoch_span(d, ep, &start, &end) || (!start && !end)) {
		if (!epoch_is_empty(d, ep))
			cli_warn("epoch %u of '%s' has no time span (written before spans were "
				 "kept): left out of --since/--until", ep, dir);
		return false;
	}
	return (!sel->since_ns || end >= sel->since_ns) && (!sel->until_ns || start <= sel->until_ns);
}

/* Read the epochs of D that SEL (and ONLY, when not UINT32_MAX) choose into P; -ENOENT when
 * there is none (the error printed). */
static int read_selected(struct spent_profile_dir *d, const char *dir, const struct profile_selection *sel,
			 uint32_t only, struct spent_profile *p, size_t *nskipped)
{
	uint32_t *eps = NULL;
	size_t n = 0, nread = 0;
	bool only_exists = false;
	int err = spent_profile_dir_epochs(d, &eps, &n);

	for (size_t i = 0; i < n && !err; i++) {
		size_t skipped = 0;
		if (only != UINT32_MAX && eps[i] != only)
			continue;
		only_exists = true;
		if (sel && ((sel->set.n && !epoch_set_has(&sel->set, eps[i])) || !in_window(d, dir, eps[i], sel)))
			continue;
		err = spent_profile_dir_read_epoch(d, eps[i], p, warn_skip, NULL, &skipped);
		*nskipped += skipped;
		nread++;
	}
	if (err) {
		cli_error("cannot read profile '%s': %s", dir, strerror(-err));
	} else if (only != UINT32_MAX && !only_exists) {
		cli_error("'%s' has no epoch %u (see 'spent db %s list')", dir, only, dir);
		err = -ENOENT;
	} else if (!nread) {
		cli_error("no epoch of '%s' matches --epoch/--since/--until (see 'spent db %s list')",
			  dir, dir);
		err = -ENOENT;
	}
	free(eps);
	return err;
}

uint64_t profile_input_samples(const struct spent_profile *p)
{
	uint64_t n = 0;
	for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++)
		n += spent_profile_event_total(p, ev);
	return n;
}

/* Inside the chosen epochs, only the detail rows whose bucket starts in [since, until) (the
 * samples of a profile with detail rows are those rows: every view then shows the window). */
static int cut_to_window(const char *dir, const struct profile_selection *sel, struct spent_profile **p)
{
	struct detail_filter f = { .start_ns = sel->since_ns, .end_ns = sel->until_ns };
	struct spent_profile *q = NULL;
	int err = detail_filter_profile(*p, &f, &q);

	if (err) {
		cli_error("cannot select the samples of '%s' in the window: %s", dir, strerror(-err));
		return err;
	}
	/* an empty window is an empty table with one line said, as an empty --comm is */
	uint64_t all = profile_input_samples(*p);
	if (all && !profile_input_samples(q))
		cli_warn("no sample of the %llu in the chosen epochs of '%s' falls in the --since/"
			 "--until window", (unsigned long long)all, dir);
	spent_profile_free(*p);
	*p = q;
	return 0;
}

int profile_input_load_selected(const char *dir, const struct profile_selection *sel,
				struct spent_profile **out, size_t *nskipped)
{
	struct spent_profile_dir *d = NULL;
	struct spent_profile *p = NULL;
	char base[PATH_MAX];
	uint32_t only = UINT32_MAX;
	int err = spent_profile_dir_open(dir, &d);

	*nskipped = 0;
	/* DB/epoch-NNNN has no meta of its own: the database it is in has */
	if ((err == -EBADMSG || err == -ENOENT) && epoch_path(dir, base, sizeof(base), &only) &&
	    spent_profile_dir_open(base, &d) == 0) {
		err = 0;
		if (sel && sel->set.n) {
			cli_error("'%s' is one epoch already: give the database with --epoch, or the "
				  "epoch without it", dir);
			spent_profile_dir_close(d);
			return -EINVAL;
		}
	} else if (err) {
		open_error(dir, err);
		return err;
	} else {
		only = UINT32_MAX;
	}
	p = spent_profile_new();
	if (!p) {
		cli_error("cannot read profile '%s': %s", dir, strerror(ENOMEM));
		err = -ENOMEM;
	} else if (only == UINT32_MAX && (!sel || (!sel->set.n && !sel->since_ns && !sel->until_ns))) {
		err = spent_profile_dir_read_all(d, p, warn_skip, NULL, nskipped);
		if (err)
			cli_error("cannot read profile '%s': %s", dir, strerror(-err));
	} else {
		err = read_selected(d, only == UINT32_MAX ? dir : base, sel, only, p, nskipped);
	}
	spent_profile_dir_close(d);
	if (!err && sel && (sel->since_ns || sel->until_ns) && spent_profile_ndetail(p))
		err = cut_to_window(dir, sel, &p);
	if (err) {
		spent_profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int profile_input_load(const char *dir, struct spent_profile **out, size_t *nskipped)
{
	return profile_input_load_selected(dir, NULL, out, nskipped);
}
