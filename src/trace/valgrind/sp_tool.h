/* trace/valgrind/sp_tool.h - what the spent tool's files share: the record output buffer
 * (sp_out.c) and the process-tree handling (sp_proc.c), used by the instrumenter (sp_main.c). */
#ifndef SPENT_TRACE_VALGRIND_SP_TOOL_H
#define SPENT_TRACE_VALGRIND_SP_TOOL_H

#include "pub_tool_basics.h"

/* ---- output (sp_out.c) ---- */
#define OUT_SZ (4u << 20)	/* holds the largest DATA record (VAL_N varints) */
extern UChar *sp_out_buf;	/* OUT_SZ bytes: static, or a region of the shared ring */
extern SizeT sp_out_used;
extern ULong sp_n_records;

ULong sp_now_ns(void);
/* Open the recorder's FIFO at PATH, or use FD (>= 0); False when neither works. RING: the
 * directory for a shared ring file (NULL, or when the ring cannot be made: frames only). */
Bool sp_out_open(const HChar *path, Long fd, const HChar *ring);
/* Send the buffered records (in atomic frames tagged with this process's pid, or a note
 * saying where in the ring they are). */
void sp_out_write(void);
/* Start a record of payload LEN; returns where the payload goes (contiguous). */
UChar *sp_rec_begin(UInt type, UInt len);
void sp_out_close(void);
/* In a forked child, pid PID: forget the records buffered before the fork (the parent sends
 * them); later frames carry PID, and a ring of its own replaces the parent's. */
void sp_out_fork_child(Int pid);

/* ---- process tree (sp_proc.c) ---- */
/* The LOG_REC_PROCESS record opening this process's stream. */
void sp_emit_process(UInt flags);
/* Keep a copy of the CODE record (payload B, LEN bytes) describing the translation at KEY,
 * replacing the older one: a forked child sends them all again (sp_code_resend). */
void sp_code_keep(Addr key, const UChar *b, UInt len);
/* Whether a description of KEY was kept (a translation of it came before). */
Bool sp_code_known(Addr key);
void sp_code_resend(void);
/* Register the fork handlers; CHILDREN False: a forked child stops logging. */
void sp_proc_init(Bool children);

/* ---- images (sp_image.c) ---- */
void sp_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di);
void sp_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di);
void sp_images_resend(void);

/* ---- the instrumenter's hooks the fork handling needs (sp_main.c) ---- */
void sp_flush_data(void);
void sp_fork_child_reset(ThreadId tid);
void sp_stop_logging(void);
Bool sp_is_stopped(void);

#endif
