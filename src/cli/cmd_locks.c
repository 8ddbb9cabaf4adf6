/* cli/cmd_locks.c - `spent locks`: per-lock table (acquisitions, a read-write lock's by
 * readers, hold and spin time in instructions, contention, convoys, holders and waiters) and
 * the per-thread hold/spin timeline (the PatchWrx paper's lock-activity chart, its Figure 16)
 * as SVG. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/locks.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/outfile.h"
#include "cli/studies_util.h"
#include "core/json.h"
#include "core/path.h"
#include "core/text.h"
#include "plot/locks_plot.h"

struct locks_opts {
	const char *trace, *svg;
	long groups;
	int json;
};

static int feed(void *ctx, const struct spent_trace_batch *b)
{
	return locks_feed(ctx, b);
}

static const char *const locks_usage[] = { "spent locks TRACE [--svg FILE] [--json] [OPTIONS]",
					     NULL };
static const struct parse_usage locks_u = {
	"locks", locks_usage, "lock hold and spin timelines per thread from a trace",
	"Finds the locks of a `spent trace` log (pthread mutexes, read-write locks and spin "
	"locks by their calls, glibc's own locks, bare atomic spin locks; futex waits) and "
	"reports per lock the acquisitions (a read-write lock's by readers apart), hold and spin "
	"time in instructions (and of the holds, the instructions the holder itself ran: Valgrind "
	"runs one thread at a time, so a hold spans whatever ran while its holder was switched "
	"out), contention, convoys, holders and waiters; with --svg the "
	"per-thread hold/spin timeline.",
};

static int parse_opts(int argc, char **argv, struct locks_opts *o)
{
	struct option opts[] = {
		OPT_STRING(0, "svg", &o->svg, "FILE", "write the per-thread lock timeline"),
		OPT_BOOL(0, "json", &o->json, "one JSON object per line"),
		OPT_INT(0, "groups", &o->groups, "N", "bands the SVG's time axis is cut into",
			1, 64),
		STUDIES_FILTER_OPTIONS,
		OPT_END(),
	};
	return studies_parse(argc, argv, opts, &locks_u, &o->trace);
}

static void json_tids(struct json_writer *w, const char *key, const uint32_t *t, uint32_t n)
{
	json_key(w, key);
	json_array_begin(w);
	for (uint32_t i = 0; i < n; i++)
		json_u64(w, t[i]);
	json_array_end(w);
}

typedef char lock_name[128];

/* Each row's variable, named once (the table's width and its rows both need them); NULL when
 * out of memory. */
static lock_name *name_rows(struct locks *lk, const struct lock_summary *t, size_t n)
{
	lock_name *names = calloc(n ? n : 1, sizeof(*names));
	for (size_t i = 0; names && i < n; i++)
		symtab_name_addr(locks_symtab(lk, t[i].pid, t[i].stream), t[i].addr, names[i],
				 sizeof(names[i]));
	return names;
}

/* The variable column's width: its longest name (libc's statics, as __libc_setlocale_lock,
 * pushed the columns after it out of line at 16), at most 40: a longer one shifts its row only. */
static int variable_width(const lock_name *names, size_t n)
{
	int w = 16;
	char shown[TEXT_SHOWN_MAX];
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(text_for_terminal(names[i], shown, sizeof(shown)));
		if (len > w)
			w = len;
	}
	return w < 40 ? w : 40;
}

