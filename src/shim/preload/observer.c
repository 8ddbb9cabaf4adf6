/* shim/preload/observer.c - libspent-shim.so: the Shim observer thread, started inside the
 * application (LD_PRELOAD constructor, or spent_shim_start() in static programs). It runs the
 * Shim paper's observer loop: clock, counters back to back, clock, thread identity, tags, then
 * online analysis (tag histograms, filtered rates) into the coordinator's shared memory.
 * Not part of libspent: it links nothing but libc. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#include "shim/sample_class.h"
#include "shim/sched_channel.h"
#include "shim/shm_layout.h"

/* Everything the observer loop touches, loaded once from the shared configuration. */
struct observer {
	struct shim_shm *shm;
	const volatile uint64_t *caddr[SHIM_MAX_COUNTERS];	/* NULL: perf fd */
	int cfd[SHIM_MAX_COUNTERS];
	const volatile uint64_t *taddr[SHIM_MAX_TAGS];
	const volatile uint64_t *thread;	/* the app CPU's sched slot, or NULL */
	const volatile uint64_t *switches;	/* ... and its context-switch count */
	const volatile uint64_t *own_switches;	/* the observer CPU's count, or NULL */
	struct shim_hist_slot *hist[SHIM_MAX_TAGS];
	double *resv[SHIM_MAX_COUNTERS];
	uint64_t *ring;
	uint32_t nc, nt;
	uint64_t words;
	pid_t pid;
};

static struct observer obs;
static pthread_t obs_thread;
static int obs_started;		/* 1 once spent_shim_start claimed the region */
static volatile int obs_stop;	/* set by the destructor */
static volatile int obs_finished;	/* set by the observer after its last publish */

/* Copy SRC into DST of N bytes, truncating. */
static void str_copy(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);
	memcpy(dst, src, len);
	dst[len] = 0;
}

static void shim_fail(struct shim_shm *shm, const char *msg)
{
	str_copy(shm->errmsg, sizeof(shm->errmsg), msg);
	__atomic_store_n(&shm->state, SHIM_STATE_ERROR, __ATOMIC_RELEASE);
}

struct resolve_ctx {
	struct shim_shm *shm;
	int index;
};

static int image_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct resolve_ctx *ctx = arg;
	struct shim_shm *shm = ctx->shm;
	int is_main = ctx->index++ == 0;
	char path[PATH_MAX];
	const char *name = info->dlpi_name;

	if (is_main) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
	} else if (!name || !*name || !realpath(name, path)) {
		str_copy(path, sizeof(path), name ? name : "");
	}
	if (shm->nimages < SHIM_MAX_IMAGES) {
		struct shim_image_map *m = &shm->images[shm->nimages++];
		m->base = info->dlpi_addr;
		str_copy(m->path, sizeof(m->path), path);
	}
	for (uint32_t i = 0; i < shm->ncounters + shm->ntags; i++) {
		struct shim_shm_signal *s = i < shm->ncounters ? &shm->counters[i]
							       : &shm->tags[i - shm->ncounters];
		if (s->source != SHIM_SRC_MEMORY || s->addr)
			continue;
		if (s->in_main ? is_main : (!is_main && strcmp(path, s->image) == 0))
			s->addr = info->dlpi_addr + s->offset;
	}
	return 0;
}

