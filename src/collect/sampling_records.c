/* collect/sampling_records.c - decode perf records copied from the rings, in time order:
 * side-band (MMAP2, COMM, FORK, EXIT, LOST, THROTTLE) keeps the process maps and thread names,
 * samples are translated to (image, offset) and aggregated with their call chains into the
 * profile, and each adds a detail row (task, time, chain). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "collect/sampling_int.h"
#include "profile/jitmap.h"

#define MAX_FRAMES 256

static int batch_add(void *ctx, const struct perf_event_header *h)
{
	struct record_batch *b = ctx;
	if (ALLOC_GROW(b->buf, b->len + h->size, b->cap) ||
	    ALLOC_GROW(b->idx, b->n + 1, b->capidx))
		return -ENOMEM;
	/* time: in a sample at body offset 24 (identifier, ip, pid/tid); in other records the
	 * sample_id trailer ends with time, identifier */
	uint64_t t = 0;
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t blen = h->size - sizeof(*h);
	if (h->type == PERF_RECORD_SAMPLE && blen >= 32)
		memcpy(&t, body + 24, 8);
	else if (h->type != PERF_RECORD_SAMPLE && blen >= 16)
		memcpy(&t, body + blen - 16, 8);
	memcpy(b->buf + b->len, h, h->size);
	b->idx[b->n++] = (struct rec_ref){ .time = t, .off = b->len };
	b->len += h->size;
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;	/* stable: ring order */
}

static size_t event_of_id(const struct sampling *s, uint64_t id)
{
	for (size_t i = 0; i < s->nfds; i++)
		if (s->fds[i].id == id)
			return s->fds[i].ev;
	return 0;
}

int sampling_image_index(struct sampling *s, const struct image_info *img, uint32_t *idx)
{
	size_t slot = ((uintptr_t)img >> 4) & 255;
	if (s->imgcache[slot].img == img) {
		*idx = s->imgcache[slot].idx;
		return 0;
	}
	int err = spent_profile_image_intern(s->prof, &img->id, idx);
	if (!err) {
		s->imgcache[slot].img = img;
		s->imgcache[slot].idx = *idx;
	}
	return err;
}

static bool tried_before(struct sampling *s, pid_t pid)
{
	for (size_t i = 0; i < s->ntried; i++)
		if (s->tried[i] == pid)
			return true;
	if (ALLOC_GROW(s->tried, s->ntried + 1, s->captried))
		return true;
	s->tried[s->ntried++] = pid;
	return false;
}

/* pc -> frame; loads /proc/PID/maps once when the pid or the address is unknown. */
/* Generated code a JIT named in /tmp/perf-PID.map: the map is the image, the address the
 * offset (views name it from the map, profile/jitmap.h). */
static int jit_lookup(struct sampling *s, pid_t pid, uint64_t addr, struct spent_profile_frame *f)
{
	char path[64], name[8];
	uint64_t start;
	jitmap_path(pid, path, sizeof(path));
	if (jitmap_lookup(path, addr, name, sizeof(name), &start))
		return -ENOENT;
	struct spent_profile_image im = { .path = path };
	f->offset = addr;
	return spent_profile_image_intern(s->prof, &im, &f->image);
}

static int lookup(struct sampling *s, pid_t pid, uint64_t addr, struct spent_profile_frame *f,
		  enum spent_profile_unknown_reason *why)
{
	const struct image_info *img;
	int err = procmaps_lookup(s->maps, pid, addr, &img, &f->offset, why);
	if (err && *why != SPENT_PROFILE_UNK_ANON && !tried_before(s, pid) &&
	    procmaps_load_pid(s->maps, pid) == 0) {
		sampling_unwind_invalidate(s, pid);
		err = procmaps_lookup(s->maps, pid, addr, &img, &f->offset, why);
	}
	if (err && *why == SPENT_PROFILE_UNK_ANON && jit_lookup(s, pid, addr, f) == 0)
		return 0;
	if (err) {
		f->image = SPENT_PROFILE_NO_IMAGE;
		f->offset = addr;
		return err;
	}
	return sampling_image_index(s, img, &f->image);
}

struct sample {
	uint64_t id, ip, time, period;
	uint32_t pid, tid;
	uint64_t nr;
	const uint64_t *ips;
	uint64_t abi;
	const uint64_t *regs;
	size_t nregs;
	uint64_t stack_size;
	const uint8_t *stack;
};

static int get64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (end - *p < 8)
		return -EBADMSG;
	memcpy(v, *p, 8);
	*p += 8;
	return 0;
}

