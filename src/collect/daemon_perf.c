/* collect/daemon_perf.c - per-CPU perf events for the daemon: sampling events with periods
 * redrawn from a range, side-band rings carrying MMAP2/COMM/FORK/EXIT, and the ring reader. */
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
#include <unistd.h>

#include "collect/aggregate.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID)

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

struct dperf {
	struct dperf_config cfg;
	struct dcpu *cpus;
	int ncpus;
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

/* Online CPU numbers from /sys (a list like "0-3,5"); *CPUS is new memory the caller frees. */
static int online_cpus(int **cpus, int *n)
{
	char buf[1024];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int *v = NULL, cnt = 0, cap = 0;
	char *s, *save = NULL;

	*cpus = NULL;
	*n = 0;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (s = strtok_r(buf, ",\n", &save); s; s = strtok_r(NULL, ",\n", &save)) {
		int a, b;
		if (sscanf(s, "%d-%d", &a, &b) != 2)
			b = a = atoi(s);
		for (int c = a; c <= b && c < 4096; c++) {
			if (cnt == cap) {
				cap = cap ? cap * 2 : 8;
				int *nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[cnt++] = c;
		}
	}
	*cpus = v;
	*n = cnt;
	return cnt ? 0 : -ENODEV;
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
	int *cpus = NULL, n = 0, err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	err = -EINVAL;
	if (cfg->nev == 0 || cfg->nev > AGG_MAX_EVENTS || (cfg->samples_to_ring && !cfg->sideband))
		goto out;
	err = online_cpus(&cpus, &n);
	if (err)
		goto out;
	p->cpus = calloc(n, sizeof(*p->cpus));
	err = -ENOMEM;
	if (!p->cpus)
		goto out;
	for (int i = 0; i < n; i++) {
		p->cpus[i].cpu = cpus[i];
		p->cpus[i].ring.fd = -1;
		for (size_t e = 0; e < AGG_MAX_EVENTS; e++)
			p->cpus[i].sample_fd[e] = -1;
	}
	p->ncpus = n;
	for (int i = 0; i < n; i++) {
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
		const struct { uint64_t id, ip; uint32_t pid, tid; } *s = (const void *)body;
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
		if (blen >= 8 && (hdr->misc & PERF_RECORD_MISC_COMM_EXEC) && pt[0] == pt[1] && h->exec)
			h->exec(h->arg, (pid_t)pt[0]);
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

static size_t ring_read(const struct dperf *p, const struct dcpu *c, const struct dperf_handlers *h)
{
	const struct dring *r = &c->ring;
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data = (uint8_t *)r->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	size_t n = 0;

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
		const struct perf_event_header *rec = (const void *)(data + off);
		if (off + hdr.size > r->data_size) {	/* wraps: make it contiguous */
			memcpy(r->scratch, data + off, first);
			memcpy(r->scratch + first, data, hdr.size - first);
			rec = (const void *)r->scratch;
		}
		record_handle(p, c, rec, h);
		tail += hdr.size;
		n++;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

size_t dperf_read(struct dperf *p, const struct dperf_handlers *h)
{
	size_t n = 0;

	for (int i = 0; i < p->ncpus; i++)
		if (p->cpus[i].ring.base)
			n += ring_read(p, &p->cpus[i], h);
	return n;
}
