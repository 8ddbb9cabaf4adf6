/* trace/log_collect.c - the recorder's side of the tool's FIFO: every process of a traced tree
 * writes its records there in frames tagged with its pid (struct log_frame); this splits them
 * into one record stream per process, numbers the streams (a LOG_REC_PROCESS record opens
 * each: the command, each forked child, each exec'd program), and writes the records into the
 * log in arrival order with a LOG_REC_STREAM record wherever the stream changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "trace/log_io.h"
#include "trace/source_formats.h"

struct collect_proc {
	uint32_t pid;
	uint32_t stream;	/* its current stream, 0 before its PROCESS record */
	uint64_t insns;		/* its current program's last progress note */
	bool open;		/* its stream started and has not sent its EXIT record */
	/* it announced an execve a new tool instance follows (LOG_PIPE_EXEC), at EXEC_NS, and
	 * has sent nothing since: between the two instances nobody holds the FIFO open */
	bool exec_pending;
	uint64_t exec_ns;
	uint8_t *buf;		/* bytes of records not yet whole */
	size_t have, cap;
};

struct log_collector {
	struct log_writer *w;
	struct collect_proc *procs;
	size_t n_procs, cap_procs;
	uint32_t n_streams, cur_stream;
	uint8_t frame[LOG_FRAME_MAX];	/* a frame split across two reads */
	size_t frame_have;
	struct log_collect_totals tot;
	log_collect_record_fn on_record;
};

int log_collector_new(struct log_writer *w, log_collect_record_fn on_record,
		      struct log_collector **out)
{
	struct log_collector *c = calloc(1, sizeof(*c));
	*out = c;
	if (!c)
		return -ENOMEM;
	c->w = w;
	c->on_record = on_record;
	return 0;
}

