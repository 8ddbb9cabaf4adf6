/* cli/report_chains.c - `spent report -g` (see report_chains.h): what perf's -g argument
 * means here and how each function's call chains are shown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report_chains.h"
#include "core/text.h"

int report_chains_parse(const char *arg, struct chain_view *cv)
{
	char buf[128];
	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	*cv = (struct chain_view){ .on = true, .min_pct = 0.5 };
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(t, &end);
		if (!strcmp(t, "caller") || !strcmp(t, "callee"))
			cv->callee = !strcmp(t, "callee");
		else if (!strcmp(t, "none"))
			cv->on = false;
		else if (strcmp(t, "graph") && strcmp(t, "flat") && strcmp(t, "folded") &&
			 (end == t || *end || v < 0 || v > 100))
			return -EINVAL;	/* perf's function, address, branch, a print limit... */
		else if (end != t && !*end)
			cv->min_pct = v;
	}
	return 0;
}

bool report_chains_is_arg(const char *word)
{
	static const char *const words[] = { "caller", "callee", "graph", "flat", "folded", "none" };
	size_t len = strcspn(word, ",");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (len == strlen(words[i]) && !strncmp(word, words[i], len))
			return true;
	return len && strspn(word, "0123456789.") >= len;
}

static bool chain_shown(const struct report *r, const struct chain_view *cv, const struct report_chain *c)
{
	return cli_pct(c->count, r->totals[0]) >= cv->min_pct;
}

/* Frame K of chain CH in the order shown */
static const char *chain_frame(const struct report *r, const struct chain_view *cv,
			       const struct report_chain *ch, uint32_t k)
{
	return r->rows[ch->rows[cv->callee ? k : ch->n - 1 - k]].symbol;
}

/* A row's chains add up to its percent, less those under the threshold: the largest come first,
 * so the first one under it ends the list. */
void report_chains_print(const struct report *r, const struct report_row *row, const struct chain_view *cv)
{
	char shown[TEXT_SHOWN_MAX];
	for (size_t c = row->chain0; c < row->chain0 + row->nchains; c++) {
		const struct report_chain *ch = &r->chains[c];
		if (!chain_shown(r, cv, ch))
			break;
		printf("%21s%7.2f%%  ", "", cli_pct(ch->count, r->totals[0]));
		for (uint32_t k = 0; k < ch->n; k++)
			printf("%s%s", k ? (cv->callee ? " <- " : " -> ") : "",
			       text_for_terminal(chain_frame(r, cv, ch, k), shown, sizeof(shown)));
		printf("\n");
	}
}

void report_chains_json(struct json_writer *w, const struct report *r, const struct report_row *row,
			const struct chain_view *cv)
{
	json_key(w, "call_chains");
	json_array_begin(w);
	for (size_t c = row->chain0; c < row->chain0 + row->nchains; c++) {
		const struct report_chain *ch = &r->chains[c];
		if (!chain_shown(r, cv, ch))
			break;
		json_object_begin(w);
		json_ku64(w, "samples", ch->count);
		json_kdouble(w, "percent", cli_pct(ch->count, r->totals[0]), 4);
		json_key(w, "stack");
		json_array_begin(w);
		for (uint32_t k = 0; k < ch->n; k++)
			json_str(w, chain_frame(r, cv, ch, k));
		json_array_end(w);
		json_object_end(w);
	}
	json_array_end(w);
}
