/* collect/live.c - live system-wide samples for `spent top`: its own sampling (the daemon's
 * per-CPU events with samples in the side-band rings, the map table kept current from
 * MMAP2/FORK/COMM/EXIT) or a running daemon's `recent` answers, each count placed in
 * (pid, comm, image, offset). Process names come from COMM records and a parent's name at a
 * FORK; a process no record named is read from /proc/PID/comm the first time it is counted
 * (for a daemon's counts, once per answer). */
#include "core/alloc.h"
#include "collect/live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/daemon_maps.h"
#include "collect/daemon_perf.h"
#include "profile/db.h"

#define COMM_BUCKETS 1024
#define COMM_LEN 16	/* TASK_COMM_LEN */
/* A daemon's answer holds at most 65536 entries (daemon_tap.c) of about 100 bytes. */
#define REPLY_MAX (8u << 20)
#define REPLY_TIMEOUT_MS 5000

struct comm_entry {
	struct comm_entry *next;
	pid_t pid;
	bool stale;		/* exec'd since the name was read */
	bool exited;		/* its EXIT record was read: dropped a read later */
	uint64_t exit_gen;	/* the read that saw the EXIT record */
	char comm[COMM_LEN + 8];
};

struct live {
	char *db;		/* a daemon's database, or NULL: own sampling */
	char *reply;		/* [REPLY_MAX] */
	char event[160];
	int last_err;		/* of the last request to the daemon */
	struct dperf *perf;
	struct dmaps *maps;
	uint64_t gen;
	uint64_t lost;
	struct comm_entry *comms[COMM_BUCKETS];
	bool any_exited;
	struct spent_profile_image *imgs;	/* by dimage id, filled when first placed */
	bool *img_set;			/* by dimage id: imgs[id] is filled */
	size_t cap_imgs, cap_img_set;	/* the two arrays' room */
	/* the current read's callback */
	live_sample_fn fn;
	void *arg;
	size_t delivered;
};

static struct comm_entry **comm_slot(struct live *l, pid_t pid)
{
	struct comm_entry **p = &l->comms[(uint32_t)pid % COMM_BUCKETS];

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

/* E's name from /proc: false (and "[PID]") when the process is gone. */
static bool comm_read(struct comm_entry *e)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	if (e->pid == 0) {	/* the idle task has no /proc entry; perf calls it swapper too */
		snprintf(e->comm, sizeof(e->comm), "swapper");
		return true;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)e->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, e->comm, COMM_LEN);
		close(fd);
	}
	if (n > 0 && e->comm[n - 1] == '\n')
		n--;
	if (n > 0) {
		e->comm[n] = '\0';
		return true;
	}
	/* gone before its first sample was read: its pid is all there is */
	snprintf(e->comm, sizeof(e->comm), "[%d]", (int)e->pid);
	return false;
}

/* The entry of PID, made (stale: to be read from /proc) when new; NULL: no memory. */
static struct comm_entry *comm_entry(struct live *l, pid_t pid)
{
	struct comm_entry **p = comm_slot(l, pid), *e = *p;

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		e->pid = pid;
		e->stale = true;
		*p = e;
	}
	return e;
}

/* PID is named NAME from now on (a COMM record, or its parent's name at a fork): a process
 * that execs and exits between two reads of the rings is gone from /proc by the time its
 * samples are read, and showed as "[PID]" (a shell loop's programs, each one of its own). */
static void comm_set(struct live *l, pid_t pid, const char *name)
{
	struct comm_entry *e = comm_entry(l, pid);

	if (!e)
		return;
	snprintf(e->comm, sizeof(e->comm), "%.*s", COMM_LEN, name);
	e->stale = false;
}

static const char *comm_of(struct live *l, pid_t pid)
{
	struct comm_entry *e = comm_entry(l, pid);

	if (!e)
		return "[unknown]";
	if (e->stale) {
		comm_read(e);
		e->stale = false;
	}
	return e->comm;
}

/* PID exec'd: its name is read again (its COMM record, next, names it). */
static void comm_mark_exec(struct live *l, pid_t pid)
{
	struct comm_entry *e = *comm_slot(l, pid);

	if (e)
		e->stale = true;
}

/* PID's EXIT record: the name is kept, not re-read. The exiting task still runs (and is
 * sampled) after its EXIT record is written, when /proc no longer has its name, so a re-read
 * split it into a second "[PID]" row (half the pids of a shell loop). The entry stays for the
 * rest of this read and the next one, for samples taken in do_exit that fall past a read's
 * cut-off; a new process on that pid is seen by its FORK record first (on_fork). */
