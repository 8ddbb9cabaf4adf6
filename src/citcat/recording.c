/* citcat/recording.c - the recording stream: framed-record writer and validating reader. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "citcat/recording.h"
#include "core/alloc.h"

#define PAGE 4096ULL

int cc_writer_init(struct cc_writer *w, int fd)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	binbuf_init(&w->buf);
	binbuf_init(&w->payload);
	int err = binbuf_put(&w->buf, CC_MAGIC, CC_MAGIC_LEN);
	if (!err)
		err = binbuf_put_le32(&w->buf, CC_VERSION);
	if (!err)
		err = binbuf_put_le32(&w->buf, 0);
	w->bytes = w->buf.len;
	return err;
}

int cc_writer_emit(struct cc_writer *w, enum cc_rec_kind kind)
{
	uint8_t k = (uint8_t)kind;
	uint32_t crc = binio_crc32(0, &k, 1);
	crc = binio_crc32(crc, w->payload.data, w->payload.len);
	size_t before = w->buf.len;
	int err = binbuf_put_u8(&w->buf, k);
	if (!err)
		err = binbuf_put_uvarint(&w->buf, w->payload.len);
	if (!err)
		err = binbuf_put(&w->buf, w->payload.data, w->payload.len);
	if (!err)
		err = binbuf_put_le32(&w->buf, crc);
	w->payload.len = 0;
	if (err) {
		w->buf.len = before;
		if (!w->err)
			w->err = err;
		return err;
	}
	w->bytes += w->buf.len - before;
	if (w->buf.len >= (1u << 20))
		err = cc_writer_flush(w);
	return err;
}

int cc_writer_flush(struct cc_writer *w)
{
	size_t done = 0;
	while (done < w->buf.len) {
		ssize_t n = write(w->fd, w->buf.data + done, w->buf.len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!w->err)
				w->err = -errno;
			return w->err;
		}
		done += (size_t)n;
	}
	w->buf.len = 0;
	return w->err;
}

void cc_writer_release(struct cc_writer *w)
{
	binbuf_release(&w->buf);
	binbuf_release(&w->payload);
}

uint64_t cc_state_hash(uint64_t pc, uint64_t rsp, uint64_t rbp, uint64_t rbx, uint64_t r12,
		       uint64_t r13, uint64_t r14, uint64_t r15)
{
	const uint64_t v[8] = { pc, rsp, rbp, rbx, r12, r13, r14, r15 };
	return binio_fnv64(BINIO_FNV64_INIT, v, sizeof(v));
}

/* A stored MXCSR (stmxcsr: glibc's sin, cos, exp... save it on entry, in the stack and in a
 * callee-saved register) with every exception masked, as programs run: a value of 16 bits
 * with the six mask bits set. Its sticky flags are the CPU's (PE, 0x1fa0, once any result
 * was inexact) and never the simulator's, so a preemption inside a libm call of a threaded
 * program never matched its point (10 recordings in 10 on an AMD EPYC). */
int cc_mxcsr_copy_like(uint64_t v)
{
	return v < 0x10000 && (v & CC_MXCSR_MASK_BITS) == CC_MXCSR_MASK_BITS;
}

/* An fxsave image is 16-byte aligned with MXCSR at offset 24 and MXCSR_MASK beside it: so
 * the 8 bytes at an address = 8 mod 16 whose upper half is a plausible mask (bits 0-15 set
 * but DAZ, which old CPUs lack, nothing above bit 17) and whose lower half fits in that mask.
 * ld.so's lazy-binding trampoline saves such an image (its fxsave of the argument registers)
 * in every lazily bound call's first resolution, so a timer signal there never matched its
 * point once the program had had an inexact SSE result: MXCSR 0x1fa0 on the CPU, 0x1f80 in the simulator (citcat_sbuf
 * with a 1 ms timer, 3 replays in 150). Random stack data that matches loses 6 bits of hash. */
#define MXCSR_MASK_REQUIRED 0xffbfu