static int print_table(struct locks *lk, const struct locks_opts *o)
{
	size_t n;
	const struct lock_summary *t = locks_table(lk, &n);
	if (!t)
		n = 0;
	lock_name *names = name_rows(lk, t, n);
	if (!names)
		return -ENOMEM;
	int vw = o->json ? 0 : variable_width(names, n);
	if (!o->json)
		printf("locks in '%s' (%llu instructions; times in instructions)\n"
		       "%-14s %7s %-12s %-*s %-14s %8s %6s %9s %7s %6s %11s %9s %9s %10s  %-12s %s\n",
		       o->trace, (unsigned long long)locks_instructions(lk), "lock", "pid", "program",
		       vw, "variable", "kind", "acquired", "reads",
		       "contended", "convoys", "futex", "total hold", "max hold", "max own", "spin",
		       "holders", "waiters");
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		/* a tree's pid may run several programs (execve), each with its own locks */
		const char *exe = locks_program(lk, t[i].pid, t[i].stream);
		const char *prog = exe ? path_base_name(exe) : "-";
		if (o->json) {
			struct json_writer w;
			json_init(&w, stdout);
			json_object_begin(&w);
			json_khex(&w, "lock", t[i].addr);
			json_ku64(&w, "pid", t[i].pid);
			if (t[i].stream)	/* a trace of a process tree */
				json_ku64(&w, "stream", t[i].stream);
			if (exe)
				json_kstr(&w, "exe", exe);
			json_kstr(&w, "symbol", name);
			json_kstr(&w, "how", t[i].how);
			json_ku64(&w, "acquisitions", t[i].acquisitions);
			if (!strcmp(t[i].how, "pthread_rwlock"))	/* the rest were writers' */
				json_ku64(&w, "read_acquisitions", t[i].shared);
			json_ku64(&w, "contended", t[i].contended);
			json_ku64(&w, "convoys", t[i].convoys);
			json_ku64(&w, "futex_waits", t[i].futex_waits);
			json_ku64(&w, "total_hold", t[i].total_hold);
			json_ku64(&w, "max_hold", t[i].max_hold);
			json_ku64(&w, "own_total_hold", t[i].own_total_hold);
			json_ku64(&w, "own_max_hold", t[i].own_max_hold);
			json_ku64(&w, "spin", t[i].spin);
			json_tids(&w, "holders", t[i].holders, t[i].n_holders);
			json_tids(&w, "waiters", t[i].waiters, t[i].n_waiters);
			json_object_end(&w);
			json_newline(&w);
			continue;
		}
		char hold[160] = "", wait[160] = "";
		for (uint32_t k = 0; k < t[i].n_holders; k++)
			snprintf(hold + strlen(hold), sizeof(hold) - strlen(hold), "%s%u", k ? "," : "",
				 t[i].holders[k]);
		for (uint32_t k = 0; k < t[i].n_waiters; k++)
			snprintf(wait + strlen(wait), sizeof(wait) - strlen(wait), "%s%u", k ? "," : "",
				 t[i].waiters[k]);
		char reads[24] = "-", shown_prog[TEXT_SHOWN_MAX], shown_name[TEXT_SHOWN_MAX];
		if (!strcmp(t[i].how, "pthread_rwlock"))
			snprintf(reads, sizeof(reads), "%llu", (unsigned long long)t[i].shared);
		printf("0x%-12llx %7u %-12.12s %-*s %-14s %8llu %6s %9llu %7llu %6llu %11llu %9llu %9llu %10llu  %-12s %s\n",
		       (unsigned long long)t[i].addr, t[i].pid,
		       text_for_terminal(prog, shown_prog, sizeof(shown_prog)), vw,
		       text_for_terminal(name, shown_name, sizeof(shown_name)), t[i].how,
		       (unsigned long long)t[i].acquisitions, reads, (unsigned long long)t[i].contended,
		       (unsigned long long)t[i].convoys, (unsigned long long)t[i].futex_waits,
		       (unsigned long long)t[i].total_hold, (unsigned long long)t[i].max_hold,
		       (unsigned long long)t[i].own_max_hold, (unsigned long long)t[i].spin,
		       hold[0] ? hold : "-", wait[0] ? wait : "-");
	}
	free(names);
	return 0;
}

int cmd_locks(int argc, char **argv)
{
	struct locks_opts o = { .groups = 4 };
	int prc = parse_opts(argc, argv, &o);
	if (prc == PARSE_OPT_HELP)
		return 0;
	if (prc || (o.svg && cli_check_output_from(o.svg, o.trace)))
		return 2;
	struct symtab *syms = symtab_new();
	struct locks *lk = NULL;
	char cut[640];
	int ret = 1;
	if (!syms || locks_new(syms, &lk)) {
		cli_error("locks: out of memory");
		goto out;
	}
	studies_filter.need_data = 1;	/* lock words are data addresses */
	if (studies_run("locks", o.trace, feed, lk, cut, sizeof(cut)))
		goto out;
	locks_finish(lk);
	if (print_table(lk, &o)) {
		cli_error("locks: out of memory");
		goto out;
	}
	if (o.svg) {
		int rc = plot_locks_svg(lk, (uint64_t)o.groups, o.svg);
		if (rc) {
			cli_error("locks: cannot write '%s': %s", o.svg, outfile_strerror(rc));
			goto out;
		}
	}
	ret = studies_done(cut);
out:
	locks_free(lk);
	symtab_free(syms);
	return ret;
}
