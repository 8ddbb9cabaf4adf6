/* shim/coordinator.c - Shim's coordinator: resolves software signal symbols in the program's
 * ELF images, pairs CPUs (SMT sibling, else another core), attaches the eBPF thread channel,
 * opens counter events, launches the program with libspent-shim.so preloaded and a shared
 * memory region describing the observer's work, then collects the observer's results. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <bpf/libbpf.h>

#include "core/workload.h"
#include "sched_channel.skel.h"
#include "shim/sched_channel.h"
#include "shim/shim.h"
#include "spent/shim.h"

#define MAX_IMAGES 64
#define MAX_CPUS 1024

struct images {
	struct shim_elf *elf[MAX_IMAGES];
	char *path[MAX_IMAGES];	/* realpath */
	size_t n;
};

void shim_config_init(struct shim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->observer_cpu = -1;
	cfg->app_cpu = -1;
	cfg->ratio_lo = 0.99;
	cfg->ratio_hi = 1.01;
	cfg->buffer_samples = 65536;
}

static void images_release(struct images *im)
{
	for (size_t i = 0; i < im->n; i++) {
		shim_elf_free(im->elf[i]);
		free(im->path[i]);
	}
	im->n = 0;
}

static int images_add(struct images *im, const char *path)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return -errno;
	for (size_t i = 0; i < im->n; i++)
		if (strcmp(im->path[i], real) == 0)
			return 0;
	if (im->n == MAX_IMAGES)
		return 0;
	int err = shim_elf_open(real, &im->elf[im->n]);
	if (err)
		return err;
	if (!(im->path[im->n] = strdup(real))) {
		shim_elf_free(im->elf[im->n]);
		return -ENOMEM;
	}
	im->n++;
	return 0;
}

/* The executable, then its DT_NEEDED libraries breadth first, as ld.so loads them. */
static int images_load(struct images *im, const char *exe)
{
	int err = images_add(im, exe);
	for (size_t i = 0; !err && i < im->n; i++) {
		const char *so;
		for (size_t k = 0; (so = shim_elf_needed(im->elf[i], k)); k++) {
			char path[PATH_MAX];
			if (shim_elf_find_library(im->elf[i], so, path, sizeof(path)) == 0)
				images_add(im, path);	/* a library we cannot read holds no signal */
		}
	}
	return err;
}

static int signal_resolve(const struct images *im, const struct shim_signal_spec *spec,
			  struct shim_shm_signal *out, char *err, size_t errlen)
{
	char prefixed[sizeof(spec->symbol) + 32];
	snprintf(prefixed, sizeof(prefixed), "%s%s", SPENT_SHIM_SYMBOL_PREFIX, spec->symbol);
	const char *names[2] = { spec->symbol, prefixed };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < im->n; i++) {
			uint64_t v;
			int rc = shim_elf_find(im->elf[i], names[k], &v);
			if (rc == -EINVAL) {
				snprintf(err, errlen, "symbol '%s' is thread-local: the observer can "
					 "only load global data; publish it in a SPENT_SHIM_SIGNAL slot",
					 names[k]);
				return -EINVAL;
			}
			if (rc)
				continue;
			out->kind = spec->kind;
			out->source = SHIM_SRC_MEMORY;
			out->fd = -1;
			out->in_main = i == 0;
			out->offset = v;
			snprintf(out->name, sizeof(out->name), "%s", spec->name);
			snprintf(out->image, sizeof(out->image), "%s", im->path[i]);
			return 0;
		}
	}
	snprintf(err, errlen, "symbol '%s' not found in '%s' or its libraries: define it with "
		 "SPENT_SHIM_SIGNAL(%s) from spent/shim.h, or name a global variable",
		 spec->symbol, im->path[0], spec->symbol);
	return -ENOENT;
}

/* Parse a sysfs CPU list ("0-3,6") into SET; 0 or -errno. */
static int cpulist_read(const char *path, cpu_set_t *set)
{
	char buf[512];
	FILE *f = fopen(path, "re");
	CPU_ZERO(set);
	if (!f)
		return -errno;
	char *ok = fgets(buf, sizeof(buf), f);
	fclose(f);
	for (char *p = ok ? buf : NULL; p && *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < MAX_CPUS && c >= 0; c++)
			CPU_SET((int)c, set);
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int cpu_check(int cpu, const cpu_set_t *online, const char *what, char *err, size_t errlen)
{
	char list[128];
	if (cpu >= 0 && cpu < MAX_CPUS && CPU_ISSET(cpu, online))
		return 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f || !fgets(list, sizeof(list), f))
		snprintf(list, sizeof(list), "?");
	if (f)
		fclose(f);
	list[strcspn(list, "\n")] = 0;
	snprintf(err, errlen, "cpu %d for %s does not exist or is offline: this machine has cpus %s",
		 cpu, what, list);
	return -EINVAL;
}

