/* core/events.c - the event catalogue: perf's generic, cache and software names, raw rNNNN,
 * libpfm4 PMU-specific names, :u/:k modifiers, suggestions for typos, and the fallbacks
 * perf applies when a hardware event cannot be opened. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/events_pfm.h"
#include "core/tracefs.h"
#include "spent/events.h"

struct named_event {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *desc;
};

static const struct named_event generic_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles" },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "retired instructions" },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "last-level cache accesses" },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "last-level cache misses" },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions" },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions" },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches" },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles" },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles stalled in the front end" },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles stalled in the back end" },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "reference cycles (unscaled by frequency)" },
};

static const struct named_event software_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "per-CPU high-resolution timer (ns)" },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "time the task ran on a CPU (ns)" },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults" },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults" },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O" },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O" },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches" },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches" },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "moves to another CPU" },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "moves to another CPU" },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment faults fixed up by the kernel" },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "instructions emulated by the kernel" },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "placeholder that counts nothing (side-band only)" },
};

#define N_GENERIC ARRAY_SIZE(generic_events)
#define N_SOFTWARE ARRAY_SIZE(software_events)

/* Hardware cache events are CACHE-OP-RESULT, encoded id | op << 8 | result << 16. */
static const char *const cache_ids[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node" };
static const char *const cache_ops[][2] = { { "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" } };

static int cache_event_lookup(const char *name, uint64_t *config)
{
	for (size_t id = 0; id < ARRAY_SIZE(cache_ids); id++) {
		size_t n = strlen(cache_ids[id]);
		if (strncmp(name, cache_ids[id], n) != 0 || name[n] != '-')
			continue;
		const char *rest = name + n + 1;
		for (size_t op = 0; op < 3; op++) {
			if (strcmp(rest, cache_ops[op][1]) == 0) {
				*config = id | op << 8 | (uint64_t)PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16;
				return 0;
			}
			size_t m = strlen(cache_ops[op][0]);
			if (strncmp(rest, cache_ops[op][0], m) == 0 && strcmp(rest + m, "-misses") == 0) {
				*config = id | op << 8 | (uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int pfm_encode(const char *spec, struct perf_event_attr *attr)
{
	struct pfm_encoding enc;
	int r = events_pfm_encode(spec, &enc);
	if (r)
		return r;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = enc.type;
	attr->config = enc.config;
	attr->config1 = enc.config1;
	attr->config2 = enc.config2;
	attr->exclude_user = enc.exclude_user;
	attr->exclude_kernel = enc.exclude_kernel;
	return 0;
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
}

static int parse_raw(const char *name, struct perf_event_attr *attr)
{
	if (name[0] != 'r' || !name[1] || strlen(name + 1) > 16)
		return -ENOENT;
	for (const char *p = name + 1; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return -ENOENT;
	attr_init(attr, PERF_TYPE_RAW, strtoull(name + 1, NULL, 16));
	return 0;
}

/* Levenshtein distance, bounded to short names (event names are). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	size_t prev[64], cur[64];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

struct suggestion {
	char name[48];
	size_t dist;
};

static void suggest_consider(struct suggestion best[3], const char *want, const char *cand)
{
	size_t d = edit_distance(want, cand);
	/* a prefix or substring match is as good as a one-letter typo */
	if (strlen(want) >= 3 && strstr(cand, want))
		d = d < 1 ? d : 1;
	for (int i = 0; i < 3; i++) {
		if (best[i].name[0] && strcmp(best[i].name, cand) == 0)
			return;
	}
	for (int i = 0; i < 3; i++) {
		if (!best[i].name[0] || d < best[i].dist) {
			for (int j = 2; j > i; j--)
				best[j] = best[j - 1];
			snprintf(best[i].name, sizeof(best[i].name), "%s", cand);
			best[i].dist = d;
			return;
		}
	}
}

static void suggest_names(const char *want, char *err, size_t errlen)
{
	struct suggestion best[3];
	memset(best, 0, sizeof(best));
	char buf[48];
	for (size_t i = 0; i < N_GENERIC; i++)
		suggest_consider(best, want, generic_events[i].name);
	for (size_t i = 0; i < N_SOFTWARE; i++)
		suggest_consider(best, want, software_events[i].name);
	for (size_t id = 0; id < ARRAY_SIZE(cache_ids); id++)
		for (size_t op = 0; op < 3; op++) {
			snprintf(buf, sizeof(buf), "%s-%s", cache_ids[id], cache_ops[op][1]);
			suggest_consider(best, want, buf);
			snprintf(buf, sizeof(buf), "%s-%s-misses", cache_ids[id], cache_ops[op][0]);
			suggest_consider(best, want, buf);
		}
	size_t limit = strlen(want) / 2 + 2;
	size_t off = strlen(err);
	int shown = 0;
	for (int i = 0; i < 3 && off < errlen; i++) {
		if (!best[i].name[0] || best[i].dist > limit)
			continue;
		off += (size_t)snprintf(err + off, errlen - off, "%s'%s'", shown ? ", " : ": did you mean ", best[i].name);
		shown++;
	}
	if (off < errlen)
		snprintf(err + off, errlen - off, "%s", shown ? "? ('spent stat --list' shows all)"
							     : ": 'spent stat --list' shows the events this machine has");
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, arg);
}

/* Split trailing ":ukp" modifiers off SPEC; returns the base length, modifiers in MODS. */
static size_t split_modifiers(const char *spec, const char **mods)
{
	const char *colon = strrchr(spec, ':');
	*mods = NULL;
	if (!colon || colon == spec || !colon[1])
		return strlen(spec);
	for (const char *p = colon + 1; *p; p++)
		if (!strchr("ukp", *p))
			return strlen(spec);
	*mods = colon + 1;
	return (size_t)(colon - spec);
}

static int apply_modifiers(struct perf_event_attr *a, const char *mods)
{
	if (!mods)
		return 0;
	bool u = strchr(mods, 'u'), k = strchr(mods, 'k');
	if (u || k) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = 1;
	}
	for (const char *p = mods; *p; p++)
		if (*p == 'p' && a->precise_ip < 3)
			a->precise_ip++;
	return 0;
}

static int lookup_named(const char *name, struct spent_event *ev)
{
	for (size_t i = 0; i < N_GENERIC; i++)
		if (strcmp(name, generic_events[i].name) == 0) {
			attr_init(&ev->attr, generic_events[i].type, generic_events[i].config);
			ev->cls = SPENT_EV_HARDWARE;
			return 0;
		}
	for (size_t i = 0; i < N_SOFTWARE; i++)
		if (strcmp(name, software_events[i].name) == 0) {
			attr_init(&ev->attr, software_events[i].type, software_events[i].config);
			ev->cls = SPENT_EV_SOFTWARE;
			if (software_events[i].config == PERF_COUNT_SW_CPU_CLOCK ||
			    software_events[i].config == PERF_COUNT_SW_TASK_CLOCK)
				ev->unit = "msec";
			return 0;
		}
	uint64_t config;
	if (cache_event_lookup(name, &config) == 0) {
		attr_init(&ev->attr, PERF_TYPE_HW_CACHE, config);
		ev->cls = SPENT_EV_HW_CACHE;
		return 0;
	}
	if (parse_raw(name, &ev->attr) == 0) {
		ev->cls = SPENT_EV_RAW;
		return 0;
	}
	return -ENOENT;
}

/* NAME is perf's tracepoint spelling, SYSTEM:EVENT, each part [a-z0-9_] (the only characters
 * tracefs uses, and nothing that can climb out of its directory). */
static bool tracepoint_name(const char *name)
{
	const char *colon = strchr(name, ':');
	if (!colon || colon == name || !colon[1] || strchr(colon + 1, ':'))
		return false;
	for (const char *p = name; *p; p++)
		if (p != colon && !(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			return false;
	return true;
}

/* SYSTEM:EVENT's id in tracefs into the attribute: 0, -ENOENT (no such tracepoint where tracefs
 * is mounted), -ENODEV (no tracefs mounted). */
static int tracepoint_lookup(const char *name, struct perf_event_attr *a)
{
	const char *colon = strchr(name, ':'), *root = tracefs_root();
	if (!root)
		return -ENODEV;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", root, (int)(colon - name), name,
		 colon + 1);
	FILE *f = fopen(path, "re");
	unsigned long long id;
	int ok = f && fscanf(f, "%llu", &id) == 1;
	if (f)
		fclose(f);
	if (!ok)
		return -ENOENT;
	attr_init(a, PERF_TYPE_TRACEPOINT, id);
	return 0;
}

int spent_event_parse(const char *spec, struct spent_event *ev, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	memset(ev, 0, sizeof(*ev));
	ev->unit = "";
	if (!spec || !*spec || strlen(spec) >= sizeof(ev->spec) || strpbrk(spec, " \t\n,")) {
		set_err(err, errlen, "invalid event specification '%s'", spec ? spec : "");
		return -EINVAL;
	}
	snprintf(ev->spec, sizeof(ev->spec), "%s", spec);
	const char *mods;
	size_t baselen = split_modifiers(spec, &mods);
	snprintf(ev->name, sizeof(ev->name), "%.*s", (int)baselen, spec);
	if (lookup_named(ev->name, ev) == 0)
		return apply_modifiers(&ev->attr, mods);
	bool is_tp = tracepoint_name(ev->name);
	int tp = is_tp ? tracepoint_lookup(ev->name, &ev->attr) : -ENOENT;
	if (tp == 0) {
		ev->cls = SPENT_EV_TRACEPOINT;
		return apply_modifiers(&ev->attr, mods);
	}
	/* libpfm4 takes the whole spec: its event names carry their own :umask:u/:k parts */
	int r = pfm_encode(spec, &ev->attr);
	if (r == 0) {
		snprintf(ev->name, sizeof(ev->name), "%s", spec);
		ev->cls = SPENT_EV_PMU;
		return 0;
	}
	if (tp == -ENODEV) {	/* it looks like one, and there is nowhere to look it up */
		set_err(err, errlen, "tracepoint '%s': tracefs is not mounted (mount -t tracefs "
			"nodev /sys/kernel/tracing)", ev->name);
		return -ENOENT;
	}
	if (is_tp) {
		set_err(err, errlen, "unknown tracepoint '%s' (tracefs lists them in "
			"available_events)", ev->name);
		return -ENOENT;
	}
	if (r == -EINVAL && strchr(spec, ':')) {
		set_err(err, errlen, "invalid modifier or unit mask in event '%s'", spec);
		return -EINVAL;
	}
	if (err && errlen) {
		snprintf(err, errlen, "unknown event '%s'", ev->name);
		suggest_names(ev->name, err, errlen);
	}
	return -ENOENT;
}

int spent_event_parse_list(const char *list, struct spent_event **evs, size_t *n,
			   char *err, size_t errlen)
{
	if (!list || !*list) {
		set_err(err, errlen, "empty event list%s", "");
		return -EINVAL;
	}
	size_t cap = 1;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	struct spent_event *out = calloc(cap, sizeof(*out));
	char *copy = strdup(list);
	int rc = 0;
	size_t count = 0;
	if (!out || !copy) {
		rc = -ENOMEM;
		goto out;
	}
	/* an empty name (",,", a leading or trailing ',') is refused, as spent stat -e does:
	 * skipping it would take a list the command line refuses */
	char *rest = copy;
	for (char *tok; (tok = strsep(&rest, ",")) != NULL;) {
		if (!*tok) {
			set_err(err, errlen, "empty event name in the list '%.200s'", list);
			rc = -EINVAL;
			goto out;
		}
		rc = spent_event_parse(tok, &out[count], err, errlen);
		if (rc)
			goto out;
		count++;
	}
	if (count == 0) {
		set_err(err, errlen, "empty event list '%s'", list);
		rc = -EINVAL;
		goto out;
	}
	*evs = out;
	*n = count;
	out = NULL;
out:
	free(out);
	free(copy);
	return rc;
}

bool spent_event_needs_pmu(const struct spent_event *ev)
{
	return ev->cls != SPENT_EV_SOFTWARE && ev->cls != SPENT_EV_TRACEPOINT;
}

int spent_event_open(const struct spent_event *ev, const struct perf_event_attr *attr,
		     pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	struct perf_event_attr a = attr ? *attr : ev->attr;
	a.size = sizeof(a);
	long fd = syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int spent_event_user_only(struct spent_event *ev)
{
	const char *mods;
	size_t n = strlen(ev->spec);

	if (ev->attr.exclude_kernel || ev->attr.exclude_user)
		return -ENOENT;
	if (n + 3 > sizeof(ev->spec))
		return -ENAMETOOLONG;
	split_modifiers(ev->spec, &mods);
	memcpy(ev->spec + n, mods ? "u" : ":u", mods ? 2 : 3);
	ev->attr.exclude_kernel = 1;
	ev->attr.exclude_hv = 1;
	return 0;
}

/* Open EV for the calling thread, disabled, and close it: 0 or -errno. */
static int test_open(const struct spent_event *ev)
{
	struct perf_event_attr a = ev->attr;
	a.disabled = 1;
	int fd = spent_event_open(ev, &a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int spent_event_user_fallback(struct spent_event *ev)
{
	struct spent_event user = *ev;
	int err = test_open(ev);

	if (err != -EACCES && err != -EPERM)
		return err;
	if (spent_event_user_only(&user) || test_open(&user))
		return err;
	*ev = user;
	return 1;
}

int spent_event_read(int fd, uint64_t *value, uint64_t *enabled, uint64_t *running)
{
	uint64_t buf[3];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(buf))
		return -EIO;
	*value = buf[0];
	*enabled = buf[1];
	*running = buf[2];
	return 0;
}

static pthread_once_t pmu_once = PTHREAD_ONCE_INIT;
static int pmu_present;

static void pmu_probe(void)
{
	struct spent_event ev;
	memset(&ev, 0, sizeof(ev));
	attr_init(&ev.attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	ev.attr.disabled = 1;
	ev.attr.exclude_kernel = 1;
	int fd = spent_event_open(&ev, NULL, 0, -1, -1, 0);
	pmu_present = fd >= 0;
	if (fd >= 0)
		close(fd);
}

int spent_pmu_present(void)
{
	pthread_once(&pmu_once, pmu_probe);
	return pmu_present;
}

int spent_event_fallback(struct spent_event *ev, bool system_wide)
{
	if (ev->cls != SPENT_EV_HARDWARE || ev->attr.config != PERF_COUNT_HW_CPU_CYCLES)
		return -ENOENT;
	struct perf_event_attr old = ev->attr;
	const char *name = system_wide ? "cpu-clock" : "task-clock";
	attr_init(&ev->attr, PERF_TYPE_SOFTWARE,
		  system_wide ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK);
	ev->attr.exclude_user = old.exclude_user;
	ev->attr.exclude_kernel = old.exclude_kernel;
	ev->attr.exclude_hv = old.exclude_hv;
	ev->cls = SPENT_EV_SOFTWARE;
	ev->unit = "msec";
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(ev->spec, sizeof(ev->spec), "%s", name);
	return 0;
}

static bool probe_open(uint32_t type, uint64_t config)
{
	struct spent_event ev;
	memset(&ev, 0, sizeof(ev));
	attr_init(&ev.attr, type, config);
	ev.attr.disabled = 1;
	ev.attr.exclude_kernel = 1;
	ev.attr.exclude_hv = 1;
	int fd = spent_event_open(&ev, NULL, 0, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static int catalogue_add(struct spent_event_info **list, size_t *n, size_t *cap,
			 const char *name, const char *group, const char *desc, bool avail)
{
	if (ALLOC_GROW(*list, *n + 1, *cap))
		return -ENOMEM;
	struct spent_event_info *e = &(*list)[*n];
	e->name = strdup(name);
	e->group = strdup(group);
	e->desc = strdup(desc ? desc : "");
	e->available = avail;
	(*n)++;
	return e->name && e->group && e->desc ? 0 : -ENOMEM;
}

struct pfm_catalogue_ctx {
	struct spent_event_info **list;
	size_t *n, *cap;
	bool available;
};

static int catalogue_add_pfm_one(void *arg, const char *pmu, const char *pmu_desc,
				 const char *name, const char *desc)
{
	struct pfm_catalogue_ctx *c = arg;
	char group[128];
	snprintf(group, sizeof(group), "pmu: %s (%s)", pmu, pmu_desc);
	return catalogue_add(c->list, c->n, c->cap, name, group, desc, c->available);
}

static int catalogue_add_pfm(struct spent_event_info **list, size_t *n, size_t *cap)
{
	/* libpfm knows a CPU's tables from CPUID even where the kernel exposes no PMU (VMs) */
	struct pfm_catalogue_ctx c = { list, n, cap, spent_pmu_present() };
	return events_pfm_foreach(catalogue_add_pfm_one, &c);
}

int spent_event_catalogue(struct spent_event_info **out, size_t *nout)
{
	struct spent_event_info *list = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	char name[64], desc[96];
	for (size_t i = 0; i < N_GENERIC && !err; i++)
		err = catalogue_add(&list, &n, &cap, generic_events[i].name, "hardware", generic_events[i].desc,
				    probe_open(generic_events[i].type, generic_events[i].config));
	for (size_t id = 0; id < ARRAY_SIZE(cache_ids) && !err; id++)
		for (size_t op = 0; op < 3 && !err; op++)
			for (int res = 0; res < 2 && !err; res++) {
				if (res)
					snprintf(name, sizeof(name), "%s-%s-misses", cache_ids[id], cache_ops[op][0]);
				else
					snprintf(name, sizeof(name), "%s-%s", cache_ids[id], cache_ops[op][1]);
				snprintf(desc, sizeof(desc), "%s %s %s", cache_ids[id], cache_ops[op][0],
					 res ? "misses" : "accesses");
				err = catalogue_add(&list, &n, &cap, name, "hardware cache", desc,
						    probe_open(PERF_TYPE_HW_CACHE, id | op << 8 | (uint64_t)res << 16));
			}
	for (size_t i = 0; i < N_SOFTWARE && !err; i++)
		err = catalogue_add(&list, &n, &cap, software_events[i].name, "software", software_events[i].desc,
				    probe_open(software_events[i].type, software_events[i].config));
	if (!err)
		err = catalogue_add(&list, &n, &cap, "rNNNN", "raw", "raw PMU event code NNNN (hex)", spent_pmu_present());
	if (!err)
		err = catalogue_add_pfm(&list, &n, &cap);
	if (err) {
		spent_event_catalogue_free(list, n);
		return err;
	}
	*out = list;
	*nout = n;
	return 0;
}

void spent_event_catalogue_free(struct spent_event_info *list, size_t n)
{
	if (!list)
		return;
	for (size_t i = 0; i < n; i++) {
		free((void *)list[i].name);
		free((void *)list[i].group);
		free((void *)list[i].desc);
	}
	free(list);
}
