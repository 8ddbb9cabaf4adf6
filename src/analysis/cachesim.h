/* analysis/cachesim.h - a configurable cache-hierarchy simulator fed by the trace stream: split
 * or unified levels, LRU/FIFO/random replacement, write-back with dirty subblocks or
 * write-through with write buffers, write-allocate or not; per traffic kind pin bytes (the
 * PatchWrx paper's Figures 3-6) per chunk of instructions; optional private caches per core with
 * an invalidation protocol and false-sharing detection. */
#ifndef SPENT_ANALYSIS_CACHESIM_H
#define SPENT_ANALYSIS_CACHESIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"

#define CACHESIM_MAX_LEVELS 8
#define CACHESIM_MAX_CORES 64

enum cache_repl { CACHE_LRU, CACHE_FIFO, CACHE_RANDOM };
enum cache_kind { CACHE_UNIFIED, CACHE_INSN, CACHE_DATA };

/* One cache. Levels are listed top-down; an I and a D cache at the same level make it split. */
struct cache_level_config {
	char name[8];		/* "I1", "D1", "L2", "LL" */
	uint32_t level;		/* 1, 2, 3 */
	enum cache_kind kind;
	uint64_t size;		/* bytes */
	uint32_t line;		/* bytes, power of two */
	uint32_t assoc;		/* ways; 0 = fully associative */
	enum cache_repl repl;
	bool write_through;	/* false: write-back */
	bool write_allocate;
	uint32_t write_buffers;	/* write-through: line-sized buffers merging writes */
	uint32_t subblock;	/* write-back: dirty-bit granule in bytes (0: whole line) */
};

struct cachesim_config {
	char name[32];
	struct cache_level_config levels[CACHESIM_MAX_LEVELS];
	uint32_t n_levels;
	double clock_mhz;	/* for GB/s at 1 CPI */
	uint64_t chunk;		/* instructions per chunk of the time series (0: none); doubled
				 * whenever the series reaches CACHESIM_MAX_CHUNKS, its chunks merged
				 * pairwise (cachesim_config gives the size in use) */
	uint32_t cores;		/* 0/1: one hierarchy; N: private hierarchies, threads mapped */
	uint64_t seed;		/* for random replacement */
};

/* Traffic crossing the pins (below the last level), by kind, as in the PatchWrx paper's charts. */
enum cache_traffic {
	TRAFFIC_IMISS,		/* instruction fetch misses */
	TRAFFIC_DMISS,		/* data read misses */
	TRAFFIC_DWRITE,		/* write-buffer flushes / written-through bytes */
	TRAFFIC_DVICT,		/* dirty victim write-backs */
	TRAFFIC_DREAD_USEFUL,	/* write-miss fills whose old bytes were needed */
	TRAFFIC_DREAD_REDUNDANT,	/* write-miss fills fully overwritten before any read */
	TRAFFIC_NKINDS
};
extern const char *const cache_traffic_names[TRAFFIC_NKINDS];

/* Counters of one cache (summed over cores). Straddling references count once, as in
 * cachegrind: one access, at most one miss. */
struct cache_stats {
	uint64_t accesses, misses;
	uint64_t reads, read_misses, writes, write_misses, ifetches, ifetch_misses;
	uint64_t writebacks;	/* dirty victims written to the next level */
	uint64_t invalidations;	/* lines invalidated by another core's write */
};

/* One shared line found by the coherence simulation. */
struct cache_shared_line {
	uint64_t line;		/* line address */
	uint64_t invalidations;	/* copies invalidated by writes of other cores */
	uint64_t coherence_misses;	/* misses on copies lost to invalidations */
	uint32_t writers;	/* cores that wrote it */
	bool false_sharing;	/* written at disjoint bytes by different cores */
	uint64_t first_write[2];	/* a written byte address of two different writers */
};

struct cachesim;

/* Validate CFG and allocate the caches; 0, -EINVAL (message in ERR), -ENOMEM. */
int cachesim_new(const struct cachesim_config *cfg, struct cachesim **out, char *err,
		 size_t errlen);
void cachesim_free(struct cachesim *cs);

/* Simulate every instruction fetch and data reference of BATCH; 0 or -ENOMEM. */
int cachesim_feed(struct cachesim *cs, const struct spent_trace_batch *batch);
/* The same batch into each of SIMS[0..N) (several configurations studied in one pass), with the
 * same result as cachesim_feed on each. When they share their first instruction cache (same
 * configuration, one core, split from the data), that cache is simulated once, by SIMS[0]:
 * the others see only the data references and the fetches it missed, in stream order. Feed a
 * group always together; 0 or -ENOMEM. */
