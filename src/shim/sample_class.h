/* shim/sample_class.h - which observer samples count, from what the eBPF thread channel says
 * around each one: the rule the observer (preload/observer.c) applies per sample, kept here as
 * inline functions so the unit tests check the same code. Needs nothing but <stdint.h>.
 *
 * On a busy machine both threads lose their CPUs: a tag read while the app CPU runs another
 * task is that task's moment, not the app's; a context switch between the thread read and
 * the tag reads means the two need not belong together; a switch on the observer's own CPU
 * (it is pinned there, so any switch took it off and back) means the sample straddles the
 * observer's absence. Such samples are excluded from tag histograms and counted apart.
 */
#ifndef SPENT_SHIM_SAMPLE_CLASS_H
#define SPENT_SHIM_SAMPLE_CLASS_H

#include <stdint.h>

enum shim_sample_class {
	SHIM_SAMPLE_APP = 0,	/* the app ran throughout: histogrammed */
	SHIM_SAMPLE_OTHER = 1,	/* the app CPU ran another process or idled */
	SHIM_SAMPLE_GAP = 2,	/* a context switch on the app or observer CPU within it */
};

/* What one sample saw of the sched_switch slots (all 0 without the thread channel). */
struct shim_sample_view {
	uint64_t thread;	/* app CPU's slot: (tgid << 32) | tid of the running task */
	uint64_t app_sw;	/* app CPU's switch count, read before the thread ... */
	uint64_t app_sw_after;	/* ... and after the tags */
	uint64_t own_sw;	/* observer CPU's switch count, before the start clock ... */
	uint64_t own_sw_after;	/* ... and after the tags */
};

/* CHANNEL: the thread channel is mapped; PID: the observed process (its tgid). */
static inline enum shim_sample_class shim_sample_classify(const struct shim_sample_view *v,
							   int channel, uint32_t pid)
{
	if (!channel)
		return SHIM_SAMPLE_APP;	/* nothing to tell samples apart with */
	if ((v->thread >> 32) != pid)
		return SHIM_SAMPLE_OTHER;
	if (v->app_sw_after != v->app_sw || v->own_sw_after != v->own_sw)
		return SHIM_SAMPLE_GAP;
	return SHIM_SAMPLE_APP;
}

/* A rate between consecutive samples PREV and CUR measures the app alone when both saw it on
 * its CPU, no switch happened there in between, and the observer was not descheduled from
 * before PREV's start clock to after CUR's reads (a rate across its absence averages over
 * milliseconds, not the ~100 ns the reservoir describes). */
static inline int shim_rate_interval_ok(const struct shim_sample_view *prev,
					enum shim_sample_class prev_class,
					const struct shim_sample_view *cur,
					enum shim_sample_class cur_class)
{
	return prev_class != SHIM_SAMPLE_OTHER && cur_class != SHIM_SAMPLE_OTHER &&
	       cur->app_sw == prev->app_sw && cur->own_sw_after == prev->own_sw;
}

#endif
