/* bench/studies_speed.c - sink-only speed of the cache simulator and the exact hit curve: the
 * trace is first read into memory (so reconstruction is not timed), then replayed through
 * each sink. Prints simulated references (fetches + data references) per second. */
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

int main(int argc, char **argv)
{
	char err[256];
	struct trace_source *src;
	if (argc < 2 || trace_source_open(argv[1], &src, err, sizeof(err))) {
		fprintf(stderr, "usage: studies_speed LOG\n");
		return 2;
	}
	struct memtrace *t = memtrace_new();
	struct trace_batch b;
	int rc;
	while ((rc = trace_source_next(src, &b)) > 0)
		for (size_t i = 0; i < b.n_insns; i++) {
			const struct trace_insn *in = &b.insns[i];
			memtrace_insn(t, in->tid, in->pc, in->len, in->flags);
			for (uint32_t k = 0; k < in->nrefs; k++)
				memtrace_ref(t, b.refs[in->ref0 + k].addr, b.refs[in->ref0 + k].size,
					     b.refs[in->ref0 + k].kind);
		}
	if (rc < 0) {
		fprintf(stderr, "studies_speed: reading '%s' failed: %s\n", argv[1],
			trace_source_error(src));
		return 1;
	}
	trace_source_free(src);
	double refs = (double)(t->n_insns + t->n_refs);

	struct cachesim_config cfg;
	struct cachesim *cs;
	cachesim_config_preset("cachegrind", &cfg, err, sizeof(err));
	cachesim_new(&cfg, &cs, err, sizeof(err));
	memtrace_source_new(t, 65536, &src);
	double t0 = now();
	while (trace_source_next(src, &b) > 0)
		cachesim_feed(cs, &b);
	cachesim_finish(cs);
	double t1 = now();
	trace_source_free(src);
	cachesim_free(cs);

	struct hitcurve_config hcfg = { 64, 1024, 16 << 20 };
	struct hitcurve *hc;
	hitcurve_new(&hcfg, &hc);
	memtrace_source_new(t, 65536, &src);
	double t2 = now();
	while (trace_source_next(src, &b) > 0)
		hitcurve_feed(hc, &b);
	double t3 = now();
	trace_source_free(src);
	hitcurve_free(hc);
	printf("refs %.0f\ncachesim_refs_per_s %.0f\nhitcurve_refs_per_s %.0f\n", refs,
	       refs / (t1 - t0), refs / (t3 - t2));
	memtrace_free(t);
	return 0;
}
