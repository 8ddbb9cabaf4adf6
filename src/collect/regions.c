/* collect/regions.c - named regions of the perfex library: per-thread begin/end pairs that
 * accumulate the counts of a thread-local counter set opened on first use. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "collect/fork_gen.h"
#include "spent/counters.h"

struct region {
	char *name;
	uint64_t entries;
	unsigned depth;		/* recursion of the same name counts once, at the outermost pair */
	uint64_t *start;
	uint64_t *sum;
};

struct region_state {
	struct spent_counters *counters;
	unsigned fork_gen;	/* fork_gen when made: another is a forked child's copy */
	uint64_t *now;		/* scratch for the reads at region ends, n_events long */
	size_t n_events;
	const char **event_names;
	struct region *regions;
	size_t n, cap;
};

static pthread_key_t state_key;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void state_free(void *p)
{
	struct region_state *s = p;
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->regions[i].name);
		free(s->regions[i].start);
		free(s->regions[i].sum);
	}
	free(s->regions);
	free(s->event_names);
	free(s->now);
	spent_counters_free(s->counters);
	free(s);
}

/* In a forked child the thread's state is the parent's copy (fork_gen.h), whose counters
 * count the parent (spent_counters_* answer -ECHILD there). */
static void state_key_make(void)
{
	pthread_key_create(&state_key, state_free);
	fork_gen_watch();
}

/* This thread's state, or NULL before its first region; a forked child's copy of its
 * parent's is dropped (its regions start afresh). */
static struct region_state *state_peek(void)
{
	pthread_once(&state_once, state_key_make);
	struct region_state *s = pthread_getspecific(state_key);
	if (s && s->fork_gen != fork_gen) {
		state_free(s);
		pthread_setspecific(state_key, NULL);
		s = NULL;
	}
	return s;
}

static int state_get(struct region_state **out)
{
	struct region_state *s = state_peek();
	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fork_gen = fork_gen;
	const char *events = getenv("SPENT_REGION_EVENTS");
	int err = spent_counters_open(events && *events ? events : "task-clock,page-faults", 0, &s->counters);
	if (!err)
		err = spent_counters_start(s->counters);
	if (!err) {
		s->n_events = spent_counters_count(s->counters);
		s->event_names = calloc(s->n_events, sizeof(char *));
		s->now = calloc(s->n_events, sizeof(uint64_t));
		if (!s->event_names || !s->now)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < s->n_events; i++)
			s->event_names[i] = spent_counters_name(s->counters, i);
	}
	if (!err)
		err = pthread_setspecific(state_key, s) ? -ENOMEM : 0;
	if (err) {
		state_free(s);
		return err;
	}
	*out = s;
	return 0;
}

static struct region *region_find(struct region_state *s, const char *name, bool create)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->regions[i].name, name) == 0)
			return &s->regions[i];
	if (!create)
		return NULL;
	if (ALLOC_GROW(s->regions, s->n + 1, s->cap))
		return NULL;
	struct region *r = &s->regions[s->n];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->start = calloc(s->n_events, sizeof(uint64_t));
	r->sum = calloc(s->n_events, sizeof(uint64_t));
	if (!r->name || !r->start || !r->sum) {
		free(r->name);
		free(r->start);
		free(r->sum);
		return NULL;
	}
	s->n++;
	return r;
}

int spent_region_begin(const char *name)
{
	struct region_state *s;
	int err = name ? state_get(&s) : -EINVAL;
	if (err)
		return err;
	struct region *r = region_find(s, name, true);
	if (!r)
		return -ENOMEM;
	if (r->depth++ == 0)
		return spent_counters_read(s->counters, r->start, s->n_events);
	return 0;
}

int spent_region_end(const char *name)
{
	struct region_state *s;
	int err = name ? state_get(&s) : -EINVAL;
	if (err)
		return err;
	struct region *r = region_find(s, name, false);
	if (!r || r->depth == 0)
		return -ENOENT; /* an end without its begin */
	if (--r->depth)
		return 0;
	/* every event (a fixed 64 left those past the 64th at 0) */
	err = spent_counters_read(s->counters, s->now, s->n_events);
	if (err)
		return err;
	for (size_t i = 0; i < s->n_events; i++)
		r->sum[i] += s->now[i] - r->start[i];
	r->entries++;
	return 0;
}

static void region_view(const struct region_state *s, const struct region *r, struct spent_region *out)
{
	out->name = r->name;
	out->entries = r->entries;
	out->n_events = s->n_events;
	out->event_names = s->event_names;
	out->values = r->sum;
}

int spent_region_get(const char *name, struct spent_region *out)
{
	struct region_state *s = state_peek();
	struct region *r = s && name ? region_find(s, name, false) : NULL;
	if (!r || r->entries == 0)
		return -ENOENT;
	region_view(s, r, out);
	return 0;
}

int spent_region_foreach(int (*fn)(const struct spent_region *r, void *arg), void *arg)
{
	struct region_state *s = state_peek();
	for (size_t i = 0; s && i < s->n; i++) {
		if (!s->regions[i].entries)
			continue;
		struct spent_region view;
		region_view(s, &s->regions[i], &view);
		int r = fn(&view, arg);
		if (r)
			return r;
	}
	return 0;
}
