/* trace/log_collect.c - the recorder's side of the tool's FIFO: every process of a traced tree
 * writes its records there in frames tagged with its pid (struct log_frame); this splits them
 * into one record stream per process, numbers the streams (a LOG_REC_PROCESS record opens
 * each: the command, each forked child, each exec'd program), and writes the records into the
 * log in arrival order with a LOG_REC_STREAM record wherever the stream changes. A process
 * whose tool instance has a shared ring (LOG_PIPE_RING) sends only notes through the FIFO:
 * its records are read in place from the ring's mapping. A CODE record the log already holds,
 * byte for byte (another process of the tree ran the same code), is written as a
 * LOG_REC_CODE_SAME record naming the first one. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/hashtab.h"
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
	uint8_t *ring;		/* its tool instance's ring mapping (LOG_RING_FILE_BYTES), or NULL */
	bool ring_done;		/* its EXIT record came: the ring is unmapped after its chunk */
};

/* A CODE record written, by the hash of its payload (hashtab: the key first, never 0). */
struct code_seen {
	uint64_t hash;
	uint64_t off;		/* its payload in codes.bytes */
	uint32_t len;
	uint32_t index;		/* among the log's CODE records */
};

struct log_collector {
	struct log_writer *w;
	struct hashtab seen;	/* of struct code_seen */
	struct log_code_copies codes;
	uint32_t n_codes;	/* CODE records written */
	struct collect_proc *procs;
	size_t n_procs, cap_procs;
	uint32_t n_streams, cur_stream;
	uint8_t frame[LOG_FRAME_MAX];	/* a frame split across two reads */
	size_t frame_have;
	struct log_collect_totals tot;
	log_collect_record_fn on_record;
	int ring_dirfd;		/* the directory of the tools' ring files, or -1: no rings */
};

int log_collector_new(struct log_writer *w, log_collect_record_fn on_record,
		      struct log_collector **out)
{
	struct log_collector *c = calloc(1, sizeof(*c));
	*out = c;
	if (!c)
		return -ENOMEM;
	c->w = w;
	c->seen = (struct hashtab)HASHTAB_INIT(struct code_seen);
	c->on_record = on_record;
	c->ring_dirfd = -1;
	return 0;
}

int log_collector_set_ring_dir(struct log_collector *c, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (c->ring_dirfd >= 0)
		close(c->ring_dirfd);
	c->ring_dirfd = fd;
	return 0;
}

static void ring_unmap(struct collect_proc *p)
{
	if (p->ring)
		munmap(p->ring, LOG_RING_FILE_BYTES);
	p->ring = NULL;
	p->ring_done = false;
}

/* LOG_PIPE_RING: map the ring file the note names (only a plain name in our directory, of the
 * size the format says), and remove it: the mapping keeps it while we read it. */
