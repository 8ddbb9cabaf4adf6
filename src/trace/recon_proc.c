/* trace/recon_proc.c - the reconstructor's process streams (log format v3): a process record
 * opens a stream, a stream record switches to another (the current one is parked with its
 * superblocks, images and threads), and a stream's state is released at the end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "trace/recon_internal.h"

/* Free one stream's superblocks and images (the one in r->p). */
void recon_proc_release(struct recon *r)
{
	for (size_t i = 0; i < r->p.tab_cap; i++) {
		struct recon_sb *s = r->p.tab[i], *nx;
		for (; s; s = nx) {
			nx = s->next;
			free(s);
		}
	}
	free(r->p.tab);
	recon_images_release(r);
	free(r->p.th);
	free(r->p.path);
	free(r->p.argv);
	memset(&r->p, 0, sizeof(r->p));
}

/* Park the current stream in r->procs[its number] (its slot grows as needed). */
static int proc_park(struct recon *r)
{
	uint32_t s = r->p.stream;
	size_t old = r->n_procs;	/* the room: every slot, used or not */
	if (ALLOC_GROW(r->procs, (size_t)s + 1, r->n_procs))
		return -ENOMEM;
	memset(r->procs + old, 0, (r->n_procs - old) * sizeof(*r->procs));
	r->procs[s] = r->p;
	r->procs[s].flags |= 1u << 31;	/* the slot is in use */
	memset(&r->p, 0, sizeof(r->p));
	return 0;
}

int recon_on_stream(struct recon *r, const struct log_record *rec)
{
	struct log_stream x;
	if (rec->len != sizeof(x))
		return recon_fail(r, -EBADMSG, "corrupt log: stream record of %u bytes (block at byte %llu)",
				  rec->len, (unsigned long long)rec->block_offset);
	memcpy(&x, rec->payload, sizeof(x));
	if (x.stream == r->p.stream)
		return 0;
	if (x.stream >= r->n_procs || !(r->procs[x.stream].flags & (1u << 31)))
		return recon_fail(r, -EBADMSG, "corrupt log: records of process stream %u, which no "
				  "process record opened (block at byte %llu)", x.stream,
				  (unsigned long long)rec->block_offset);
	int err = proc_park(r);
	if (err < 0)
		return err;
	r->p = r->procs[x.stream];
	r->p.flags &= ~(1u << 31);
	memset(&r->procs[x.stream], 0, sizeof(r->procs[x.stream]));
	return 0;
}

int recon_on_process(struct recon *r, const struct log_record *rec)
{
	struct log_process x;
	if (rec->len < sizeof(x))
		goto bad;
	memcpy(&x, rec->payload, sizeof(x));
	size_t ppad = ((size_t)x.path_len + 7u) & ~(size_t)7u;
	if (x.path_len > 4095 || rec->len != sizeof(x) + ppad + x.argv_len || x.stream == 0 ||
	    x.stream > LOG_REC_MAX || x.stream == r->p.stream ||
	    (x.stream < r->n_procs && (r->procs[x.stream].flags & (1u << 31))))
		goto bad;
	const uint8_t *a = rec->payload + sizeof(x) + ppad;
	uint32_t argc = 0;
	for (uint32_t i = 0; i < x.argv_len; i++)
		argc += a[i] == 0;
	if (argc != x.argc || (x.argv_len && a[x.argv_len - 1] != 0))
		goto bad;
	int err = proc_park(r);
	if (err < 0)
		return err;
	r->p.stream = x.stream;
	r->p.pid = x.pid;
	r->p.ppid = x.ppid;
	r->p.parent_stream = x.parent_stream;
	r->p.flags = x.flags & ~(1u << 31);
	r->p.argc = x.argc;
	r->p.argv_len = x.argv_len;
	r->p.path = strndup((const char *)rec->payload + sizeof(x), x.path_len);
	r->p.argv = malloc(x.argv_len + 1);
	if (!r->p.path || !r->p.argv)
		return -ENOMEM;
	memcpy(r->p.argv, a, x.argv_len);
	r->p.argv[x.argv_len] = 0;
	if (x.time_ns)
		r->p.cur_time = x.time_ns;
	struct spent_trace_event *e = recon_event_push(r, SPENT_TRACE_EV_PROCESS_START, 0);
	if (!e)
		return -ENOMEM;
	e->u.process.ppid = x.ppid;
	e->u.process.stream = x.stream;
	e->u.process.parent_stream = x.parent_stream;
	e->u.process.forked = (x.flags & LOG_PROC_FORK) != 0;
	e->u.process.path = r->p.path;
	e->u.process.argv = r->p.argv;
	e->u.process.argc = x.argc;
	return 0;
bad:
	return recon_fail(r, -EBADMSG, "corrupt log: bad process record in block at byte %llu",
			  (unsigned long long)rec->block_offset);
}
