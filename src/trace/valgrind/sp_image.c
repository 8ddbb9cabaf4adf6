/* trace/valgrind/sp_image.c - the spent tool's LOG_REC_IMAGE records: each executable mapping
 * of the client (files by path, the vDSO with its bytes), at startup and at mmap, and all of
 * them again in a forked child, whose stream must stand alone. */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

#include "trace/log_format.h"
#include "trace/valgrind/sp_tool.h"

/* Whether SEG maps this tool's own executable: Valgrind hands the client the page of its
 * trampolines (sigreturn, the vDSO redirections), which lies in the tool binary's text. */
static Bool is_tool_binary(NSegment const *seg)
{
	NSegment const *own = VG_(am_find_nsegment)((Addr)&is_tool_binary);
	return own && own->kind == SkFileV && seg->kind == SkFileC && own->dev == seg->dev &&
	       own->ino == seg->ino;
}

static void emit_image(Addr a, SizeT len, Bool startup)
{
	NSegment const *seg = sp_is_stopped() ? NULL : VG_(am_find_nsegment)(a);
	const HChar *path = NULL;
	if (sp_is_stopped())
		return;
	ULong off = 0;
	UInt n_bytes = 0;
	if (seg && seg->kind == SkFileC) {
		path = VG_(am_get_filename)(seg);
		off = (ULong)seg->offset + (a - seg->start);
		/* the trampoline page goes with its bytes, as the vDSO does: read from the tool
		 * binary on disk, every log became unreadable once spent was rebuilt or upgraded
		 * ("image '.../spent-amd64-linux' changed since it was traced") */
		if (path && len <= (64u << 10) && is_tool_binary(seg))
			n_bytes = (UInt)len;
	}
	if (!path) {
		if (!startup || len > (64u << 10))
			return;
		path = "[vdso]";
		n_bytes = (UInt)len;
	}
	UInt plen = (UInt)VG_(strlen)(path);
	if (plen > 4095)
		plen = 4095;
	UInt pad = (plen + 7u) & ~7u;
	UChar *b = sp_rec_begin(LOG_REC_IMAGE, (UInt)sizeof(struct log_image) + pad + n_bytes);
	struct log_image *im = (struct log_image *)b;
	im->start = a;
	im->len = len;
	im->offset = off;
	im->flags = n_bytes ? LOG_IMG_BYTES : 0;
	im->path_len = plen;
	im->n_bytes = n_bytes;
	VG_(memcpy)(b + sizeof(*im), path, plen);
	if (n_bytes)
		VG_(memcpy)(b + sizeof(*im) + pad, (const void *)a, n_bytes);
}

static Addr vdso_start;	/* the vDSO as seen at startup: a forked child sends it again */
static SizeT vdso_len;

void sp_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
	NSegment const *seg = VG_(am_find_nsegment)(a);
	if (xx && !(seg && seg->kind == SkFileC)) {
		vdso_start = a;
		vdso_len = len;
	}
	if (xx)
		emit_image(a, len, True);
}

void sp_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
	if (xx)
		emit_image(a, len, False);
}

/* Every executable mapping the process has now (a forked child: the parent's). */
void sp_images_resend(void)
{
	Addr one;
	Int n = VG_(am_get_segment_starts)(SkFileC | SkAnonC, &one, 1);
	Addr *starts = VG_(malloc)("sp.segs", (SizeT)(n < 0 ? -n : 1) * sizeof(Addr));
	if (n < 0)
		n = VG_(am_get_segment_starts)(SkFileC | SkAnonC, starts, -n);
	else
		starts[0] = one;
	for (Int i = 0; starts && i < n; i++) {
		NSegment const *seg = VG_(am_find_nsegment)(starts[i]);
		if (!seg || !seg->hasX)
			continue;
		SizeT len = seg->end - seg->start + 1;
		if (seg->kind == SkFileC)
			emit_image(seg->start, len, False);
		else if (seg->start == vdso_start)
			emit_image(vdso_start, vdso_len, True);
	}
	if (starts)
		VG_(free)(starts);
}