/* An SMT sibling of CPU that is online, or -1. */
static int cpu_sibling(int cpu, const cpu_set_t *online)
{
	char path[128];
	cpu_set_t sib;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
	if (cpulist_read(path, &sib))
		return -1;
	for (int c = 0; c < MAX_CPUS; c++)
		if (c != cpu && CPU_ISSET(c, &sib) && CPU_ISSET(c, online))
			return c;
	return -1;
}

static int cpus_choose(const struct shim_config *cfg, int *obs, int *app, char *err, size_t errlen)
{
	cpu_set_t online;
	int o = cfg->observer_cpu, a = cfg->app_cpu, rc;
	if (cpulist_read("/sys/devices/system/cpu/online", &online) || CPU_COUNT(&online) < 2) {
		snprintf(err, errlen, "shim needs two online cpus (observer and application): "
			 "this machine has %d", CPU_COUNT(&online));
		return -EINVAL;
	}
	if (o >= 0 && (rc = cpu_check(o, &online, "--observer-cpu", err, errlen)))
		return rc;
	if (a >= 0 && (rc = cpu_check(a, &online, "--app-cpu", err, errlen)))
		return rc;
	for (int c = MAX_CPUS - 1; o < 0 && c >= 0; c--)	/* prefer a CPU with an SMT sibling */
		if (CPU_ISSET(c, &online) && c != a && (a < 0 ? cpu_sibling(c, &online) >= 0 : 1))
			o = c;
	for (int c = MAX_CPUS - 1; o < 0 && c >= 0; c--)
		if (CPU_ISSET(c, &online) && c != a)
			o = c;
	if (a < 0)
		a = cpu_sibling(o, &online);
	for (int c = 0; a < 0 && c < MAX_CPUS; c++)
		if (CPU_ISSET(c, &online) && c != o)
			a = c;
	if (a == o) {
		snprintf(err, errlen, "--observer-cpu and --app-cpu are both %d: the observer needs "
			 "its own hardware context", a);
		return -EINVAL;
	}
	*obs = o;
	*app = a;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* TSC ticks per second against CLOCK_MONOTONIC over about 20 ms. */
static uint64_t tsc_calibrate(void)
{
	struct timespec d = { 0, 20000000 };
	uint64_t m0 = mono_ns(), t0 = __rdtsc();
	nanosleep(&d, NULL);
	uint64_t m1 = mono_ns(), t1 = __rdtsc();
	return m1 > m0 ? (uint64_t)((double)(t1 - t0) * 1e9 / (double)(m1 - m0)) : 1000000000ULL;
}

/* Attach the sched_switch channel; on failure NOTE says why and *FD is -1. */
static struct sched_channel_bpf *sched_channel_attach(int *fd, char *note, size_t notelen)
{
	struct sched_channel_bpf *skel = sched_channel_bpf__open_and_load();
	int err;
	*fd = -1;
	if (!skel) {
		snprintf(note, notelen, "eBPF thread channel unavailable (load: %s): samples are "
			 "not split by thread", strerror(errno));
		return NULL;
	}
	if ((err = sched_channel_bpf__attach(skel))) {
		snprintf(note, notelen, "eBPF thread channel unavailable (attach: %s): samples are "
			 "not split by thread", strerror(-err));
		sched_channel_bpf__destroy(skel);
		return NULL;
	}
	*fd = bpf_map__fd(skel->maps.sched_cpus);
	return skel;
}

static int events_open(const struct shim_config *cfg, struct shim_shm *shm, int app_cpu,
		       char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->nevents; i++) {
		struct perf_event_attr attr = cfg->events[i].attr;
		attr.size = sizeof(attr);
		attr.disabled = 0;
		attr.inherit = 0;
		attr.read_format = 0;
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, app_cpu, -1, 0);
		if (fd < 0) {
			int e = -errno;
			snprintf(err, errlen, "cannot count '%s' on cpu %d: %s", cfg->events[i].name,
				 app_cpu, strerror(errno));
			return e;
		}
		struct shim_shm_signal *s = &shm->counters[shm->ncounters++];
		s->kind = SHIM_SIG_RATE;
		s->source = SHIM_SRC_PERF_READ;
		s->fd = fd;
		snprintf(s->name, sizeof(s->name), "%s", cfg->events[i].name);
	}
	return 0;
}

