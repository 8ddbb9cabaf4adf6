/* cli/cmd_locks.c - `spent locks`: per-lock table (acquisitions, hold and spin time in
 * instructions, contention, convoys, holders and waiters) and the per-thread hold/spin timeline
 * (the PatchWrx paper's lock-activity chart, its Figure 16) as SVG. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/locks.h"
#include "cli/cli.h"
#include "core/outfile.h"
#include "cli/studies_util.h"
#include "core/json.h"
#include "plot/plot.h"

struct locks_opts {
	const char *trace, *svg;
	long groups;
	int json;
};

static int feed(void *ctx, const struct trace_batch *b)
{
	return locks_feed(ctx, b);
}

static int parse_opts(int argc, char **argv, struct locks_opts *o)
{
	static const struct option lopts[] = {
		{ "svg", required_argument, NULL, 's' },    { "json", no_argument, NULL, 'j' },
		{ "groups", required_argument, NULL, 'g' }, { NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (c == 's')
			o->svg = optarg;
		else if (c == 'j')
			o->json = 1;
		else if (c == 'g') {
			if (cli_parse_int_opt("--groups", optarg, 1, 64, &o->groups))
				return -1;
		} else {
			cli_error("locks: unknown option '%s': see 'spent help locks'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc - 1) {
		cli_error("locks: expected one trace argument: spent locks TRACE [--svg FILE] [--json]");
		return -1;
	}
	o->trace = argv[optind];
	return 0;
}

static const char *lock_name(struct symtab *syms, uint64_t addr, char *buf, size_t len)
{
	const struct symtab_sym *s = symtab_lookup(syms, addr);
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (s->addr == addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+%llu", s->name, (unsigned long long)(addr - s->addr));
	return buf;
}

static void json_tids(struct json_writer *w, const char *key, const uint32_t *t, uint32_t n)
{
	json_key(w, key);
	json_array_begin(w);
	for (uint32_t i = 0; i < n; i++)
		json_u64(w, t[i]);
	json_array_end(w);
}

static void print_table(struct locks *lk, struct symtab *syms, const struct locks_opts *o)
{
	size_t n;
	const struct lock_summary *t = locks_table(lk, &n);
	if (!o->json)
		printf("locks in '%s' (%llu instructions; times in instructions)\n"
		       "%-14s %-16s %-13s %8s %9s %7s %6s %11s %9s %10s  %-12s %s\n", o->trace,
		       (unsigned long long)locks_instructions(lk), "lock", "variable", "kind", "acquired",
		       "contended", "convoys", "futex", "total hold", "max hold", "spin", "holders",
		       "waiters");
	for (size_t i = 0; t && i < n; i++) {
		char name[128];
		lock_name(syms, t[i].addr, name, sizeof(name));
		if (o->json) {
			struct json_writer w;
			json_init(&w, stdout);
			json_object_begin(&w);
			json_khex(&w, "lock", t[i].addr);
			json_kstr(&w, "symbol", name);
			json_kstr(&w, "how", t[i].how);
			json_ku64(&w, "acquisitions", t[i].acquisitions);
			json_ku64(&w, "contended", t[i].contended);
			json_ku64(&w, "convoys", t[i].convoys);
			json_ku64(&w, "futex_waits", t[i].futex_waits);
			json_ku64(&w, "total_hold", t[i].total_hold);
			json_ku64(&w, "max_hold", t[i].max_hold);
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
		printf("0x%-12llx %-16s %-13s %8llu %9llu %7llu %6llu %11llu %9llu %10llu  %-12s %s\n",
		       (unsigned long long)t[i].addr, name, t[i].how,
		       (unsigned long long)t[i].acquisitions, (unsigned long long)t[i].contended,
		       (unsigned long long)t[i].convoys, (unsigned long long)t[i].futex_waits,
		       (unsigned long long)t[i].total_hold, (unsigned long long)t[i].max_hold,
		       (unsigned long long)t[i].spin, hold[0] ? hold : "-", wait[0] ? wait : "-");
	}
}

static const char *palette[] = { "#303030", "#8a8a8a", "#3b6fd1", "#d13b3b", "#3bb06a",
				 "#e8a23a", "#7a3bd1", "#2aa0a0" };

static size_t index_of(const uint64_t *v, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return n;
}

/* Time runs left to right, then top to bottom in GROUPS bands; one row per thread. */
static int write_svg(struct locks *lk, struct symtab *syms, const struct locks_opts *o)
{
	size_t n_th, n_iv, n_locks;
	const uint32_t *tids = locks_threads(lk, &n_th);
	const struct lock_interval *iv = locks_intervals(lk, &n_iv);
	const struct lock_summary *tab = locks_table(lk, &n_locks);
	uint64_t total = locks_instructions(lk) ? locks_instructions(lk) : 1;
	uint64_t groups = (uint64_t)o->groups, span = (total + groups - 1) / groups;
	const double x0 = 90, w = 900, row = 16, gap = 14;
	double gh = row * (double)(n_th ? n_th : 1) + gap;
	uint64_t top[8];
	size_t n_top = n_locks < 7 ? n_locks : 7;	/* colours for the most used locks */
	for (size_t i = 0; i < n_top; i++)
		top[i] = tab[i].addr;
	struct svg *s = svg_new(x0 + w + 200, 60 + gh * (double)groups + 20);
	if (!s)
		return -ENOMEM;
	svg_text(s, x0 + w / 2, 24, 15, "middle", "Lock holds (thick) and spins (thin) per thread");
	char lab[160], nm[128];
	for (uint64_t g = 0; g < groups; g++) {
		double gy = 40 + gh * (double)g;
		svg_rect(s, x0, gy, w, gh - gap, g % 2 ? "#eeeeee" : "#fafafa", NULL);
		snprintf(lab, sizeof(lab), "%llu", (unsigned long long)(g * span));
		svg_text(s, x0 - 40, gy + 10, 9, "end", lab);
		for (size_t t = 0; t < n_th; t++) {
			snprintf(lab, sizeof(lab), "tid %u", tids[t]);
			svg_text(s, x0 - 6, gy + row * (double)t + row / 2 + 3, 9, "end", lab);
		}
	}
	for (size_t i = 0; i < n_iv; i++) {
		size_t t;
		for (t = 0; t < n_th && tids[t] != iv[i].tid; t++)
			;
		size_t li = index_of(top, n_top, iv[i].lock);
		for (uint64_t a = iv[i].start; a < iv[i].end || a == iv[i].start;) {
			uint64_t g = a / span, gend = (g + 1) * span, b = iv[i].end < gend ? iv[i].end : gend;
			if (g >= groups)
				break;
			double gy = 40 + gh * (double)g + row * (double)t;
			double xa = x0 + w * (double)(a - g * span) / (double)span;
			double xb = x0 + w * (double)(b - g * span) / (double)span;
			snprintf(lab, sizeof(lab), "tid %u %s %s [%llu, %llu)", iv[i].tid,
				 iv[i].kind == LOCK_HOLD ? "holds" : "spins on",
				 lock_name(syms, iv[i].lock, nm, sizeof(nm)),
				 (unsigned long long)iv[i].start, (unsigned long long)iv[i].end);
			if (iv[i].kind == LOCK_HOLD)
				svg_rect(s, xa, gy + 3, xb - xa < 1 ? 1 : xb - xa, row - 6,
					 palette[li < n_top ? li : 7], lab);
			else
				svg_rect(s, xa, gy + row / 2 - 1, xb - xa < 1 ? 1 : xb - xa, 2, "#000000",
					 lab);
			if (b >= iv[i].end)
				break;
			a = b;
		}
	}
	for (size_t i = 0; i <= n_top; i++) {
		double ly = 50 + 18 * (double)i;
		if (i < n_top)
			snprintf(lab, sizeof(lab), "%s", lock_name(syms, top[i], nm, sizeof(nm)));
		else
			snprintf(lab, sizeof(lab), "spinning / waiting");
		svg_rect(s, x0 + w + 12, ly - 9, 12, i < n_top ? 12 : 2,
			 i < n_top ? palette[i] : "#000000", NULL);
		svg_text(s, x0 + w + 30, ly + 2, 11, "start", lab);
	}
	int err = svg_write(s, o->svg);
	svg_free(s);
	return err;
}

int cmd_locks(int argc, char **argv)
{
	struct locks_opts o = { .groups = 4 };
	if (parse_opts(argc, argv, &o) || (o.svg && cli_check_output(o.svg)))
		return 2;
	struct symtab *syms = symtab_new();
	struct locks *lk = NULL;
	int ret = 1;
	if (!syms || locks_new(syms, &lk)) {
		cli_error("locks: out of memory");
		goto out;
	}
	if (studies_run("locks", o.trace, feed, lk))
		goto out;
	locks_finish(lk);
	print_table(lk, syms, &o);
	if (o.svg) {
		int rc = write_svg(lk, syms, &o);
		if (rc) {
			cli_error("locks: cannot write '%s': %s", o.svg, outfile_strerror(rc));
			goto out;
		}
	}
	ret = 0;
out:
	locks_free(lk);
	symtab_free(syms);
	return ret;
}
