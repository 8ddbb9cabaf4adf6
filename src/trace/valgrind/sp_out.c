/* trace/valgrind/sp_out.c - the spent tool's record output: one buffer of whole records, sent
 * to `spent trace` through its FIFO in frames of at most PIPE_BUF bytes tagged with the pid, so
 * every process of a traced tree can write to the same FIFO without their bytes mixing. With
 * --spent-ring-dir the buffer is a region of a ring file mapped shared with the recorder, and
 * the frames carry only notes saying where the records are (log_format.h, LOG_PIPE_RING). */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "trace/log_format.h"
#include "trace/valgrind/sp_tool.h"

/* In coregrind but not in the tool headers: move an fd into Valgrind's reserved range; map a
 * file shared into Valgrind's own space; a raw system call; take a pending signal. */
extern Int VG_(safe_fd)(Int oldfd);
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2, RegWord a3, RegWord a4,
			      RegWord a5, RegWord a6, RegWord a7, RegWord a8);
extern Int VG_(sigtimedwait_zero)(const vki_sigset_t *set, vki_siginfo_t *info);

/* The records, with room for a frame header before them (see sp_out_write); the buffer while
 * no ring is used. */
static struct {
	struct log_frame room;
	UChar buf[OUT_SZ];
} out_area;
UChar *sp_out_buf = out_area.buf;
SizeT sp_out_used;
ULong sp_n_records;
static Int out_fd = -1;
static Bool out_dead;
static Int out_pid;

/* The ring (NULL: frames), and the virtual position of sp_out_buf in it. */
static const HChar *ring_dir;
static struct log_ring_hdr *ring_hdr;
static UChar *ring_data;
static ULong ring_vpos;
static UInt ring_serial;
/* An instance sends its first RING_AFTER bytes in frames, then makes its ring: most processes
 * of a shell's tree (the shell's forked children exec at once, short programs) log less, and
 * a ring costs a 16 MiB tmpfs file allocated up front. */
#define RING_AFTER (1u << 20)
static ULong framed_bytes;

