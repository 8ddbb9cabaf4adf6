/* collect/event_fallback.c - an event that cannot count the kernel for this user falls back
 * to user space only (:u), as perf does, with the paranoid level named in the explanation. */
#include <stdio.h>
#include <string.h>

#include "collect/event_fallback.h"

bool event_user_space_fallback(struct spent_event *ev, char *msg, size_t len)
{
	char level[16] = "?";
	if (spent_event_user_fallback(ev) != 1)
		return false;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (!fgets(level, sizeof(level), f))
			snprintf(level, sizeof(level), "?");
		level[strcspn(level, "\n")] = '\0';
		fclose(f);
	}
	snprintf(msg, len,
		 "kernel.perf_event_paranoid is %s: this user may not count the kernel, so '%s' and "
		 "any other such event count user space only (:u), as perf does",
		 level, ev->spec);
	return true;
}