static int parse_sample(const struct sampling *s, const struct perf_event_header *h,
			struct sample *out)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	uint64_t pt;
	memset(out, 0, sizeof(*out));
	if (get64(&p, end, &out->id) || get64(&p, end, &out->ip) || get64(&p, end, &pt) ||
	    get64(&p, end, &out->time) || get64(&p, end, &out->period))
		return -EBADMSG;
	out->pid = (uint32_t)pt;
	out->tid = (uint32_t)(pt >> 32);
	if (s->cfg.callchain == SAMPLING_CG_FP) {
		if (get64(&p, end, &out->nr) || out->nr > (uint64_t)(end - p) / 8)
			return -EBADMSG;
		out->ips = (const uint64_t *)p;
		p += out->nr * 8;
	}
	if (s->cfg.callchain == SAMPLING_CG_DWARF) {
		if (get64(&p, end, &out->abi))
			return -EBADMSG;
		if (out->abi) {
			out->nregs = (size_t)__builtin_popcountll(sampling_unwind_regs_mask());
			if ((size_t)(end - p) / 8 < out->nregs)
				return -EBADMSG;
			out->regs = (const uint64_t *)p;
			p += out->nregs * 8;
		}
		if (get64(&p, end, &out->stack_size) || out->stack_size > (uint64_t)(end - p))
			return -EBADMSG;
		out->stack = p;
		p += out->stack_size;
		uint64_t dyn = out->stack_size;
		if (out->stack_size && !get64(&p, end, &dyn) && dyn < out->stack_size)
			out->stack_size = dyn;
	}
	return 0;
}

/* No code lives in the first page: a return address there is the end of a frame-pointer walk
 * that read zeros (code without frame pointers, a hand-made last frame), never a caller. Taken
 * as a caller, 0 - 1 became the last kernel symbol. The walk stops there, as perf's does. */
static bool is_invalid_return(uint64_t ip)
{
	return ip < 4096;
}

/* Frames of a sample, leaf first; return addresses moved back one byte into the call. */
static size_t sample_chain(struct sampling *s, const struct sample *sm, uint64_t *pcs)
{
	size_t n = 0;
	if (s->cfg.callchain == SAMPLING_CG_FP) {
		for (uint64_t i = 0; i < sm->nr && n < MAX_FRAMES; i++) {
			uint64_t ip = sm->ips[i];
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				continue;
			if (is_invalid_return(ip))
				break;
			pcs[n] = n ? ip - 1 : ip;
			n++;
		}
	} else if (s->cfg.callchain == SAMPLING_CG_DWARF) {
		pcs[n++] = sm->ip;
		if (sm->regs && sm->stack_size) {
			uint64_t ips[MAX_FRAMES];
			if (procmaps_is_kernel_addr(sm->ip))
				pcs[n++] = sm->regs[8] - 1;	/* user ip at kernel entry */
			int k = sampling_unwind(s, (pid_t)sm->pid, (pid_t)sm->tid, sm->regs, sm->nregs,
						sm->stack, sm->stack_size, ips, MAX_FRAMES - n);
			for (int i = 1; i < k && n < MAX_FRAMES && !is_invalid_return(ips[i]); i++)
				pcs[n++] = ips[i] - 1;
			if (k > 1)
				s->stats.unwound_frames += (uint64_t)k - 1;
		}
	}
	return n;
}

/* Who took the sample, when, at which call chain (leaf first): one detail row. */
static int add_detail(struct sampling *s, const struct sample *sm, uint32_t ev,
		      const struct spent_profile_frame *frames, size_t n)
{
	uint32_t task;
	int err = sampling_task_index(s, sm->pid, sm->tid, &task);
	if (err)
		return err;
	return spent_profile_add_detail(s->prof, ev, task, sampling_wall_ns(s, sm->time), frames, n, 1);
}

static int on_sample(struct sampling *s, const struct perf_event_header *h)
{
	struct sample sm;
	if (parse_sample(s, h, &sm))
		return 0;	/* malformed: the kernel never sends one; skip it */
	uint32_t ev = s->prof_ev[event_of_id(s, sm.id)];
	struct spent_profile_frame leaf;
	enum spent_profile_unknown_reason why;
	int err;
	s->stats.samples++;
	if (lookup(s, (pid_t)sm.pid, sm.ip, &leaf, &why) == 0) {
		s->stats.placed++;
		err = spent_profile_add(s->prof, leaf.image, leaf.offset, ev, 1);
	} else {	/* lookup left a SPENT_PROFILE_NO_IMAGE frame with the raw address */
		s->stats.unknown++;
		err = spent_profile_add_unknown(s->prof, why, ev, 1);
	}
	if (err || s->cfg.callchain == SAMPLING_CG_NONE)
		return err ? err : add_detail(s, &sm, ev, &leaf, 1);
	uint64_t pcs[MAX_FRAMES];
	struct spent_profile_frame fr[MAX_FRAMES];
	size_t n = sample_chain(s, &sm, pcs);
	for (size_t i = 0; i < n; i++)
		lookup(s, (pid_t)sm.pid, pcs[i], &fr[i], &why);
	if (n && (err = spent_profile_add_stack(s->prof, ev, fr, n, 1)))
		return err;
	return n ? add_detail(s, &sm, ev, fr, n) : add_detail(s, &sm, ev, &leaf, 1);
}