void cc_point_mask_mxcsr_flags(uint8_t *p, size_t len, uint64_t addr, uint32_t version)
{
	if (version >= 8) {	/* the copies first: they include an fxsave image's MXCSR */
		for (size_t i = (size_t)((4 - (addr & 3)) & 3); i + 4 <= len; i += 4) {
			uint32_t w;
			memcpy(&w, p + i, 4);
			if (cc_mxcsr_copy_like(w) && (w & CC_MXCSR_EXCEPTION_FLAGS)) {
				w &= ~CC_MXCSR_EXCEPTION_FLAGS;
				memcpy(p + i, &w, 4);
			}
		}
	}
	if (version < 7)
		return;
	for (size_t i = (size_t)((8 - addr) & 15); i + 8 <= len; i += 16) {
		uint32_t mxcsr, mask;
		memcpy(&mxcsr, p + i, 4);
		memcpy(&mask, p + i + 4, 4);
		if ((mask & MXCSR_MASK_REQUIRED) != MXCSR_MASK_REQUIRED || mask >> 18 ||
		    (mxcsr & ~mask) || !(mxcsr & CC_MXCSR_EXCEPTION_FLAGS))
			continue;
		mxcsr &= ~CC_MXCSR_EXCEPTION_FLAGS;
		memcpy(p + i, &mxcsr, 4);
	}
}