static void events_close(struct shim_shm *shm)
{
	for (uint32_t i = 0; i < shm->ncounters; i++)
		if (shm->counters[i].source == SHIM_SRC_PERF_READ && shm->counters[i].fd >= 0)
			close(shm->counters[i].fd);
}

/* Build the shared region's configuration; *SHM_OUT is mmapped (size shm->size). */
static int shm_create(const struct shim_config *cfg, const struct images *im, int *fd_out,
		      struct shim_shm **shm_out, char *err, size_t errlen)
{
	struct shim_shm tmp;
	int rc = 0, fd;
	memset(&tmp, 0, sizeof(tmp));
	for (size_t i = 0; i < cfg->nsigs; i++) {
		const struct shim_signal_spec *sp = &cfg->sigs[i];
		bool tag = sp->kind == SHIM_SIG_TAG;
		uint32_t *n = tag ? &tmp.ntags : &tmp.ncounters;
		if (*n >= (tag ? SHIM_MAX_TAGS : SHIM_MAX_COUNTERS) - (tag ? 0 : cfg->nevents)) {
			snprintf(err, errlen, "too many %s signals: at most %d", tag ? "tag" : "counter",
				 tag ? SHIM_MAX_TAGS : SHIM_MAX_COUNTERS);
			return -EINVAL;
		}
		struct shim_shm_signal *s = tag ? &tmp.tags[*n] : &tmp.counters[*n];
		if ((rc = signal_resolve(im, sp, s, err, errlen)))
			return rc;
		(*n)++;
	}
	tmp.ring_cap = cfg->buffer_samples;
	tmp.ncounters += (uint32_t)cfg->nevents;	/* opened later, but part of the shape */
	shim_shm_layout(&tmp);
	tmp.ncounters -= (uint32_t)cfg->nevents;
	fd = memfd_create("spent-shim", 0);	/* no CLOEXEC: the application inherits it */
	if (fd < 0 || ftruncate(fd, (off_t)tmp.size)) {
		rc = -errno;
		snprintf(err, errlen, "cannot create the shared sample buffer (%llu bytes): %s",
			 (unsigned long long)tmp.size, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	struct shim_shm *shm = mmap(NULL, tmp.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "cannot map the shared sample buffer: %s", strerror(errno));
		close(fd);
		return rc;
	}
	memcpy(shm, &tmp, sizeof(tmp));
	shm->magic = SHIM_SHM_MAGIC;
	shm->version = SHIM_SHM_VERSION;
	shm->sched_fd = -1;
	*fd_out = fd;
	*shm_out = shm;
	return 0;
}

struct launch {
	const char *exe;
	char *const *argv;
	const char *preload;	/* NULL for static programs */
	int shm_fd, sched_fd, app_cpu;
};

/* In the child before exec: the application's CPU, the scheduler channel and the shared
 * memory inherited, the observer preloaded. 0 or a positive errno. */
static int child_setup(void *arg)
{
	const struct launch *l = arg;
	cpu_set_t set;
	char num[16];
	CPU_ZERO(&set);
	CPU_SET(l->app_cpu, &set);
	int e = sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
	if (!e && l->sched_fd >= 0)
		e = fcntl(l->sched_fd, F_SETFD, 0) ? errno : 0;
	if (!e && l->preload) {
		const char *old = getenv("LD_PRELOAD");
		char *v = NULL;
		if (asprintf(&v, "%s%s%s", l->preload, old && *old ? ":" : "", old ? old : "") < 0)
			return ENOMEM;
		setenv("LD_PRELOAD", v, 1);
	}
	snprintf(num, sizeof(num), "%d", l->shm_fd);
	setenv(SHIM_ENV_FD, num, 1);
	return e;
}

/* Fork and exec; *STATUS gets the wait status. SIGINT/SIGQUIT from the terminal reach the
 * command (same process group) and are ignored here; SIGTERM/SIGHUP are forwarded to it, so
 * the results are still collected when the command ends. */
static int launch_wait(const struct launch *l, int *status, char *err, size_t errlen)
{
	const struct workload_opts wo = { .file = l->exe, .setup = child_setup, .setup_arg = (void *)l };
	struct workload w;
	struct workload_signals saved;
	int e = workload_spawn(&w, l->argv, &wo);
	if (e) {
		snprintf(err, errlen, "cannot fork: %s", strerror(-e));
		return e;
	}
	workload_forward_signals(w.pid, &saved);
	e = workload_start(&w);
	workload_wait(w.pid, status, 0);
	workload_restore_signals(&saved);
	if (e) {
		snprintf(err, errlen, "cannot run '%s': %s", l->exe, strerror(-e));
		return e;
	}
	return 0;
}

static int collect_signal(const struct shim_shm *shm, uint32_t i, struct shim_image_syms *is,
			  uint64_t hz, struct shim_signal_result *out)
{
	bool tag = i >= shm->ncounters;
	uint32_t k = tag ? i - shm->ncounters : i;
	const struct shim_shm_signal *s = tag ? &shm->tags[k] : &shm->counters[k];
	out->kind = s->kind;
	out->source = s->source;
	snprintf(out->name, sizeof(out->name), "%s", s->name);
	out->addr = s->addr;
	out->image = strdup(s->source == SHIM_SRC_MEMORY ? s->image : "");
	out->symbol = strdup(s->name);
	if (!out->image || !out->symbol)
		return -ENOMEM;
	if (tag) {
		const struct shim_hist_slot *slots = (const void *)((const char *)shm + shm->hist_off);
		out->overflow = shm->hist_overflow[k];
		return shim_hist_build(slots + (uint64_t)k * SHIM_HIST_SLOTS, SHIM_HIST_SLOTS, is,
				       &out->rows, &out->nrows);
	}
	out->first_value = shm->first_value[k];
	out->last_value = shm->last_value[k];
	out->kept = shm->kept[k];
	out->dropped = shm->dropped[k];
	out->offcpu = shm->offcpu[k];
	out->nrates = shm->resv_seen[k] < SHIM_RESV_CAP ? shm->resv_seen[k] : SHIM_RESV_CAP;
	double *copy = malloc((out->nrates ? out->nrates : 1) * sizeof(double));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, (const double *)((const char *)shm + shm->resv_off) + (uint64_t)k * SHIM_RESV_CAP,
	       out->nrates * sizeof(double));
	shim_rates_summarise(copy, out->nrates, hz, &out->rate_min, &out->rate_median,
			     &out->rate_max);
	free(copy);
	return 0;
}

