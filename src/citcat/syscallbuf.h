/* citcat/syscallbuf.h - the recorder's side of the syscall buffer (syscallbuf.c): the seccomp
 * filter, the preload library's calls, draining its buffer into the recording. */
#ifndef SPENT_CITCAT_SYSCALLBUF_H
#define SPENT_CITCAT_SYSCALLBUF_H

#include <stdint.h>
#include <sys/types.h>

struct cc_tracer;

/* In the child before exec: the seccomp filter stopping every syscall, but (WITH_BUFFER) the
 * calls the buffer takes made from its untraced instruction. 0, or -1 with errno. */
int cc_sb_install_filter(int with_buffer);
/* The library's CC_SB_NR_REGISTER(A): the result the program gets in *RET (0: the recorder
 * drains that buffer from now on). 0 or -errno. */
int cc_sb_register(struct cc_tracer *tr, const uint64_t *a, int64_t *ret);
/* Move the entries committed since the last drain into the recording (SYSCALL records flagged
 * CC_SC_BUFFERED, MEM of their outputs). A malformed buffer is -EBADMSG with the message in
 * tr->err. */
int cc_sb_drain(struct cc_tracer *tr);
/* The library's CC_SB_NR_FLUSH, at its entry stop: drain, then set the buffer's used to 0 in
 * the program. */
int cc_sb_flush(struct cc_tracer *tr);
/* At the FLUSH's exit, after its SYSCALL record: the MEM record of that store. */
int cc_sb_flush_effects(struct cc_tracer *tr);
/* At a signal stop of thread PID: while the library is between its untraced syscall and the
 * entry's commit, single-step (signals arriving meanwhile are raised again afterwards), so the
 * entry is complete before the signal's records. *EXITED: the wait status if the program
 * ended meanwhile. 0 or -errno. */
int cc_sb_leave_busy(struct cc_tracer *tr, pid_t pid, int *exited);

#endif
