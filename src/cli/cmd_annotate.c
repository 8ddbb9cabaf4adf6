/* cli/cmd_annotate.c - `spent annotate SYMBOL` (dcpilist): the function's instructions with
 * samples per event and the source lines interleaved. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/text.h"
#include "analysis/annotate.h"
#include "analysis/report.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "cli/profile_input.h"
#include "core/binio.h"
#include "core/demangle.h"
#include "core/json.h"

struct annotate_opts {
	const char *input;
	struct profile_selection sel;	/* --epoch, --since, --until */
	struct opt_string_list event_lists;	/* every -e, in order */
	char *events;		/* the -e lists as one "a,b,c"; NULL: every event */
	const char *symbol;	/* NULL: the function with the most samples */
	int json;
	int demangle;		/* --no-demangle: names as in the symbol table */
	int stdio;		/* perf's --stdio: the output is text anyway */
};

/* Source file lines, read once per file. */
struct source {
	const char *path;
	char **lines;
	size_t n;
};

static void source_load(struct source *s, const char *path)
{
	if (s->path && path && !strcmp(s->path, path))
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->lines[i]);
	free(s->lines);
	memset(s, 0, sizeof(*s));
	s->path = path;
	FILE *f = path ? binio_fopen_regular(path) : NULL;	/* a FIFO must not block us */
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t l;
	while ((l = getline(&line, &cap, f)) >= 0) {
		if (ALLOC_GROW(s->lines, s->n + 1, alloc))
			break;
		line[strcspn(line, "\n")] = 0;
		s->lines[s->n++] = strdup(line);
	}
	free(line);
	fclose(f);
}

static const char *const annotate_usage[] = { "spent annotate [-i DIR] [-e EVS]... [--json] [SYMBOL]",
					       NULL };
static const struct parse_usage annotate_pu = {
	"annotate", annotate_usage,
	"one function's instructions with samples and source lines (dcpilist)",
	"Disassembles SYMBOL (default: the function with the most samples of the first event) from "
	"the profile's image and prints the samples of every instruction, per event, with the "
	"source lines interleaved.",
};

static int parse_args(int argc, char **argv, struct annotate_opts *o)
{
	const struct option opts[] = {
		OPT_STRING('i', "input", &o->input, "DIR", "the profile directory"),
		PROFILE_SELECTION_OPTIONS(&o->sel),
		OPT_STRING_LIST('e', "event", &o->event_lists, "EV,...",
				"events to show, in this order (repeatable; default: all)"),
		OPT_BOOL(0, "json", &o->json, "one JSON object per instruction"),
		OPT_BOOL(0, "demangle", &o->demangle,
			 "show C++ and Rust names demangled (--no-demangle: as in the binary)"),
		{ .type = OPTION_BOOL, .long_name = "stdio", .value = &o->stdio,
		  .help = "perf's: the output is text anyway", .flags = PARSE_OPT_HIDDEN },
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &annotate_pu, 0);
	if (n < 0)
		return n;
	if (n > 1)
		return parse_options_error(&annotate_pu, "more than one symbol given ('%s' and '%s'): "
					   "annotate one function", argv[0], argv[1]);
	o->symbol = n ? argv[0] : NULL;
	demangle_set_enabled(o->demangle);
	if (profile_selection_check(&o->sel, &annotate_pu))
		return PARSE_OPT_ERROR;
	if (o->event_lists.n && !(o->events = cli_join_list(&o->event_lists)))
		return parse_options_error(&annotate_pu, "out of memory");
	return 0;
}

