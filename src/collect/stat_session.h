/* collect/stat_session.h - what the public counting session (spent/stat.h) shows spent's own
 * stat command beyond the API: the counting set and the followed threads, for the per-thread,
 * per-process and per-CPU breakdowns it prints. */
#ifndef SPENT_COLLECT_STAT_SESSION_H
#define SPENT_COLLECT_STAT_SESSION_H

#include "collect/counting.h"
#include "collect/thread_tracker.h"
#include "spent/stat.h"

/* The counting set (valid after a successful spent_stat_start). */
struct counting *stat_session_counting(struct spent_stat *s);
/* The followed threads (follow_threads with a command), or NULL. */
struct thread_tracker *stat_session_tracker(struct spent_stat *s);

#endif