ULong sp_now_ns(void)
{
	struct vki_timespec ts;
	VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
	return (ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec;
}

/* A write to the FIFO after the recorder died fails with EPIPE and raises SIGPIPE on this
 * thread. Valgrind keeps it pending (signals are blocked outside client syscalls) and would
 * deliver it to the client at its next poll, killing a program that merely lost its recorder;
 * taking it here lets the program run on untraced, as it does when the FIFO cannot be opened.
 * (A SIGPIPE another process sent to the program at that very moment is lost with it.) */
static void drop_own_sigpipe(void)
{
	vki_sigset_t set;
	vki_siginfo_t info;
	VG_(memset)(&set, 0, sizeof(set));
	set.sig[(VKI_SIGPIPE - 1) / (8 * sizeof(set.sig[0]))] |=
		1ul << ((VKI_SIGPIPE - 1) % (8 * sizeof(set.sig[0])));
	VG_(sigtimedwait_zero)(&set, &info);
}

/* Back to the static buffer (the ring is gone, or was the parent's). */
static void ring_leave(void)
{
	if (ring_hdr)
		VG_(am_munmap_valgrind)((Addr)ring_hdr, LOG_RING_FILE_BYTES);
	ring_hdr = NULL;
	ring_data = NULL;
	sp_out_buf = out_area.buf;
}

/* The recorder is gone (the FIFO failed, or nobody takes the ring's records): the program
 * runs on untraced, its records dropped. */
static void recorder_gone(void)
{
	out_dead = True;
	ring_leave();
}

/* N bytes to the FIFO; False (the recorder is gone) when it fails. */
static Bool write_all(const void *b, SizeT n)
{
	const UChar *p = b;
	while (n > 0) {
		Int w = VG_(write)(out_fd, p, (Int)n);
		if (w == -VKI_EPIPE)
			drop_own_sigpipe();
		if (w <= 0) {
			recorder_gone();
			return False;
		}
		p += w;
		n -= (SizeT)w;
	}
	return True;
}

/* One pipe record of payload LEN (at most 88 bytes) as a frame of its own. */
static Bool send_note(UInt type, const void *payload, UInt len)
{
	struct {
		struct log_frame f;
		struct log_rec_hdr h;
		UChar payload[88];
	} note;
	UInt padded = (len + 7u) & ~7u;
	tl_assert(padded <= sizeof(note.payload));
	VG_(memset)(&note, 0, sizeof(note));
	note.f.pid = (UInt)out_pid;
	note.f.len = (UInt)(sizeof(note.h) + padded);
	note.h.type = (UChar)type;
	note.h.len = len;
	VG_(memcpy)(note.payload, payload, len);
	return write_all(&note, sizeof(note.f) + note.f.len);
}

/* Create this instance's ring file in ring_dir, map it, and tell the recorder; False leaves
 * the frames in use. The name is new (pid, serial, time, O_EXCL): an exec'd program's
 * instance has the pid of the one before, whose file the recorder may not have taken yet. */
static Bool ring_open(void)
{
	HChar name[LOG_RING_NAME_MAX], path[4096];
	Int fd = -1;
	for (UInt tries = 0; tries < 8 && fd < 0; tries++) {
		VG_(snprintf)(name, sizeof(name), "%d-%u-%llu", out_pid, ring_serial++, sp_now_ns());
		if (VG_(strlen)(ring_dir) + 2 + VG_(strlen)(name) > sizeof(path))
			return False;
		VG_(sprintf)(path, "%s/%s", ring_dir, name);
		SysRes r = VG_(open)(path, VKI_O_RDWR | VKI_O_CREAT | VKI_O_EXCL, 0600);
		if (!sr_isError(r))
			fd = (Int)sr_Res(r);
		else if (sr_Err(r) != VKI_EEXIST)
			return False;
	}
	if (fd < 0)
		return False;
	/* its pages are allocated now: a full tmpfs fails here, not later as a SIGBUS */
	SysRes m = VG_(do_syscall)(__NR_fallocate, fd, 0, 0, LOG_RING_FILE_BYTES, 0, 0, 0, 0);
	if (!sr_isError(m))
		m = VG_(am_shared_mmap_file_float_valgrind)(LOG_RING_FILE_BYTES, VKI_PROT_READ | VKI_PROT_WRITE, fd, 0);
	VG_(close)(fd);
	if (sr_isError(m)) {
		VG_(unlink)(path);
		return False;
	}
	ring_hdr = (struct log_ring_hdr *)sr_Res(m);
	struct {
		struct log_ring_open o;
		HChar name[LOG_RING_NAME_MAX];
	} note;
	VG_(memset)(&note, 0, sizeof(note));
	note.o.ring_bytes = LOG_RING_BYTES;
	note.o.name_len = (UInt)VG_(strlen)(name);
	VG_(memcpy)(note.name, name, note.o.name_len);
	if (!send_note(LOG_PIPE_RING, &note, (UInt)sizeof(note.o) + note.o.name_len)) {
		VG_(unlink)(path);	/* the ring is unmapped already */
		return False;
	}
	ring_data = (UChar *)ring_hdr + LOG_RING_HDR_BYTES;
	ring_vpos = 0;
	sp_out_buf = ring_data;
	return True;
}

static Bool ring_has_room(ULong v)
{
	return v + OUT_SZ - __atomic_load_n(&ring_hdr->tail, __ATOMIC_SEQ_CST) <= LOG_RING_BYTES;
}

/* Wait (on the header's futex, a shared one: the recorder is another process) until the
 * recorder has taken what was below V + OUT_SZ; False when it is gone (the FIFO reports an
 * error once nobody reads it). */
static Bool ring_wait_room(ULong v)
{
	while (!ring_has_room(v)) {
		UInt seq = __atomic_load_n(&ring_hdr->seq, __ATOMIC_SEQ_CST);
		__atomic_store_n(&ring_hdr->waits, 1u, __ATOMIC_SEQ_CST);
		if (ring_has_room(v))
			break;
		struct vki_timespec ts = { 0, 100 * 1000 * 1000 };
		VG_(do_syscall)(__NR_futex, (UWord)&ring_hdr->seq, VKI_FUTEX_WAIT, seq, (UWord)&ts,
				0, 0, 0, 0);
		struct vki_pollfd pfd = { .fd = out_fd, .events = 0, .revents = 0 };
		SysRes r = VG_(poll)(&pfd, 1, 0);
		if (!sr_isError(r) && sr_Res(r) > 0 && (pfd.revents & 0x8 /* POLLERR */))
			return False;
	}
	return True;
}

/* The region the next records go to: OUT_SZ bytes from V without crossing the ring's end. */
static void ring_next_region(ULong v)
{
	if (v % LOG_RING_BYTES + OUT_SZ > LOG_RING_BYTES)
		v += LOG_RING_BYTES - v % LOG_RING_BYTES;
	if (!ring_wait_room(v)) {
		recorder_gone();
		return;
	}
	ring_vpos = v;
	sp_out_buf = ring_data + v % LOG_RING_BYTES;
}

Bool sp_out_open(const HChar *path, Long fd, const HChar *ring)
{
	out_pid = VG_(getpid)();
	if (path) {
		/* without blocking: with no reader (the recorder was killed) a blocking open
		 * waits forever, and the program with it; it runs on untraced instead, as when
		 * the FIFO is gone (the recorder ended and removed it: an orphan exec'd since) */
		SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_NONBLOCK, 0);
		if (sr_isError(r) && (sr_Err(r) == VKI_ENXIO || sr_Err(r) == VKI_ENOENT)) {
			out_dead = True;
			return True;
		}
		if (sr_isError(r))
			return False;
		fd = (Long)sr_Res(r);
		VG_(fcntl)((Int)fd, VKI_F_SETFL, 0);	/* writes block while the FIFO is full */
	}
	if (fd < 0)
		return False;
	/* into Valgrind's range (close-on-exec): an exec'd child's tool opens the FIFO itself */
	Int s = VG_(safe_fd)((Int)fd);
	out_fd = s >= 0 ? s : (Int)fd;
	ring_dir = ring;
	return True;
}

