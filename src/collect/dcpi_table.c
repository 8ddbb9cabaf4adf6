/* collect/dcpi_table.c - DCPI's 4-way sample hash table with a pair of overflow buffers
 * (the user-space fallback aggregator of `spent daemon`). */
#include "collect/dcpi_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ovf_buf {
	struct dcpi_entry *e;
	uint32_t len;
	int full;		/* waiting to be taken by the consumer */
};

struct dcpi_table {
	struct dcpi_bucket *buckets;
	uint32_t mask;		/* nbuckets - 1 */
	uint32_t victim;	/* the mod-4 eviction counter */
	uint32_t ovf_cap;
	int ovf_fill;		/* index of the buffer being appended to */
	int ovf_taken;		/* index handed out by take_overflow, -1 when none */
	struct ovf_buf ovf[2];
	struct dcpi_table_stats st;
};

_Static_assert(sizeof(struct dcpi_entry) == 16, "DCPI entries are 16 bytes");
_Static_assert(sizeof(struct dcpi_bucket) == 64, "a bucket is one cache line");

int dcpi_table_new(uint32_t nbuckets, uint32_t ovf_cap, struct dcpi_table **out)
{
	struct dcpi_table *t = NULL;
	uint32_t n = 1;
	int err = -ENOMEM;

	*out = NULL;
	if (nbuckets > (1u << 28) || ovf_cap > (1u << 28))
		return -EINVAL;
	while (n < nbuckets)
		n <<= 1;
	if (ovf_cap == 0)
		ovf_cap = 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	t->buckets = aligned_alloc(64, (size_t)n * sizeof(struct dcpi_bucket));
	t->ovf[0].e = calloc(ovf_cap, sizeof(struct dcpi_entry));
	t->ovf[1].e = calloc(ovf_cap, sizeof(struct dcpi_entry));
	if (!t->buckets || !t->ovf[0].e || !t->ovf[1].e)
		goto out;
	memset(t->buckets, 0, (size_t)n * sizeof(struct dcpi_bucket));
	t->mask = n - 1;
	t->ovf_cap = ovf_cap;
	t->ovf_taken = -1;
	*out = t;
	t = NULL;
	err = 0;
out:
	dcpi_table_free(t);
	return err;
}

void dcpi_table_free(struct dcpi_table *t)
{
	if (!t)
		return;
	free(t->buckets);
	free(t->ovf[0].e);
	free(t->ovf[1].e);
	free(t);
}

static uint32_t dcpi_hash(uint32_t pid, uint64_t pc, uint16_t event)
{
	uint64_t h = pc ^ ((uint64_t)pid << 40) ^ ((uint64_t)pid >> 24) ^ ((uint64_t)event << 62);
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 32);
}

/* Append E to the buffer being filled; 1 when that filled it, -1 when E had to be dropped. */
static int ovf_push(struct dcpi_table *t, const struct dcpi_entry *e)
{
	struct ovf_buf *b = &t->ovf[t->ovf_fill];

	if (b->full) {
		t->st.dropped += e->count;
		return -1;
	}
	b->e[b->len++] = *e;
	t->st.evictions++;
	if (b->len < t->ovf_cap)
		return 0;
	b->full = 1;
	/* switch to the other buffer if the consumer has given it back */
	if (!t->ovf[!t->ovf_fill].full)
		t->ovf_fill = !t->ovf_fill;
	return 1;
}

int dcpi_table_add(struct dcpi_table *t, uint32_t pid, uint64_t pc, uint16_t event)
{
	struct dcpi_bucket *b = &t->buckets[dcpi_hash(pid, pc, event) & t->mask];
	struct dcpi_entry *v;
	int full = 0;

	t->st.samples++;
	for (int i = 0; i < DCPI_WAYS; i++) {
		struct dcpi_entry *e = &b->way[i];
		if (e->count && e->pc == pc && e->pid == pid && e->event == event) {
			t->st.hits++;
			if (e->count < DCPI_COUNT_MAX) {
				e->count++;
				return 0;
			}
			full = ovf_push(t, e) > 0;	/* saturated: flush it, restart at 1 */
			e->count = 1;
			return full;
		}
	}
	for (int i = 0; i < DCPI_WAYS; i++) {
		if (b->way[i].count == 0) {
			b->way[i] = (struct dcpi_entry){ .pc = pc, .pid = pid, .event = event, .count = 1 };
			return 0;
		}
	}
	v = &b->way[t->victim++ & (DCPI_WAYS - 1)];
	full = ovf_push(t, v) > 0;
	*v = (struct dcpi_entry){ .pc = pc, .pid = pid, .event = event, .count = 1 };
	return full;
}

size_t dcpi_table_take_overflow(struct dcpi_table *t, const struct dcpi_entry **entries)
{
	*entries = NULL;
	if (t->ovf_taken >= 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (t->ovf[i].full) {
			t->ovf_taken = i;
			*entries = t->ovf[i].e;
			return t->ovf[i].len;
		}
	}
	return 0;
}

void dcpi_table_release_overflow(struct dcpi_table *t)
{
	int i = t->ovf_taken;

	if (i < 0)
		return;
	t->ovf[i].len = 0;
	t->ovf[i].full = 0;
	t->ovf_taken = -1;
	/* the filler was stuck on a full buffer: let it use this one */
	if (t->ovf[t->ovf_fill].full)
		t->ovf_fill = i;
}

size_t dcpi_table_drain(struct dcpi_table *t, dcpi_emit_fn emit, void *arg)
{
	size_t n = 0;

	for (uint32_t i = 0; i <= t->mask; i++) {
		for (int w = 0; w < DCPI_WAYS; w++) {
			struct dcpi_entry *e = &t->buckets[i].way[w];
			if (!e->count)
				continue;
			emit(arg, e);
			e->count = 0;
			n++;
		}
	}
	for (int i = 0; i < 2; i++) {
		for (uint32_t k = 0; k < t->ovf[i].len; k++, n++)
			emit(arg, &t->ovf[i].e[k]);
		t->ovf[i].len = 0;
		t->ovf[i].full = 0;
	}
	t->ovf_fill = 0;
	t->ovf_taken = -1;
	return n;
}

void dcpi_table_get_stats(const struct dcpi_table *t, struct dcpi_table_stats *st)
{
	*st = t->st;
}
