/* core/perf_ring.h - reader of a perf_event mmap ring buffer: map, copy out complete records
 * (wrapped records reassembled), advance the tail. */
#ifndef SPENT_CORE_PERF_RING_H
#define SPENT_CORE_PERF_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct perf_ring {
	void *base;		/* the mmap: control page + data pages */
	size_t map_len;
	uint8_t *data;
	uint64_t data_size;	/* power of two */
	uint8_t *scratch;	/* reassembly buffer for records that wrap */
};

/* mmap FD's ring with DATA_PAGES (power of two) data pages. 0 or -errno. */
int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages);
void perf_ring_unmap(struct perf_ring *r);

/* Called once per record; the pointer is valid only during the call. Non-zero stops. */
typedef int (*perf_record_fn)(void *ctx, const struct perf_event_header *h);

/*
 * Hand every complete record now in the ring to FN, then release the space. Returns the number
 * of records read, or FN's non-zero return (negated errno convention) when it stopped.
 */
int perf_ring_drain(struct perf_ring *r, perf_record_fn fn, void *ctx);

#endif