static void comm_mark_exit(struct live *l, pid_t pid)
{
	struct comm_entry *e = *comm_slot(l, pid);

	if (!e)
		return;
	e->exited = true;
	e->exit_gen = l->gen;
	l->any_exited = true;
}

/* After a read (l->gen already past it): drop the entries whose EXIT record came in the read
 * before that one. */
static void comm_drop_exited(struct live *l)
{
	bool left = false;

	if (!l->any_exited)
		return;
	for (size_t b = 0; b < COMM_BUCKETS; b++) {
		struct comm_entry **p = &l->comms[b];
		while (*p) {
			struct comm_entry *e = *p;
			if (e->exited && e->exit_gen + 1 < l->gen) {
				*p = e->next;
				free(e);
			} else {
				left |= e->exited;
				p = &e->next;
			}
		}
	}
	l->any_exited = left;
}

static void comm_clear(struct live *l)
{
	for (size_t b = 0; b < COMM_BUCKETS; b++) {
		while (l->comms[b]) {
			struct comm_entry *e = l->comms[b];
			l->comms[b] = e->next;
			free(e);
		}
	}
	l->any_exited = false;
}

/* The profile image of dimage ID, built once it is identified (dmaps_resolve did that). */
static const struct spent_profile_image *image_of(struct live *l, uint32_t id)
{
	const struct dimage *im = dmaps_image(l->maps, id);

	if (!im)
		return NULL;
	size_t old = l->cap_img_set;
	if (ALLOC_GROW(l->imgs, (size_t)id + 1, l->cap_imgs) ||
	    ALLOC_GROW(l->img_set, (size_t)id + 1, l->cap_img_set))
		return NULL;
	memset(l->img_set + old, 0, (l->cap_img_set - old) * sizeof(*l->img_set));
	if (!l->img_set[id]) {
		struct spent_profile_image *pi = &l->imgs[id];
		memset(pi, 0, sizeof(*pi));
		pi->path = im->path;	/* lives as long as the map table */
		pi->id_kind = im->id_kind;
		pi->id_len = im->id_len;
		memcpy(pi->id, im->ident, im->id_len);
		l->img_set[id] = true;
	}
	return &l->imgs[id];
}

static void on_mmap(void *arg, const struct dmaps_mmap *mm)
{
	struct live *l = arg;

	dmaps_mmap(l->maps, mm);
}

static void on_fork(void *arg, pid_t pid, pid_t ppid)
{
	struct live *l = arg;

	dmaps_fork(l->maps, pid, ppid);
	/* a parent no record named yet is read now, while it most likely still runs: a child
	 * sampled between its fork and its exec and gone by the next read was a "[PID]" row */
	struct comm_entry *parent = comm_entry(l, ppid), *child;
	bool named = parent && !parent->stale;
	if (parent && parent->stale && comm_read(parent))
		named = true, parent->stale = false;
	if (named)
		comm_set(l, pid, parent->comm);
	/* a FORK is a new process: an entry left by an exited one on a reused pid is not its
	 * name (nor is it to be dropped) */
	if ((child = *comm_slot(l, pid))) {
		child->exited = false;
		if (!named)
			child->stale = true;
	}
}

static void on_comm(void *arg, pid_t pid, const char *comm, bool exec)
{
	struct live *l = arg;

	(void)exec;	/* an exec was marked by on_exec, called first */
	comm_set(l, pid, comm);
}

static void on_exec(void *arg, pid_t pid)
{
	struct live *l = arg;

	dmaps_exec(l->maps, pid);
	comm_mark_exec(l, pid);
}

static void on_exit_rec(void *arg, pid_t pid)
{
	struct live *l = arg;

	dmaps_exit(l->maps, pid, l->gen);
	comm_mark_exit(l, pid);
}

static void on_sample(void *arg, int cpu, uint32_t event, pid_t pid, uint64_t pc)
{
	struct live *l = arg;
	struct live_sample s = { .pid = pid, .offset = pc, .count = 1 };
	uint32_t image;
	uint64_t offset;

	(void)cpu;
	(void)event;
	s.comm = comm_of(l, pid);
	if (dmaps_resolve(l->maps, pid, pc, &image, &offset) == 0) {
		s.img = image_of(l, image);
		s.offset = offset;
	}
	l->delivered++;
	if (l->fn)
		l->fn(l->arg, &s);
}

static void on_lost(void *arg, uint64_t n, bool samples)
{
	struct live *l = arg;

	if (samples)
		l->lost += n;
}

