/* collect/counting.h - counting sessions: a set of events opened on a task tree (inherit),
 * on chosen threads, or on every CPU, in groups, read with enabled/running times. */
#ifndef SPENT_COLLECT_COUNTING_H
#define SPENT_COLLECT_COUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/events.h"

/* One reading: the raw count and the times the event was enabled and on a counter. */
struct count_value {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
};

/* The count scaled to the whole enabled time (multiplexing projection). */
double count_value_scaled(const struct count_value *v);
/* Percent of the enabled time the event was counting (100 when never enabled). */
double count_value_running_pct(const struct count_value *v);
void count_value_add(struct count_value *acc, const struct count_value *v);

enum counting_mode {
	COUNTING_TASK,		/* one task and everything it forks or clones (inherit) */
	COUNTING_THREADS,	/* existing threads, each with inherit (-p PID) */
	COUNTING_CPUS,		/* every listed CPU, all tasks (system mode) */
};

struct counting_config {
	const struct spent_event *events;
	size_t n_events;
	/* group[i] == group[i-1] puts event i in the same group as i-1; NULL = no groups */
	const int *group;
	enum counting_mode mode;
	pid_t pid;		/* COUNTING_TASK: the task; COUNTING_THREADS: the process */
	bool enable_on_exec;	/* COUNTING_TASK: start counting at the task's next exec */
	bool inherit;		/* tasks: fold in threads and children created later */
	bool enabled;		/* start counting at once (else counting_enable or exec) */
	const int *cpus;	/* COUNTING_CPUS: CPU numbers; NULL = all online */
	size_t n_cpus;
};

struct counting;

/*
 * Open the events described by CFG (copied). On -ENOENT/-EOPNOTSUPP for an event, *BAD_EVENT
 * is its index so the caller can fall back or explain. Returns 0 or -errno.
 */
int counting_new(const struct counting_config *cfg, struct counting **out, size_t *bad_event);
void counting_free(struct counting *c);

int counting_enable(struct counting *c);
int counting_disable(struct counting *c);

/* Totals per event over every thread/CPU: TOTALS has n_events entries. */
int counting_read_totals(struct counting *c, struct count_value *totals);

/* Per slot (CPU in COUNTING_CPUS, thread in COUNTING_THREADS): number of slots, and one read. */
size_t counting_n_slots(const struct counting *c);
int counting_slot_id(const struct counting *c, size_t slot); /* cpu or tid */
/* COUNTING_THREADS: the thread's name when its counters opened ("" otherwise) */
const char *counting_slot_comm(const struct counting *c, size_t slot);
int counting_read_slot(struct counting *c, size_t slot, struct count_value *values);

#endif
