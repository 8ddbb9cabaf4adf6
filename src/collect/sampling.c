/* collect/sampling.c - counter-overflow sampling (collect/sampling.h): opens the events, reads
 * the rings, orders records by time, keeps process maps from side-band records and aggregates
 * every sample into the profile while recording. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "collect/sampling.h"
#include "collect/sampling_int.h"
#include "collect/thread_tracker.h"
#include "core/alloc.h"
#include "core/cpus.h"

uint64_t sampling_preset_period(const struct spent_event *ev, bool fast)
{
	const struct perf_event_attr *a = &ev->attr;
	if (a->type == PERF_TYPE_SOFTWARE &&
	    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
		return fast ? 99991 : 1000003;		/* ns: ~10 kHz / ~1 kHz */
	if (a->type == PERF_TYPE_HARDWARE &&
	    (a->config == PERF_COUNT_HW_CPU_CYCLES || a->config == PERF_COUNT_HW_INSTRUCTIONS ||
	     a->config == PERF_COUNT_HW_REF_CPU_CYCLES || a->config == PERF_COUNT_HW_BUS_CYCLES))
		return fast ? 999983 : 9999991;
	if (a->type == PERF_TYPE_HARDWARE &&
	    (a->config == PERF_COUNT_HW_BRANCH_INSTRUCTIONS ||
	     a->config == PERF_COUNT_HW_CACHE_REFERENCES))
		return fast ? 10007 : 100003;
	if (a->type == PERF_TYPE_TRACEPOINT)
		return 1;				/* every hit, as perf samples them */
	if (a->type == PERF_TYPE_SOFTWARE)
		return fast ? 1 : 997;			/* faults, switches: rare events */
	return fast ? 997 : 9973;			/* misses and other PMU events */
}

uint64_t sampling_max_frequency(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long long max = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &max) != 1)
		max = 0;
	fclose(f);
	return max;
}

void sampling_clamp_frequency(uint64_t *hz, char *msg, size_t len)
{
	uint64_t max = sampling_max_frequency();
	if (len)
		msg[0] = '\0';
	if (!max || *hz <= max)
		return;
	snprintf(msg, len, "-F %llu is above the kernel's maximum sample rate "
		 "(kernel.perf_event_max_sample_rate): sampling at %llu Hz",
		 (unsigned long long)*hz, (unsigned long long)max);
	*hz = max;
}

int sampling_new(const struct sampling_config *cfg, struct sampling **out)
{
	if (!cfg->nevents || cfg->nevents > 64 || (cfg->ring_pages & (cfg->ring_pages - 1)))
		return -EINVAL;
	struct sampling *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int err = -ENOMEM;
	s->cfg = *cfg;
	s->events = malloc(cfg->nevents * sizeof(*s->events));
	s->prof = spent_profile_new();
	if (!s->events || !s->prof)
		goto fail;
	memcpy(s->events, cfg->events, cfg->nevents * sizeof(*s->events));
	s->cfg.events = s->events;
	if (!s->cfg.ring_pages)	/* stack copies are big: 8 KiB per sample */
		s->cfg.ring_pages = cfg->callchain == SAMPLING_CG_DWARF ? 1024 : 128;
	if (!s->cfg.stack_dump)
		s->cfg.stack_dump = 8192;
	for (size_t i = 0; i < cfg->nevents; i++) {
		const struct sampling_event *e = &cfg->events[i];
		if ((err = spent_profile_event_intern(s->prof, e->ev.spec, e->period,
						e->freq ? SPENT_PROFILE_EV_FREQ : 0, &s->prof_ev[i])))
			goto fail;
	}
	if ((err = image_cache_new(&s->cache)) || (err = procmaps_new(s->cache, &s->maps)))
		goto fail;
	sampling_tasks_init(s);
	*out = s;
	return 0;
fail:
	sampling_free(s);
	return err;
}

