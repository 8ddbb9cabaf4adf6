/* citcat/cpuid_patch.h - software CPUID faulting: the cpuid instructions of a traced process's
 * executable file mappings are found (cpuid_sites.c) and overwritten with ud2 (cpuid_patch.c),
 * so each one traps with SIGILL to the recorder, as ARCH_SET_CPUID's faulting would with
 * SIGSEGV. Used where the CPU or hypervisor lacks CPUID faulting. */
#ifndef SPENT_CITCAT_CPUID_PATCH_H
#define SPENT_CITCAT_CPUID_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The confirmed cpuid instructions of one ELF file, by file offset, and the 0f a2 matches in
 * its executable segments that no decode confirmed (left alone). */
struct cc_cpuid_sites {
	uint64_t *offsets;
	size_t n;
	uint64_t unconfirmed;
};

/* Find the sites of the ELF image DATA (LEN bytes, the whole file): 0, -ENOEXEC for a file
 * that is not an x86-64 ELF, -ENOMEM. Release OUT with cc_cpuid_sites_release. */
int cc_cpuid_find_sites(const uint8_t *data, size_t len, struct cc_cpuid_sites *out);
void cc_cpuid_sites_release(struct cc_cpuid_sites *s);

struct cc_cpuid_patcher;

int cc_cpuid_patcher_new(struct cc_cpuid_patcher **out);
void cc_cpuid_patcher_free(struct cc_cpuid_patcher *p);
/* Overwrite with ud2 every confirmed cpuid of PID's executable file mappings that intersect
 * [START, START+LEN) (LEN 0: all of them), writing through MEMFD (/proc/PID/mem). Sites
 * already patched are skipped; each file is scanned once per identity. 0 or -errno. */
int cc_cpuid_patch_range(struct cc_cpuid_patcher *p, pid_t pid, int memfd, uint64_t start,
			 uint64_t len);
/* True when ADDR holds a cpuid this patcher replaced. */
bool cc_cpuid_patched_at(const struct cc_cpuid_patcher *p, uint64_t addr);
/* Sites patched so far, unconfirmed 0f a2 matches in the files mapped executable so far, and
 * the first such file (NULL when none). */
void cc_cpuid_patch_counts(const struct cc_cpuid_patcher *p, uint64_t *patched,
			   uint64_t *unconfirmed, const char **first_file);

#endif
