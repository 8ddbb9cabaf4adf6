/* core/cpus.c - CPU lists and the online CPUs (core/cpus.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/cpus.h"

int cpu_list_parse(const char *list, int **out, size_t *n)
{
	int *cpus = NULL;
	size_t k = 0, cap = 0;
	int err = -EINVAL;
	for (const char *p = list;;) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		long lo = strtol(p, &end, 10), hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi >= 4096 || k + (size_t)(hi - lo + 1) > 4096)
			goto bad;
		if (ALLOC_GROW(cpus, k + (size_t)(hi - lo + 1), cap)) {
			err = -ENOMEM;
			goto bad;
		}
		for (long c = lo; c <= hi; c++) {
			bool seen = false;
			for (size_t i = 0; i < k; i++)
				seen |= cpus[i] == (int)c;
			if (!seen)
				cpus[k++] = (int)c;
		}
		if (*end == 0)
			break;
		if (*end != ',')
			goto bad;
		p = end + 1;
	}
	*out = cpus;
	*n = k;
	return 0;
bad:
	free(cpus);
	return err;
}

void cpu_list_format(const int *cpus, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	if (!len)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		char one[32];
		int w = j > i ? snprintf(one, sizeof(one), "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
			      : snprintf(one, sizeof(one), "%s%d", i ? "," : "", cpus[i]);
		if (at + (size_t)w + 4 > len) {	/* room for "..." and the NUL */
			snprintf(buf + at, len - at, "...");
			return;
		}
		memcpy(buf + at, one, (size_t)w + 1);
		at += (size_t)w;
		i = j + 1;
	}
}

int cpus_online(int **out, size_t *n)
{
	char list[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	bool known = f && fgets(list, sizeof(list), f);
	if (f)
		fclose(f);
	list[strcspn(list, "\n")] = 0;
	if (known && list[0])
		return cpu_list_parse(list, out, n);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);	/* no sysfs: assume 0..n-1 */
	if (ncpu < 1)
		return -ENODEV;
	int *cpus = malloc((size_t)ncpu * sizeof(int));
	if (!cpus)
		return -ENOMEM;
	for (long i = 0; i < ncpu; i++)
		cpus[i] = (int)i;
	*out = cpus;
	*n = (size_t)ncpu;
	return 0;
}

/* One number from DIR/cpuCPU/topology/NAME; -1 when the file is not there or holds none. */
static long topology_value(const char *dir, int cpu, const char *name)
{
	char path[512];
	long v = -1;
	snprintf(path, sizeof(path), "%s/cpu%d/topology/%s", dir, cpu, name);
	FILE *f = fopen(path, "re");
	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

int cpu_place_read(const char *dir, int cpu, struct cpu_place *out)
{
	long socket = topology_value(dir, cpu, "physical_package_id");
	long core = topology_value(dir, cpu, "core_id");
	long die = topology_value(dir, cpu, "die_id");
	if (socket < 0 || core < 0)
		return -ENOENT;
	*out = (struct cpu_place){ (int)socket, die < 0 ? 0 : (int)die, (int)core };
	return 0;
}
