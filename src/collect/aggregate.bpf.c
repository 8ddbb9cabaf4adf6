// SPDX-License-Identifier: GPL-2.0
/* collect/aggregate.bpf.c - the in-kernel driver of `spent daemon` (DCPI's device driver):
 * runs on every sampling perf event, counts (tgid, pc, event) triples in a per-CPU hash map,
 * and sends samples to a ring buffer (DCPI's overflow buffers) when the map is full. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "collect/aggregate.h"

char LICENSE[] SEC("license") = "GPL";

/* Two maps: the daemon flips `active` and drains the other one, so sampling never stops. */
struct agg_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, AGG_MAP_ENTRIES);
	__type(key, struct agg_key);
	__type(value, __u64);
};
struct agg_map counts0 SEC(".maps");
struct agg_map counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, AGG_RING_BYTES);
} overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agg_stats);
} stats SEC(".maps");

/* Which map the program fills (0 or 1): written by the daemon through the mmapped .bss. */
volatile __u32 active;

static __always_inline void overflow_push(const struct agg_key *key, struct agg_stats *st)
{
	struct agg_overflow rec = { .key = *key, .count = 1 };
	__u64 avail = bpf_ringbuf_query(&overflow, BPF_RB_AVAIL_DATA);
	/* wake the daemon once the ring is half full, not on every record */
	__u64 flags = avail > AGG_RING_BYTES / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_output(&overflow, &rec, sizeof(rec), flags) == 0)
		st->overflowed++;
	else
		st->dropped++;
}

SEC("perf_event")
int agg_sample(struct bpf_perf_event_data *ctx)
{
	__u32 zero = AGG_STATS_KEY;
	struct agg_stats *st = bpf_map_lookup_elem(&stats, &zero);
	struct agg_key key = {};
	__u64 one = 1, *cnt;
	void *map;

	if (!st)
		return 0;
	st->samples++;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.event = (__u32)bpf_get_attach_cookie(ctx);
	key.pc = PT_REGS_IP(&ctx->regs);
	if (key.pc >= 0xffff800000000000ULL)
		st->kernel++;

	map = active ? (void *)&counts1 : (void *)&counts0;
	cnt = bpf_map_lookup_elem(map, &key);
	if (cnt) {
		(*cnt)++;	/* this CPU's slot: no other CPU writes it */
		return 0;
	}
	if (bpf_map_update_elem(map, &key, &one, BPF_NOEXIST) == 0) {
		st->new_entries++;
		return 0;
	}
	/* another path on this CPU inserted it meanwhile: count it there */
	cnt = bpf_map_lookup_elem(map, &key);
	if (cnt) {
		(*cnt)++;
		return 0;
	}
	overflow_push(&key, st);	/* map full: DCPI's eviction to the overflow buffer */
	return 0;
}