/* The ring's samples, oldest first. */
static int collect_log(const struct shim_shm *shm, struct shim_result *r)
{
	uint64_t words = shim_sample_words(shm->ncounters, shm->ntags);
	uint64_t head = shm->ring_head, cap = shm->ring_cap;
	r->nlog = cap && head ? (head < cap ? head : cap) : 0;
	r->log = malloc((r->nlog ? r->nlog : 1) * words * sizeof(uint64_t));
	if (!r->log)
		return -ENOMEM;
	const uint64_t *ring = (const uint64_t *)((const char *)shm + shm->ring_off);
	for (uint64_t k = 0; k < r->nlog; k++)
		memcpy(r->log + k * words, ring + ((head - r->nlog + k) % cap) * words,
		       words * sizeof(uint64_t));
	return 0;
}

static int collect(const struct shim_shm *shm, const struct shim_config *cfg, uint64_t hz,
		   struct shim_result *r)
{
	int err = 0;
	struct shim_image_syms *is = shim_image_syms_new(shm->images,
							  shm->nimages < SHIM_MAX_IMAGES ? shm->nimages : SHIM_MAX_IMAGES);
	if (!is)
		return -ENOMEM;
	r->tsc_hz = hz;
	r->period_req_ns = cfg->period_ns;
	r->ratio_lo = cfg->ratio_lo;
	r->ratio_hi = cfg->ratio_hi;
	r->observer_cpu = shm->observer_cpu;
	r->app_cpu = shm->app_cpu;
	r->pid = shm->pid;
	r->samples = shm->samples;
	r->samples_app = shm->samples_app;
	r->samples_other = shm->samples_other;
	r->samples_gap = shm->samples_gap;
	r->app_ns = hz ? (uint64_t)((double)shm->app_ticks * 1e9 / (double)hz) : 0;
	r->first_tsc = shm->first_tsc;
	r->last_tsc = shm->last_tsc;
	r->ncounters = shm->ncounters;
	r->ntags = shm->ntags;
	r->signals = calloc(r->ncounters + r->ntags + 1, sizeof(*r->signals));
	if (!r->signals) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; !err && i < r->ncounters + r->ntags; i++)
		err = collect_signal(shm, i, is, hz, &r->signals[i]);
	if (!err)
		err = collect_log(shm, r);
out:
	shim_image_syms_free(is);
	return err;
}

