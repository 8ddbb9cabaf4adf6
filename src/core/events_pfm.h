/* core/events_pfm.h - libpfm4 behind plain types: libpfm ships its own perf_event.h, which
 * cannot share a translation unit with <linux/perf_event.h>, so only events_pfm.c includes it. */
#ifndef SPENT_CORE_EVENTS_PFM_H
#define SPENT_CORE_EVENTS_PFM_H

#include <stdbool.h>
#include <stdint.h>

struct pfm_encoding {
	uint32_t type;
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel;
};

/* Encode a PMU-specific event SPEC: 0, -ENOENT (unknown name) or -EINVAL (bad modifier). */
int events_pfm_encode(const char *spec, struct pfm_encoding *enc);

/* Call FN for every event of every PMU libpfm detects on this CPU (its own "perf" tables
 * excluded); stops at the first non-zero return, which it returns. */
int events_pfm_foreach(int (*fn)(void *arg, const char *pmu, const char *pmu_desc,
				 const char *name, const char *desc), void *arg);

#endif
