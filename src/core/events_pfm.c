/* core/events_pfm.c - libpfm4 encoding and enumeration of PMU-specific event names. */
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <string.h>

#include "core/events_pfm.h"

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_ready;

static void pfm_setup(void)
{
	pfm_ready = pfm_initialize() == PFM_SUCCESS;
}

int events_pfm_encode(const char *spec, struct pfm_encoding *enc)
{
	pthread_once(&pfm_once, pfm_setup);
	if (!pfm_ready)
		return -ENOENT;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	int r = pfm_get_os_event_encoding(spec, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r != PFM_SUCCESS)
		return r == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL;
	/* libpfm's "perf" PMU re-exports perf's generic names; events.c owns those */
	if (a.type == PERF_TYPE_SOFTWARE || a.type == PERF_TYPE_TRACEPOINT || a.type == PERF_TYPE_BREAKPOINT)
		return -ENOENT;
	enc->type = a.type;
	enc->config = a.config;
	enc->config1 = a.config1;
	enc->config2 = a.config2;
	enc->exclude_user = a.exclude_user;
	enc->exclude_kernel = a.exclude_kernel;
	return 0;
}

int events_pfm_foreach(int (*fn)(void *arg, const char *pmu, const char *pmu_desc,
				 const char *name, const char *desc), void *arg)
{
	pthread_once(&pfm_once, pfm_setup);
	if (!pfm_ready)
		return 0;
	int pmu;
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo;
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		if (strncmp(pinfo.name, "perf", 4) == 0)
			continue;
		for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t einfo;
			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &einfo) != PFM_SUCCESS)
				continue;
			int r = fn(arg, pinfo.name, pinfo.desc, einfo.name, einfo.desc);
			if (r)
				return r;
		}
	}
	return 0;
}
