/* core/tracefs.h - where the kernel's tracefs is mounted, for the tracepoint events (their ids)
 * and `spent list` (available_events): asked in one place. */
#ifndef SPENT_CORE_TRACEFS_H
#define SPENT_CORE_TRACEFS_H

/* The tracefs directory (its events/ readable): /sys/kernel/tracing, or under debugfs on older
 * set-ups (the same instance when both are there); NULL when neither is mounted. */
const char *tracefs_root(void);

#endif
