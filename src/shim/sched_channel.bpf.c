/* shim/sched_channel.bpf.c - Shim's thread-identity channel: on every sched_switch, store the
 * incoming task's (tgid, tid) in its CPU's slot of an mmap-able array the observer loads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shim/sched_channel.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SCHED_CHANNEL_MAX_CPUS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sched_slot);
} sched_cpus SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(shim_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sched_slot *s = bpf_map_lookup_elem(&sched_cpus, &cpu);

	if (!s)
		return 0;
	s->thread = ((__u64)(__u32)next->tgid << 32) | (__u32)next->pid;
	s->switches++;
	return 0;
}
