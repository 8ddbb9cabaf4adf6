/* collect/daemon_bpf.c - load and drain the in-kernel aggregator: two per-CPU hash maps
 * flipped so sampling never stops, an overflow ring buffer, per-CPU counters. */
#include "collect/daemon_bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregate.skel.h"

#define BATCH 1024

struct dbpf {
	struct aggregate_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	struct ring_buffer *rb;
	int ncpu_possible;
	uint32_t map_entries;	/* keys per aggregation map, as loaded */
	bool maps_on_demand;	/* its maps allocate keys as they come (else preallocated) */
	/* batch buffers: keys and per-CPU values */
	struct agg_key *keys;
	uint64_t *vals;
	/* the overflow callback's target */
	dentry_fn fn;
	void *fn_arg;
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;	/* the library never prints: errors come back as -errno */
}

static int on_overflow(void *ctx, void *data, size_t size)
{
	struct dbpf *b = ctx;
	const struct agg_overflow *o = data;

	if (size >= sizeof(*o) && b->fn)
		b->fn(b->fn_arg, (pid_t)o->key.tgid, o->key.pc, o->key.event, o->count);
	return 0;
}

/* Keys per map: as many as AGG_MAP_BYTES of per-CPU values and element overhead allow, so the
 * map fills rarely (a full map forces an early drain, and every drain re-reads each hot key:
 * the reduction is the samples per key between drains), within DCPI-like table sizes. */
static uint32_t map_size(int ncpu)
{
	uint64_t per_key = 8ull * (uint64_t)ncpu + AGG_KEY_OVERHEAD;
	uint64_t n = AGG_MAP_BYTES / per_key;

	if (n > AGG_MAP_ENTRIES_MAX)
		n = AGG_MAP_ENTRIES_MAX;
	if (n < AGG_MAP_ENTRIES_MIN)
		n = AGG_MAP_ENTRIES_MIN;
	return (uint32_t)n;
}

/* Open and load the aggregator into B->skel with B->map_entries keys per map, its maps
 * allocated on demand or preallocated; 0 or -errno (B->skel NULL then). */
static int load_aggregator(struct dbpf *b, bool on_demand)
{
	int err;

	b->skel = aggregate_bpf__open();
	if (!b->skel)
		return errno ? -errno : -EPERM;
	struct bpf_map *maps[2] = { b->skel->maps.counts0, b->skel->maps.counts1 };
	for (int i = 0; i < 2; i++) {
		if ((err = bpf_map__set_max_entries(maps[i], b->map_entries)))
			goto out;
		if (on_demand && (err = bpf_map__set_map_flags(maps[i], bpf_map__map_flags(maps[i]) |
								  BPF_F_NO_PREALLOC)))
			goto out;
	}
	if ((err = aggregate_bpf__load(b->skel)))
		goto out;
	b->maps_on_demand = on_demand;
	return 0;
out:
	aggregate_bpf__destroy(b->skel);
	b->skel = NULL;
	return err;
}

