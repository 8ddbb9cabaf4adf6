/* collect/counting.c - counting sessions over perf_event_open: groups, inherit to a task
 * tree, per-thread or per-CPU slots, and scaling by enabled/running time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collect/counting.h"
#include "collect/thread_tracker.h"
#include "core/alloc.h"
#include "core/cpus.h"

struct counting {
	struct counting_config cfg;
	struct spent_event *events;
	int *group;
	size_t n_slots;
	int *slot_ids;		/* cpus, or tids (pid_t is int) */
	char (*slot_comms)[16];	/* COUNTING_THREADS: each thread's name when its slot opened */
	int *fds;	/* [slot][event], -1 where the slot vanished */
};

double count_value_scaled(const struct count_value *v)
{
	if (v->running == 0)
		return v->enabled ? 0.0 : (double)v->value;
	if (v->running >= v->enabled)
		return (double)v->value;
	return (double)v->value * ((double)v->enabled / (double)v->running);
}

double count_value_running_pct(const struct count_value *v)
{
	if (v->enabled == 0)
		return 100.0;
	double p = 100.0 * (double)v->running / (double)v->enabled;
	return p > 100.0 ? 100.0 : p;
}

void count_value_add(struct count_value *acc, const struct count_value *v)
{
	acc->value += v->value;
	acc->enabled += v->enabled;
	acc->running += v->running;
}

static int setup_slots(struct counting *c)
{
	switch (c->cfg.mode) {
	case COUNTING_TASK:
		c->slot_ids = malloc(sizeof(int));
		if (!c->slot_ids)
			return -ENOMEM;
		c->slot_ids[0] = c->cfg.pid;
		c->n_slots = 1;
		return 0;
	case COUNTING_THREADS:
		return thread_list(c->cfg.pid, &c->slot_ids, &c->n_slots);
	case COUNTING_CPUS:
		if (!c->cfg.cpus)
			return cpus_online(&c->slot_ids, &c->n_slots);
		c->slot_ids = malloc(c->cfg.n_cpus * sizeof(int));
		if (!c->slot_ids)
			return -ENOMEM;
		memcpy(c->slot_ids, c->cfg.cpus, c->cfg.n_cpus * sizeof(int));
		c->n_slots = c->cfg.n_cpus;
		return 0;
	}
	return -EINVAL;
}

static bool is_leader(const struct counting *c, size_t i)
{
	return !c->group || i == 0 || c->group[i] != c->group[i - 1];
}

/* Open every event of one slot; -ESRCH when its thread vanished since it was listed. */
static int open_slot(struct counting *c, size_t s, size_t *bad_event)
{
	pid_t pid = c->cfg.mode == COUNTING_CPUS ? -1 : c->slot_ids[s];
	int cpu = c->cfg.mode == COUNTING_CPUS ? c->slot_ids[s] : -1;
	int *fds = &c->fds[s * c->cfg.n_events];
	int leader = -1;
	for (size_t i = 0; i < c->cfg.n_events; i++) {
		struct perf_event_attr a = c->events[i].attr;
		a.size = sizeof(a);
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = is_leader(c, i) && !c->cfg.enabled;
		a.inherit = c->cfg.inherit && c->cfg.mode != COUNTING_CPUS;
		a.enable_on_exec = c->cfg.mode == COUNTING_TASK && c->cfg.enable_on_exec && is_leader(c, i);
		if (is_leader(c, i))
			leader = -1;
		int fd = spent_event_open(&c->events[i], &a, pid, cpu, leader, 0);
		if (fd < 0) {
			*bad_event = i;
			return fd;
		}
		fds[i] = fd;
		if (is_leader(c, i))
			leader = fd;
	}
	return 0;
}

/* Remove slot S (its thread vanished): close what opened and move the later slots down. */
static void drop_slot(struct counting *c, size_t s)
{
	size_t ne = c->cfg.n_events, later = c->n_slots - s - 1;
	for (size_t i = 0; i < ne; i++)
		if (c->fds[s * ne + i] >= 0)
			close(c->fds[s * ne + i]);
	memmove(&c->fds[s * ne], &c->fds[(s + 1) * ne], later * ne * sizeof(*c->fds));
	memmove(&c->slot_ids[s], &c->slot_ids[s + 1], later * sizeof(*c->slot_ids));
	memmove(&c->slot_comms[s], &c->slot_comms[s + 1], later * sizeof(*c->slot_comms));
	c->n_slots--;
	for (size_t i = 0; i < ne; i++)
		c->fds[c->n_slots * ne + i] = -1;
}