void sp_out_fork_child(Int pid)
{
	sp_out_used = 0;
	out_pid = pid;
	framed_bytes = 0;
	ring_leave();	/* the parent's: never written by the child */
}

/* Frames, at most PIPE_BUF bytes each: atomic on a pipe. The frame header is written over
 * the 8 bytes before the chunk (out_area.room, or the end of the chunk sent just before, no
 * longer needed: the buffer is empty after this), so the records are never copied. */
static void send_frames(UChar *p, SizeT n)
{
	while (n > 0) {
		SizeT part = n > LOG_FRAME_MAX - sizeof(struct log_frame) ?
			     LOG_FRAME_MAX - sizeof(struct log_frame) : n;
		struct log_frame f = { .pid = (UInt)out_pid, .len = (UInt)part };
		UChar *frame = p - sizeof(f);
		VG_(memcpy)(frame, &f, sizeof(f));
		if (!write_all(frame, sizeof(f) + part))
			return;
		p += part;
		n -= part;
	}
}

void sp_out_write(void)
{
	SizeT n = sp_out_used;
	sp_out_used = 0;
	if (out_fd < 0 || out_dead || n == 0)
		return;
	if (!ring_hdr) {
		send_frames(sp_out_buf, n);
		framed_bytes += n;
		if (ring_dir && framed_bytes >= RING_AFTER && framed_bytes - n < RING_AFTER && !out_dead)
			ring_open();	/* once: a failure leaves the frames */
		return;
	}
	struct log_ring_data d = { .vpos = ring_vpos, .len = (UInt)n };
	if (send_note(LOG_PIPE_RING_DATA, &d, sizeof(d)))
		ring_next_region(ring_vpos + n);
}

UChar *sp_rec_begin(UInt type, UInt len)
{
	SizeT need = sizeof(struct log_rec_hdr) + ((len + 7u) & ~7u);
	tl_assert(need <= OUT_SZ);
	if (sp_out_used + need > OUT_SZ)
		sp_out_write();
	struct log_rec_hdr *h = (struct log_rec_hdr *)(sp_out_buf + sp_out_used);
	h->type = (UChar)type;
	h->flags = 0;
	h->reserved = 0;
	h->len = len;
	UChar *payload = sp_out_buf + sp_out_used + sizeof(*h);
	/* zeroed: reserved fields and padding must not carry bytes of older records */
	VG_(memset)(payload, 0, (len + 7u) & ~7u);
	sp_out_used += need;
	sp_n_records++;
	return payload;
}

void sp_out_close(void)
{
	if (out_fd >= 0)
		VG_(close)(out_fd);
	out_fd = -1;
}
