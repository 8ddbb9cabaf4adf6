/* core/cpus.h - CPU lists as perf and the kernel write them ("0-3,5"), and the CPUs online
 * now. One parser for -C and for /sys/devices/system/cpu/online: every collector that opens
 * events per CPU asks here, so a machine with an offline CPU (ids no longer 0..n-1) gets the
 * right ones everywhere. */
#ifndef SPENT_CORE_CPUS_H
#define SPENT_CORE_CPUS_H

#include <stddef.h>

/* LIST ("0-3,5": numbers and ranges, comma-separated, no blanks) into *OUT (malloc'd, each CPU
 * once, in the order given; at most 4096 CPUs below 4096), *N of them. 0, -EINVAL, -ENOMEM. */
int cpu_list_parse(const char *list, int **out, size_t *n);

/* CPUS (N of them, ascending) written back as a list, runs as ranges ("0-3,5"), into BUF
 * (LEN bytes; cut short with "..." when it does not fit). */
void cpu_list_format(const int *cpus, size_t n, char *buf, size_t len);

/* The CPUs online now (/sys/devices/system/cpu/online; without that file, 0 to the number
 * of online CPUs - 1) into *OUT (malloc'd), *N of them. 0 or -errno. */
int cpus_online(int **out, size_t *n);

/* Where a CPU sits: its socket (physical package), die and core, as perf stat --per-socket,
 * --per-die and --per-core group CPUs (S0-D0-C1). */
struct cpu_place {
	int socket, die, core;
};
#define CPU_SYSFS "/sys/devices/system/cpu"
/* CPU's place from DIR (CPU_SYSFS; a test gives a tree of its own): DIR/cpuN/topology's
 * physical_package_id, die_id (0 when the kernel has none: before 5.2) and core_id. 0, or
 * -ENOENT when the topology is not there. */
int cpu_place_read(const char *dir, int cpu, struct cpu_place *out);

#endif