uint64_t cc_point_deep_hash(const uint8_t *p, size_t len)
{
	/* fnv-1a over words, not bytes: the replay computes it at every candidate execution of a
	 * point's pc, over up to CC_POINT_DEEP_MAX bytes */
	uint64_t h = BINIO_FNV64_INIT ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	if (i < len) {
		uint64_t w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	return h;
}

/* ---- reader ---- */

static int get_u(struct binreader *r, uint64_t *v)
{
	return binreader_get_uvarint(r, v);
}

static int get_many(struct binreader *r, uint64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		if (get_u(r, &v[i]))
			return -EBADMSG;
	return 0;
}

static int parse_map(struct binreader *r, struct cc_rec *rec)
{
	uint64_t v[6];
	if (get_many(r, v, 6))
		return -EBADMSG;
	rec->u.map.start = v[0];
	rec->u.map.len = v[1];
	rec->u.map.prot = v[2];
	rec->u.map.kind = v[3];
	rec->u.map.file_id = v[4];
	rec->u.map.offset = v[5];
	if ((v[0] | v[1]) & (PAGE - 1) || v[1] == 0 || v[0] + v[1] < v[0] ||
	    v[0] + v[1] > (1ULL << 47) || v[2] > 7 || v[3] > CC_MAP_MAX_KIND ||
	    (v[3] == CC_MAP_FILE) != (v[4] != 0) || v[5] > (1ULL << 62))
		return -EBADMSG;
	return 0;
}

static int parse_range(struct binreader *r, struct cc_rec *rec)
{
	if (get_u(r, &rec->u.range.start) || get_u(r, &rec->u.range.len))
		return -EBADMSG;
	uint64_t s = rec->u.range.start, l = rec->u.range.len;
	if ((s | l) & (PAGE - 1) || s + l < s || s + l > (1ULL << 47))
		return -EBADMSG;
	return 0;
}

static int parse_syscall(struct binreader *r, struct cc_rec *rec)
{
	if (get_u(r, &rec->u.sc.nr) || get_many(r, rec->u.sc.args, 6) ||
	    binreader_get_svarint(r, &rec->u.sc.ret) || get_u(r, &rec->u.sc.flags))
		return -EBADMSG;
	if (rec->u.sc.flags & ~(uint64_t)CC_SC_ALL)
		return -EBADMSG;
	rec->u.sc.hash = 0;
	if ((rec->u.sc.flags & CC_SC_OUT_HASH) && binreader_get_le64(r, &rec->u.sc.hash))
		return -EBADMSG;
	rec->u.sc.state = 0;
	if ((rec->u.sc.flags & CC_SC_STATE) && binreader_get_le64(r, &rec->u.sc.state))
		return -EBADMSG;
	return 0;
}

static int parse_strs(struct binreader *r, struct cc_rec *rec)
{
	if (rec->kind == CC_REC_META) {
		if (binreader_get_str(r, 1 << 20, &rec->u.meta.cmdline) ||
		    binreader_get_str(r, CC_MAX_PATH, &rec->u.meta.cwd) ||
		    get_u(r, &rec->u.meta.pid) || get_u(r, &rec->u.meta.start_ns))
			return -EBADMSG;
		rec->u.meta.cpuid_mode = CC_CPUID_UNKNOWN;
		if (binreader_left(r) && (get_u(r, &rec->u.meta.cpuid_mode) ||
					  rec->u.meta.cpuid_mode > CC_CPUID_PATCH))
			return -EBADMSG;
		rec->u.meta.mxcsr_mask = 0;
		if (binreader_left(r) && (get_u(r, &rec->u.meta.mxcsr_mask) ||
					  rec->u.meta.mxcsr_mask > UINT32_MAX))
			return -EBADMSG;
		return 0;
	}
	uint64_t v[6];
	if (get_u(r, &rec->u.file.id) || binreader_get_str(r, CC_MAX_PATH, &rec->u.file.path) ||
	    get_many(r, v, 4) || binreader_get_le64(r, &v[4]) || get_u(r, &v[5]))
		return -EBADMSG;
	rec->u.file.dev = v[0];
	rec->u.file.ino = v[1];
	rec->u.file.size = v[2];
	rec->u.file.mtime_ns = v[3];
	rec->u.file.hash = v[4];
	rec->u.file.flags = v[5];
	if (v[5] & ~(uint64_t)CC_FILE_ALL || v[5] == CC_FILE_ALL)	/* copied or checked, not both */
		return -EBADMSG;
	return rec->u.file.id == 0 || rec->u.file.path[0] != '/' ? -EBADMSG : 0;
}

/* Parse one payload into REC (kind already set); -EBADMSG when malformed. */
static int parse_payload(struct binreader *r, struct cc_rec *rec)
{
	int err = 0;
	uint64_t v[7];
	switch (rec->kind) {
	case CC_REC_META:
	case CC_REC_FILE:
		err = parse_strs(r, rec);
		break;
	case CC_REC_MAP:
		err = parse_map(r, rec);
		break;
	case CC_REC_MEM:
		if (get_u(r, &rec->u.mem.addr) || get_u(r, &rec->u.mem.len) ||
		    rec->u.mem.len > binreader_left(r) ||
		    rec->u.mem.addr + rec->u.mem.len < rec->u.mem.addr) {
			err = -EBADMSG;
			break;
		}
		rec->u.mem.bytes = r->p;
		err = binreader_skip(r, rec->u.mem.len);
		break;
	case CC_REC_UNMAP:
	case CC_REC_ZERO:
		err = parse_range(r, rec);
		break;
	case CC_REC_REGS:
		if (get_u(r, &v[0]) || v[0] != CC_NREGS || get_many(r, rec->u.regs, CC_NREGS))
			err = -EBADMSG;
		break;
	case CC_REC_START:
		break;
	case CC_REC_SYSCALL:
		err = parse_syscall(r, rec);
		break;
	case CC_REC_CPUID:
		err = get_many(r, v, 7);
		rec->u.cpuid.pc = v[0], rec->u.cpuid.leaf = v[1], rec->u.cpuid.subleaf = v[2];
		rec->u.cpuid.eax = v[3], rec->u.cpuid.ebx = v[4], rec->u.cpuid.ecx = v[5];
		rec->u.cpuid.edx = v[6];
		break;
	case CC_REC_RDTSC:
		err = get_many(r, v, 4);
		rec->u.tsc.pc = v[0], rec->u.tsc.insn = v[1], rec->u.tsc.tsc = v[2], rec->u.tsc.aux = v[3];
		if (!err && (v[1] < CC_TSC_RDTSC || v[1] > CC_TSC_RDTSCP))
			err = -EBADMSG;
		break;
	case CC_REC_SIGNAL:
		err = get_u(r, &rec->u.sig.signo) || get_u(r, &rec->u.sig.pc) ? -EBADMSG : 0;
		break;
	case CC_REC_EXIT:
		if (binreader_get_svarint(r, &rec->u.exit.status) || get_u(r, &rec->u.exit.syscalls) ||
		    get_u(r, &rec->u.exit.out_bytes) || binreader_get_le64(r, &rec->u.exit.out_hash))
			err = -EBADMSG;
		break;
	case CC_REC_OPEN:
		err = get_u(r, &rec->u.open.file_id) || get_u(r, &rec->u.open.fd) ? -EBADMSG : 0;
		break;
	case CC_REC_SWITCH:
		if (get_u(r, &rec->u.sw.tid) || get_u(r, &rec->u.sw.reason) || !rec->u.sw.tid ||
		    rec->u.sw.tid > INT32_MAX || rec->u.sw.reason > CC_SWITCH_MAX_REASON)
			err = -EBADMSG;
		break;
	case CC_REC_POINT:
	case CC_REC_FPREGS: {
		size_t n = 8 * (rec->kind == CC_REC_POINT ? CC_POINT_WORDS : CC_FPREGS_WORDS);
		rec->u.words = r->p;
		/* a POINT of version 3 or 4 has no deep stack hash (parse_stream checks which) */
		rec->deep = rec->kind == CC_REC_POINT && binreader_left(r) == n;
		if (rec->kind == CC_REC_POINT && !rec->deep)
			n = 8 * CC_POINT_WORDS_V4;
		err = binreader_left(r) == n ? (r->p += n, 0) : -EBADMSG;
		break;
	}
	default:
		err = -EBADMSG;
	}
	if (!err && binreader_left(r) != 0)
		err = -EBADMSG;
	return err;
}

static void rec_release(struct cc_rec *rec)
{
	if (rec->kind == CC_REC_META) {
		free(rec->u.meta.cmdline);
		free(rec->u.meta.cwd);
	} else if (rec->kind == CC_REC_FILE) {
		free(rec->u.file.path);
	}
}

const struct cc_rec *cc_recording_file(const struct cc_recording *r, uint64_t id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].kind == CC_REC_FILE && r->recs[i].u.file.id == id)
			return &r->recs[i];
	return NULL;
}

