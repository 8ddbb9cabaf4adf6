/* collect/counters.c - the perfex library (include/spent/counters.h): counter sets on the
 * calling thread, rdpmc reads through the perf mmap page, overflow handlers, named regions. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect/fork_gen.h"
#include "spent/counters.h"
#include "spent/events.h"

struct overflow {
	spent_overflow_fn fn;
	void *arg;
	uint64_t count;
	int armed;	/* a sampling event: started with REFRESH, one overflow at a time */
};

struct spent_counters {
	size_t n;
	struct spent_event *evs;
	int *fds;
	struct perf_event_mmap_page **pages;	/* NULL where mmap is refused (inherit) */
	struct overflow *ovf;
	int flags;
	long page_size;
	unsigned fork_gen;	/* fork_gen when opened: another means a forked child reads */
};

/* A forked child's calls on counters opened before the fork fail with -ECHILD (fork_gen.h):
 * the perf mmap pages are not copied into a child (reading them crashed it) and the events
 * count the parent's thread. */

static __thread char open_error[256];

const char *spent_counters_error(void)
{
	return open_error;
}

static int open_event(struct spent_counters *c, size_t i, uint64_t period)
{
	struct perf_event_attr a = c->evs[i].attr;
	a.size = sizeof(a);
	a.disabled = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.inherit = (c->flags & SPENT_COUNTERS_INHERIT) != 0;
	if (period) {
		a.sample_period = period;
		a.wakeup_events = 1;
	}
	int fd = spent_event_open(&c->evs[i], &a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	c->fds[i] = fd;
	c->pages[i] = NULL;
	if (!a.inherit) {
		void *p = mmap(NULL, (size_t)c->page_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			c->pages[i] = p;
	}
	return 0;
}

static void close_event(struct spent_counters *c, size_t i)
{
	if (c->pages[i])
		munmap(c->pages[i], (size_t)c->page_size);
	if (c->fds[i] >= 0)
		close(c->fds[i]);
	c->pages[i] = NULL;
	c->fds[i] = -1;
}

int spent_counters_open(const char *events, int flags, struct spent_counters **out)
{
	int err;
	open_error[0] = 0;
	/* checked before any event is opened: a NULL OUT crashed after opening them all */
	if (!events || !out) {
		snprintf(open_error, sizeof(open_error), "%s is NULL", !events ? "the event list" : "OUT");
		return -EINVAL;
	}
	if (flags & ~SPENT_COUNTERS_INHERIT) {	/* a flag of a later spent: not ignored */
		snprintf(open_error, sizeof(open_error), "unknown flags 0x%x", (unsigned)flags);
		return -EINVAL;
	}
	struct spent_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->flags = flags;
	c->page_size = sysconf(_SC_PAGESIZE);
	fork_gen_watch();
	c->fork_gen = fork_gen;
	err = spent_event_parse_list(events, &c->evs, &c->n, open_error, sizeof(open_error));
	if (err)
		goto fail;
	c->fds = malloc(c->n * sizeof(int));
	c->pages = calloc(c->n, sizeof(*c->pages));
	c->ovf = calloc(c->n, sizeof(*c->ovf));
	if (!c->fds || !c->pages || !c->ovf) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->n; i++)
		c->fds[i] = -1;
	for (size_t i = 0; i < c->n; i++) {
		err = open_event(c, i, 0);
		if (err) {
			snprintf(open_error, sizeof(open_error), "cannot count '%s': %s%s", c->evs[i].spec,
				 strerror(-err), spent_event_needs_pmu(&c->evs[i]) && !spent_pmu_present()
				 ? " (no hardware PMU on this machine)" : "");
			if (err == -EOPNOTSUPP || err == -ENODEV)
				err = -ENOENT;
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	spent_counters_free(c);
	return err;
}

static void overflow_forget(const struct spent_counters *c);

void spent_counters_free(struct spent_counters *c)
{
	if (!c)
		return;
	overflow_forget(c);
	if (c->fds)
		for (size_t i = 0; i < c->n; i++)
			close_event(c, i);
	free(c->fds);
	free(c->pages);
	free(c->ovf);
	free(c->evs);
	free(c);
}

static int ioctl_each(struct spent_counters *c, unsigned long req)
{
	if (!c)
		return -EINVAL;
	if (c->fork_gen != fork_gen)	/* would stop or reset the parent's counters */
		return -ECHILD;
	for (size_t i = 0; i < c->n; i++)
		if (ioctl(c->fds[i], req, 0) < 0)
			return -errno;
	return 0;
}

int spent_counters_start(struct spent_counters *c)
{
	if (!c)
		return -EINVAL;
	if (c->fork_gen != fork_gen)
		return -ECHILD;
	for (size_t i = 0; i < c->n; i++) {
		unsigned long req = c->ovf[i].armed ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE;
		if (ioctl(c->fds[i], req, c->ovf[i].armed ? 1 : 0) < 0)
			return -errno;
	}
	return 0;
}

int spent_counters_stop(struct spent_counters *c)
{
	return ioctl_each(c, PERF_EVENT_IOC_DISABLE);
}

int spent_counters_reset(struct spent_counters *c)
{
	return ioctl_each(c, PERF_EVENT_IOC_RESET);
}

size_t spent_counters_count(const struct spent_counters *c)
{
	return c ? c->n : 0;
}

const char *spent_counters_name(const struct spent_counters *c, size_t i)
{
	return c && i < c->n ? c->evs[i].spec : NULL;
}

int spent_counters_fast(const struct spent_counters *c, size_t i)
{
	const struct perf_event_mmap_page *pc = c && i < c->n ? c->pages[i] : NULL;
	return pc && pc->cap_user_rdpmc && __atomic_load_n(&pc->index, __ATOMIC_RELAXED) != 0;
}

#if defined(__x86_64__)
static inline uint64_t read_pmc(uint32_t idx)
{
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return lo | (uint64_t)hi << 32;
}

static inline uint64_t read_tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return lo | (uint64_t)hi << 32;
}

/* The self-monitoring read documented in perf_event_open(2): a seqlock over the mmap page.
 * Returns 0 when the event is live on a hardware counter, -EAGAIN when read(2) is needed. */
static int read_mmap(const struct perf_event_mmap_page *pc, uint64_t *value, uint64_t *enabled,
		     uint64_t *running)
{
	uint32_t seq, idx;
	uint64_t count, ena, run, cyc = 0, offset = 0;
	uint16_t shift = 0;
	uint32_t mult = 0;
	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		ena = pc->time_enabled;
		run = pc->time_running;
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (pc->cap_user_time) {
			cyc = read_tsc();
			offset = pc->time_offset;
			mult = pc->time_mult;
			shift = pc->time_shift;
		}
		if (pc->cap_user_rdpmc && idx) {
			uint16_t width = pc->pmc_width;
			int64_t pmc = (int64_t)(read_pmc(idx - 1) << (64 - width));
			count += (uint64_t)(pmc >> (64 - width));
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	if (!idx || !pc->cap_user_rdpmc)
		return -EAGAIN;
	if (mult) {
		uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);
		uint64_t delta = offset + quot * mult + ((rem * mult) >> shift);
		ena += delta;
		run += delta;
	}
	*value = count;
	*enabled = ena;
	*running = run;
	return 0;
}
#else
static int read_mmap(const struct perf_event_mmap_page *pc, uint64_t *value, uint64_t *enabled,
		     uint64_t *running)
{
	(void)pc; (void)value; (void)enabled; (void)running;
	return -EAGAIN;
}
#endif

int spent_counters_read_one(struct spent_counters *c, size_t i, uint64_t *value,
			    uint64_t *enabled_ns, uint64_t *running_ns)
{
	if (!c || i >= c->n || !value)
		return -EINVAL;
	if (c->fork_gen != fork_gen)
		return -ECHILD;
	uint64_t buf[3];
	if (c->pages[i] && read_mmap(c->pages[i], &buf[0], &buf[1], &buf[2]) == 0)
		goto done;
	int err = spent_event_read(c->fds[i], &buf[0], &buf[1], &buf[2]);
	if (err)
		return err;
done:
	*value = buf[0];
	if (enabled_ns)
		*enabled_ns = buf[1];
	if (running_ns)
		*running_ns = buf[2];
	return 0;
}

int spent_counters_read(struct spent_counters *c, uint64_t *values, size_t n)
{
	/* as spent_stat_read: more values than events is the caller's mistake, not "the rest
	 * unchanged" (they were left as they were, read as counts by the caller) */
	if (!c || (!values && n) || n > c->n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t v, e, r;
		int err = spent_counters_read_one(c, i, &v, &e, &r);
		if (err)
			return err;
		values[i] = r && r < e ? (uint64_t)((double)v * (double)e / (double)r) : v;
	}
	return 0;
}

/* --- overflow signals: a fixed table, because the signal handler may not allocate or lock */

#define MAX_OVERFLOW 64

static struct {
	int fd1;	/* the event's fd + 1; 0: an empty slot (fd 0 is a valid event: stdin closed) */
	struct spent_counters *c;
	size_t i;
} ovf_table[MAX_OVERFLOW];
static pthread_mutex_t ovf_lock = PTHREAD_MUTEX_INITIALIZER;

static void overflow_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	for (int k = 0; k < MAX_OVERFLOW; k++) {
		int fd = __atomic_load_n(&ovf_table[k].fd1, __ATOMIC_ACQUIRE) - 1;
		if (fd < 0 || fd != si->si_fd)
			continue;
		struct spent_counters *c = ovf_table[k].c;
		size_t i = ovf_table[k].i;
		struct overflow *o = &c->ovf[i];
		o->count++;
		if (o->fn)
			o->fn(c, i, o->count, o->arg);
		ioctl(fd, PERF_EVENT_IOC_REFRESH, 1); /* re-arm for the next period */
		return;
	}
}

/* Drop C's handlers: event I's, or all of them (I = SIZE_MAX). */
static void overflow_forget_event(const struct spent_counters *c, size_t i)
{
	pthread_mutex_lock(&ovf_lock);
	for (int k = 0; k < MAX_OVERFLOW; k++)
		if (ovf_table[k].c == c && (i == SIZE_MAX || ovf_table[k].i == i))
			__atomic_store_n(&ovf_table[k].fd1, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ovf_lock);
}

static void overflow_forget(const struct spent_counters *c)
{
	overflow_forget_event(c, SIZE_MAX);
}

int spent_counters_on_overflow(struct spent_counters *c, size_t i, uint64_t period, int signo,
			       spent_overflow_fn handler, void *arg)
{
	if (!c || i >= c->n || period == 0)
		return -EINVAL;
	if (c->fork_gen != fork_gen)
		return -ECHILD;
	if (signo == 0)
		signo = SIGRTMIN + 4;
	struct sigaction sa = { .sa_sigaction = overflow_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL) < 0)
		return -errno;
	/* a sampling event replaces the counting one: same event, now with a period (the other
	 * events' handlers stay: dropping them all left the first disarmed for good) */
	overflow_forget_event(c, i);
	close_event(c, i);
	int err = open_event(c, i, period);
	if (err)
		return err;
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	int fd = c->fds[i];
	if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, signo) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	c->ovf[i] = (struct overflow){ handler, arg, 0, 1 };
	pthread_mutex_lock(&ovf_lock);
	err = -ENOSPC;
	for (int k = 0; k < MAX_OVERFLOW; k++)
		if (ovf_table[k].fd1 == 0) {
			ovf_table[k].c = c;
			ovf_table[k].i = i;
			__atomic_store_n(&ovf_table[k].fd1, fd + 1, __ATOMIC_RELEASE);
			err = 0;
			break;
		}
	pthread_mutex_unlock(&ovf_lock);
	return err; /* counting and overflows start with spent_counters_start */
}