static int on_record(struct sampling *s, const struct perf_event_header *h)
{
	const uint8_t *b = (const uint8_t *)(h + 1);
	size_t blen = h->size - sizeof(*h);
	uint32_t pid, ppid;
	uint64_t v[2];
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(s, h);
	case PERF_RECORD_MMAP2:
		if (blen < 64 + 1)
			return 0;
		{
			uint64_t addr, len, pgoff;
			memcpy(&pid, b, 4);
			memcpy(&addr, b + 8, 8);
			memcpy(&len, b + 16, 8);
			memcpy(&pgoff, b + 24, 8);
			const char *name = (const char *)b + 64;
			if (!memchr(name, 0, blen - 64))
				return 0;
			sampling_unwind_invalidate(s, (pid_t)pid);
			int err = procmaps_add(s->maps, (pid_t)pid, addr, len, pgoff, name);
			return err == -ENOMEM ? err : 0;
		}
	case PERF_RECORD_COMM: {
		uint32_t tid;
		if (blen < 8)
			return 0;
		memcpy(&pid, b, 4);
		memcpy(&tid, b + 4, 4);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			procmaps_forget(s->maps, (pid_t)pid);
			sampling_unwind_invalidate(s, (pid_t)pid);
			/* a thread that execs takes the process's id, and the old leader's EXIT
			 * record (just before) cleared that id's mark: the thread keeps its events,
			 * so the mark is set again, or a scan opened a second set (every sample
			 * counted twice) */
			if (s->cfg.per_thread && !sampling_task_followed(s, tid)) {
				int err = sampling_task_set_followed(s, tid, true);
				if (err)
					return err;
			}
		}
		/* exec or a rename (prctl PR_SET_NAME): the name of this thread from now on */
		return sampling_task_comm(s, pid, tid, (const char *)b + 8, blen - 8);
	}
	case PERF_RECORD_FORK: {
		uint32_t tid, ptid;
		uint64_t fork_ns = 0;
		int err = 0;
		if (blen < 16)
			return 0;
		memcpy(&pid, b, 4);
		memcpy(&ppid, b + 4, 4);
		memcpy(&tid, b + 8, 4);
		memcpy(&ptid, b + 12, 4);
		if (blen >= 24)
			memcpy(&fork_ns, b + 16, 8);
		/* per-thread: opened already by the scan that follows its creator's opening
		 * (sampling_follow.c), with its maps and name as /proc had them then, newer than
		 * this record's. A mark older than the fork belongs to the tid's previous task,
		 * whose EXIT record a full ring lost: this task is new and is followed. */
		if (s->cfg.per_thread && tid != ptid && sampling_task_followed(s, tid)) {
			if (sampling_task_followed_since(s, tid, fork_ns))
				return 0;
			if ((err = sampling_task_set_followed(s, tid, false)))
				return err;
		}
		if (pid != ppid)
			err = procmaps_fork(s->maps, (pid_t)ppid, (pid_t)pid);
		if (!err && tid != ptid)
			err = sampling_task_fork(s, pid, tid, ptid);
		/* per-thread events are not inherited: a new thread or child gets its own, and
		 * so does what it created before they were open */
		if (!err && s->cfg.per_thread && tid != ptid)
			err = sampling_follow_task(s, (pid_t)pid, (pid_t)tid);
		return err;
	}
	case PERF_RECORD_EXIT: {
		uint32_t tid;
		if (blen < 16 || !s->cfg.per_thread)
			return 0;
		memcpy(&tid, b + 8, 4);
		/* its events count no more, and its tid may be a new task's next */
		return sampling_task_set_followed(s, tid, false);
	}
	case PERF_RECORD_LOST:
		if (blen < 16)
			return 0;
		memcpy(v, b, 16);
		s->stats.lost += v[1];
		return spent_profile_add_unknown(s->prof, SPENT_PROFILE_UNK_LOST,
					   s->prof_ev[event_of_id(s, v[0])], v[1]);
	case PERF_RECORD_THROTTLE:
		if (blen < 16)
			return 0;
		memcpy(v, b + 8, 8);
		s->stats.throttled++;
		return spent_profile_add_unknown(s->prof, SPENT_PROFILE_UNK_THROTTLED,
					   s->prof_ev[event_of_id(s, v[0])], 1);
	default:
		return 0;
	}
}

int sampling_read_rings(struct sampling *s)
{
	struct record_batch *b = &s->recs;
	int err = 0;
	b->len = 0;
	b->n = 0;
	for (size_t i = 0; i < s->nrings && !err; i++) {
		int r = perf_ring_drain(&s->rings[i], batch_add, b);
		if (r < 0)
			err = r;
	}
	if (b->n > 1)
		qsort(b->idx, b->n, sizeof(*b->idx), ref_cmp);
	for (size_t i = 0; i < b->n && !err; i++) {
		/* records are 8-byte multiples and buf is malloc'ed: every one is aligned */
		err = on_record(s, (const void *)(b->buf + b->idx[i].off));
	}
	return err;
}