/* Where each kind may appear: 1 before START only, 2 after START only, 3 both. */
static int kind_phase(uint8_t kind)
{
	switch (kind) {
	case CC_REC_META: case CC_REC_START:
		return 1;
	case CC_REC_FILE: case CC_REC_MAP: case CC_REC_MEM: case CC_REC_REGS: case CC_REC_FPREGS:
		return 3;
	default:
		return 2;
	}
}

/* Check REC against what came before it (the index I of R); 0 or -EBADMSG with WHY. */
static int rec_check_order(struct cc_recording *r, size_t i, const char **why)
{
	const struct cc_rec *rec = &r->recs[i];
	int started = r->start_idx != (size_t)-1;
	int phase = kind_phase(rec->kind);
	if (i == 0 && rec->kind != CC_REC_META)
		return *why = "the first record is not META", -EBADMSG;
	if (i > 0 && rec->kind == CC_REC_META)
		return *why = "a second META record", -EBADMSG;
	if (started && phase == 1)
		return *why = "a second START record", -EBADMSG;
	if (!started && phase == 2)
		return *why = "an event before START", -EBADMSG;
	if (rec->kind == CC_REC_FILE && cc_recording_file(r, rec->u.file.id) != rec)
		return *why = "a duplicate FILE id", -EBADMSG;
	if (rec->kind == CC_REC_MAP && rec->u.map.file_id) {
		const struct cc_rec *f = cc_recording_file(r, rec->u.map.file_id);
		if (!f)
			return *why = "a MAP names an unknown FILE id", -EBADMSG;
		if (!(f->u.file.flags & (CC_FILE_COPY | CC_FILE_CHECK)))
			return *why = "a MAP names a FILE whose content is neither copied nor checked",
			       -EBADMSG;
	}
	if (rec->kind == CC_REC_OPEN && !cc_recording_file(r, rec->u.open.file_id))
		return *why = "an OPEN names an unknown FILE id", -EBADMSG;
	if (rec->kind == CC_REC_SYSCALL && (rec->u.sc.flags & CC_SC_BUFFERED)) {
		if (r->version < 6)
			return *why = "a buffered SYSCALL in a recording older than version 6", -EBADMSG;
		if (rec->u.sc.flags & (CC_SC_STATE | CC_SC_SKIPPED))
			return *why = "a buffered SYSCALL claims a state hash or a skipped call", -EBADMSG;
	}
	if (i > 0 && r->recs[i - 1].kind == CC_REC_EXIT)
		return *why = "a record after EXIT", -EBADMSG;
	return 0;
}

