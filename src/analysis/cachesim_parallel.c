/* analysis/cachesim_parallel.c - a feed group's data walks on worker threads (cachesim_parallel_*).
 *
 * A group sharing its first i-cache (cachesim_feed_group) makes each follower walk every data
 * reference through its own caches: 8 configurations cost ~3.8x one on one CPU, the followers
 * being ~80% of it. The followers are independent of each other and of the leader once they
 * have its spans and missed fetches, so they can run beside it: the caller's thread reads the
 * log, walks the fetches through a leader of its own (a copy of the first configuration that
 * skips its data references: the first configuration becomes a follower too, so even one
 * configuration uses two threads), and copies each batch's data references, spans and missed
 * fetches into a chunk; a full chunk is handed to the workers, which take its followers one at
 * a time, while the caller fills the next chunk, and then helps with what is left of the
 * previous one. Each follower still sees its references in stream order, one chunk after the
 * other, so every result is what cachesim_feed_group gives (tests/unit/test_cachesim_execs.c
 * compares them); only the CPUs the work lands on change. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cachesim_int.h"
#include "core/alloc.h"

#define CHUNK_REFS_DEFAULT (1u << 18)	/* 4 MB of references: ~2 ms a follower */
/* a chunk is also handed out after this many spans (about as many batches): a log traced
 * with --no-data has no references to fill one */
#define CHUNK_SPANS_MAX (1u << 14)

/* What the followers need of a run of batches: the data references and the leader's spans and
 * missed fetches, their reference indices rebased onto refs[]. */
struct follow_chunk {
	struct spent_trace_ref *refs;
	size_t n_refs, cap_refs;
	struct group_span *spans;
	size_t n_spans, cap_spans;
	struct group_miss *xmiss;
	size_t n_xmiss, cap_xmiss;
};

struct cachesim_parallel {
	struct cachesim **sims;
	size_t n;
	size_t chunk_refs;
	pthread_t *workers;
	unsigned n_workers;
	pthread_mutex_t mu;
	pthread_cond_t work;	/* a chunk was handed out, or a follower finished one */
	/* chunk number S lives in chunk[S % 2]; chunks 0..handed-1 are handed out, chunk
	 * `handed` is being filled; follower F has finished chunks 0..done[F]-1 and is
	 * running one while running[F] */
	struct follow_chunk chunk[2];
	uint64_t handed;
	uint64_t *done;
	bool *running;
	bool followed;		/* a batch went through the chunks (the followers share the i-cache) */
	struct cachesim *own_leader;	/* sims[0] when the group has a leader of its own */
	uint64_t drained;	/* every follower has finished the chunks before this one */
	bool stop;
	int err;		/* a follower's first error */
};

/* With the lock held: the follower that can take a chunk (its next one handed out, and it not
 * running), the one furthest behind first (its chunk frees a buffer sooner); 0 if none. */
static size_t pick(const struct cachesim_parallel *p)
{
	size_t best = 0;
	for (size_t f = 1; f < p->n; f++)
		if (!p->running[f] && p->done[f] < p->handed && (!best || p->done[f] < p->done[best]))
			best = f;
	return best;
}

/* With the lock held: take one follower's next chunk and run it (the lock is released
 * meanwhile); false when there is none to take. */
static bool take_one(struct cachesim_parallel *p)
{
	size_t f = pick(p);
	if (!f)
		return false;
	p->running[f] = true;
	const struct follow_chunk *c = &p->chunk[p->done[f] % 2];
	pthread_mutex_unlock(&p->mu);
	struct spent_trace_batch b = { .refs = c->refs, .n_refs = c->n_refs };
	int rc = cachesim_follow_spans(p->sims[f], &b, 0, c->spans, c->n_spans, c->xmiss);
	pthread_mutex_lock(&p->mu);
	if (rc && !p->err)
		p->err = rc;
	p->running[f] = false;
	p->done[f]++;
	pthread_cond_broadcast(&p->work);
	return true;
}