static int ring_attach(struct log_collector *c, struct collect_proc *p, const uint8_t *payload,
		       uint32_t len)
{
	struct log_ring_open o;
	char name[LOG_RING_NAME_MAX + 1];
	struct stat st;
	if (c->ring_dirfd < 0 || len < sizeof(o))
		return -EBADMSG;
	memcpy(&o, payload, sizeof(o));
	if (o.ring_bytes != LOG_RING_BYTES || o.name_len == 0 || o.name_len > LOG_RING_NAME_MAX ||
	    o.name_len > len - sizeof(o))
		return -EBADMSG;
	memcpy(name, payload + sizeof(o), o.name_len);
	name[o.name_len] = 0;
	if (strlen(name) != o.name_len || strchr(name, '/'))
		return -EBADMSG;
	int fd = openat(c->ring_dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -EBADMSG;	/* only the tool makes files there */
	void *m = MAP_FAILED;
	int err = -EBADMSG;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == LOG_RING_FILE_BYTES) {
		m = mmap(NULL, LOG_RING_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		err = m != MAP_FAILED ? 0 : errno == ENOMEM ? -ENOMEM : -EBADMSG;
	}
	unlinkat(c->ring_dirfd, name, 0);
	close(fd);
	if (err)
		return err;
	ring_unmap(p);	/* the ring of the program it exec'd from */
	p->ring = m;
	return 0;
}

static int feed_records(struct log_collector *c, struct collect_proc *p, uint8_t *b, size_t n,
			bool in_ring, size_t *used);

/* LOG_PIPE_RING_DATA: the records are in the ring; once they are in the log, their space goes
 * back to the tool, which is woken if it waits for it. */
static int ring_take(struct log_collector *c, struct collect_proc *p, const uint8_t *payload)
{
	struct log_ring_data d;
	size_t used = 0;
	memcpy(&d, payload, sizeof(d));
	uint64_t off = d.vpos % LOG_RING_BYTES;
	if (!p->ring || d.len == 0 || d.len % 8u || d.len > LOG_RING_BYTES - off)
		return -EBADMSG;
	int err = feed_records(c, p, p->ring + LOG_RING_HDR_BYTES + off, d.len, true, &used);
	if (!err && used != d.len)
		err = -EBADMSG;	/* a chunk holds whole records */
	struct log_ring_hdr *h = (struct log_ring_hdr *)p->ring;
	__atomic_store_n(&h->tail, d.vpos + d.len, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->waits, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&h->waits, 0u, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&h->seq, 1u, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &h->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	if (p->ring_done)
		ring_unmap(p);	/* the process ended: its tmpfs pages go now, not at our end */
	return err;
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

/* 1 and *INDEX when the log holds a CODE record with payload P already; else 0, and P is
 * kept as the CODE record about to be written while LOG_CODE_SAME_MAX_BYTES allow (the rule
 * readers follow: every CODE record that fits counts), and found by its hash unless an earlier,
 * different payload has that hash (a repeat of this one is then written whole). */
static int code_seen(struct log_collector *c, const uint8_t *p, uint32_t len, uint32_t *index)
{
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, p, len);
	struct code_seen *e = hashtab_find(&c->seen, h ? h : 1);
	if (e && e->len == len && !memcmp(c->codes.bytes + e->off, p, len)) {
		*index = e->index;
		return 1;
	}
	uint64_t off;
	int err = log_code_copies_add(&c->codes, p, len, &off);
	if (err < 0 || off == UINT64_MAX || e)
		return err;
	if ((err = hashtab_insert(&c->seen, h ? h : 1, (void **)&e)) < 0)
		return err;
	e->off = off;
	e->len = len;
	e->index = c->n_codes;
	return 0;
}

/* The records that follow belong to STREAM: a STREAM record when it is not the current one. */
static int switch_stream(struct log_collector *c, uint32_t stream)
{
	if (stream == c->cur_stream)
		return 0;
	struct log_stream s = { .stream = stream };
	int err = log_writer_add(c->w, LOG_REC_STREAM, &s, sizeof(s));
	if (err < 0)
		return err;
	c->cur_stream = stream;
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
	p->ring_done |= type == LOG_REC_EXIT;
	p->exec_pending = false;	/* the exec failed, or its program's stream began */
	if (p->stream == 0)
		return -EBADMSG;	/* records before the process said who it is */
	if (type == LOG_REC_PROCESS)
		c->cur_stream = p->stream;	/* a process record opens its stream: no switch */
	else if ((err = switch_stream(c, p->stream)) < 0)
		return err;
	if (c->on_record)
		c->on_record(type, payload, len);
	struct log_code_same same = { 0, 0 };
	if (type == LOG_REC_CODE) {
		if ((err = code_seen(c, payload, len, &same.index)) < 0)
			return err;
		if (err == 1) {
			type = LOG_REC_CODE_SAME;
			payload = (uint8_t *)&same;
			len = sizeof(same);
		} else {
			c->n_codes++;
		}
	}
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

/* Pass on the whole records at B (N bytes); *USED: the bytes they take. IN_RING: B is a ring
 * chunk, which cannot hold ring notes. */
static int feed_records(struct log_collector *c, struct collect_proc *p, uint8_t *b, size_t n,
			bool in_ring, size_t *used)
{
	size_t pos = 0;
	int err = 0;
	while (n - pos >= sizeof(struct log_rec_hdr)) {
		struct log_rec_hdr h;
		memcpy(&h, b + pos, sizeof(h));
		if ((h.type < LOG_REC_CODE || h.type > LOG_REC_LAST || h.type == LOG_REC_END ||
		     h.type == LOG_REC_STREAM || h.type == LOG_REC_CODE_SAME || h.len > LOG_REC_MAX) &&
		    !(h.type == LOG_PIPE_PROGRESS && h.len == sizeof(struct log_progress)) &&
		    !(h.type == LOG_PIPE_EXEC && h.len == sizeof(struct log_exec_note)) &&
		    !(h.type == LOG_PIPE_RING && !in_ring && h.len <= LOG_FRAME_MAX) &&
		    !(h.type == LOG_PIPE_RING_DATA && !in_ring && h.len == sizeof(struct log_ring_data))) {
			err = -EBADMSG;
			break;
		}
		size_t padded = ((size_t)h.len + 7u) & ~(size_t)7u;
		if (n - pos - sizeof(h) < padded)
			break;
		uint8_t *payload = b + pos + sizeof(h);
		if (h.type == LOG_PIPE_PROGRESS)
			on_progress(c, p, payload);
		else if (h.type == LOG_PIPE_EXEC)
			on_exec_note(p, payload);
		else if (h.type == LOG_PIPE_RING)
			err = ring_attach(c, p, payload, h.len);
		else if (h.type == LOG_PIPE_RING_DATA)
			err = ring_take(c, p, payload);
		else {
			/* a new tool instance (the program its process exec'd) begins with its
			 * PROCESS record, in a frame: the ring of the instance it replaced gets no
			 * more chunks (the last came before its exec note), and its 16 MiB of tmpfs
			 * go now, not when this program exits or makes a ring of its own */
			if (h.type == LOG_REC_PROCESS && !in_ring)
				ring_unmap(p);
			err = put_record(c, p, h.type, payload, h.len);
		}
		if (err < 0)
			break;
		pos += sizeof(h) + padded;
	}
	*used = pos;
	return err;
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
	int err = feed_records(c, p, p->buf, p->have, false, &pos);
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

int log_collector_add_reaped(struct log_collector *c, uint32_t pid, int wait_status)
{
	int sig = wait_status & 0x7f;
	if (sig == 0 || sig == 0x7f)
		return 0;	/* it exited (its EXIT record says how), or only stopped */
	const struct collect_proc *p = NULL;
	for (size_t i = 0; i < c->n_procs && !p; i++)
		if (c->procs[i].pid == pid && c->procs[i].stream)
			p = &c->procs[i];
	if (!p)
		return 0;	/* never traced: it died before its tool instance began */
	int err = switch_stream(c, p->stream);
	if (err < 0)
		return err;
	struct log_reaped r = { .pid = pid, .wait_status = wait_status & 0xff, .time_ns = now_ns() };
	if ((err = log_writer_add(c->w, LOG_REC_REAPED, &r, sizeof(r))) < 0)
		return err;
	c->tot.records++;
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
	for (size_t i = 0; i < c->n_procs; i++) {
		free(c->procs[i].buf);
		ring_unmap(&c->procs[i]);
	}
	free(c->procs);
	hashtab_release(&c->seen);
	free(c->codes.bytes);
	if (c->ring_dirfd >= 0)
		close(c->ring_dirfd);
	free(c);
}