static void print_text(const struct spent_profile *p, const struct annotate *a, const uint32_t *evs,
		       const char *symbol)
{
	const struct spent_profile_image *img = spent_profile_image_get(p, a->image);
	struct source src = { 0 };
	const char *last_file = NULL;
	int last_line = -1;
	char shown_sym[TEXT_SHOWN_MAX], shown_path[TEXT_SHOWN_MAX];
	printf("# %s in %s (0x%llx, %llu bytes)\n",
	       text_for_terminal(symbol, shown_sym, sizeof(shown_sym)),
	       text_for_terminal(img->path, shown_path, sizeof(shown_path)),
	       (unsigned long long)a->start, (unsigned long long)a->size);
	if (a->region)
		printf("# no symbol covers it: the sampled instructions around it, fewer than 64 bytes apart\n");
	for (size_t e = 0; e < a->nevents; e++) {
		uint64_t tot = spent_profile_event_total(p, evs[e]);
		printf("# %llu samples of '%s' in this function (%.2f%% of %llu)\n",
		       (unsigned long long)a->fn_totals[e], spent_profile_event_get(p, evs[e])->name,
		       tot ? 100.0 * (double)a->fn_totals[e] / (double)tot : 0.0, (unsigned long long)tot);
	}
	for (size_t e = 0; e < a->nevents; e++)
		printf("%10.10s %7s ", spent_profile_event_get(p, evs[e])->name, "%");
	printf("%10s  %s\n", "offset", "instruction");
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct annotate_insn *x = &a->insns[i];
		if (x->file && (x->line != last_line || x->file != last_file)) {
			source_load(&src, x->file);
			const char *text = x->line > 0 && (size_t)x->line <= src.n ? src.lines[x->line - 1] : "";
			const char *bn = strrchr(x->file, '/');
			/* the file's name comes from the binary's debug information; its lines are
			 * shown as they are, tabs and all, as the file itself would be */
			printf("%*s%s:%d  %s\n", (int)(a->nevents * 19), "",
			       text_for_terminal(bn ? bn + 1 : x->file, shown_path, sizeof(shown_path)), x->line,
			       text ? text : "");
			last_line = x->line;
			last_file = x->file;
		}
		for (size_t e = 0; e < a->nevents; e++)
			printf("%10llu %6.2f%% ", (unsigned long long)x->counts[e],
			       a->fn_totals[e] ? 100.0 * (double)x->counts[e] / (double)a->fn_totals[e] : 0.0);
		printf("%10llx  %s\n", (unsigned long long)x->offset, x->text);
	}
	source_load(&src, NULL);
}

static void print_json(const struct spent_profile *p, const struct annotate *a, const uint32_t *evs,
		       const char *symbol)
{
	const struct spent_profile_image *img = spent_profile_image_get(p, a->image);
	struct json_writer w;
	json_init(&w, stdout);
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct annotate_insn *x = &a->insns[i];
		for (size_t e = 0; e < a->nevents; e++) {
			json_object_begin(&w);
			json_kstr(&w, "image", img->path);
			json_kstr(&w, "symbol", symbol);
			json_khex(&w, "offset", x->offset);
			json_kstr(&w, "instruction", x->text);
			json_kstr(&w, "file", x->file ? x->file : "");
			json_ki64(&w, "line", x->line);
			json_kstr(&w, "event", spent_profile_event_get(p, evs[e])->name);
			json_ku64(&w, "samples", x->counts[e]);
			json_kdouble(&w, "percent", a->fn_totals[e] ?
				     100.0 * (double)x->counts[e] / (double)a->fn_totals[e] : 0.0, 4);
			json_object_end(&w);
			json_newline(&w);
		}
	}
}

/* No SYMBOL: the function with the most samples of EV (what `spent report` lists first, as
 * perf annotate starts with it), named as the report names it (IMAGE+0xOFF where no symbol
 * covers the code); kernel functions are skipped (their code is not read). Into NAME, or
 * -ENOENT when no sample is placed in a function that can be annotated. */
static int hottest_function(const struct spent_profile *p, struct symbols *sym, uint32_t ev,
			    char *name, size_t len)
{
	struct report_config cfg = { .by = REPORT_BY_FUNCTION, .events = &ev, .nevents = 1 };
	struct report *r = NULL;
	int err = report_build(p, sym, &cfg, &r);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < r->nrows && err; i++) {
		const struct report_row *row = &r->rows[i];
		if (!row->self[0])
			break;	/* sorted: nothing sampled follows */
		if (!row->symbol || row->image[0] == '[')	/* [unknown], [kernel.kallsyms], [vdso] */
			continue;
		snprintf(name, len, "%s", row->symbol);
		err = 0;
	}
	report_free(r);
	return err;
}

