/* collect/aggregate.h - types shared by the in-kernel sample aggregator (aggregate.bpf.c) and
 * the daemon that drains it (daemon_bpf.c): map keys, overflow records, per-CPU counters. */
#ifndef SPENT_COLLECT_AGGREGATE_H
#define SPENT_COLLECT_AGGREGATE_H

/* Kept free of libc headers so the BPF side (vmlinux.h types) can include it too. */
#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint32_t agg_u32;
typedef uint64_t agg_u64;
#else
typedef __u32 agg_u32;
typedef __u64 agg_u64;
#endif

/* Entries per aggregation map (each of the two maps): the size compiled in; the daemon resizes
 * both before loading (daemon_bpf.c): as many keys as AGG_MAP_BYTES hold, within MIN..MAX. The
 * map is per-CPU, so the counts of one key on every CPU share the slot, as DCPI's per-processor
 * tables shared nothing else. */
#define AGG_MAP_ENTRIES 16384
#define AGG_MAP_ENTRIES_MIN 16384
#define AGG_MAP_ENTRIES_MAX 262144
#define AGG_MAP_BYTES (24u << 20)	/* kernel memory per map (two maps) */
#define AGG_KEY_OVERHEAD 64	/* bytes per key besides its per-CPU values: element, key */
/* Bytes of the overflow ring buffer (a power of two, a multiple of the page size). */
#define AGG_RING_BYTES (1u << 20)
/* Most events one daemon samples at once (the event index is the perf link's BPF cookie). */
#define AGG_MAX_EVENTS 4

/* One (process, pc, event) triple: 16 bytes, as DCPI's driver entries. */
struct agg_key {
	agg_u32 tgid;		/* process id (0: idle / kernel threads without a process) */
	agg_u32 event;		/* index into the daemon's event list */
	agg_u64 pc;		/* user or kernel instruction pointer */
};

/* What goes into the ring buffer when the map is full (DCPI's overflow buffer entry). */
struct agg_overflow {
	struct agg_key key;
	agg_u64 count;		/* always 1 from the BPF side */
};

/* Per-CPU counters (an array map of one element, per-CPU values). */
struct agg_stats {
	agg_u64 samples;	/* program invocations (samples taken) */
	agg_u64 new_entries;	/* samples that created a map entry */
	agg_u64 overflowed;	/* samples sent to the ring buffer because the map was full */
	agg_u64 dropped;	/* samples lost: map full and ring buffer full */
	agg_u64 kernel;		/* samples whose pc is in the kernel */
};

/* Index of the stats element and the config layout (read-only data set before load). */
#define AGG_STATS_KEY 0

#endif