void sampling_free(struct sampling *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfds; i++)
		if (s->fds[i].fd >= 0)
			close(s->fds[i].fd);
	for (size_t i = 0; i < s->nrings; i++)
		perf_ring_unmap(&s->rings[i]);
	sampling_unwind_release(s);
	sampling_tasks_release(s);
	free(s->fds);
	free(s->rings);
	free(s->pollfds);
	free(s->recs.buf);
	free(s->recs.idx);
	free(s->events);
	free(s->tried);
	procmaps_free(s->maps);
	image_cache_free(s->cache);
	spent_profile_free(s->prof);
	free(s);
}

struct spent_profile *sampling_profile(struct sampling *s)
{
	return s->prof;
}

void sampling_get_stats(const struct sampling *s, struct sampling_stats *st)
{
	*st = s->stats;
}

static void fill_attr(const struct sampling *s, const struct sampling_event *e, bool leader,
		      bool enable_on_exec, struct perf_event_attr *a)
{
	*a = e->ev.attr;
	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (e->freq) {
		a->freq = 1;
		a->sample_freq = e->period;
	} else {
		a->sample_period = e->period;
	}
	if (s->cfg.callchain == SAMPLING_CG_FP)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->cfg.callchain == SAMPLING_CG_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = sampling_unwind_regs_mask();
		a->sample_stack_user = s->cfg.stack_dump;
	}
	a->sample_id_all = 1;
	/* sample times on CLOCK_MONOTONIC, which is NMI-safe and has a fixed offset to the wall
	 * clock (measured at start); perf's default clock has none */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->enable_on_exec = enable_on_exec && !s->cfg.start_disabled;
	a->inherit = !s->cfg.per_thread && !s->cfg.no_inherit;
	a->wakeup_watermark = (uint32_t)(s->cfg.ring_pages * 4096 / 4);
	a->watermark = 1;
	if (leader) {	/* side-band records once per ring */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
	}
}

static int add_fd(struct sampling *s, int fd, size_t ev)
{
	if (ALLOC_GROW(s->fds, s->nfds + 1, s->capfds))
		return -ENOMEM;
	uint64_t id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	s->fds[s->nfds++] = (struct sampling_fd){ .fd = fd, .ev = ev, .id = id };
	return 0;
}

static int add_ring(struct sampling *s, int fd)
{
	if (ALLOC_GROW(s->rings, s->nrings + 1, s->caprings) ||
	    ALLOC_GROW(s->pollfds, s->nrings + 1, s->cappollfds))
		return -ENOMEM;
	int err = perf_ring_map(&s->rings[s->nrings], fd, s->cfg.ring_pages);
	if (err)
		return err;
	s->pollfds[s->nrings] = (struct pollfd){ .fd = fd, .events = POLLIN };
	s->nrings++;
	return 0;
}

static int open_task_events(struct sampling *s, pid_t pid, int cpu, bool enable_on_exec,
			    size_t *failed)
{
	int leader = -1;
	for (size_t i = 0; i < s->cfg.nevents; i++) {
		struct perf_event_attr a;
		fill_attr(s, &s->events[i], i == 0, enable_on_exec, &a);
		int fd = spent_event_open(&s->events[i].ev, &a, pid, cpu, -1, 0);
		if (fd < 0) {
			if (failed)
				*failed = i;
			return fd;
		}
		int err = add_fd(s, fd, i);
		if (err) {
			close(fd);
			return err;
		}
		if (i == 0) {
			leader = fd;
			if ((err = add_ring(s, fd)))
				return err;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0) {
			return -errno;
		}
	}
	return 0;
}

int sampling_open_task(struct sampling *s, pid_t pid, int cpu, bool enable_on_exec,
		       size_t *failed)
{
	size_t fd0 = s->nfds, ring0 = s->nrings;
	int err = open_task_events(s, pid, cpu, enable_on_exec, failed);
	if (!err)
		return 0;
	/* a task whose first events opened and a later one did not (it ended, or EMFILE): the
	 * opened ones would stay, disabled, their ring polled for ever */
	for (size_t i = ring0; i < s->nrings; i++)
		perf_ring_unmap(&s->rings[i]);
	s->nrings = ring0;
	for (size_t i = fd0; i < s->nfds; i++)
		close(s->fds[i].fd);
	s->nfds = fd0;
	return err;
}

