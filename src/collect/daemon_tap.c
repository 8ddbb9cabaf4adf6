/* collect/daemon_tap.c - the daemon's `recent` control command, for `spent top`: while a
 * client asks at least every TAP_IDLE_MS, every aggregated entry of the first event is also
 * kept here, placed in (image, offset) as it arrives (its process may be reaped by the next
 * drain); each `recent` drains the aggregator (so the answer is as fresh as the request) and
 * sends the entries gathered since the previous `recent`, one line each. The counts still go
 * to the database unchanged: a client only makes drains as frequent as its requests. */
#include "core/alloc.h"
#include "collect/daemon_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A client that stops asking (killed, or gone) stops the tap after this long. */
#define TAP_IDLE_MS 10000
/* Entries kept between two requests at most: the rest are counted, not kept. */
#define TAP_MAX_ENTRIES 65536

struct tap_entry {
	pid_t pid;
	int32_t image;		/* dimage id, -1: not placed */
	uint64_t offset;
	uint64_t count;
};

struct daemon_tap {
	uint64_t t_request;	/* ms of the last request */
	struct tap_entry *e;
	size_t n, cap;
	uint64_t dropped;	/* entries over TAP_MAX_ENTRIES since the last answer */
};

void daemon_tap_add(struct daemon *d, pid_t pid, uint64_t pc, uint32_t event, uint64_t count)
{
	struct daemon_tap *t = d->tap;
	uint32_t image;
	uint64_t offset;

	if (!t || event != 0)
		return;
	if (daemon_now_ms() - t->t_request > TAP_IDLE_MS) {	/* nobody asks any more */
		daemon_tap_free(d);
		return;
	}
	if (t->n == TAP_MAX_ENTRIES || ALLOC_GROW(t->e, t->n + 1, t->cap)) {
		t->dropped++;
		return;
	}
	struct tap_entry *e = &t->e[t->n++];
	e->pid = pid;
	e->count = count;
	e->image = -1;
	e->offset = pc;
	if (dmaps_resolve(d->maps, pid, pc, &image, &offset) == 0) {
		e->image = (int32_t)image;
		e->offset = offset;
	}
}

void daemon_tap_free(struct daemon *d)
{
	if (!d->tap)
		return;
	free(d->tap->e);
	free(d->tap);
	d->tap = NULL;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return -EIO;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* "ok recent EVENT ENTRIES DROPPED" then "PID OFFSET COUNT PATH" lines (offset in hex, PATH
 * "-" when the pc was in no known mapping; a newline in a path becomes '?'). */
void daemon_tap_serve(struct daemon *d, int fd)
{
	struct daemon_tap *t = d->tap;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!t && !(t = d->tap = calloc(1, sizeof(*t)))) {
		write_all(fd, "error recent failed: out of memory\n", 35);
		return;
	}
	t->t_request = daemon_now_ms();
	/* what the aggregator holds now comes through daemon_tap_add */
	if ((r = daemon_drain(d)) != 0) {
		dprintf(fd, "error recent failed: %s\n", strerror(-r));
		return;
	}
	if (!(f = open_memstream(&buf, &len))) {
		write_all(fd, "error recent failed: out of memory\n", 35);
		return;
	}
	fprintf(f, "ok recent %s %zu %llu\n", d->cfg->evs[0].spec, t->n,
		(unsigned long long)t->dropped);
	for (size_t i = 0; i < t->n; i++) {
		const struct tap_entry *e = &t->e[i];
		const struct dimage *im = e->image >= 0 ? dmaps_image(d->maps, (uint32_t)e->image) : NULL;
		fprintf(f, "%d %llx %llu ", (int)e->pid, (unsigned long long)e->offset,
			(unsigned long long)e->count);
		for (const char *p = im ? im->path : "-"; *p; p++)
			fputc(*p == '\n' ? '?' : *p, f);
		fputc('\n', f);
	}
	t->n = 0;
	t->dropped = 0;
	if (fclose(f) == 0)
		write_all(fd, buf, len);
	free(buf);
}
