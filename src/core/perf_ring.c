/* core/perf_ring.c - perf mmap ring buffer reader (see perf_ring.h): acquire-load the head,
 * walk records, reassemble the ones that wrap, release-store the tail. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/perf_ring.h"

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	memset(r, 0, sizeof(*r));
	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->map_len = (data_pages + 1) * page;
	r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->data = (uint8_t *)r->base + page;
	r->data_size = (uint64_t)data_pages * page;
	r->scratch = malloc(65536);
	if (!r->scratch) {
		perf_ring_unmap(r);
		return -ENOMEM;
	}
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	free(r->scratch);
	memset(r, 0, sizeof(*r));
}

int perf_ring_drain(struct perf_ring *r, perf_record_fn fn, void *ctx)
{
	struct perf_event_mmap_page *pg = r->base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail, mask = r->data_size - 1;
	int n = 0, ret = 0;
	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t off = tail & mask;
		if (off + sizeof(hdr) <= r->data_size) {
			memcpy(&hdr, r->data + off, sizeof(hdr));
		} else {
			size_t first = (size_t)(r->data_size - off);
			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;	/* corrupt or partial: stop here, never read past head */
		const struct perf_event_header *rec;
		if (off + hdr.size <= r->data_size) {
			rec = (const void *)(r->data + off);
		} else {
			size_t first = (size_t)(r->data_size - off);
			memcpy(r->scratch, r->data + off, first);
			memcpy(r->scratch + first, r->data, hdr.size - first);
			rec = (const void *)r->scratch;
		}
		ret = fn(ctx, rec);
		tail += hdr.size;
		n++;
		if (ret)
			break;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return ret ? ret : n;
}