static int observer_setup(struct shim_shm *shm)
{
	struct resolve_ctx ctx = { shm, 0 };
	char msg[256];

	dl_iterate_phdr(image_cb, &ctx);
	memset(&obs, 0, sizeof(obs));
	obs.shm = shm;
	obs.nc = shm->ncounters;
	obs.nt = shm->ntags;
	obs.pid = getpid();
	obs.words = shim_sample_words(obs.nc, obs.nt);
	for (uint32_t i = 0; i < obs.nc + obs.nt; i++) {
		struct shim_shm_signal *s = i < obs.nc ? &shm->counters[i] : &shm->tags[i - obs.nc];
		if (s->source == SHIM_SRC_MEMORY && !s->addr) {
			snprintf(msg, sizeof(msg), "signal '%.31s': image '%.160s' is not loaded in the process",
				 s->name, s->image);
			shim_fail(shm, msg);
			return -ENOENT;
		}
		if (i < obs.nc) {
			obs.caddr[i] = s->source == SHIM_SRC_MEMORY ? (void *)(uintptr_t)s->addr : NULL;
			obs.cfd[i] = s->fd;
			obs.resv[i] = (double *)((char *)shm + shm->resv_off) + (uint64_t)i * SHIM_RESV_CAP;
		} else {
			obs.taddr[i - obs.nc] = (void *)(uintptr_t)s->addr;
			obs.hist[i - obs.nc] = (struct shim_hist_slot *)((char *)shm + shm->hist_off) +
					       (uint64_t)(i - obs.nc) * SHIM_HIST_SLOTS;
		}
	}
	if (shm->sched_fd >= 0 && shm->app_cpu >= 0 && shm->app_cpu < SCHED_CHANNEL_MAX_CPUS) {
		void *m = mmap(NULL, shm->sched_map_bytes, PROT_READ, MAP_SHARED, shm->sched_fd, 0);
		if (m != MAP_FAILED) {
			struct sched_slot *slot = (struct sched_slot *)m + shm->app_cpu;
			obs.thread = (const volatile uint64_t *)&slot->thread;
			obs.switches = (const volatile uint64_t *)&slot->switches;
			/* the observer is pinned there: any switch on its CPU took it off and back */
			if (shm->observer_cpu >= 0 && shm->observer_cpu < SCHED_CHANNEL_MAX_CPUS)
				obs.own_switches = (const volatile uint64_t *)&(
					(struct sched_slot *)m + shm->observer_cpu)->switches;
		}
	}
	if (shm->ring_cap)
		obs.ring = (uint64_t *)((char *)shm + shm->ring_off);
	return 0;
}

static inline uint64_t clock_serial(void)
{
	unsigned aux;
	return __rdtscp(&aux);
}

