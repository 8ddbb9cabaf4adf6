/* cli/cli.c - helpers shared by the command files: error lines, option numbers (through the
 * strict parser of core/number.h), CSV quoting, the check of an output path before a run. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/parse_options.h"
#include "collect/event_fallback.h"
#include "collect/sampling.h"
#include "core/cpus.h"
#include "core/number.h"
#include "core/outfile.h"
#include "spent/events.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("spent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void cli_stdout_error(int err)
{
	clearerr(stdout);
	if (err != -EPIPE)
		cli_error("cannot write to stdout: %s", strerror(-err));
}

static bool quiet;

void cli_set_quiet(bool q)
{
	quiet = q;
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	va_start(ap, fmt);
	fputs("spent: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Every CPU of -C is online (the kernel's own list, core/cpus.h): a CPU that is
 * not made perf_event_open say only "Invalid argument". 0, or -EINVAL after one error line. */
static int check_cpus_online(const int *cpus, size_t n)
{
	int *online = NULL;
	size_t n_online = 0;
	if (cpus_online(&online, &n_online))
		return 0;	/* cannot tell: perf_event_open will */
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		bool on = false;
		for (size_t k = 0; k < n_online; k++)
			on |= online[k] == cpus[i];
		if (!on) {
			char list[256];
			cpu_list_format(online, n_online, list, sizeof(list));
			cli_error("cpu %d for -C does not exist or is offline: this machine has cpus %s",
				  cpus[i], list);
			err = -EINVAL;
		}
	}
	free(online);
	return err;
}

int cli_parse_cpu_list(const char *list, int **cpus, size_t *n)
{
	*cpus = NULL;
	*n = 0;
	if (cpu_list_parse(list, cpus, n)) {
		cli_error("bad CPU list '%s' for -C: give CPUs as 0-3,5", list);
		return -EINVAL;
	}
	if (check_cpus_online(*cpus, *n)) {
		free(*cpus);
		*cpus = NULL;
		*n = 0;
		return -EINVAL;
	}
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	return num_parse_u64(s, NUM_SI, out);
}

int cli_parse_frequency(const char *s, uint64_t *hz)
{
	return num_parse_u64(s, NUM_SI, hz) || !*hz ? -EINVAL : 0;
}

void cli_clamp_frequency(uint64_t *hz)
{
	char msg[256];
	sampling_clamp_frequency(hz, msg, sizeof(msg));
	if (msg[0])
		cli_warn("%s", msg);
}

int cli_parse_size(const char *s, uint64_t *out)
{
	return num_parse_u64(s, NUM_BINARY, out);
}

int cli_parse_int_opt(const char *opt, const char *s, long min, long max, long *out)
{
	uint64_t v;

	if (min < 0 || num_parse_range(s, (uint64_t)min, (uint64_t)max, &v)) {
		cli_error("invalid value '%s' for %s: expected an integer in [%ld, %ld]",
			  s ? s : "", opt, min, max);
		return -EINVAL;
	}
	*out = (long)v;
	return 0;
}

int cli_parse_double_opt(const char *opt, const char *s, double min, double max, double *out)
{
	double v;

	if (num_parse_double(s, &v) || v < min || v > max) {
		cli_error("invalid value '%s' for %s: expected a number in [%g, %g]", s ? s : "", opt,
			  min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

bool cli_user_space_fallback(struct spent_event *ev)
{
	static bool said;
	char msg[512];

	if (!event_user_space_fallback(ev, msg, sizeof(msg)))
		return false;
	if (!said)
		cli_warn("%s", msg);
	said = true;
	return true;
}

char *cli_join_list(const struct opt_string_list *l)
{
	size_t len = 1;
	for (int i = 0; i < l->n; i++)
		len += strlen(l->items[i]) + 1;
	char *s = malloc(len), *p = s;
	if (!s)
		return NULL;
	*p = 0;
	for (int i = 0; i < l->n; i++)
		p += sprintf(p, "%s%s", i ? "," : "", l->items[i]);
	return s;
}

void cli_csv_field_sep(FILE *out, const char *s, char sep)
{
	if (!s)
		s = "";
	if (!strchr(s, sep) && !strpbrk(s, "\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

void cli_csv_field(FILE *out, const char *s)
{
	cli_csv_field_sep(out, s, ',');
}

int cli_check_output(const char *path)
{
	int err = outfile_check(path);
	if (err)
		cli_error("cannot write '%s': %s", path, outfile_strerror(err));
	return err;
}

/* Whether writing OUT replaces IN, or a file inside IN when IN is a directory. */
static bool output_hits_input(const char *out, const char *in)
{
	struct stat so, si;
	if (stat(in, &si) < 0)
		return false;
	if (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
		return true;
	if (!S_ISDIR(si.st_mode))
		return false;
	char dir[PATH_MAX], base[NAME_MAX + 1], rdir[PATH_MAX], rin[PATH_MAX];
	if (outfile_split_path(out, dir, sizeof(dir), base) || !realpath(dir, rdir) || !realpath(in, rin))
		return false;
	size_t n = strlen(rin);
	return !strncmp(rdir, rin, n) && (rdir[n] == 0 || rdir[n] == '/' || !strcmp(rin, "/"));
}

/* PATH as a file output names it (outfile_split_path): its directory resolved, then its last
 * component (PATH itself when the directory does not resolve). */
static void output_name(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], base[NAME_MAX + 1], rdir[PATH_MAX];
	if (outfile_split_path(path, dir, sizeof(dir), base) || !realpath(dir, rdir))
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", base);
}

int cli_check_outputs_distinct(const char *const *paths, const char *const *opts, size_t n)
{
	char a[2 * PATH_MAX], b[2 * PATH_MAX];
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		/* a device or FIFO is written in place, never replaced (--pprof /dev/null) */
		if (!paths[i] || !strcmp(paths[i], "-") ||
		    (stat(paths[i], &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))))
			continue;
		output_name(paths[i], a, sizeof(a));
		for (size_t j = i + 1; j < n; j++) {
			struct stat si, sj;
			if (!paths[j] || !strcmp(paths[j], "-"))
				continue;
			output_name(paths[j], b, sizeof(b));
			bool same = !strcmp(a, b) || (stat(paths[i], &si) == 0 && stat(paths[j], &sj) == 0 &&
						       si.st_dev == sj.st_dev && si.st_ino == sj.st_ino);
			if (same) {
				cli_error("%s '%s' and %s '%s' name the same file: one would replace the other",
					  opts[i], paths[i], opts[j], paths[j]);
				return -EEXIST;
			}
		}
	}
	return 0;
}

int cli_check_output_from(const char *path, const char *input)
{
	int err = cli_check_output(path);
	if (!err && input && output_hits_input(path, input)) {
		cli_error("cannot write '%s': it is the input '%s' (or inside it)", path, input);
		err = -EEXIST;
	}
	return err;
}