int dbpf_open(struct dperf *perf, size_t nev, uint32_t map_entries, struct dbpf **out)
{
	struct dbpf *b = calloc(1, sizeof(*b));
	int err = -ENOMEM, n = dperf_ncpus(perf);

	*out = NULL;
	if (!b)
		goto out;
	libbpf_set_print(silent_print);
	b->ncpu_possible = libbpf_num_possible_cpus();
	if (b->ncpu_possible <= 0) {
		err = b->ncpu_possible ? b->ncpu_possible : -ENODEV;
		goto out;
	}
	b->keys = calloc(BATCH, sizeof(*b->keys));
	b->vals = calloc((size_t)BATCH * b->ncpu_possible, sizeof(*b->vals));
	b->links = calloc((size_t)n * nev, sizeof(*b->links));
	if (!b->keys || !b->vals || !b->links)
		goto out;
	b->map_entries = map_entries ? map_entries : map_size(b->ncpu_possible);
	/* Maps allocated on demand first: preallocating two maps of 262144 per-CPU keys took the
	 * kernel 0.5 s of the daemon's 0.7 s start (and held ~60 MB it seldom fills). Kernels
	 * before 6.1 refuse a hash map without preallocation in a perf_event program: load again
	 * preallocated. A failed allocation in the program sends the sample to the overflow ring,
	 * as a full map does. */
	if ((err = load_aggregator(b, true)) && (err = load_aggregator(b, false)))
		goto out;
	for (int i = 0; i < n; i++) {
		for (size_t e = 0; e < nev; e++) {
			LIBBPF_OPTS(bpf_perf_event_opts, o, .bpf_cookie = e);
			struct bpf_link *l = bpf_program__attach_perf_event_opts(
				b->skel->progs.agg_sample, dperf_sample_fd(perf, i, e), &o);
			if (!l) {
				err = errno ? -errno : -EINVAL;
				goto out;
			}
			b->links[b->nlinks++] = l;
		}
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.overflow), on_overflow, b, NULL);
	if (!b->rb) {
		err = errno ? -errno : -ENOMEM;
		goto out;
	}
	*out = b;
	b = NULL;
	err = 0;
out:
	dbpf_close(b);
	return err;
}

void dbpf_close(struct dbpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	for (size_t i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	aggregate_bpf__destroy(b->skel);
	free(b->keys);
	free(b->vals);
	free(b);
}

uint32_t dbpf_map_entries(const struct dbpf *b)
{
	return b->map_entries;
}

int dbpf_maps_on_demand(const struct dbpf *b)
{
	return b->maps_on_demand;
}

int dbpf_overflow_fd(const struct dbpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int dbpf_read_overflow(struct dbpf *b, dentry_fn fn, void *arg)
{
	int n;

	b->fn = fn;
	b->fn_arg = arg;
	n = ring_buffer__consume(b->rb);
	b->fn = NULL;
	return n;
}

/* Empty map FD in batches, emitting each key's count summed over CPUs; returns entries emitted. */
static int map_drain(struct dbpf *b, int fd, dentry_fn fn, void *arg)
{
	struct agg_key in, outk;
	void *inp = NULL;
	int total = 0, err;

	for (;;) {
		uint32_t count = BATCH;
		err = bpf_map_lookup_and_delete_batch(fd, inp, &outk, b->keys, b->vals, &count, NULL);
		if (err && errno != ENOENT)
			return -errno;
		/* one entry per key: the batch hands each key over once with every CPU's count */
		for (uint32_t k = 0; k < count; k++) {
			uint64_t v = 0;
			for (int c = 0; c < b->ncpu_possible; c++)
				v += b->vals[(size_t)k * b->ncpu_possible + c];
			if (!v)
				continue;
			fn(arg, (pid_t)b->keys[k].tgid, b->keys[k].pc, b->keys[k].event, v);
			total++;
		}
		if (err)	/* ENOENT: that was the last batch */
			return total;
		in = outk;
		inp = &in;
	}
}

int dbpf_drain(struct dbpf *b, dentry_fn fn, void *arg)
{
	uint32_t was = b->skel->bss->active;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int fd;

	__atomic_store_n(&b->skel->bss->active, !was, __ATOMIC_SEQ_CST);
	/* let programs that read the old value finish their update */
	nanosleep(&ts, NULL);
	fd = bpf_map__fd(was ? b->skel->maps.counts1 : b->skel->maps.counts0);
	return map_drain(b, fd, fn, arg);
}

int dbpf_stats(struct dbpf *b, struct agg_stats *sum)
{
	uint32_t key = AGG_STATS_KEY;
	struct agg_stats *v = calloc(b->ncpu_possible, sizeof(*v));
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stats), &key, v) < 0) {
		err = -errno;
		goto out;
	}
	for (int c = 0; c < b->ncpu_possible; c++) {
		sum->samples += v[c].samples;
		sum->new_entries += v[c].new_entries;
		sum->overflowed += v[c].overflowed;
		sum->dropped += v[c].dropped;
		sum->kernel += v[c].kernel;
	}
out:
	free(v);
	return err;
}