int cachesim_feed_group(struct cachesim *const *sims, size_t n, const struct spent_trace_batch *b);
/* Whether cachesim_feed_group(SIMS, N) is faster fed batches of superblock executions
 * (spent_trace_source_want_execs): one simulator of one core, or a group sharing its first
 * i-cache (with the same time-series chunk); the others expand them to instructions, which
 * costs more than the source's own instruction batches. */
bool cachesim_group_reads_execs(struct cachesim *const *sims, size_t n);
/* cachesim_feed_group on worker threads: THREADS in all, the caller's included (1: none;
 * never more than the configurations). When SIMS share their first i-cache, the caller's
 * thread reads the log and walks the fetches through a copy of SIMS[0] of its own, and every
 * configuration walks its data references (and the missed fetches) on the workers, taking
 * CHUNK_REFS references at a time (0: 256 K) while the caller fills the next chunk; otherwise
 * they are fed one after the other. Every result is cachesim_feed_group's. Feed every batch
 * through cachesim_parallel_feed, then cachesim_parallel_drain before reading any result or
 * calling cachesim_finish. 0, -EINVAL, -ENOMEM or -errno (a thread not created). */
struct cachesim_parallel;
int cachesim_parallel_new(struct cachesim *const *sims, size_t n, unsigned threads, size_t chunk_refs,
			  struct cachesim_parallel **out);
/* 0, -ENOMEM (here or in a follower) */
int cachesim_parallel_feed(struct cachesim_parallel *p, const struct spent_trace_batch *b);
/* Wait until every follower has taken every batch fed so far; 0 or a follower's -ENOMEM. */
int cachesim_parallel_drain(struct cachesim_parallel *p);
/* Stops the workers; the simulators stay the caller's. */
void cachesim_parallel_free(struct cachesim_parallel *p);
/* Flush write buffers and resolve pending write-miss fills; call once at the end. */
void cachesim_finish(struct cachesim *cs);

/* One reference outside a trace (tests, benches): STREAM 'i' or 'd'. */
void cachesim_access(struct cachesim *cs, uint32_t core, char stream, uint64_t addr,
		     uint32_t size, uint32_t kind);

const struct cachesim_config *cachesim_config(const struct cachesim *cs);
uint64_t cachesim_instructions(const struct cachesim *cs);
void cachesim_stats(const struct cachesim *cs, uint32_t level_index, struct cache_stats *out);
/* Pin bytes of KIND over the whole run, or in chunk I (0 past the end). */
uint64_t cachesim_traffic(const struct cachesim *cs, enum cache_traffic kind);
#define CACHESIM_MAX_CHUNKS 16384
size_t cachesim_n_chunks(const struct cachesim *cs);
uint64_t cachesim_chunk_traffic(const struct cachesim *cs, size_t chunk, enum cache_traffic kind);
uint64_t cachesim_chunk_instructions(const struct cachesim *cs, size_t chunk);

/* Lines with invalidations, most invalidated first; *OUT is malloc'ed (caller frees).
 * 0 or -ENOMEM. */
int cachesim_shared_lines(const struct cachesim *cs, struct cache_shared_line **out, size_t *n);

/* Configurations. */
/* "alpha21064", "alpha21164", "cachegrind" (I1/D1 32K 8-way, LL 8M 16-way), "host"; 0 or
 * -ENOENT (unknown name), -errno (host: sysfs unreadable). */
int cachesim_config_preset(const char *name, struct cachesim_config *out, char *err,
			   size_t errlen);
/* The machine's caches from /sys/devices/system/cpu/cpu0/cache (ROOT overrides the path). */
int cachesim_config_host(const char *root, struct cachesim_config *out, char *err, size_t errlen);
/* Parse a configuration text (see docs/studies.md); 0 or -EINVAL with a message naming the line. */
int cachesim_config_parse(const char *text, struct cachesim_config *out, char *err,
			  size_t errlen);
/* Set one configuration-file key (size=, assoc=, line=, repl=, ...) of the cache named CACHE
 * and check the result: 0, -ENOENT (no such cache) or -EINVAL, with ERR saying why. */
int cachesim_config_set(struct cachesim_config *cfg, const char *cache, const char *key,
			const char *value, char *err, size_t errlen);
/* The same for N keys at once, checked after the last: size, assoc and line together may make
 * a valid cache that one of them alone, beside the others' old values, does not. */
int cachesim_config_set_keys(struct cachesim_config *cfg, const char *cache,
			     const char *const *keys, const char *const *values, size_t n,
			     char *err, size_t errlen);
/* Check a configuration; 0 or -EINVAL with a message. */
int cachesim_config_check(const struct cachesim_config *cfg, char *err, size_t errlen);

#endif
