/* collect/fork_gen.h - the fork generation the counter API and its regions share: bumped in
 * the child of every fork (one pthread_atfork handler for the library), so state made before
 * the fork (perf mmap pages, which a child does not get, and events counting the parent's
 * thread) is known for the parent's copy by one compare. */
#ifndef SPENT_COLLECT_FORK_GEN_H
#define SPENT_COLLECT_FORK_GEN_H

/* The current generation: read it after fork_gen_watch(). A plain global so a counter read
 * pays one compare, not a call. */
extern unsigned fork_gen;

/* Install the atfork handler (once per process; any thread may call it). */
void fork_gen_watch(void);

#endif