static int observer_status(const struct shim_shm *shm, const char *exe, char *err, size_t errlen)
{
	int state = __atomic_load_n(&shm->state, __ATOMIC_ACQUIRE);
	if (state == SHIM_STATE_ERROR) {
		snprintf(err, errlen, "the observer in '%s' failed: %s", exe, shm->errmsg);
		return -EINVAL;
	}
	if (state == SHIM_STATE_IDLE) {
		snprintf(err, errlen, "the observer never started in '%s': it ignored LD_PRELOAD "
			 "(setuid, or a static program without libspent-shim.a)", exe);
		return -ENOEXEC;
	}
	return 0;
}

int shim_find_command(const char *cmd, char *exe, size_t exelen, char *err, size_t errlen)
{
	int rc = workload_find(cmd, exe, exelen);
	if (rc == -EACCES)
		snprintf(err, errlen, "cannot run '%s': %s", cmd, strerror(EACCES));
	else if (rc)
		snprintf(err, errlen, "command '%s' not found: check the name and PATH", cmd);
	return rc;
}

int shim_run(const struct shim_config *cfg, struct shim_result **out, char *err, size_t errlen)
{
	struct images im = { .n = 0 };
	struct sched_channel_bpf *skel = NULL;
	struct shim_shm *shm = NULL;
	struct shim_result *r = NULL;
	char exe[PATH_MAX], note[256] = "";
	int rc, shm_fd = -1, obs_cpu, app_cpu, status = 0;
	uint64_t dummy;

	*out = NULL;
	if (!cfg->argv || !cfg->argv[0]) {
		snprintf(err, errlen, "no command to run: give one after '--'");
		return -EINVAL;
	}
	if ((rc = shim_find_command(cfg->argv[0], exe, sizeof(exe), err, errlen)))
		goto out;
	if ((rc = images_load(&im, exe))) {
		snprintf(err, errlen, "cannot read '%s' as an ELF program: %s", exe, strerror(-rc));
		goto out;
	}
	bool is_static = shim_elf_is_static(im.elf[0]);
	if (is_static && shim_elf_find(im.elf[0], "spent_shim_start", &dummy)) {
		snprintf(err, errlen, "'%s' is statically linked, so libspent-shim.so cannot be "
			 "preloaded: link it with libspent-shim.a and -Wl,-u,spent_shim_start "
			 "(or call spent_shim_start() in main)", exe);
		rc = -ENOEXEC;
		goto out;
	}
	if ((rc = cpus_choose(cfg, &obs_cpu, &app_cpu, err, errlen)) ||
	    (rc = shm_create(cfg, &im, &shm_fd, &shm, err, errlen)) ||
	    (rc = events_open(cfg, shm, app_cpu, err, errlen)))
		goto out;
	uint64_t hz = tsc_calibrate();
	shm->observer_cpu = obs_cpu;
	shm->app_cpu = app_cpu;
	shm->period_ticks = (uint64_t)((double)cfg->period_ns * (double)hz / 1e9);
	shm->ratio_lo = cfg->ratio_lo;
	shm->ratio_hi = cfg->ratio_hi;
	skel = sched_channel_attach(&shm->sched_fd, note, sizeof(note));
	shm->sched_map_bytes = (uint64_t)SCHED_CHANNEL_MAX_CPUS * sizeof(struct sched_slot);
	struct launch l = { exe, cfg->argv, is_static ? NULL : cfg->preload, shm_fd,
			    shm->sched_fd, app_cpu };
	uint64_t m0 = mono_ns(), t0 = __rdtsc();
	if ((rc = launch_wait(&l, &status, err, errlen)))
		goto out;
	uint64_t m1 = mono_ns(), t1 = __rdtsc();
	if (m1 - m0 > 100000000ULL)	/* a longer baseline than the 20 ms calibration */
		hz = (uint64_t)((double)(t1 - t0) * 1e9 / (double)(m1 - m0));
	if ((rc = observer_status(shm, exe, err, errlen)))
		goto out;
	if (!(r = shim_result_new())) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = collect(shm, cfg, hz, r)))
		goto out;
	r->flags = shm->sched_fd >= 0 ? SHIM_RESULT_SCHED_CHANNEL : 0;
	r->exit_status = workload_exit_code(status);
	snprintf(r->note, sizeof(r->note), "%s", note);
	*out = r;
	r = NULL;
out:
	shim_result_free(r);
	if (shm) {
		events_close(shm);
		munmap(shm, shm->size);
	}
	if (shm_fd >= 0)
		close(shm_fd);
	sched_channel_bpf__destroy(skel);
	images_release(&im);
	return rc;
}