int counting_new(const struct counting_config *cfg, struct counting **out, size_t *bad_event)
{
	int err = 0;
	size_t bad = 0;
	struct counting *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->events = malloc(cfg->n_events * sizeof(*c->events));
	c->group = cfg->group ? malloc(cfg->n_events * sizeof(int)) : NULL;
	if (!c->events || (cfg->group && !c->group) || cfg->n_events == 0) {
		err = cfg->n_events ? -ENOMEM : -EINVAL;
		goto fail;
	}
	memcpy(c->events, cfg->events, cfg->n_events * sizeof(*c->events));
	if (c->group)
		memcpy(c->group, cfg->group, cfg->n_events * sizeof(int));
	c->cfg.events = c->events;
	c->cfg.group = c->group;
	err = setup_slots(c);
	if (err)
		goto fail;
	c->fds = malloc(c->n_slots * cfg->n_events * sizeof(int));
	if (!c->fds) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->n_slots * cfg->n_events; i++)
		c->fds[i] = -1;
	if (c->cfg.mode == COUNTING_THREADS &&
	    !(c->slot_comms = calloc(c->n_slots, sizeof(*c->slot_comms)))) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t s = 0; s < c->n_slots;) {
		/* the name is read before the counters open: a thread that ends right after still
		 * has its row named, and one that ended before is dropped, not shown as '?' */
		if (c->slot_comms)
			thread_comm(c->cfg.pid, c->slot_ids[s], c->slot_comms[s]);
		err = open_slot(c, s, &bad);
		if (err == -ESRCH && c->cfg.mode == COUNTING_THREADS) {
			drop_slot(c, s);
			continue;
		}
		if (err)
			goto fail;
		s++;
	}
	if (c->n_slots == 0) {
		err = -ESRCH;	/* every listed thread ended: the process is gone */
		goto fail;
	}
	*out = c;
	return 0;
fail:
	if (bad_event)
		*bad_event = bad;
	counting_free(c);
	return err;
}

void counting_free(struct counting *c)
{
	if (!c)
		return;
	if (c->fds)
		for (size_t i = 0; i < c->n_slots * c->cfg.n_events; i++)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
	free(c->fds);
	free(c->slot_ids);
	free(c->slot_comms);
	free(c->events);
	free(c->group);
	free(c);
}

static int ioctl_all(struct counting *c, unsigned long req)
{
	for (size_t i = 0; i < c->n_slots * c->cfg.n_events; i++)
		if (c->fds[i] >= 0 && is_leader(c, i % c->cfg.n_events) && ioctl(c->fds[i], req, 0) < 0)
			return -errno;
	return 0;
}

int counting_enable(struct counting *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_ENABLE);
}

int counting_disable(struct counting *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_DISABLE);
}

size_t counting_n_slots(const struct counting *c)
{
	return c->n_slots;
}

int counting_slot_id(const struct counting *c, size_t slot)
{
	return slot < c->n_slots ? c->slot_ids[slot] : -1;
}

const char *counting_slot_comm(const struct counting *c, size_t slot)
{
	return c->slot_comms && slot < c->n_slots ? c->slot_comms[slot] : "";
}

int counting_read_slot(struct counting *c, size_t slot, struct count_value *values)
{
	for (size_t i = 0; i < c->cfg.n_events; i++) {
		int fd = c->fds[slot * c->cfg.n_events + i];
		memset(&values[i], 0, sizeof(values[i]));
		if (fd < 0)
			continue;
		int err = spent_event_read(fd, &values[i].value, &values[i].enabled, &values[i].running);
		if (err)
			return err;
	}
	return 0;
}

int counting_read_totals(struct counting *c, struct count_value *totals)
{
	struct count_value *one = calloc(c->cfg.n_events, sizeof(*one));
	if (!one)
		return -ENOMEM;
	memset(totals, 0, c->cfg.n_events * sizeof(*totals));
	int err = 0;
	for (size_t s = 0; s < c->n_slots && !err; s++) {
		err = counting_read_slot(c, s, one);
		for (size_t i = 0; i < c->cfg.n_events && !err; i++)
			count_value_add(&totals[i], &one[i]);
	}
	free(one);
	return err;
}