/* Read one frame at R into REC. 1 = ok, 0 = clean end, -EAGAIN = cut short or bad CRC,
 * -EBADMSG = malformed payload. */
static int frame_read(struct binreader *r, const uint8_t *base, struct cc_rec *rec)
{
	/* cleared first: the caller releases REC whatever this returns, also at a clean end */
	memset(rec, 0, sizeof(*rec));
	if (binreader_left(r) == 0)
		return 0;
	rec->off = (uint64_t)(r->p - base);
	uint8_t kind;
	uint64_t len;
	uint32_t crc;
	if (binreader_get_u8(r, &kind) || binreader_get_uvarint(r, &len))
		return -EAGAIN;
	if (len > CC_MAX_PAYLOAD)
		return -EBADMSG;
	if (binreader_left(r) < len + 4)
		return -EAGAIN;
	const uint8_t *payload = r->p;
	binreader_skip(r, len);
	binreader_get_le32(r, &crc);
	uint32_t want = binio_crc32(binio_crc32(0, &kind, 1), payload, len);
	if (crc != want)
		return -EAGAIN;
	rec->kind = kind;
	struct binreader pr;
	binreader_init(&pr, payload, len);
	int err = parse_payload(&pr, rec);
	return err ? err : 1;
}

static int recs_grow(struct cc_recording *r, size_t *cap)
{
	return ALLOC_GROW(r->recs, r->n + 1, *cap);
}

static int parse_stream(struct cc_recording *r, char *err, size_t errlen)
{
	struct binreader rd;
	size_t cap = 0;
	binreader_init(&rd, r->data + CC_HEADER_LEN, r->len - CC_HEADER_LEN);
	rd.p = r->data + CC_HEADER_LEN;
	for (;;) {
		int e = recs_grow(r, &cap);
		if (e)
			return e;
		struct cc_rec *rec = &r->recs[r->n];
		int got = frame_read(&rd, r->data, rec);
		if (got == 1 && rec->kind == CC_REC_POINT && rec->deep != (r->version >= 5))
			got = -EBADMSG;	/* a POINT of another version's size */
		if (got == 1) {
			const char *why = NULL;
			r->n++;
			if (rec_check_order(r, r->n - 1, &why)) {
				snprintf(err, errlen, "record at offset %llu: %s",
					 (unsigned long long)rec->off, why);
				return -EBADMSG;
			}
			if (rec->kind == CC_REC_START)
				r->start_idx = r->n - 1;
			continue;
		}
		rec_release(rec);
		if (got == -EBADMSG) {
			snprintf(err, errlen, "malformed record (kind %u) at offset %llu",
				 rec->kind, (unsigned long long)rec->off);
			return -EBADMSG;
		}
		if (r->n == 0 || r->recs[r->n - 1].kind != CC_REC_EXIT) {
			r->truncated = 1;
			snprintf(r->why, sizeof(r->why), "the recording is cut short at offset %llu "
				 "after %zu records (%s)", (unsigned long long)rec->off, r->n,
				 got == 0 ? "no EXIT record" : "incomplete or corrupt record");
		} else if (got != 0) {
			snprintf(err, errlen, "garbage after the EXIT record at offset %llu",
				 (unsigned long long)rec->off);
			return -EBADMSG;
		}
		return 0;
	}
}