static struct collect_proc *proc_get(struct log_collector *c, uint32_t pid)
{
	for (size_t i = 0; i < c->n_procs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	if (ALLOC_GROW(c->procs, c->n_procs + 1, c->cap_procs))
		return NULL;
	struct collect_proc *p = &c->procs[c->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static uint32_t stream_of(struct log_collector *c, uint32_t pid)
{
	for (size_t i = 0; i < c->n_procs; i++)
		if (c->procs[i].pid == pid)
			return c->procs[i].stream;
	return 0;
}

/* A PROCESS record: number the stream it opens and its parent's. */
static int on_process(struct log_collector *c, struct collect_proc *p, uint8_t *payload, uint32_t len)
{
	struct log_process lp;
	if (len < sizeof(lp))
		return -EBADMSG;
	memcpy(&lp, payload, sizeof(lp));
	lp.parent_stream = (lp.flags & LOG_PROC_FORK) ? stream_of(c, lp.ppid) : p->stream;
	if (lp.parent_stream == 0 && !(lp.flags & LOG_PROC_FORK))
		lp.parent_stream = stream_of(c, lp.ppid);
	if (c->n_streams == 0)
		lp.flags = 0;	/* the traced command itself */
	lp.stream = p->stream = ++c->n_streams;
	memcpy(payload, &lp, sizeof(lp));
	c->tot.streams++;
	return 0;
}

static int put_record(struct log_collector *c, struct collect_proc *p, uint32_t type,
		      uint8_t *payload, uint32_t len)
{
	int err;
	if (type == LOG_REC_PROCESS && (err = on_process(c, p, payload, len)) < 0)
		return err;
	if (type == LOG_REC_PROCESS)
		p->insns = 0;	/* an exec'd program counts from 0: what ran before stays counted */
	p->open = type == LOG_REC_PROCESS || (p->open && type != LOG_REC_EXIT);
	p->exec_pending = false;	/* the exec failed, or its program's stream began */
	if (p->stream == 0)
		return -EBADMSG;	/* records before the process said who it is */
	if (type == LOG_REC_PROCESS)
		c->cur_stream = p->stream;	/* a process record opens its stream: no switch */
	else if (p->stream != c->cur_stream) {
		struct log_stream s = { .stream = p->stream };
		if ((err = log_writer_add(c->w, LOG_REC_STREAM, &s, sizeof(s))) < 0)
			return err;
		c->cur_stream = p->stream;
	}
	if (c->on_record)
		c->on_record(type, payload, len);
	if ((err = log_writer_add(c->w, type, payload, len)) < 0)
		return err;
	c->tot.records++;
	c->tot.data += type == LOG_REC_DATA;
	return 0;
}

/* A progress note: the tree's total moves by what this process ran since its last one. */
static void on_progress(struct log_collector *c, struct collect_proc *p, const uint8_t *payload)
{
	struct log_progress pr;
	memcpy(&pr, payload, sizeof(pr));
	if (pr.instructions > p->insns) {
		c->tot.instructions += pr.instructions - p->insns;
		p->insns = pr.instructions;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An execve note: a new tool instance follows (the stream stays open across the gap), or
 * the program runs untraced and the stream ends here. */
static void on_exec_note(struct collect_proc *p, const uint8_t *payload)
{
	struct log_exec_note x;
	memcpy(&x, payload, sizeof(x));
	if (x.followed) {
		p->exec_pending = true;
		p->exec_ns = now_ns();
	} else {
		p->open = false;
	}
}

/* Append one frame's bytes to its process and pass on its whole records. */
static int on_frame(struct log_collector *c, uint32_t pid, const uint8_t *b, size_t n)
{
	struct collect_proc *p = proc_get(c, pid);
	if (!p)
		return -ENOMEM;
	if (ALLOC_GROW(p->buf, p->have + n, p->cap))
		return -ENOMEM;
	memcpy(p->buf + p->have, b, n);
	p->have += n;
	size_t pos = 0;
	int err = 0;
	while (p->have - pos >= sizeof(struct log_rec_hdr)) {
		struct log_rec_hdr h;
		memcpy(&h, p->buf + pos, sizeof(h));
		if ((h.type < LOG_REC_CODE || h.type > LOG_REC_LAST || h.type == LOG_REC_END ||
		     h.type == LOG_REC_STREAM || h.len > LOG_REC_MAX) &&
		    !(h.type == LOG_PIPE_PROGRESS && h.len == sizeof(struct log_progress)) &&
		    !(h.type == LOG_PIPE_EXEC && h.len == sizeof(struct log_exec_note))) {
			err = -EBADMSG;
			break;
		}
		size_t padded = ((size_t)h.len + 7u) & ~(size_t)7u;
		if (p->have - pos - sizeof(h) < padded)
			break;
		if (h.type == LOG_PIPE_PROGRESS)
			on_progress(c, p, p->buf + pos + sizeof(h));
		else if (h.type == LOG_PIPE_EXEC)
			on_exec_note(p, p->buf + pos + sizeof(h));
		else if ((err = put_record(c, p, h.type, p->buf + pos + sizeof(h), h.len)) < 0)
			break;
		pos += sizeof(h) + padded;
	}
	memmove(p->buf, p->buf + pos, p->have - pos);
	p->have -= pos;
	return err;
}

int log_collector_feed(struct log_collector *c, const uint8_t *b, size_t n)
{
	while (n > 0) {
		/* a whole frame in the read buffer goes on from there (no copy into c->frame):
		 * the pipe is read in big chunks, so nearly all do */
		struct log_frame whole;
		if (c->frame_have == 0 && n >= sizeof(whole)) {
			memcpy(&whole, b, sizeof(whole));
			if (whole.len == 0 || whole.len > LOG_FRAME_MAX - sizeof(whole))
				return -EBADMSG;
			if (n - sizeof(whole) >= whole.len) {
				int err = on_frame(c, whole.pid, b + sizeof(whole), whole.len);
				if (err < 0)
					return err;
				b += sizeof(whole) + whole.len;
				n -= sizeof(whole) + whole.len;
				continue;
			}
		}
		/* gather a frame header, then its payload, across reads */
		size_t want = sizeof(struct log_frame);
		if (c->frame_have >= want) {
			struct log_frame f;
			memcpy(&f, c->frame, sizeof(f));
			if (f.len == 0 || f.len > LOG_FRAME_MAX - sizeof(f))
				return -EBADMSG;
			want += f.len;
		}
		size_t take = want - c->frame_have < n ? want - c->frame_have : n;
		memcpy(c->frame + c->frame_have, b, take);
		c->frame_have += take;
		b += take;
		n -= take;
		if (c->frame_have == want && want > sizeof(struct log_frame)) {
			struct log_frame f;
			memcpy(&f, c->frame, sizeof(f));
			c->frame_have = 0;
			int err = on_frame(c, f.pid, c->frame + sizeof(f), f.len);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

int log_collector_finish(struct log_collector *c)
{
	if (c->frame_have)
		return -EPIPE;
	c->tot.unended = 0;
	for (size_t i = 0; i < c->n_procs; i++) {
		struct collect_proc *p = &c->procs[i];
		/* a process killed between two writes of one record: the part is dropped */
		p->have = 0;
		if (p->open && p->stream && c->tot.unended++ == 0)
			c->tot.unended_pid = p->pid;
	}
	return 0;
}

bool log_collector_awaits(const struct log_collector *c, bool (*alive)(uint32_t pid))
{
	uint64_t now = now_ns();
	for (size_t i = 0; i < c->n_procs; i++) {
		const struct collect_proc *p = &c->procs[i];
		if (p->open && p->exec_pending && now - p->exec_ns < LOG_EXEC_GAP_MAX_NS && alive(p->pid))
			return true;
	}
	return false;
}

const struct log_collect_totals *log_collector_totals(const struct log_collector *c)
{
	return &c->tot;
}

void log_collector_free(struct log_collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_procs; i++)
		free(c->procs[i].buf);
	free(c->procs);
	free(c);
}