/* Enable every event opened so far (those already enabled stay so). 0 or -errno. */
static int enable_all(struct sampling *s)
{
	for (size_t i = 0; i < s->nfds; i++)
		if (ioctl(s->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

int sampling_enable(struct sampling *s)
{
	return enable_all(s);
}

int sampling_attach(struct sampling *s, pid_t pid, bool enable_on_exec, size_t *failed_event)
{
	pid_t *tids = NULL, one = pid;
	size_t ntids = 1;
	int err = 0;
	if (!s->start_wall_ns)
		s->start_wall_ns = sampling_now_wall_ns(s);
	if (!enable_on_exec) {	/* an existing process: every thread, and its maps now */
		if ((err = thread_list(pid, &tids, &ntids)))
			return err;
		procmaps_load_pid(s->maps, pid);
		/* no COMM record will name threads that exist already: their names now */
		for (size_t t = 0; t < ntids && !err; t++) {
			char comm[16];
			thread_comm(pid, tids[t], comm);
			if (comm[0])
				err = sampling_task_comm(s, (uint32_t)pid, (uint32_t)tids[t], comm,
							 sizeof(comm));
		}
		if (err) {
			free(tids);
			return err;
		}
	} else {
		tids = &one;
	}
	int *cpus = NULL;
	size_t ncpu = 0, opened = 0;
	if (!s->cfg.per_thread && (err = cpus_online(&cpus, &ncpu))) {
		if (tids != &one)
			free(tids);
		return err;
	}
	for (size_t t = 0; t < ntids && !err; t++) {
		if (s->cfg.per_thread) {
			err = sampling_open_task(s, tids[t], -1, enable_on_exec, failed_event);
			/* a scan for what a followed task created must not open these again */
			if (!err)
				err = sampling_task_set_followed(s, (uint32_t)tids[t], true);
		} else
			for (size_t c = 0; c < ncpu && !err; c++)
				err = sampling_open_task(s, tids[t], cpus[c], enable_on_exec, failed_event);
		/* a thread that ended since it was listed (a pool replacing its workers): its
		 * samples are missed, the others' are not */
		if (err == -ESRCH && !enable_on_exec)
			err = 0;
		else if (!err)
			opened++;
	}
	if (!err && opened == 0)
		err = -ESRCH;	/* every listed thread ended: the process is gone */
	free(cpus);
	if (tids != &one)
		free(tids);
	if (!err && !enable_on_exec)
		err = enable_all(s);
	return err;
}

int sampling_attach_all_cpus(struct sampling *s, size_t *failed_event)
{
	if (s->cfg.per_thread)
		return -EINVAL;	/* per-thread events follow a tree; these see every task */
	if (!s->start_wall_ns)
		s->start_wall_ns = sampling_now_wall_ns(s);
	int *cpus = NULL;
	size_t ncpu = 0;
	int err = 0;
	if (s->cfg.cpus) {	/* -C: these only */
		if (!(cpus = malloc(s->cfg.n_cpus * sizeof(*cpus) + 1)))
			return -ENOMEM;
		memcpy(cpus, s->cfg.cpus, s->cfg.n_cpus * sizeof(*cpus));
		ncpu = s->cfg.n_cpus;
	} else {
		err = cpus_online(&cpus, &ncpu);
	}
	/* tasks that exist already are named from /proc when first sampled, and their maps read
	 * then (sampling_task_index, lookup): scanning every process here would read the maps of
	 * hundreds that never take a sample */
	for (size_t c = 0; c < ncpu && !err; c++)
		err = sampling_open_task(s, -1, cpus[c], false, failed_event);
	free(cpus);
	return err ? err : enable_all(s);
}

int sampling_poll(struct sampling *s, int timeout_ms)
{
	if (poll(s->pollfds, s->nrings, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return sampling_read_rings(s);
}

int sampling_finish(struct sampling *s)
{
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	int err = sampling_read_rings(s);
	if (s->start_wall_ns)
		spent_profile_extend_span(s->prof, s->start_wall_ns, sampling_now_wall_ns(s));
	return err;
}