int live_open(const struct live_config *cfg, struct live **out)
{
	struct live *l = calloc(1, sizeof(*l));
	struct dperf_config pc = {
		.evs = cfg->ev, .nev = 1, .freq = cfg->freq, .samples_to_ring = true,
		.sideband = true, .ring_pages = 128,
	};
	int r;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	snprintf(l->event, sizeof(l->event), "%s", cfg->ev->spec);
	if ((r = dmaps_new(&l->maps)) || (r = dperf_open(&pc, &l->perf)) ||
	    (r = dperf_enable(l->perf))) {
		live_close(l);
		return r;
	}
	/* side-band on first, then the scan: nothing falls in between (as the daemon does) */
	dmaps_scan_proc(l->maps, "/proc");
	*out = l;
	return 0;
}

/* Ask the daemon for its counts since the last request into l->reply: 0 with the number of
 * entries in *N (the lines after the first), or -errno. */
static int ask_daemon(struct live *l, size_t *n)
{
	unsigned long long entries = 0, dropped = 0;
	char ev[160];
	int r = db_control(l->db, "recent", l->reply, REPLY_MAX, REPLY_TIMEOUT_MS);

	if (r)
		return r;
	size_t len = strlen(l->reply);
	if (len == REPLY_MAX - 1 && strrchr(l->reply, '\n'))	/* cut short: whole lines only */
		strrchr(l->reply, '\n')[1] = '\0';
	if (!strncmp(l->reply, "error permission", 16))
		return -EACCES;
	if (sscanf(l->reply, "ok recent %159s %llu %llu", ev, &entries, &dropped) != 3)
		return -EPROTO;	/* "error unknown command": a daemon older than `recent` */
	snprintf(l->event, sizeof(l->event), "%s", ev);
	l->lost += dropped;
	*n = (size_t)entries;
	return 0;
}

int live_open_daemon(const char *db, struct live **out)
{
	struct live *l = calloc(1, sizeof(*l));
	size_t n;
	int r;

	*out = NULL;
	if (!l || !(l->db = strdup(db)) || !(l->reply = malloc(REPLY_MAX))) {
		live_close(l);
		return -ENOMEM;
	}
	/* the first answer holds everything since the daemon's last drain (up to a minute) */
	if ((r = ask_daemon(l, &n))) {
		live_close(l);
		return r;
	}
	l->lost = 0;
	*out = l;
	return 0;
}

/* One answer's lines "PID OFFSET COUNT PATH" to FN. */
static size_t read_daemon(struct live *l, live_sample_fn fn, void *arg)
{
	size_t n = 0, delivered = 0;
	char *line, *save = NULL;

	if ((l->last_err = ask_daemon(l, &n)) != 0)
		return 0;
	/* names once per answer: a daemon sends no exits, and pids are reused */
	comm_clear(l);
	strtok_r(l->reply, "\n", &save);	/* the "ok recent" line */
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		struct live_sample s = { 0 };
		struct spent_profile_image img = { 0 };
		unsigned long long off, count;
		int pid, used = 0;
		if (sscanf(line, "%d %llx %llu %n", &pid, &off, &count, &used) != 3 || !used)
			continue;
		s.pid = pid;
		s.offset = off;
		s.count = count;
		s.comm = comm_of(l, pid);
		if (strcmp(line + used, "-")) {
			img.path = line + used;	/* by path: the daemon sends no identity */
			s.img = &img;
		}
		fn(arg, &s);
		delivered++;
	}
	return delivered;
}

const char *live_event(const struct live *l)
{
	return l->event;
}

void live_close(struct live *l)
{
	if (!l)
		return;
	free(l->db);
	free(l->reply);
	dperf_close(l->perf);
	dmaps_free(l->maps);
	comm_clear(l);
	free(l->imgs);
	free(l->img_set);
	free(l);
}

int live_ncpus(const struct live *l)
{
	return l->perf ? dperf_ncpus(l->perf) : 0;
}

size_t live_read(struct live *l, live_sample_fn fn, void *arg)
{
	const struct dperf_handlers h = {
		.arg = l, .mmap = on_mmap, .fork = on_fork, .exec = on_exec, .comm = on_comm,
		.exit = on_exit_rec,
		.sample = on_sample, .lost = on_lost,
	};

	if (l->db)
		return read_daemon(l, fn, arg);
	l->fn = fn;
	l->arg = arg;
	l->delivered = 0;
	dperf_read(l->perf, &h);
	/* records come in time order: a process's samples precede its exit in this read */
	dmaps_reap(l->maps, l->gen);
	l->gen++;
	comm_drop_exited(l);
	l->fn = NULL;
	return l->delivered;
}

int live_last_error(const struct live *l)
{
	return l->last_err;
}

uint64_t live_lost(const struct live *l)
{
	return l->lost;
}
