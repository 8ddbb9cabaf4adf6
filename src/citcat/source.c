/* citcat/source.c - a CITCAT recording as a trace-stream source: the replay's instructions,
 * data references and syscalls in batches, so every sink accepts a recording. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "citcat/replay_int.h"
#include "core/alloc.h"
#include "core/decode.h"

#define BATCH 65536
#define FCACHE 8192

struct cc_src {
	struct citcat_replay *rp;
	struct spent_trace_insn *insns;
	size_t n;
	struct spent_trace_ref *refs;
	size_t nrefs, caprefs;
	struct spent_trace_event *events;
	size_t nev, capev;
	uint64_t index;
	int ended, pending_err, started;
	struct { uint64_t pc; uint16_t flags; uint16_t valid; } fcache[FCACHE];
};

/* The flags of the instruction at PC, classified as the log reader's are (core/decode), so
 * a sink sees the same flags from either source; cached by pc. */
static uint16_t insn_flags(struct cc_src *s, uint64_t pc, uint32_t size)
{
	size_t h = (size_t)(pc ^ (pc >> 13)) & (FCACHE - 1);
	if (s->fcache[h].valid && s->fcache[h].pc == pc)
		return s->fcache[h].flags;
	uint8_t buf[16];
	struct decoded_insn d = { 0 };
	if (size > sizeof(buf) || uc_mem_read(s->rp->uc, pc, buf, size) != UC_ERR_OK ||
	    decode_insn_once(buf, size, &d) != 0)
		d.flags = 0;
	s->fcache[h].pc = pc;
	s->fcache[h].flags = d.flags;
	s->fcache[h].valid = 1;
	return d.flags;
}

static void src_insn(void *ctx, uint64_t pc, uint32_t size)
{
	struct cc_src *s = ctx;
	struct spent_trace_insn *in = &s->insns[s->n++];
	in->pc = pc;
	in->tid = cc_replay_tid(s->rp);
	in->len = (uint8_t)size;
	in->nrefs = 0;
	in->flags = insn_flags(s, pc, size);
	in->ref0 = (uint32_t)s->nrefs;
}

static void src_ref(void *ctx, uint64_t addr, uint32_t size, int write)
{
	struct cc_src *s = ctx;
	if (!s->n)
		return;
	struct spent_trace_insn *in = &s->insns[s->n - 1];
	if (in->nrefs) {
		struct spent_trace_ref *last = &s->refs[s->nrefs - 1];
		if (write && last->kind == SPENT_TRACE_REF_READ && last->addr == addr && last->size == size) {
			last->kind = SPENT_TRACE_REF_MODIFY;
			return;
		}
	}
	if (in->nrefs == 255)
		return;
	if (ALLOC_GROW(s->refs, s->nrefs + 1, s->caprefs))
		return;
	s->refs[s->nrefs++] = (struct spent_trace_ref){ addr, size, write ? SPENT_TRACE_REF_WRITE : SPENT_TRACE_REF_READ };
	in->nrefs++;
}

static void src_event(void *ctx, const struct spent_trace_event *ev)
{
	struct cc_src *s = ctx;
	if (ALLOC_GROW(s->events, s->nev + 1, s->capev))
		return;
	s->events[s->nev] = *ev;
	s->events[s->nev].before = s->n;
	s->nev++;
}

static int src_next(void *state, struct spent_trace_batch *out)
{
	struct cc_src *s = state;
	memset(out, 0, sizeof(*out));
	if (s->pending_err)
		return s->pending_err;
	if (s->ended)
		return 0;
	s->index += s->n;
	s->n = s->nrefs = 0;
	if (s->started)
		s->nev = 0;	/* the first batch keeps the image loads queued at open */
	s->started = 1;
	int r = cc_replay_step(s->rp, BATCH);
	if (r == 1) {
		struct spent_trace_event ev;
		memset(&ev, 0, sizeof(ev));
		ev.kind = SPENT_TRACE_EV_EXIT;
		ev.tid = cc_replay_tid(s->rp);
		ev.u.exit.status = s->rp->exit_status;
		src_event(s, &ev);
		s->ended = 1;
	}
	if (r < 0) {
		s->pending_err = r;
		if (!s->n && !s->nev)
			return r;
	}
	out->insns = s->insns;
	out->n_insns = s->n;
	out->refs = s->refs;
	out->n_refs = s->nrefs;
	out->events = s->events;
	out->n_events = s->nev;
	out->first_index = s->index;
	return 1;
}

static const char *src_error(void *state)
{
	struct cc_src *s = state;
	return s->rp->err;
}

static void src_free(void *state)
{
	struct cc_src *s = state;
	if (!s)
		return;
	citcat_replay_free(s->rp);
	free(s->insns);
	free(s->refs);
	free(s->events);
	free(s);
}

static const struct spent_trace_source_ops cc_source_ops = {
	.name = "citcat",
	.next = src_next,
	.error = src_error,
	.free = src_free,
};

int citcat_source_new(const char *dir, int want_refs, struct spent_trace_source **out,
		      struct citcat_replay **rpout, char *err, size_t errlen)
{
	struct cc_src *s = calloc(1, sizeof(*s));
	int e;
	*out = NULL;
	if (!s || !(s->insns = malloc((BATCH + 1) * sizeof(*s->insns)))) {
		free(s);
		return -ENOMEM;
	}
	e = citcat_replay_new(dir, &s->rp, err, errlen);
	if (!e) {
		struct cc_sink_hooks h = { src_insn, src_ref, src_event, s };
		e = cc_replay_set_sink(s->rp, &h, want_refs);
		/* the images mapped at exec go into the first batch */
		const struct cc_recording *r = s->rp->rec;
		for (size_t i = 1; !e && i < r->start_idx; i++)
			cc_replay_image_event(s->rp, &r->recs[i]);
	}
	if (e) {
		src_free(s);
		return e;
	}
	if (rpout)
		*rpout = s->rp;
	*out = spent_trace_source_new(&cc_source_ops, s);
	return *out ? 0 : -ENOMEM;
}

int citcat_open_source(const char *path, struct spent_trace_source **out, char *err, size_t errlen)
{
	return citcat_source_new(path, 1, out, NULL, err, errlen);
}

int citcat_probe(const char *path)
{
	char file[CC_MAX_PATH + 32], magic[CC_MAGIC_LEN];
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/%s", path, CC_FILE_NAME);
	else
		snprintf(file, sizeof(file), "%s", path);
	int fd = binio_open_regular(file);	/* a FIFO is no recording: never wait on it */
	if (fd < 0)
		return fd == -ENOENT || fd == -EINVAL ? 0 : fd;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == (ssize_t)sizeof(magic) && !memcmp(magic, CC_MAGIC, CC_MAGIC_LEN);
}
