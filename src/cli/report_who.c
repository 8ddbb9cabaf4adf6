/* cli/report_who.c - `spent report --sort/--comm/--pid/--tid/--image/--time` (cli/report_who.h):
 * option lists split and checked, the selected profile, and the grouped table in text, JSON
 * or CSV. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "cli/cli.h"
#include "cli/profile_input.h"
#include "cli/report_who.h"
#include "core/json.h"
#include "core/text.h"

/* Every comma-separated item of L, in order, as new strings appended to W->strings. A comm
 * may itself hold a comma (prctl(PR_SET_NAME) takes any bytes): "\\," is a literal comma
 * and "\\\\" a backslash. */
static int split_strings(struct report_who *w, const struct opt_string_list *l, size_t *first,
			 size_t *n, size_t *used)
{
	*first = *used;
	for (int i = 0; i < l->n; i++) {
		const char *s = l->items[i];
		for (;;) {
			char *item = malloc(strlen(s) + 1);
			size_t len = 0;
			if (!item)
				return -ENOMEM;
			for (; *s && *s != ','; s++) {
				if (*s == '\\' && (s[1] == ',' || s[1] == '\\'))
					s++;
				item[len++] = *s;
			}
			item[len] = 0;
			int err = !len ? -EINVAL : ALLOC_GROW(w->strings, *used + 1, w->cap_strings);
			if (err) {
				free(item);
				return err;
			}
			w->strings[(*used)++] = item;
			if (!*s++)
				break;
		}
	}
	*n = *used - *first;
	return 0;
}

