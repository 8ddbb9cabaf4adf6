/* core/tracefs.c - the tracefs mount point (core/tracefs.h). */
#include <stdio.h>
#include <unistd.h>

#include "core/tracefs.h"

const char *tracefs_root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, R_OK | X_OK) == 0)
			return roots[i];
	}
	return NULL;
}
