/* collect/daemon_perf.c - per-CPU perf events for the daemon: sampling events with periods
 * redrawn from a range, side-band rings carrying MMAP2/COMM/FORK/EXIT, and the ring reader. */
#include "core/alloc.h"
#include "collect/daemon_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "collect/aggregate.h"
#include "core/cpus.h"

/* Samples: id, ip, pid/tid, time. Other records end with the sample_id trailer
 * pid/tid, time, id: records from every CPU's ring are merged in time order. */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

struct dring {
	int fd;
	void *base;		/* metadata page + data pages */
	size_t data_size;
	uint8_t *scratch;	/* a record that wraps around the end is copied here */
};

struct dcpu {
	int cpu;
	int sample_fd[AGG_MAX_EVENTS];
	uint64_t sample_id[AGG_MAX_EVENTS];
	struct dring ring;
};

/* One record copied out of a ring, waiting to be dispatched in time order. */
struct pending_rec {
	uint64_t time;
	uint64_t seq;		/* ring order, for equal times */
	size_t off;		/* in the batch buffer */
	int cpu;		/* index in cpus[] */
};

struct dperf {
	struct dperf_config cfg;
	struct dcpu *cpus;
	int ncpus;
	uint8_t *batch;		/* copied records */
	size_t batch_len, batch_cap;
	struct pending_rec *recs;
	size_t nrecs, caprecs;
};

uint64_t dperf_random_period(uint64_t *rng, uint64_t lo, uint64_t hi)
{
	uint64_t x = *rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	if (hi <= lo)
		return lo;
	return lo + x % (hi - lo + 1);
}


static int ring_open(struct dring *r, int cpu, size_t pages)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = SAMPLE_TYPE,
		.mmap = 1, .mmap2 = 1, .comm = 1, .comm_exec = 1, .task = 1,
		.sample_id_all = 1, .watermark = 1, .disabled = 1,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC,	/* comparable with "now" */
	};
	long pg = sysconf(_SC_PAGESIZE);
	int fd;

	a.wakeup_watermark = (uint32_t)(pages * pg / 4);
	fd = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r->fd = fd;
	r->data_size = pages * pg;
	r->base = mmap(NULL, (pages + 1) * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->scratch = malloc(65536);
	return r->scratch ? 0 : -ENOMEM;
}

static void ring_close(struct dring *r)
{
	if (r->base)
		munmap(r->base, r->data_size + sysconf(_SC_PAGESIZE));
	if (r->fd >= 0)
		close(r->fd);
	free(r->scratch);
}

static int sample_open(struct dperf *p, struct dcpu *c, size_t e)
{
	struct perf_event_attr a = p->cfg.evs[e].attr;
	int fd;

	a.size = sizeof(a);
	a.disabled = 1;
	a.sample_type = p->cfg.samples_to_ring ? SAMPLE_TYPE : PERF_SAMPLE_IP;
	if (p->cfg.samples_to_ring) {	/* events sharing a ring share its clock */
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
	}
	if (p->cfg.period_lo) {
		a.freq = 0;
		a.sample_period = p->cfg.period_hi;
	} else {
		a.freq = 1;
		a.sample_freq = p->cfg.freq;
	}
	fd = spent_event_open(&p->cfg.evs[e], &a, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	c->sample_fd[e] = fd;
	if (p->cfg.samples_to_ring) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->ring.fd) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &c->sample_id[e]) < 0)
			return -errno;
	}
	return 0;
}

int dperf_open(const struct dperf_config *cfg, struct dperf **out)
{
	struct dperf *p = calloc(1, sizeof(*p));
	int *cpus = NULL, err;
	size_t n = 0;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	err = -EINVAL;
	if (cfg->nev == 0 || cfg->nev > AGG_MAX_EVENTS || (cfg->samples_to_ring && !cfg->sideband))
		goto out;
	err = cpus_online(&cpus, &n);
	if (!err && !n)
		err = -ENODEV;
	if (err)
		goto out;
	p->cpus = calloc(n, sizeof(*p->cpus));
	err = -ENOMEM;
	if (!p->cpus)
		goto out;
	for (size_t i = 0; i < n; i++) {
		p->cpus[i].cpu = cpus[i];
		p->cpus[i].ring.fd = -1;
		for (size_t e = 0; e < AGG_MAX_EVENTS; e++)
			p->cpus[i].sample_fd[e] = -1;
	}
	p->ncpus = (int)n;
	for (size_t i = 0; i < n; i++) {
		struct dcpu *c = &p->cpus[i];
		if (cfg->sideband && (err = ring_open(&c->ring, c->cpu, cfg->ring_pages)) != 0)
			goto out;
		for (size_t e = 0; e < cfg->nev; e++)
			if ((err = sample_open(p, c, e)) != 0)
				goto out;
	}
	*out = p;
	p = NULL;
	err = 0;
out:
	free(cpus);
	dperf_close(p);
	return err;
}