static int split_ids(struct report_who *w, const struct opt_string_list *l, size_t *first,
		     size_t *n, size_t *used, const char **bad)
{
	*first = *used;
	for (int i = 0; i < l->n; i++) {
		char *dup = strdup(l->items[i]), *save = NULL;
		if (!dup)
			return -ENOMEM;
		const char *s = l->items[i];
		int err = s[0] == ',' || s[0] == 0 || s[strlen(s) - 1] == ',' || strstr(s, ",,") ?
			  -EINVAL : 0;
		for (char *t = strtok_r(dup, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
			uint64_t v;
			if (ALLOC_GROW(w->ids, *used + 1, w->cap_ids)) {
				err = -ENOMEM;
				break;
			}
			if (parse_strict_u64(t, 0, &v) || v > UINT32_MAX)
				err = -EINVAL;
			else
				w->ids[(*used)++] = (uint32_t)v;
		}
		free(dup);
		if (err) {
			*bad = l->items[i];
			return err;
		}
	}
	*n = *used - *first;
	return 0;
}

bool report_who_active(const struct report_who *w)
{
	return w->sort || w->comm.n || w->pid.n || w->tid.n || w->image.n || w->symbol.n || w->time ||
	       detail_filter_active(&w->filter);
}

int report_who_check(struct report_who *w, const struct parse_usage *pu)
{
	size_t cfirst, ifirst, sfirst, pfirst, tfirst, nids = 0;
	const char *bad = NULL;
	char badkey[64];
	int err;
	if (w->sort && detail_parse_keys(w->sort, w->keys, &w->nkeys, badkey, sizeof(badkey)))
		return parse_options_error(pu, "--sort: unknown or repeated key '%s' in '%s' (keys: "
					   "comm, pid, tid, image or dso, function or sym)", badkey,
					   w->sort);
	if ((err = split_strings(w, &w->comm, &cfirst, &w->filter.ncomms, &w->nstrings)) ||
	    (err = split_strings(w, &w->image, &ifirst, &w->filter.nimages, &w->nstrings)) ||
	    (err = split_strings(w, &w->symbol, &sfirst, &w->filter.nsymbols, &w->nstrings)))
		return parse_options_error(pu, err == -ENOMEM ? "out of memory" :
					   "--comm, --image and --symbols take comma-separated names, "
					   "none empty");
	if ((err = split_ids(w, &w->pid, &pfirst, &w->filter.npids, &nids, &bad)) ||
	    (err = split_ids(w, &w->tid, &tfirst, &w->filter.ntids, &nids, &bad)))
		return err == -ENOMEM ? parse_options_error(pu, "out of memory") :
		       parse_options_error(pu, "invalid id list '%s' for --pid/--tid: expected "
					   "numbers separated by commas", bad);
	/* pointers into the arrays only now that they have stopped moving */
	w->filter.comms = (const char *const *)w->strings + cfirst;
	w->filter.images = (const char *const *)w->strings + ifirst;
	w->filter.symbols = (const char *const *)w->strings + sfirst;
	w->filter.pids = w->ids + pfirst;
	w->filter.tids = w->ids + tfirst;
	return 0;
}

/* An empty table alone does not say whether the profile is empty or the filter too narrow:
 * when the selection Q of P holds no sample, one warning line says so, with P's span when a
 * --time window was given (the usual mistake is a window past the end). */
static void warn_if_nothing_selected(const struct report_who *w, const struct spent_profile *p,
				     const struct spent_profile *q)
{
	uint64_t all = profile_input_samples(p), s, e;
	if (profile_input_samples(q))
		return;
	spent_profile_span(p, &s, &e);
	if (w->time && s && e > s)
		cli_warn("no sample of the profile's %llu matches the selection (--time '%s': the "
			 "profile spans 0-%.3f s)", (unsigned long long)all, w->time,
			 (double)(e - s) / 1e9);
	else
		cli_warn("no sample of the profile's %llu matches the selection (--comm, --pid, "
			 "--tid, --image, --symbols, --time)", (unsigned long long)all);
}

int report_who_select(struct report_who *w, const char *input, struct symbols *sym,
		      struct spent_profile **p)
{
	if (!report_who_active(w))
		return 0;
	if (!profile_input_samples(*p))
		return 0;	/* nothing to select from (a window with no sample: said already) */
	if (!spent_profile_ndetail(*p)) {
		cli_error("profile '%s' has no per-sample detail (comm, pid, tid, time) for --sort, "
			  "--comm, --pid, --tid, --image, --symbols or --time: it was written before spent kept "
			  "them; record it again", input);
		return -ENOENT;
	}
	if (w->time) {
		uint64_t s, e;
		spent_profile_span(*p, &s, &e);
		int err = detail_parse_time(w->time, s, e, &w->filter);
		if (err == -ERANGE) {
			cli_error("--time: profile '%s' has no wall-clock span to measure '%s' from", input,
				  w->time);
			return err;
		}
		if (err) {
			cli_error("invalid value '%s' for --time: expected START,END in seconds from the "
				  "profile's start (either may be empty, START < END), A%%-B%% or N%%/K",
				  w->time);
			return -EINVAL;	/* a usage error: the caller exits 2 */
		}
	}
	if (!detail_filter_active(&w->filter))
		return 0;
	w->filter.sym = sym;
	struct spent_profile *q = NULL;
	int err = detail_filter_profile(*p, &w->filter, &q);
	if (err) {
		cli_error("cannot select samples: %s", strerror(-err));
		return err == -EINVAL ? -EIO : err;
	}
	warn_if_nothing_selected(w, *p, q);
	spent_profile_free(*p);
	*p = q;
	return 0;
}

static bool key_is_number(enum detail_key k)
{
	return k == DETAIL_KEY_PID || k == DETAIL_KEY_TID;
}

/* Columns count characters, not bytes: a UTF-8 name ("é") is one column per code point. V is
 * counted as print_cell shows it. */
static int cell_width(const char *v)
{
	char shown[TEXT_SHOWN_MAX];
	int n = 0;
	for (v = text_for_terminal(v, shown, sizeof(shown)); *v; v++)
		n += ((unsigned char)*v & 0xc0) != 0x80;
	return n;
}

/* One table cell in WIDTH (negative: left-aligned). Comms are whatever a program set with
 * prctl(PR_SET_NAME): a tab or newline in one would break the columns, so control
 * characters show escaped (core/text.h: \t, \xHH); CSV and JSON keep the bytes. */
static void print_cell(const char *v, int width)
{
	char shown[TEXT_SHOWN_MAX];
	int pad = (width < 0 ? -width : width) - cell_width(v);
	printf("  ");
	if (width > 0)
		printf("%*s", pad > 0 ? pad : 0, "");
	fputs(text_for_terminal(v, shown, sizeof(shown)), stdout);
	if (width < 0)
		printf("%*s", pad > 0 ? pad : 0, "");
}

static void print_table(const struct spent_profile *p, const struct detail_report *r, long limit)
{
	printf("# %llu samples of '%s' by", (unsigned long long)r->total,
	       spent_profile_event_get(p, r->event)->name);
	for (size_t k = 0; k < r->nkeys; k++)
		printf("%s%s", k ? "," : " ", detail_key_name(r->keys[k]));
	printf("\n%9s %8s", "samples", "%");
	/* numbers right-aligned, names left-aligned, each column as wide as its widest value */
	int width[DETAIL_KEY_NR];
	for (size_t k = 0; k < r->nkeys; k++) {
		width[k] = (int)strlen(detail_key_name(r->keys[k]));
		for (size_t i = 0; i < r->ngroups && (limit < 0 || (long)i < limit); i++) {
			int n = cell_width(r->groups[i].cols[k]);
			/* the last column is not padded unless it is a right-aligned number */
			if (n > width[k] && (k + 1 < r->nkeys || key_is_number(r->keys[k])))
				width[k] = n > 40 ? 40 : n;
		}
		printf("  %*s", key_is_number(r->keys[k]) ? width[k] : -width[k],
		       detail_key_name(r->keys[k]));
	}
	printf("\n");
	for (size_t i = 0; i < r->ngroups && (limit < 0 || (long)i < limit); i++) {
		const struct detail_group *g = &r->groups[i];
		printf("%9llu %7.2f%%", (unsigned long long)g->samples, cli_pct(g->samples, r->total));
		for (size_t k = 0; k < r->nkeys; k++)
			print_cell(g->cols[k], key_is_number(r->keys[k]) ? width[k] :
					       k + 1 < r->nkeys ? -width[k] : 0);
		printf("\n");
	}
	if (limit >= 0 && r->ngroups > (size_t)limit)
		printf("# %zu more rows not shown (--limit N, or --csv/--json for all)\n",
		       r->ngroups - (size_t)limit);
}

static void print_machine(const struct spent_profile *p, const struct detail_report *r,
			  enum out_fmt fmt, long limit, bool header)
{
	const char *evn = spent_profile_event_get(p, r->event)->name;
	if (fmt == OUT_CSV && header) {
		for (size_t k = 0; k < r->nkeys; k++)
			printf("%s,", detail_key_name(r->keys[k]));
		printf("event,samples,percent\n");
	}
	for (size_t i = 0; i < r->ngroups && (limit < 0 || (long)i < limit); i++) {
		const struct detail_group *g = &r->groups[i];
		if (fmt == OUT_JSON) {
			struct json_writer jw;
			json_init(&jw, stdout);
			json_object_begin(&jw);
			for (size_t k = 0; k < r->nkeys; k++)
				if (key_is_number(r->keys[k]))
					json_ku64(&jw, detail_key_name(r->keys[k]),
						  strtoull(g->cols[k], NULL, 10));
				else
					json_kstr(&jw, detail_key_name(r->keys[k]), g->cols[k]);
			json_kstr(&jw, "event", evn);
			json_ku64(&jw, "samples", g->samples);
			json_kdouble(&jw, "percent", cli_pct(g->samples, r->total), 4);
			json_object_end(&jw);
			json_newline(&jw);
		} else {
			for (size_t k = 0; k < r->nkeys; k++) {
				cli_csv_field(stdout, g->cols[k]);
				putchar(',');
			}
			cli_csv_field(stdout, evn);
			printf(",%llu,%.4f\n", (unsigned long long)g->samples, cli_pct(g->samples, r->total));
		}
	}
}

int report_who_print(const struct report_who *w, const struct spent_profile *p, struct symbols *sym,
		     const uint32_t *evs, size_t nev, enum out_fmt fmt, long limit)
{
	/* the profile is already the selection (report_who_select): group all of it */
	struct detail_filter all = { 0 };
	for (size_t e = 0; e < nev; e++) {
		struct detail_report *r = NULL;
		int err = detail_report_build(p, sym, evs[e], w->keys, w->nkeys, &all, &r);
		if (err) {
			cli_error("cannot build the --sort table: %s", strerror(-err));
			return err;
		}
		if (fmt == OUT_TABLE) {
			if (e)
				putchar('\n');
			print_table(p, r, limit);
		} else {
			print_machine(p, r, fmt, limit, e == 0);
		}
		detail_report_free(r);
	}
	return 0;
}

void report_who_release(struct report_who *w)
{
	for (size_t i = 0; i < w->nstrings; i++)
		free(w->strings[i]);
	free(w->strings);
	free(w->ids);
	opt_string_list_release(&w->comm);
	opt_string_list_release(&w->pid);
	opt_string_list_release(&w->tid);
	opt_string_list_release(&w->image);
	opt_string_list_release(&w->symbol);
}
