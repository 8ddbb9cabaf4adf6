/* trace/valgrind/sp_out.c - the spent tool's record output: one buffer of whole records, sent
 * to `spent trace` through its FIFO in frames of at most PIPE_BUF bytes tagged with the pid, so
 * every process of a traced tree can write to the same FIFO without their bytes mixing. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_vki.h"

#include "trace/log_format.h"
#include "trace/valgrind/sp_tool.h"

/* In coregrind but not in the tool headers: move an fd into Valgrind's reserved range; fcntl. */
extern Int VG_(safe_fd)(Int oldfd);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);

/* The records, with room for a frame header before them (see sp_out_write). */
static struct {
	struct log_frame room;
	UChar buf[OUT_SZ];
} out_area;
UChar *const sp_out_buf = out_area.buf;
SizeT sp_out_used;
ULong sp_n_records;
static Int out_fd = -1;
static Bool out_dead;
static Int out_pid;

ULong sp_now_ns(void)
{
	struct vki_timespec ts;
	VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
	return (ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec;
}

Bool sp_out_open(const HChar *path, Long fd)
{
	out_pid = VG_(getpid)();
	if (path) {
		/* without blocking: with no reader (the recorder was killed) a blocking open
		 * waits forever, and the program with it; it runs on untraced instead */
		SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_NONBLOCK, 0);
		if (sr_isError(r) && sr_Err(r) == VKI_ENXIO) {
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
	return True;
}

void sp_out_set_pid(Int pid)
{
	out_pid = pid;
}

void sp_out_drop(void)
{
	sp_out_used = 0;
}

static Bool write_all(const UChar *p, SizeT n)
{
	while (n > 0) {
		Int w = VG_(write)(out_fd, p, (Int)n);
		if (w <= 0)
			return False;
		p += w;
		n -= (SizeT)w;
	}
	return True;
}

void sp_out_write(void)
{
	UChar *p = sp_out_buf;
	SizeT n = sp_out_used;
	sp_out_used = 0;
	if (out_fd < 0 || out_dead)
		return;
	while (n > 0) {
		/* one write per frame, at most PIPE_BUF bytes: atomic on a pipe. The frame header
		 * is written over the 8 bytes before the chunk (out_area.room, or the end of the
		 * chunk sent just before, no longer needed: the buffer is empty after this), so the
		 * records are never copied. */
		SizeT part = n > LOG_FRAME_MAX - sizeof(struct log_frame) ?
			     LOG_FRAME_MAX - sizeof(struct log_frame) : n;
		struct log_frame f = { .pid = (UInt)out_pid, .len = (UInt)part };
		UChar *frame = p - sizeof(f);
		VG_(memcpy)(frame, &f, sizeof(f));
		if (!write_all(frame, sizeof(f) + part)) {
			out_dead = True;
			return;
		}
		p += part;
		n -= part;
	}
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
