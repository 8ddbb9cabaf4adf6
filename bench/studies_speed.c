/* bench/studies_speed.c - speed of the cache simulator and the exact hit curve as sinks, with
 * the cost of the trace source separated out. The log is read once into memory; then, each
 * best of REPS runs in CPU time (a shared machine slows single runs by tens of percent):
 *   reconstruct   the log's source (decode + reconstruction) into a sink that reads every field
 *   null          the in-memory replay into that same reading sink: the floor any sink pays
 *   cachesim      the in-memory replay into a fresh simulator (the cachegrind configuration)
 *   hitcurve      the in-memory replay into a fresh exact hit curve (1K..16M, 64 B lines)
 *   e2e_cachesim  the log's source into a fresh simulator (what `spent cachesim` does)
 * Prints "name seconds" lines and "refs N" (instruction fetches + data references). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "analysis/cachesim.h"
#include "analysis/hitcurve.h"
#include "trace/memsource.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads what a cache sink needs of every instruction and reference; the sum keeps the reads. */
static uint64_t null_feed(const struct spent_trace_batch *b)
{
	uint64_t s = 0;
	for (size_t i = 0; i < b->n_insns; i++) {
		const struct spent_trace_insn *in = &b->insns[i];
		s += in->pc + in->len;
		for (uint32_t k = 0; k < in->nrefs; k++)
			s += b->refs[in->ref0 + k].addr + b->refs[in->ref0 + k].size +
			     b->refs[in->ref0 + k].kind;
	}
	return s;
}

enum sink { NULL_SINK, CACHESIM, HITCURVE };
static volatile uint64_t keep;

/* One run of SRC into a fresh sink of kind K; CPU seconds, or -1 on error. */
static double run(struct spent_trace_source *src, enum sink k)
{
	char err[256];
	struct cachesim_config cfg;
	struct cachesim *cs = NULL;
	struct hitcurve *hc = NULL;
	struct hitcurve_config hcfg = { 64, 1024, 16 << 20 };
	if (k == CACHESIM && (cachesim_config_preset("cachegrind", &cfg, err, sizeof(err)) ||
			      cachesim_new(&cfg, &cs, err, sizeof(err))))
		return -1;
	if (k == HITCURVE && hitcurve_new(&hcfg, &hc))
		return -1;
	struct spent_trace_batch b;
	int rc;
	uint64_t s = 0;
	double t0 = now();
	while ((rc = spent_trace_source_next(src, &b)) > 0) {
		if (k == NULL_SINK)
			s += null_feed(&b);
		else if (k == CACHESIM)
			cachesim_feed(cs, &b);
		else
			hitcurve_feed(hc, &b);
	}
	if (cs)
		cachesim_finish(cs);
	double t = now() - t0;
	keep += s;
	cachesim_free(cs);
	hitcurve_free(hc);
	return rc < 0 ? -1 : t;
}

/* One run; LOG non-NULL reads the log, else replays T from memory. */
static double one(const char *log, const struct memtrace *t, enum sink k)
{
	char err[256];
	struct spent_trace_source *src;
	if (log ? spent_trace_source_open(log, &src, err, sizeof(err)) : memtrace_source_new(t, 65536, &src))
		return -1;
	double s = run(src, k);
	spent_trace_source_free(src);
	return s;
}

int main(int argc, char **argv)
{
	char err[256];
	struct spent_trace_source *src;
	if (argc < 2 || spent_trace_source_open(argv[1], &src, err, sizeof(err))) {
		fprintf(stderr, "usage: studies_speed LOG [REPS]\n");
		return 2;
	}
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	struct memtrace *t = memtrace_new();
	struct spent_trace_batch b;
	int rc;
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		for (size_t i = 0; i < b.n_insns; i++) {
			const struct spent_trace_insn *in = &b.insns[i];
			memtrace_insn(t, in->tid, in->pc, in->len, in->flags);
			for (uint32_t k = 0; k < in->nrefs; k++)
				memtrace_ref(t, b.refs[in->ref0 + k].addr, b.refs[in->ref0 + k].size,
					     b.refs[in->ref0 + k].kind);
		}
	if (rc < 0) {
		fprintf(stderr, "studies_speed: reading '%s' failed: %s\n", argv[1],
			spent_trace_source_error(src));
		return 1;
	}
	spent_trace_source_free(src);
	printf("refs %zu\n", t->n_insns + t->n_refs);
	/* alternated, so a burst of load on the machine hits all of them alike */
	static const struct { const char *name; int from_log; enum sink k; } runs[] = {
		{ "reconstruct", 1, NULL_SINK }, { "null", 0, NULL_SINK }, { "cachesim", 0, CACHESIM },
		{ "hitcurve", 0, HITCURVE }, { "e2e_cachesim", 1, CACHESIM },
	};
	double m[5] = { -1, -1, -1, -1, -1 };
	for (int round = 0; round < reps; round++)
		for (int i = 0; i < 5; i++) {
			double x = one(runs[i].from_log ? argv[1] : NULL, t, runs[i].k);
			if (x < 0) {
				fprintf(stderr, "studies_speed: a %s run failed\n", runs[i].name);
				return 1;
			}
			if (m[i] < 0 || x < m[i])
				m[i] = x;
		}
	for (int i = 0; i < 5; i++)
		printf("%s %.6f\n", runs[i].name, m[i]);
	memtrace_free(t);
	return 0;
}
