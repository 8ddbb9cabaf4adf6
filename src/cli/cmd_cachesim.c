/* cli/cmd_cachesim.c - `spent cachesim`: cache hierarchy simulation of a trace, per-cache miss
 * counts, pin traffic by kind (bytes/instruction, GB/s at 1 CPI) over chunks of instructions,
 * and with --cores the lines invalidated between cores, false sharing named by variable.
 * Several configurations (--config repeated, --sweep) are simulated in one pass over the log:
 * the reconstruction, which costs most, is done once. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/cachesim.h"
#include "analysis/symtab.h"
#include "cli/cli.h"
#include "cli/parse_options.h"
#include "core/outfile.h"
#include "cli/studies_util.h"
#include "core/alloc.h"
#include "core/binio.h"
#include "core/json.h"
#include "plot/plot.h"

#define MAX_CONFIGS 64

struct cachesim_opts {
	const char *trace, *svg;
	struct opt_string_list configs, sweeps;
	const char *geometry[3];	/* cachegrind's --I1, --D1, --LL: SIZE,ASSOC,LINE */
	double clock_mhz;
	long chunk, cores, jobs;
	int json;
};

/* one configuration simulated: its caches, the name it is reported under, its chart */
struct sim {
	struct cachesim_config cfg;
	char label[256];
	char svg[4096];
	struct cachesim *cs;
};

/* The symbols that name a process's shared lines: one table per process tag (its addresses'
 * bits 48-63, image loads' too), made afresh when the pid execs, so each process of a tree
 * names its lines by its own images (its last program's) and not by whichever process mapped
 * something at that address first (a shell's PLT named the lines of the program it ran). The
 * entry outlives the exec (the tag is the pid's): it also says which pid a tagged line is of. */
struct line_names {
	uint64_t tag;
	uint32_t pid;
	struct symtab *st;	/* NULL from an exec to the new program's first image */
};

struct run_ctx {
	struct sim *sims;
	struct cachesim *css[MAX_CONFIGS];	/* sims[i].cs, for cachesim_feed_group */
	size_t n;
	struct cachesim_parallel *par;	/* feeds css[], the data walks on threads */
	bool want_names;	/* a configuration has --cores: its shared lines get names */
	struct line_names *names;
	size_t n_names, cap_names;
};

/* TAG's entry; made for PID when there is none and PID is not 0. NULL when none (or ENOMEM). */
static struct line_names *names_for_tag(struct run_ctx *r, uint64_t tag, uint32_t pid)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (r->names[i].tag == tag)
			return &r->names[i];
	if (!pid || ALLOC_GROW(r->names, r->n_names + 1, r->cap_names))
		return NULL;
	struct line_names *n = &r->names[r->n_names++];
	n->tag = tag;
	n->pid = pid;
	n->st = NULL;
	return n;
}

static void names_event(struct run_ctx *r, const struct spent_trace_event *ev)
{
	if (ev->kind == SPENT_TRACE_EV_PROCESS_START && !ev->u.process.forked) {
		for (size_t i = 0; i < r->n_names; i++)	/* an exec: the pid's images are new */
			if (r->names[i].pid == ev->pid) {
				symtab_free(r->names[i].st);
				r->names[i].st = NULL;
			}
	} else if (ev->kind == SPENT_TRACE_EV_IMAGE_LOAD && ev->u.image.path) {
		uint64_t tag = ev->u.image.start - spent_trace_select_untag(ev->u.image.start);
		struct line_names *n = names_for_tag(r, tag, ev->pid ? ev->pid : 1);
		if (n && !n->st)
			n->st = symtab_new();
		if (n && n->st)
			(void)symtab_add_image(n->st, ev->u.image.path, ev->u.image.base);
	}
}

static int feed(void *ctx, const struct spent_trace_batch *b)
{
	struct run_ctx *r = ctx;
	for (size_t i = 0; r->want_names && i < b->n_events; i++)
		names_event(r, &b->events[i]);
	return cachesim_parallel_feed(r->par, b);
}

