/* citcat/record_point.c - exact points without a PMU, recorder side: the POINT record of the
 * place a signal came (or a preemption was made) between two instructions: the complete user
 * state there, a hash of the stack near rsp and, for a signal, the deep stack hash that tells
 * apart the calls of a loop whose count lives in a caller's frame (docs/citcat.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "citcat/record_int.h"
#include "core/binio.h"

/* A POINT's deep stack hash: the stack from FROM to its mapping's end (at most
 * CC_POINT_DEEP_MAX bytes), where a caller keeps the count of the loop the point is in; when
 * not DEEP, over no bytes (the replay's check then always passes). */
static int emit_deep_stack(struct cc_tracer *tr, uint64_t from, int deep)
{
	uint64_t end = deep ? cc_mapping_end(tr, from) : 0, len = end > from ? end - from : 0;
	len = len < CC_POINT_DEEP_MAX ? len : CC_POINT_DEEP_MAX;
	uint8_t *buf = len ? malloc(len) : NULL;
	if (len && !buf)
		return -ENOMEM;
	if (len && cc_mem_read(tr, from, buf, len))
		len = 0;	/* unreadable: nothing hashed, as the replay does then */
	cc_point_mask_mxcsr_flags(buf, len, from, CC_VERSION);
	int err = binbuf_put_le64(&tr->w.payload, len);
	err = err ? err : binbuf_put_le64(&tr->w.payload, cc_point_deep_hash(buf, len));
	free(buf);
	return err;
}

/* POINT: the exact place of an asynchronous event without a PMU: the complete user state at
 * the stop (R), its vector registers and a hash of the stack around rsp (unreadable: zeros,
 * as the replay counts it). */
int cc_emit_point(struct cc_tracer *tr, const struct user_regs_struct *r, int deep)
{
	struct user_fpregs_struct f;
	uint8_t stack[CC_POINT_STACK_BELOW + CC_POINT_STACK_ABOVE];
	if (ptrace(PTRACE_GETFPREGS, tr->pid, NULL, &f))
		return -errno;
	if (cc_mem_read(tr, r->rsp - CC_POINT_STACK_BELOW, stack, sizeof(stack)))
		memset(stack, 0, sizeof(stack));
	cc_point_mask_mxcsr_flags(stack, sizeof(stack), r->rsp - CC_POINT_STACK_BELOW, CC_VERSION);
	const unsigned long long *v = (const unsigned long long *)r;
	const uint64_t *x = (const uint64_t *)f.xmm_space;
	int err = binbuf_put_le64(&tr->w.payload, r->rip);
	for (int i = 0; i < CC_NREGS && !err; i++)
		err = binbuf_put_le64(&tr->w.payload, v[i]);
	err = err ? err : binbuf_put_le64(&tr->w.payload, f.mxcsr);
	for (int i = 0; i < 32 && !err; i++)
		err = binbuf_put_le64(&tr->w.payload, x[i]);
	err = err ? err : binbuf_put_le64(&tr->w.payload,
					  binio_fnv64(BINIO_FNV64_INIT, stack, sizeof(stack)));
	err = err ? err : emit_deep_stack(tr, r->rsp + CC_POINT_STACK_ABOVE, deep);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_POINT);
}
