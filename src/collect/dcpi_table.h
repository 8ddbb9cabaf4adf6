/* collect/dcpi_table.h - DCPI's per-processor sample table, in user space: the aggregator used
 * when the BPF driver cannot be loaded. 4-way buckets of 16-byte (PID, PC, EVENT, count)
 * entries on one 64-byte cache line; a miss evicts the entry picked by a mod-4 counter into
 * one of a pair of overflow buffers (one is filled while the other is consumed). */
#ifndef SPENT_COLLECT_DCPI_TABLE_H
#define SPENT_COLLECT_DCPI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define DCPI_WAYS 4
#define DCPI_COUNT_MAX 0xffffu	/* a saturated entry is evicted and restarts at 1 */

/* One entry: 16 bytes. count 0 marks a free slot. */
struct dcpi_entry {
	uint64_t pc;
	uint32_t pid;
	uint16_t event;
	uint16_t count;
};

/* One bucket: the four ways on one cache line. */
struct dcpi_bucket {
	struct dcpi_entry way[DCPI_WAYS];
} __attribute__((aligned(64)));

struct dcpi_table_stats {
	uint64_t samples;	/* dcpi_table_add calls */
	uint64_t hits;		/* samples that found their entry */
	uint64_t evictions;	/* entries pushed to an overflow buffer (misses on a full bucket
				 * and saturated counts) */
	uint64_t dropped;	/* samples lost because both overflow buffers were full */
};

struct dcpi_table;

/*
 * Allocate a table of NBUCKETS buckets (rounded up to a power of two, at least 1) and two
 * overflow buffers of OVF_CAP entries each (at least 1). Caller frees with dcpi_table_free.
 */
int dcpi_table_new(uint32_t nbuckets, uint32_t ovf_cap, struct dcpi_table **out);
void dcpi_table_free(struct dcpi_table *t);

/*
 * Count one sample. Returns 1 when an overflow buffer has just filled up (take it with
 * dcpi_table_take_overflow before it is needed again), 0 otherwise.
 */
int dcpi_table_add(struct dcpi_table *t, uint32_t pid, uint64_t pc, uint16_t event);

/*
 * The full overflow buffer, if any: *ENTRIES points into the table (valid until
 * dcpi_table_release_overflow); returns the entry count, 0 when no buffer is full.
 */
size_t dcpi_table_take_overflow(struct dcpi_table *t, const struct dcpi_entry **entries);
/* Hand the buffer returned by dcpi_table_take_overflow back for reuse. */
void dcpi_table_release_overflow(struct dcpi_table *t);

/* Called once per aggregated entry by dcpi_table_drain. */
typedef void (*dcpi_emit_fn)(void *arg, const struct dcpi_entry *e);

/*
 * Emit every entry in the hash table and both overflow buffers (full or partly filled), then
 * empty them all. Returns the number of entries emitted.
 */
size_t dcpi_table_drain(struct dcpi_table *t, dcpi_emit_fn emit, void *arg);

void dcpi_table_get_stats(const struct dcpi_table *t, struct dcpi_table_stats *st);

#endif