/* The initial state (records before START) must be one the replay can start from: exactly one
 * REGS, and its pc inside an executable MAP. Without this a recording whose pc points nowhere
 * (all-zero registers when REGS is missing) would hand the simulator a start address it can
 * never leave. 0 or -EBADMSG with a message in ERR. */
static int check_initial_state(const struct cc_recording *r, char *err, size_t errlen)
{
	const uint64_t *regs = NULL;
	size_t nregs = 0, nexec = 0;
	for (size_t i = 0; i < r->start_idx; i++) {
		if (r->recs[i].kind == CC_REC_REGS) {
			regs = r->recs[i].u.regs;
			nregs++;
		}
	}
	if (nregs != 1) {
		snprintf(err, errlen, "the recording's initial state has %s REGS record: it cannot be "
			 "replayed", nregs ? "more than one" : "no");
		return -EBADMSG;
	}
	uint64_t pc = regs[CC_REG_RIP];
	for (size_t i = 0; i < r->start_idx; i++) {
		const struct cc_rec *m = &r->recs[i];
		if (m->kind != CC_REC_MAP || !(m->u.map.prot & 4))
			continue;
		nexec++;
		if (pc >= m->u.map.start && pc - m->u.map.start < m->u.map.len)
			return 0;
	}
	snprintf(err, errlen, "the recording's initial pc %#llx is not in %s: it cannot be replayed",
		 (unsigned long long)pc, nexec ? "an executable mapping of its initial state" :
		 "any mapping (the initial state has no executable MAP record)");
	return -EBADMSG;
}

int cc_recording_parse(uint8_t *data, size_t len, struct cc_recording **out, char *err, size_t errlen)
{
	int e = 0;
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	struct cc_recording *r = calloc(1, sizeof(*r));
	if (!r) {
		free(data);
		return -ENOMEM;
	}
	r->data = data;
	r->len = len;
	r->start_idx = (size_t)-1;
	uint32_t version = 0;
	if (len < CC_HEADER_LEN || memcmp(data, CC_MAGIC, CC_MAGIC_LEN) != 0) {
		snprintf(err, errlen, "not a citcat recording (bad magic)");
		e = -EBADMSG;
		goto out;
	}
	memcpy(&version, data + CC_MAGIC_LEN, 4);
	if (version < CC_VERSION_MIN || version > CC_VERSION) {
		snprintf(err, errlen, "recording format version %u, this spent reads versions %u to %u",
			 version, CC_VERSION_MIN, CC_VERSION);
		e = -EPROTO;
		goto out;
	}
	r->version = version;
	e = parse_stream(r, err, errlen);
	if (!e && r->start_idx == (size_t)-1) {
		snprintf(err, errlen, "the recording ends before its initial state is complete%s%s",
			 r->truncated ? ": " : "", r->truncated ? r->why : "");
		e = -EBADMSG;
	}
	if (!e)
		e = check_initial_state(r, err, errlen);
out:
	if (e) {
		cc_recording_free(r);
		r = NULL;
	}
	*out = r;
	return e;
}

int cc_recording_load(const char *path, struct cc_recording **out, char *err, size_t errlen)
{
	char file[CC_MAX_PATH + 32];
	struct stat st;
	uint8_t *data = NULL;
	size_t len = 0;
	*out = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/%s", path, CC_FILE_NAME);
	else
		snprintf(file, sizeof(file), "%s", path);
	int e = binio_read_file(file, (size_t)16 << 30, &data, &len);
	if (e) {
		if (err)
			snprintf(err, errlen, "cannot read '%s': %s", file, strerror(-e));
		return e;
	}
	return cc_recording_parse(data, len, out, err, errlen);
}

void cc_recording_free(struct cc_recording *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		rec_release(&r->recs[i]);
	free(r->recs);
	free(r->data);
	free(r);
}