static void *worker_main(void *arg)
{
	struct cachesim_parallel *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop)
		if (!take_one(p))
			pthread_cond_wait(&p->work, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* With the lock held: every follower has finished chunk S-1 (all chunks before S). */
static bool all_done(const struct cachesim_parallel *p, uint64_t s)
{
	for (size_t f = 1; f < p->n; f++)
		if (p->done[f] < s)
			return false;
	return true;
}

/* Help the followers until all have finished the chunks before S. */
static void help_until(struct cachesim_parallel *p, uint64_t s)
{
	pthread_mutex_lock(&p->mu);
	while (!all_done(p, s))
		if (!take_one(p))
			pthread_cond_wait(&p->work, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

/* Hand the chunk being filled to the followers and start filling the next, in the buffer of
 * the chunk before this one, once every follower has finished that. */
static void hand_out(struct cachesim_parallel *p)
{
	pthread_mutex_lock(&p->mu);
	p->handed++;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	help_until(p, p->handed - 1);
	struct follow_chunk *c = &p->chunk[p->handed % 2];
	c->n_refs = c->n_spans = c->n_xmiss = 0;
}

int cachesim_parallel_drain(struct cachesim_parallel *p)
{
	if (p->chunk[p->handed % 2].n_spans)
		hand_out(p);
	if (p->drained != p->handed)	/* no lock per batch when nothing is handed out */
		help_until(p, p->handed);
	p->drained = p->handed;
	/* the shared i-cache's counters are the leader's (cachesim_feed_group copies them for
	 * the batches it takes) */
	for (size_t k = 1; p->followed && k < p->n; k++)
		p->sims[k]->cores[0].ipath->st = p->sims[0]->cores[0].ipath->st;
	return p->err;
}

/* Append what the leader recorded on B (its spans and missed fetches) to the chunk being
 * filled, with B's data references; 0 or -ENOMEM. */
static int append(struct cachesim_parallel *p, const struct spent_trace_batch *b)
{
	const struct cachesim *lead = p->sims[0];
	struct follow_chunk *c = &p->chunk[p->handed % 2];
	size_t r0 = cachesim_exec_ref(&b->execs[0], 0);
	size_t r1 = lead->n_spans ? lead->spans[lead->n_spans - 1].ref_end : r0;
	size_t base = c->n_refs, xbase = c->n_xmiss;
	if (ALLOC_GROW(c->refs, base + (r1 - r0), c->cap_refs) ||
	    ALLOC_GROW(c->spans, c->n_spans + lead->n_spans, c->cap_spans) ||
	    ALLOC_GROW(c->xmiss, xbase + lead->n_xmiss, c->cap_xmiss))
		return -ENOMEM;
	if (r1 > r0)	/* a --no-data log has none: c->refs may still be NULL */
		memcpy(c->refs + base, b->refs + r0, (r1 - r0) * sizeof(*c->refs));
	c->n_refs += r1 - r0;
	for (size_t k = 0; k < lead->n_xmiss; k++) {
		c->xmiss[xbase + k] = lead->xmiss[k];
		c->xmiss[xbase + k].ref = lead->xmiss[k].ref - r0 + base;
	}
	c->n_xmiss += lead->n_xmiss;
	for (size_t s = 0; s < lead->n_spans; s++) {
		struct group_span sp = lead->spans[s];
		sp.ref_end = sp.ref_end - r0 + base;
		sp.miss_end += xbase;
		c->spans[c->n_spans++] = sp;
	}
	return 0;
}

int cachesim_parallel_feed(struct cachesim_parallel *p, const struct spent_trace_batch *b)
{
	struct cachesim **sims = p->sims, *lead = sims[0];
	if (p->err)
		return p->err;
	if (!p->n_workers)	/* one thread: the chunks' copies would only cost */
		return cachesim_feed_group(sims, p->n, b);
	if (!(b->execs && b->n_execs && cachesim_group_shares_icache(sims, p->n, true) &&
	      cachesim_exec_refs_in_order(b))) {
		/* not what followers can take: everything before it first, then the group */
		int rc = cachesim_parallel_drain(p);
		return rc ? rc : cachesim_feed_group(sims, p->n, b);
	}
	p->followed = true;
	lead->n_xmiss = lead->n_spans = 0;
	lead->rec_imiss = true;
	int rc = cachesim_feed_execs_spans(lead, b, true);
	lead->rec_imiss = false;
	if (!rc)
		rc = append(p, b);
	const struct follow_chunk *c = &p->chunk[p->handed % 2];
	if (!rc && (c->n_refs >= p->chunk_refs || c->n_spans >= CHUNK_SPANS_MAX))
		hand_out(p);
	return rc;
}

void cachesim_parallel_free(struct cachesim_parallel *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned k = 0; k < p->n_workers; k++)
		pthread_join(p->workers[k], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	for (int k = 0; k < 2; k++) {
		free(p->chunk[k].refs);
		free(p->chunk[k].spans);
		free(p->chunk[k].xmiss);
	}
	cachesim_free(p->own_leader);
	free(p->workers);
	free(p->done);
	free(p->running);
	free(p->sims);
	free(p);
}

int cachesim_parallel_new(struct cachesim *const *sims, size_t n, unsigned threads, size_t chunk_refs,
			  struct cachesim_parallel **out)
{
	*out = NULL;
	if (!n || !threads)
		return -EINVAL;
	struct cachesim_parallel *p = calloc(1, sizeof(*p));
	if (!p || !(p->sims = calloc(n + 1, sizeof(*p->sims))) || !(p->done = calloc(n + 1, sizeof(*p->done))) ||
	    !(p->running = calloc(n + 1, sizeof(*p->running)))) {
		if (p) {
			free(p->sims);
			free(p->done);
		}
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	p->chunk_refs = chunk_refs ? chunk_refs : CHUNK_REFS_DEFAULT;
	/* With threads, the group gets a leader of its own: a copy of the first configuration
	 * that walks only the fetches (fetch_only), so the first configuration's data
	 * references are a follower's too and the caller's thread only reads the log, walks
	 * the fetches and fills chunks (one configuration on 2 threads: the log and the fetches
	 * on one, the data on the other). Only for a group that shares its i-cache: a leader
	 * that skips its data must never be fed alone. */
	if (threads > 1) {
		char err[256];
		int rc = cachesim_new(cachesim_config(sims[0]), &p->own_leader, err, sizeof(err));
		if (rc) {
			cachesim_parallel_free(p);
			return rc;
		}
		p->own_leader->fetch_only = true;
		p->sims[0] = p->own_leader;
		memcpy(p->sims + 1, sims, n * sizeof(*sims));
		if (!cachesim_group_shares_icache(p->sims, n + 1, true)) {
			cachesim_free(p->own_leader);
			p->own_leader = NULL;
		}
	}
	if (p->own_leader) {
		p->n = n + 1;
	} else {
		memcpy(p->sims, sims, n * sizeof(*sims));
		p->n = n;
	}
	/* no more workers than followers; the caller's thread is one of THREADS */
	unsigned want = threads - 1;
	if (want > p->n - 1)
		want = (unsigned)(p->n - 1);
	if (want && !(p->workers = calloc(want, sizeof(*p->workers)))) {
		cachesim_parallel_free(p);
		return -ENOMEM;
	}
	for (; p->n_workers < want; p->n_workers++) {
		int rc = pthread_create(&p->workers[p->n_workers], NULL, worker_main, p);
		if (rc) {
			cachesim_parallel_free(p);
			return -rc;
		}
	}
	*out = p;
	return 0;
}