static inline uint64_t counter_read(int i)
{
	uint64_t v = 0;
	if (obs.caddr[i])
		return *obs.caddr[i];
	if (read(obs.cfd[i], &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

static inline void hist_add(struct shim_hist_slot *h, uint64_t v, uint64_t *overflow)
{
	uint64_t i = (v * 0x9E3779B97F4A7C15ULL) >> 51;	/* 13 bits: SHIM_HIST_SLOTS */
	for (int p = 0; p < SHIM_HIST_PROBES; p++) {
		struct shim_hist_slot *s = &h[(i + p) & (SHIM_HIST_SLOTS - 1)];
		if (s->count && s->value == v) {
			s->count++;
			return;
		}
		if (!s->count) {
			s->value = v;
			s->count = 1;
			return;
		}
	}
	(*overflow)++;
}

/* Per-run state the loop carries between samples. */
struct loop_state {
	uint64_t prev_start, prev_end;
	struct shim_sample_view prev_view;
	enum shim_sample_class prev_class;
	uint64_t prev[SHIM_MAX_COUNTERS];
	uint64_t samples, app, other, gap, app_ticks;
	uint64_t kept[SHIM_MAX_COUNTERS], dropped[SHIM_MAX_COUNTERS], seen[SHIM_MAX_COUNTERS];
	uint64_t offcpu[SHIM_MAX_COUNTERS];
	uint64_t overflow[SHIM_MAX_TAGS];
	uint64_t rng;
};

static void publish(const struct loop_state *ls, uint64_t last_end)
{
	struct shim_shm *shm = obs.shm;
	shm->samples = ls->samples;
	shm->samples_app = ls->app;
	shm->samples_other = ls->other;
	shm->samples_gap = ls->gap;
	shm->app_ticks = ls->app_ticks;
	shm->last_tsc = last_end;
	shm->ring_head = obs.ring ? ls->samples : 0;
	for (uint32_t i = 0; i < obs.nc; i++) {
		shm->kept[i] = ls->kept[i];
		shm->dropped[i] = ls->dropped[i];
		shm->offcpu[i] = ls->offcpu[i];
		shm->resv_seen[i] = ls->seen[i];
		shm->last_value[i] = ls->prev[i];
	}
	for (uint32_t t = 0; t < obs.nt; t++)
		shm->hist_overflow[t] = ls->overflow[t];
}

/* Rates: keep a sample only when the two clock intervals agree (the Shim paper's filter). */
static inline void rate_sample(struct loop_state *ls, int i, uint64_t v, uint64_t red,
			       uint64_t blue)
{
	double ratio = (double)red / (double)(blue ? blue : 1);
	if (ratio < obs.shm->ratio_lo || ratio > obs.shm->ratio_hi) {
		ls->dropped[i]++;
		return;
	}
	ls->kept[i]++;
	double rate = (double)(int64_t)(v - ls->prev[i]) / ((double)(red + blue) * 0.5);
	uint64_t n = ls->seen[i]++;
	if (n < SHIM_RESV_CAP) {
		obs.resv[i][n] = rate;
		return;
	}
	ls->rng ^= ls->rng << 13;
	ls->rng ^= ls->rng >> 7;
	ls->rng ^= ls->rng << 17;
	uint64_t j = (uint64_t)(((unsigned __int128)ls->rng * (n + 1)) >> 64);
	if (j < SHIM_RESV_CAP)
		obs.resv[i][j] = rate;
}

/* --period-ns: spin until the next deadline, or the stop (a long period held the app's exit
 * for up to a period, and past the destructor's wait the last counts were never published);
 * after a long stall restart from now. */
static inline uint64_t pace(uint64_t next, uint64_t period)
{
	uint64_t now;
	next += period;
	while ((now = __rdtsc()) < next && !__atomic_load_n(&obs_stop, __ATOMIC_RELAXED))
		_mm_pause();
	return now - next > period ? now : next;
}

static void *observer_main(void *arg)
{
	struct shim_shm *shm = obs.shm;
	struct loop_state ls;
	uint64_t cv[SHIM_MAX_COUNTERS], scratch[3 + SHIM_MAX_COUNTERS + SHIM_MAX_TAGS];
	uint64_t period = shm->period_ticks, next = 0, end = 0, ring_pos = 0;

	memset(&ls, 0, sizeof(ls));
	ls.rng = 0x2545F4914F6CDD1DULL ^ (uint64_t)obs.pid;
	if (shm->observer_cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(shm->observer_cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	__atomic_store_n(&shm->state, SHIM_STATE_RUNNING, __ATOMIC_RELEASE);
	next = __rdtsc();
	while (!__atomic_load_n(&obs_stop, __ATOMIC_RELAXED)) {
		uint64_t *s = obs.ring ? obs.ring + ring_pos * obs.words : scratch;
		if (obs.ring && ++ring_pos == shm->ring_cap)
			ring_pos = 0;
		struct shim_sample_view v;
		v.own_sw = obs.own_switches ? *obs.own_switches : 0;
		uint64_t start = clock_serial();
		/* the Shim paper serialises each counter read with rdtscp, for rdpmc; memory
		 * loads stay in program order on x86, so one lfence keeps them after the start clock
		 * (rdtscp costs ~90 cycles in a KVM guest); perf reads are system calls anyway */
		_mm_lfence();
		for (uint32_t i = 0; i < obs.nc; i++)
			cv[i] = counter_read(i);
		end = clock_serial();
		/* volatile loads, kept in this order by x86: switch count, thread, tags, switch
		 * counts again (shim/sample_class.h says what they decide) */
		v.app_sw = obs.switches ? *obs.switches : 0;
		v.thread = obs.thread ? *obs.thread : 0;
		s[0] = start;
		s[1] = end;
		s[2] = v.thread;
		for (uint32_t i = 0; i < obs.nc; i++)
			s[3 + i] = cv[i];
		for (uint32_t t = 0; t < obs.nt; t++)
			s[3 + obs.nc + t] = *obs.taddr[t];
		v.app_sw_after = obs.switches ? *obs.switches : 0;
		v.own_sw_after = obs.own_switches ? *obs.own_switches : 0;
		enum shim_sample_class cls = shim_sample_classify(&v, obs.thread != NULL,
								  (uint32_t)obs.pid);
		if (cls == SHIM_SAMPLE_GAP)
			s[2] |= SHIM_LOG_THREAD_GAP;
		if (cls == SHIM_SAMPLE_APP)
			for (uint32_t t = 0; t < obs.nt; t++)
				hist_add(obs.hist[t], s[3 + obs.nc + t], &ls.overflow[t]);
		/* online analysis: rates against the previous sample */
		if (ls.samples) {
			int ok = shim_rate_interval_ok(&ls.prev_view, ls.prev_class, &v, cls);
			if (ok && cls == SHIM_SAMPLE_APP && ls.prev_class == SHIM_SAMPLE_APP)
				ls.app_ticks += start - ls.prev_start;
			for (uint32_t i = 0; i < obs.nc; i++) {
				if (ok)
					rate_sample(&ls, (int)i, cv[i], start - ls.prev_start,
						    end - ls.prev_end);
				else
					ls.offcpu[i]++;
			}
		} else {
			shm->first_tsc = start;
			for (uint32_t i = 0; i < obs.nc; i++)
				shm->first_value[i] = cv[i];
		}
		for (uint32_t i = 0; i < obs.nc; i++)
			ls.prev[i] = cv[i];
		ls.prev_start = start;
		ls.prev_end = end;
		ls.prev_view = v;
		ls.prev_class = cls;
		ls.samples++;
		ls.app += cls == SHIM_SAMPLE_APP;
		ls.other += cls == SHIM_SAMPLE_OTHER;
		ls.gap += cls == SHIM_SAMPLE_GAP;
		if ((ls.samples & 4095) == 0)
			publish(&ls, end);
		if (period)
			next = pace(next, period);
	}
	publish(&ls, end);
	__atomic_store_n(&shm->state, SHIM_STATE_DONE, __ATOMIC_RELEASE);
	__atomic_store_n(&obs_finished, 1, __ATOMIC_RELEASE);
	return arg;
}

static struct shim_shm *shm_map(int fd)
{
	struct shim_shm *hdr = mmap(NULL, sizeof(struct shim_shm), PROT_READ, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED)
		return NULL;
	uint64_t size = hdr->magic == SHIM_SHM_MAGIC && hdr->version == SHIM_SHM_VERSION ? hdr->size : 0;
	munmap(hdr, sizeof(struct shim_shm));
	if (size < sizeof(struct shim_shm))
		return NULL;
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return m == MAP_FAILED ? NULL : m;
}

int spent_shim_start(void)
{
	const char *env = getenv(SHIM_ENV_FD);
	struct shim_shm *shm;
	int expected = SHIM_STATE_IDLE;
	int err = 0;

	if (!env || __atomic_exchange_n(&obs_started, 1, __ATOMIC_ACQ_REL))
		return 0;
	shm = shm_map(atoi(env));
	if (!shm)
		return -EINVAL;
	/* the first process of the run claims the region; exec'd or forked ones leave it */
	if (!__atomic_compare_exchange_n(&shm->state, &expected, SHIM_STATE_CLAIMED, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(shm, shm->size);
		return 0;
	}
	shm->pid = getpid();
	err = observer_setup(shm);
	if (err)
		return err;
	if ((err = pthread_create(&obs_thread, NULL, observer_main, NULL))) {
		shim_fail(shm, "cannot create the observer thread");
		return -err;
	}
	return 0;
}

__attribute__((constructor)) static void shim_preload_init(void)
{
	spent_shim_start();
}

__attribute__((destructor)) static void shim_preload_fini(void)
{
	if (!obs.shm || obs.pid != getpid() || obs.shm->state < SHIM_STATE_CLAIMED)
		return;
	__atomic_store_n(&obs_stop, 1, __ATOMIC_RELEASE);
	/* wait (bounded: the observer may be descheduled) for its final publish */
	for (int i = 0; i < 20000 && !__atomic_load_n(&obs_finished, __ATOMIC_ACQUIRE); i++)
		usleep(10);
}
