/* shim/sched_channel.h - types shared by sched_channel.bpf.c and the Shim observer: one
 * cache-line slot per CPU naming the thread that sched_switch last put on that CPU. */
#ifndef SPENT_SHIM_SCHED_CHANNEL_H
#define SPENT_SHIM_SCHED_CHANNEL_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SCHED_CHANNEL_MAX_CPUS 1024

/*
 * Element CPU of the mmap-able array (values are laid out back to back from offset 0, so the
 * observer reads slot CPU at CPU * sizeof(struct sched_slot)).
 * thread: (tgid << 32) | tid of the task now running on CPU; 0 for the idle task.
 * switches: number of sched_switch events seen on CPU since the program was attached.
 */
struct sched_slot {
	__u64 thread;
	__u64 switches;
	__u64 pad[6];
};

#endif