/* --jobs' default: the CPUs this process may run on */
static long cpus_usable(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

static const char *const cachesim_usage[] = {
	"spent cachesim TRACE [--config alpha21064|alpha21164|cachegrind|host|FILE]... "
	"[--sweep CACHE.KEY=V1,V2,...]... [OPTIONS]",
	NULL,
};
static const struct parse_usage cachesim_u = {
	"cachesim", cachesim_usage,
	"cache hierarchy simulation on a trace: pin bandwidth over time",
	"Simulates the caches of --config on every instruction fetch and data reference of a "
	"`spent trace` log: per-cache accesses and misses, the traffic below the last level by "
	"kind, and with --svg the bandwidth over chunks of instructions. Every --config and every "
	"combination of --sweep values (applied to each --config) is simulated in the same pass "
	"over the log, each reported in its own section (and chart: FILE-1.svg, FILE-2.svg, ...).",
};

static int parse_opts(int argc, char **argv, struct cachesim_opts *o)
{
	long mhz = 0;
	struct option opts[] = {
		{ .type = OPTION_STRING_LIST, .long_name = "config", .value = &o->configs,
		  .argh = "NAME|FILE", .defval = "cachegrind",
		  .help = "alpha21064, alpha21164, cachegrind, host or a configuration file "
			  "(repeatable: all simulated in one pass)" },
		OPT_STRING(0, "I1", &o->geometry[0], "SIZE,ASSOC,LINE",
			   "the I1 cache of every --config, as cachegrind's --I1 (bytes: 32768,8,64)"),
		OPT_STRING(0, "D1", &o->geometry[1], "SIZE,ASSOC,LINE",
			   "the D1 cache of every --config, as cachegrind's --D1"),
		OPT_STRING(0, "LL", &o->geometry[2], "SIZE,ASSOC,LINE",
			   "the last-level cache of every --config, as cachegrind's --LL"),
		OPT_STRING_LIST(0, "sweep", &o->sweeps, "CACHE.KEY=V1,V2,...",
				"one configuration per value of a cache's key, e.g. D1.size=16K,32K "
				"(repeatable: every combination)"),
		{ .type = OPTION_INT, .long_name = "clock-mhz", .value = &mhz, .argh = "N",
		  .help = "clock for the GB/s columns", .defval = "the config's", .min = 1,
		  .max = 1000000 },
		{ .type = OPTION_INT, .long_name = "chunk", .value = &o->chunk, .argh = "N",
		  .help = "instructions per bandwidth chunk (doubled while the series has 16384)",
		  .defval = "the config's", .min = 1, .max = 1L << 40 },
		{ .type = OPTION_INT, .long_name = "cores", .value = &o->cores, .argh = "N",
		  .help = "simulate N cores with coherence (threads spread over them)",
		  .defval = "1", .min = 1, .max = CACHESIM_MAX_CORES },
		{ .type = OPTION_INT, .short_name = 'j', .long_name = "jobs", .value = &o->jobs,
		  .argh = "N", .help = "threads simulating the configurations (results are the same "
		  "for any N)", .defval = "the CPUs usable", .min = 1, .max = 1024 },
		OPT_STRING(0, "svg", &o->svg, "FILE", "write the bandwidth chart"),
		OPT_BOOL(0, "json", &o->json, "one JSON object per line"),
		STUDIES_FILTER_OPTIONS,
		OPT_END(),
	};
	int rc = studies_parse(argc, argv, opts, &cachesim_u, &o->trace);
	if (rc)
		return rc;
	o->clock_mhz = (double)mhz;
	return 0;
}

static int load_config(const char *config, struct cachesim_config *cfg)
{
	char err[512] = "";
	int rc = cachesim_config_preset(config, cfg, err, sizeof(err));
	if (rc == -ENOENT && strcmp(config, "host")) {
		uint8_t *text = NULL;
		size_t len = 0;
		rc = binio_read_file(config, 1 << 20, &text, &len);
		if (rc) {
			cli_error("cachesim: '%s' is neither alpha21064, alpha21164, cachegrind, host "
				  "nor a readable configuration file: %s", config, strerror(-rc));
			return -1;
		}
		char *s = malloc(len + 1);
		if (s) {
			memcpy(s, text, len);
			s[len] = 0;
			rc = cachesim_config_parse(s, cfg, err, sizeof(err));
		} else {
			rc = -ENOMEM;
		}
		free(s);
		free(text);
	}
	if (rc) {
		cli_error("cachesim: bad cache configuration '%s': %s", config,
			  err[0] ? err : strerror(-rc));
		return -1;
	}
	return 0;
}

/* cachegrind's --D1=32768,8,64 (size, associativity, line size) on cache NAME of every one of
 * the N configurations, before the sweeps (which may then vary it) */
static int apply_geometry(const char *name, const char *spec, struct sim *sims, size_t n)
{
	static const char *const keys[3] = { "size", "assoc", "line" };
	char buf[256], err[512] = "";
	snprintf(buf, sizeof(buf), "%s", spec);
	char *c1 = strchr(buf, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (!c1 || !c2 || strchr(c2 + 1, ',') || c1 == buf || c2 == c1 + 1 || !c2[1]) {
		cli_error("cachesim: bad --%s '%s': give SIZE,ASSOC,LINE in bytes, as cachegrind "
			  "takes them (e.g. --%s=32768,8,64)", name, spec, name);
		return -1;
	}
	*c1 = *c2 = 0;
	const char *vals[3] = { buf, c1 + 1, c2 + 1 };
	for (size_t i = 0; i < n; i++) {
		if (cachesim_config_set_keys(&sims[i].cfg, name, keys, vals, 3, err, sizeof(err))) {
			cli_error("cachesim: --%s=%s: %s", name, spec, err);
			return -1;
		}
		size_t l = strlen(sims[i].label);
		snprintf(sims[i].label + l, sizeof(sims[i].label) - l, " %s=%s", name, spec);
	}
	return 0;
}

/* "D1.size=16K,32K": every configuration so far, once per value (in *N, at most MAX_CONFIGS) */
static int apply_sweep(const char *spec, struct sim *sims, size_t *n)
{
	char buf[512], err[512] = "";
	snprintf(buf, sizeof(buf), "%s", spec);
	char *dot = strchr(buf, '.'), *eq = dot ? strchr(dot, '=') : NULL;
	size_t nv = 1;
	for (const char *c = eq ? eq : ""; *c; c++)
		nv += *c == ',';
	if (!dot || !eq || dot == buf || eq == dot + 1 || !eq[1]) {
		cli_error("cachesim: bad --sweep '%s': expected CACHE.KEY=V1,V2,... such as "
			  "D1.size=16K,32K,64K", spec);
		return -1;
	}
	if (*n * nv > MAX_CONFIGS) {
		cli_error("cachesim: --sweep '%s' makes %zu configurations: at most %d", spec,
			  *n * nv, MAX_CONFIGS);
		return -1;
	}
	*dot = *eq = 0;
	const char *cache = buf, *key = dot + 1;
	char *save = NULL;
	size_t j = 0;
	/* new[i * nv + j] is old[i] with value j: filled from the end, so old[i] is read before
	 * it is overwritten */
	const char *vals[MAX_CONFIGS];
	for (char *v = strtok_r(eq + 1, ",", &save); v; v = strtok_r(NULL, ",", &save))
		vals[j++] = v;
	if (j != nv) {
		cli_error("cachesim: bad --sweep '%s': an empty value", spec);
		return -1;
	}
	for (size_t i = *n; i-- > 0;)
		for (size_t k = nv; k-- > 0;) {
			struct sim *d = &sims[i * nv + k];
			if (d != &sims[i])
				*d = sims[i];
			if (cachesim_config_set(&d->cfg, cache, key, vals[k], err, sizeof(err))) {
				cli_error("cachesim: --sweep '%s': %s", spec, err);
				return -1;
			}
			size_t l = strlen(d->label);
			snprintf(d->label + l, sizeof(d->label) - l, " %s.%s=%s", cache, key, vals[k]);
		}
	*n *= nv;
	return 0;
}

/* The configurations to simulate: each --config, times each --sweep; the options that apply
 * to all; and each one's chart path (FILE-1.svg, FILE-2.svg, ... when there are several). */
static int load_configs(const struct cachesim_opts *o, struct sim *sims, size_t *n)
{
	static const char *const dflt[] = { "cachegrind" };
	const char *const *names = o->configs.n ? o->configs.items : dflt;
	size_t nc = o->configs.n ? (size_t)o->configs.n : 1;
	if (nc > MAX_CONFIGS) {
		cli_error("cachesim: at most %d configurations", MAX_CONFIGS);
		return -1;
	}
	*n = nc;
	for (size_t i = 0; i < nc; i++) {
		if (load_config(names[i], &sims[i].cfg))
			return -1;
		snprintf(sims[i].label, sizeof(sims[i].label), "%s", names[i]);
	}
	static const char *const geometry_names[3] = { "I1", "D1", "LL" };
	for (size_t g = 0; g < 3; g++)
		if (o->geometry[g] && apply_geometry(geometry_names[g], o->geometry[g], sims, *n))
			return -1;
	for (int k = 0; k < o->sweeps.n; k++) {
		/* a key swept twice: the last would win in every combination, labelled with both */
		const char *a = o->sweeps.items[k];
		size_t ka = strcspn(a, "=");
		for (int m = 0; m < k; m++)
			if (strcspn(o->sweeps.items[m], "=") == ka && !strncmp(o->sweeps.items[m], a, ka)) {
				cli_error("cachesim: --sweep %.*s is given twice: one --sweep per key, "
					  "with every value", (int)ka, a);
				return -1;
			}
		if (apply_sweep(a, sims, n))
			return -1;
	}
	for (size_t i = 0; i < *n; i++) {
		struct cachesim_config *cfg = &sims[i].cfg;
		if (o->clock_mhz > 0)
			cfg->clock_mhz = o->clock_mhz;
		if (o->chunk > 0)
			cfg->chunk = (uint64_t)o->chunk;
		cfg->cores = (uint32_t)o->cores;
		if (!o->svg) {
			cfg->chunk = 0;	/* the series is only drawn */
			continue;
		}
		size_t len = strlen(o->svg);
		int ext = len > 4 && !strcmp(o->svg + len - 4, ".svg");
		if (*n == 1)
			snprintf(sims[i].svg, sizeof(sims[i].svg), "%s", o->svg);
		else
			snprintf(sims[i].svg, sizeof(sims[i].svg), "%.*s-%zu%s",
				 (int)(len - (ext ? 4 : 0)), o->svg, i + 1, ext ? ".svg" : "");
		if (cli_check_output_from(sims[i].svg, o->trace))
			return -1;
	}
	return 0;
}

/* "counters" or "a, b" (the variables written on the line) */
static void line_symbol(struct run_ctx *r, const struct cache_shared_line *l, char *buf, size_t len)
{
	/* addresses carry the process tag (studies_filter.tag), as its symbols do */
	uint64_t tag = l->first_write[0] - spent_trace_select_untag(l->first_write[0]);
	const struct line_names *n = names_for_tag(r, tag, 0);
	struct symtab *syms = n ? n->st : NULL;
	const struct symtab_sym *a = syms ? symtab_lookup(syms, l->first_write[0]) : NULL;
	const struct symtab_sym *b = syms ? symtab_lookup(syms, l->first_write[1]) : NULL;
	if (!a && !b)
		snprintf(buf, len, "?");
	else if (!a || !b || a == b || !strcmp(a->name, b->name))
		snprintf(buf, len, "%s", (a ? a : b)->name);
	else
		snprintf(buf, len, "%s, %s", a->name, b->name);
}

/* the "config" key first in every JSON object, when several configurations share the output */
static void json_config(struct json_writer *w, const char *label)
{
	if (label)
		json_kstr(w, "config", label);
}

/* The pid a tagged line belongs to (0: unknown) */
static uint32_t line_pid(struct run_ctx *r, uint64_t line)
{
	const struct line_names *n = names_for_tag(r, line - spent_trace_select_untag(line), 0);
	return n ? n->pid : 0;
}

/* Lines are shown without their process tag (bits 48-63: no address a user knows), and when
 * more than one process took part, with the pid whose line it is. */
static void print_shared(struct cachesim *cs, struct run_ctx *r, int json, const char *label)
{
	struct cache_shared_line *v = NULL;
	size_t n = 0;
	if (cachesim_shared_lines(cs, &v, &n))
		return;
	bool tree = r->n_names > 1;
	if (!json)
		printf("\ncoherence: %zu lines invalidated between cores\n%-18s %s%12s %12s %8s  %-6s %s\n",
		       n, "line", tree ? "     pid " : "", "invalidated", "coh.misses", "writers", "false",
		       "variable");
	for (size_t i = 0; i < n && (json || i < 20); i++) {
		char sym[256];
		line_symbol(r, &v[i], sym, sizeof(sym));
		uint64_t line = spent_trace_select_untag(v[i].line);
		uint32_t pid = line_pid(r, v[i].line);
		if (json) {
			struct json_writer w;
			json_init(&w, stdout);
			json_object_begin(&w);
			json_config(&w, label);
			json_khex(&w, "shared_line", line);
			if (pid)
				json_ku64(&w, "pid", pid);
			json_kstr(&w, "symbol", sym);
			json_ku64(&w, "invalidations", v[i].invalidations);
			json_ku64(&w, "coherence_misses", v[i].coherence_misses);
			json_ku64(&w, "writers", v[i].writers);
			json_kbool(&w, "false_sharing", v[i].false_sharing);
			json_object_end(&w);
			json_newline(&w);
		} else {
			char who[16] = "";
			if (tree)
				snprintf(who, sizeof(who), "%8u ", pid);
			printf("0x%-16llx %s%12llu %12llu %8u  %-6s %s\n", (unsigned long long)line, who,
			       (unsigned long long)v[i].invalidations,
			       (unsigned long long)v[i].coherence_misses, v[i].writers,
			       v[i].false_sharing ? "yes" : "no", sym);
		}
	}
	free(v);
}

static void print_report(const struct sim *sm, const struct cachesim_opts *o, const char *label)
{
	struct cachesim *cs = sm->cs;
	const struct cachesim_config *cfg = cachesim_config(cs);
	uint64_t insns = cachesim_instructions(cs);
	double hz = cfg->clock_mhz * 1e6;
	struct json_writer w;
	json_init(&w, stdout);
	if (!o->json)
		printf("cache simulation of '%s': config %s, %llu instructions, %.0f MHz, %u core%s\n\n"
		       "%-6s %14s %14s %8s\n", o->trace, sm->label, (unsigned long long)insns,
		       cfg->clock_mhz, cfg->cores > 1 ? cfg->cores : 1, cfg->cores > 1 ? "s" : "",
		       "cache", "accesses", "misses", "miss%");
	for (uint32_t i = 0; i < cfg->n_levels; i++) {
		struct cache_stats s;
		cachesim_stats(cs, i, &s);
		double ratio = s.accesses ? (double)s.misses / (double)s.accesses : 0;
		if (o->json) {
			json_object_begin(&w);
			json_config(&w, label);
			json_kstr(&w, "cache", cfg->levels[i].name);
			json_ku64(&w, "accesses", s.accesses);
			json_ku64(&w, "misses", s.misses);
			json_kdouble(&w, "miss_ratio", ratio, 6);
			json_ku64(&w, "read_misses", s.read_misses);
			json_ku64(&w, "write_misses", s.write_misses);
			json_ku64(&w, "ifetch_misses", s.ifetch_misses);
			json_ku64(&w, "writebacks", s.writebacks);
			json_ku64(&w, "invalidations", s.invalidations);
			json_object_end(&w);
			json_newline(&w);
		} else
			printf("%-6s %14llu %14llu %7.3f%%\n", cfg->levels[i].name,
			       (unsigned long long)s.accesses, (unsigned long long)s.misses, 100 * ratio);
	}
	if (!o->json)
		printf("\npin traffic below the last level (at 1 CPI, %.0f MHz)\n%-16s %14s %12s %10s\n",
		       cfg->clock_mhz, "kind", "bytes", "bytes/insn", "GB/s");
	uint64_t total = 0;
	for (int k = 0; k <= TRAFFIC_NKINDS; k++) {
		uint64_t bytes = k < TRAFFIC_NKINDS ? cachesim_traffic(cs, k) : total;
		const char *name = k < TRAFFIC_NKINDS ? cache_traffic_names[k] : "total";
		total += k < TRAFFIC_NKINDS ? bytes : 0;
		double bpi = insns ? (double)bytes / (double)insns : 0;
		if (o->json) {
			json_object_begin(&w);
			json_config(&w, label);
			json_kstr(&w, "traffic", name);
			json_ku64(&w, "bytes", bytes);
			json_kdouble(&w, "bytes_per_insn", bpi, 6);
			json_kdouble(&w, "gbps", bpi * hz / 1e9, 6);
			json_object_end(&w);
			json_newline(&w);
		} else
			printf("%-16s %14llu %12.4f %10.4f\n", name, (unsigned long long)bytes, bpi,
			       bpi * hz / 1e9);
	}
}

static int write_svg(const struct sim *sm)
{
	struct cachesim *cs = sm->cs;
	const struct cachesim_config *cfg = cachesim_config(cs);
	size_t n = cachesim_n_chunks(cs);
	static const char *colors[TRAFFIC_NKINDS] = { "#3b6fd1", "#d13b3b", "#e8a23a",
						      "#7a3bd1", "#3bb06a", "#9ad1a9" };
	double *y = calloc(n * TRAFFIC_NKINDS + 1, sizeof(double));
	if (!y)
		return -ENOMEM;
	struct plot_series series[TRAFFIC_NKINDS];
	for (int k = 0; k < TRAFFIC_NKINDS; k++) {
		for (size_t c = 0; c < n; c++) {
			uint64_t ni = cachesim_chunk_instructions(cs, c);
			double bpi = ni ? (double)cachesim_chunk_traffic(cs, c, k) / (double)ni : 0;
			y[k * n + c] = bpi * cfg->clock_mhz * 1e6 / 1e9;
		}
		series[k] = (struct plot_series){ cache_traffic_names[k], &y[k * n], colors[k] };
	}
	char title[320], xl[128];
	snprintf(title, sizeof(title), "Pin bandwidth at 1 CPI: %s, %.0f MHz", sm->label,
		 cfg->clock_mhz);
	snprintf(xl, sizeof(xl), "instructions (chunks of %llu)", (unsigned long long)cfg->chunk);
	struct plot_chart ch = { .title = title, .xlabel = xl, .ylabel = "GB/s",
				 .x_step = (double)cfg->chunk, .n = n, .series = series,
				 .n_series = TRAFFIC_NKINDS, .ylog = 1 };
	int err = plot_stacked_bars(sm->svg, &ch);
	free(y);
	return err;
}

int cmd_cachesim(int argc, char **argv)
{
	struct cachesim_opts o = { 0 };
	struct run_ctx r = { 0 };
	int ret = 2;
	char err[512] = "";
	int prc = parse_opts(argc, argv, &o);
	if (prc == PARSE_OPT_HELP)
		return 0;
	if (prc)
		goto out;
	if (!(r.sims = calloc(MAX_CONFIGS, sizeof(*r.sims)))) {
		cli_error("cachesim: out of memory");
		goto out;
	}
	if (load_configs(&o, r.sims, &r.n))
		goto out;
	for (size_t i = 0; i < r.n; i++)
		if (cachesim_new(&r.sims[i].cfg, &r.sims[i].cs, err, sizeof(err))) {
			cli_error("cachesim: cannot build the caches of %s: %s", r.sims[i].label, err);
			goto out;
		} else {
			r.css[i] = r.sims[i].cs;
			r.want_names |= r.sims[i].cfg.cores > 1;
		}
	char cut[640];
	ret = 1;
	int rc = cachesim_parallel_new(r.css, r.n, (unsigned)(o.jobs ? o.jobs : cpus_usable()), 0, &r.par);
	if (rc) {
		cli_error("cachesim: cannot start the simulation threads: %s", strerror(-rc));
		goto out;
	}
	studies_filter.tag = 1;	/* processes' equal addresses are different memory */
	studies_filter.execs = cachesim_group_reads_execs(r.css, r.n);
	if (studies_run("cachesim", o.trace, feed, &r, cut, sizeof(cut)))
		goto out;
	if ((rc = cachesim_parallel_drain(r.par))) {
		cli_error("cachesim: simulating the configurations: %s", strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < r.n; i++) {
		struct sim *sm = &r.sims[i];
		const char *label = r.n > 1 ? sm->label : NULL;
		cachesim_finish(sm->cs);
		if (i && !o.json)
			printf("\n\n");
		print_report(sm, &o, label);
		if (sm->cfg.cores > 1)
			print_shared(sm->cs, &r, o.json, label);
		fflush(stdout);
		rc = sm->svg[0] ? write_svg(sm) : 0;
		if (rc) {
			cli_error("cachesim: cannot write '%s': %s", sm->svg, outfile_strerror(rc));
			goto out;
		}
	}
	ret = studies_done(cut);
out:
	cachesim_parallel_free(r.par);
	for (size_t i = 0; i < r.n_names; i++)
		symtab_free(r.names[i].st);
	free(r.names);
	for (size_t i = 0; r.sims && i < r.n; i++)
		cachesim_free(r.sims[i].cs);
	free(r.sims);
	opt_string_list_release(&o.configs);
	opt_string_list_release(&o.sweeps);
	return ret;
}
