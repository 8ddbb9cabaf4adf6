/* collect/daemon_bpf.h - the daemon's side of the in-kernel aggregator (aggregate.bpf.c):
 * load, attach to every sampling event, drain the idle map while the other one fills, read the
 * overflow ring. */
#ifndef SPENT_COLLECT_DAEMON_BPF_H
#define SPENT_COLLECT_DAEMON_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/aggregate.h"
#include "collect/daemon_perf.h"

/* Called once per aggregated entry (one key with its count summed over CPUs, or one overflow
 * record). */
typedef void (*dentry_fn)(void *arg, pid_t pid, uint64_t pc, uint32_t event, uint64_t count);

struct dbpf;

/* Load the program with maps of MAP_ENTRIES keys each (0: sized from the number of CPUs) and
 * attach it to every sampling event of PERF. Caller frees with dbpf_close. Fails with the
 * loader's -errno when BPF is refused. */
int dbpf_open(struct dperf *perf, size_t nev, uint32_t map_entries, struct dbpf **out);
void dbpf_close(struct dbpf *b);
/* Keys each of the two aggregation maps holds (sized from the number of CPUs at load). */
uint32_t dbpf_map_entries(const struct dbpf *b);
/* 1 when the maps allocate their keys as they come, 0 when preallocated (kernels before 6.1) */
int dbpf_maps_on_demand(const struct dbpf *b);
/* An fd that polls readable when the overflow ring wants draining. */
int dbpf_overflow_fd(const struct dbpf *b);
/* Read every overflow record now; returns how many, or -errno. */
int dbpf_read_overflow(struct dbpf *b, dentry_fn fn, void *arg);
/* Switch the program to the other map and empty the one it left; returns entries or -errno. */
int dbpf_drain(struct dbpf *b, dentry_fn fn, void *arg);
/* Per-CPU counters summed over every CPU. */
int dbpf_stats(struct dbpf *b, struct agg_stats *sum);

#endif