int cmd_annotate(int argc, char **argv)
{
	struct annotate_opts o = { .input = "spent.profile", .demangle = 1 };
	struct spent_profile *p = NULL;
	struct symbols *sym = NULL;
	struct annotate *a = NULL;
	uint32_t evs[64];
	size_t nev = 0, skipped = 0;
	int rc = 2, err;
	const char *why = NULL;
	char shown[1024];	/* the symbol as shown: a mangled name given is demangled */
	if ((err = parse_args(argc, argv, &o)) < 0) {
		rc = err == PARSE_OPT_HELP ? 0 : 2;
		goto out;
	}
	rc = 1;
	if (profile_input_load_selected(o.input, &o.sel, &p, &skipped) || symbols_new(&sym) || profile_input_kallsyms(sym, o.input))
		goto out;
	if (o.events) {
		char *dup = strdup(o.events), *save = NULL;
		for (char *t = dup ? strtok_r(dup, ",", &save) : NULL; t && nev < 64; t = strtok_r(NULL, ",", &save)) {
			int e = spent_profile_event_find(p, t);
			if (e < 0) {
				cli_error("event '%s' is not in profile '%s'", t, o.input);
				free(dup);
				goto out;
			}
			evs[nev++] = (uint32_t)e;
		}
		free(dup);
	} else {
		for (uint32_t e = 0; e < spent_profile_nevents(p) && nev < 64; e++)
			evs[nev++] = e;
	}
	if (!nev) {
		cli_error("no readable samples in profile '%s'", o.input);
		goto out;
	}
	char hottest[1024];
	if (!o.symbol) {
		err = hottest_function(p, sym, evs[0], hottest, sizeof(hottest));
		if (err == -ENOENT) {
			cli_error("no samples of '%s' in a function of profile '%s' to annotate",
				  spent_profile_event_get(p, evs[0])->name, o.input);
			goto out;
		} else if (err) {
			cli_error("cannot rank the functions of profile '%s': %s", o.input, strerror(-err));
			goto out;
		}
		o.symbol = hottest;
	}
	long unreadable;
	err = annotate_function(p, sym, o.symbol, evs, nev, &a, &why, &unreadable);
	if (err == -ENOENT && unreadable >= 0) {
		cli_error("function '%s' not found in the images of profile '%s' that could be read "
			  "('%s' could not: %s): see 'spent report -i %s'", o.symbol, o.input,
			  spent_profile_image_get(p, (uint32_t)unreadable)->path, why, o.input);
		goto out;
	} else if (err == -ENOENT) {
		cli_error("function '%s' not found in any image of profile '%s': see 'spent report -i %s'",
			  o.symbol, o.input, o.input);
		goto out;
	} else if (err) {
		cli_error("cannot annotate '%s': %s", o.symbol, why ? why : strerror(-err));
		goto out;
	}
	/* the function found, by its own name: a query ns::twice matches ns::twice(int), which the
	 * header showed as the query when the mangled name gave the full one */
	struct sym_info si = { 0 };
	const char *found = o.symbol;
	if (symbols_lookup_name(sym, spent_profile_image_get(p, a->image), a->start, &si) == 0 &&
	    si.name && si.exact && si.start == a->start)
		found = si.name;
	found = demangle_name(found, shown, sizeof(shown));
	if (o.json)
		print_json(p, a, evs, found);
	else
		print_text(p, a, evs, found);
	rc = skipped ? 1 : 0;
out:
	annotate_free(a);
	symbols_free(sym);
	spent_profile_free(p);
	free(o.events);
	opt_string_list_release(&o.event_lists);
	profile_selection_release(&o.sel);
	return rc;
}