void dperf_close(struct dperf *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->ncpus; i++) {
		for (size_t e = 0; e < AGG_MAX_EVENTS; e++)
			if (p->cpus[i].sample_fd[e] >= 0)
				close(p->cpus[i].sample_fd[e]);
		ring_close(&p->cpus[i].ring);
	}
	free(p->cpus);
	free(p->batch);
	free(p->recs);
	free(p);
}

int dperf_enable(struct dperf *p)
{
	for (int i = 0; i < p->ncpus; i++) {
		struct dcpu *c = &p->cpus[i];
		if (c->ring.fd >= 0 && ioctl(c->ring.fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
		for (size_t e = 0; e < p->cfg.nev; e++)
			if (ioctl(c->sample_fd[e], PERF_EVENT_IOC_ENABLE, 0) < 0)
				return -errno;
	}
	return 0;
}

int dperf_disable_samples(struct dperf *p)
{
	int err = 0;
	for (int i = 0; i < p->ncpus; i++)
		for (size_t e = 0; e < p->cfg.nev; e++)
			if (p->cpus[i].sample_fd[e] >= 0 &&
			    ioctl(p->cpus[i].sample_fd[e], PERF_EVENT_IOC_DISABLE, 0) < 0 && !err)
				err = -errno;
	return err;
}

int dperf_ncpus(const struct dperf *p)
{
	return p->ncpus;
}

int dperf_sample_fd(const struct dperf *p, int i, size_t ev)
{
	return i < p->ncpus && ev < p->cfg.nev ? p->cpus[i].sample_fd[ev] : -1;
}

int dperf_redraw_periods(struct dperf *p, uint64_t *rng)
{
	if (!p->cfg.period_lo || p->cfg.period_lo == p->cfg.period_hi)
		return 0;
	for (int i = 0; i < p->ncpus; i++) {
		for (size_t e = 0; e < p->cfg.nev; e++) {
			uint64_t v = dperf_random_period(rng, p->cfg.period_lo, p->cfg.period_hi);
			if (ioctl(p->cpus[i].sample_fd[e], PERF_EVENT_IOC_PERIOD, &v) < 0)
				return -errno;
		}
	}
	return 0;
}

size_t dperf_pollfds(const struct dperf *p, struct pollfd *pfds, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < p->ncpus && n < max; i++) {
		if (p->cpus[i].ring.fd < 0)
			continue;
		pfds[n].fd = p->cpus[i].ring.fd;
		pfds[n].events = POLLIN;
		pfds[n].revents = 0;
		n++;
	}
	return n;
}

struct rec_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct rec_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* Dispatch one record (HDR followed by its body, SIZE bytes in all, contiguous). */
static void record_handle(const struct dperf *p, const struct dcpu *c,
			  const struct perf_event_header *hdr, const struct dperf_handlers *h)
{
	const uint8_t *body = (const uint8_t *)(hdr + 1);
	size_t blen = hdr->size - sizeof(*hdr);

	switch (hdr->type) {
	case PERF_RECORD_SAMPLE: {
		const struct { uint64_t id, ip; uint32_t pid, tid; uint64_t time; } *s = (const void *)body;
		if (blen < sizeof(*s))
			return;
		for (size_t e = 0; e < p->cfg.nev; e++)
			if (c->sample_id[e] == s->id && h->sample)
				h->sample(h->arg, c->cpu, (uint32_t)e, (pid_t)s->pid, s->ip);
		return;
	}
	case PERF_RECORD_MMAP2: {
		const struct rec_mmap2 *m = (const void *)body;
		if (blen <= sizeof(*m) || !h->mmap)
			return;
		size_t maxname = blen - sizeof(*m);
		if (strnlen(m->filename, maxname) == maxname)
			return;
		struct dmaps_mmap mm = {
			.pid = (pid_t)m->pid, .start = m->addr, .len = m->len, .pgoff = m->pgoff,
			.prot = m->prot, .path = m->filename,
			.dev = (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ? 0 :
				((uint64_t)m->maj << 32 | m->min),
			.ino = (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ? 0 : m->ino,
		};
		if (mm.dev)	/* userspace dev_t encoding, as stat() and /proc/PID/maps give it */
			mm.dev = makedev(m->maj, m->min);
		h->mmap(h->arg, &mm);
		return;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *pt = (const void *)body;
		bool exec = hdr->misc & PERF_RECORD_MISC_COMM_EXEC;
		if (blen < 8 || pt[0] != pt[1])
			return;	/* a thread's name: the daemon keeps processes */
		if (exec && h->exec)
			h->exec(h->arg, (pid_t)pt[0]);
		/* the name follows pid and tid, NUL-terminated within the record */
		if (h->comm && blen > 8 && memchr(body + 8, '\0', blen - 8))
			h->comm(h->arg, (pid_t)pt[0], (const char *)(body + 8), exec);
		return;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct rec_task *t = (const void *)body;
		if (blen < sizeof(*t))
			return;
		if (hdr->type == PERF_RECORD_FORK && t->pid != t->ppid && h->fork)
			h->fork(h->arg, (pid_t)t->pid, (pid_t)t->ppid);
		if (hdr->type == PERF_RECORD_EXIT && t->pid == t->tid && h->exit)
			h->exit(h->arg, (pid_t)t->pid);
		return;
	}
	case PERF_RECORD_LOST:
		if (blen >= 16 && h->lost)
			h->lost(h->arg, ((const uint64_t *)body)[1], false);
		return;
	case PERF_RECORD_LOST_SAMPLES:
		if (blen >= 8 && h->lost)
			h->lost(h->arg, ((const uint64_t *)body)[0], true);
		return;
	default:
		return;
	}
}

/* Time of a record: in the sample body, or in the sample_id trailer (pid/tid, time, id). */
static uint64_t record_time(const struct perf_event_header *h)
{
	const uint8_t *b = (const uint8_t *)h;
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size >= sizeof(*h) + 32)
			memcpy(&t, b + sizeof(*h) + 24, 8);
	} else if (h->size >= sizeof(*h) + 24) {
		memcpy(&t, b + h->size - 16, 8);
	}
	return t;
}

static int batch_add(struct dperf *p, int cpu, uint64_t seq, const void *rec, size_t size)
{
	if (ALLOC_GROW(p->batch, p->batch_len + size, p->batch_cap) ||
	    ALLOC_GROW(p->recs, p->nrecs + 1, p->caprecs))
		return -ENOMEM;
	memcpy(p->batch + p->batch_len, rec, size);
	p->recs[p->nrecs++] = (struct pending_rec){
		.time = record_time(rec), .seq = seq, .off = p->batch_len, .cpu = cpu };
	p->batch_len += (size + 7) & ~(size_t)7;
	return 0;
}

/* Copy every complete record of ring I into the batch and release the ring space. */
static void ring_collect(struct dperf *p, int i)
{
	const struct dring *r = &p->cpus[i].ring;
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data = (uint8_t *)r->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = tail % r->data_size;
		struct perf_event_header hdr;
		size_t first = r->data_size - off;
		if (first >= sizeof(hdr))
			memcpy(&hdr, data + off, sizeof(hdr));
		else {
			memcpy(&hdr, data + off, first);
			memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		const void *rec = data + off;
		if (off + hdr.size > r->data_size) {	/* wraps: make it contiguous */
			memcpy(r->scratch, data + off, first);
			memcpy(r->scratch + first, data, hdr.size - first);
			rec = r->scratch;
		}
		if (batch_add(p, i, tail, rec, hdr.size))
			break;	/* out of memory: the rest stays in the ring */
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct pending_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keep records N0.. (sorted, later than the cut-off) for the next read. */
static int batch_keep_tail(struct dperf *p, size_t n0)
{
	size_t keep = p->nrecs - n0, bytes = 0;
	uint8_t *nb;
	int err = 0;

	if (keep == 0) {
		p->nrecs = p->batch_len = 0;
		return 0;
	}
	for (size_t k = n0; k < p->nrecs; k++)
		bytes += (((const struct perf_event_header *)(p->batch + p->recs[k].off))->size + 7) & ~7u;
	nb = malloc(bytes ? bytes : 1);
	if (!nb)
		return -ENOMEM;
	size_t off = 0;
	for (size_t k = n0; k < p->nrecs; k++) {
		const struct perf_event_header *h = (const void *)(p->batch + p->recs[k].off);
		memcpy(nb + off, h, h->size);
		p->recs[k - n0] = p->recs[k];
		p->recs[k - n0].off = off;
		off += (h->size + 7) & ~7u;
	}
	memcpy(p->batch, nb, off);	/* off <= batch_cap: these bytes came from it */
	free(nb);
	p->nrecs = keep;
	p->batch_len = off;
	return err;
}

size_t dperf_read(struct dperf *p, const struct dperf_handlers *h)
{
	/* Records up to now are in every ring by now (give or take a few microseconds); a record
	 * written later on another cpu may be older than one read here, so anything newer than
	 * the cut-off waits for the next read: a process forks on one cpu and execs and exits
	 * on another, and its records must be seen in that order. */
	uint64_t cutoff = mono_ns();
	size_t n = 0, k;

	for (int i = 0; i < p->ncpus; i++)
		if (p->cpus[i].ring.base)
			ring_collect(p, i);
	if (p->nrecs)
		qsort(p->recs, p->nrecs, sizeof(*p->recs), rec_cmp);
	for (k = 0; k < p->nrecs && p->recs[k].time <= cutoff; k++)
		record_handle(p, &p->cpus[p->recs[k].cpu],
			      (const struct perf_event_header *)(p->batch + p->recs[k].off), h);
	n = k;
	if (batch_keep_tail(p, k)) {	/* out of memory: dispatch late rather than never */
		for (; k < p->nrecs; k++)
			record_handle(p, &p->cpus[p->recs[k].cpu],
				      (const struct perf_event_header *)(p->batch + p->recs[k].off), h);
		p->nrecs = p->batch_len = 0;
	}
	/* do not keep a burst's worth of memory around */
	if (p->nrecs == 0 && p->batch_cap > (8u << 20)) {
		free(p->batch);
		free(p->recs);
		p->batch = NULL;
		p->recs = NULL;
		p->batch_cap = p->caprecs = 0;
	}
	return n;
}
