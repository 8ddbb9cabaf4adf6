/* citcat/replay_mem.h - file checks and address-space updates of the replayer. */
#ifndef SPENT_CITCAT_REPLAY_MEM_H
#define SPENT_CITCAT_REPLAY_MEM_H

#include "citcat/replay_int.h"

/* Load the content of every FILE with a copy (verified) or to be checked (against the file
 * system now). 0, or -ESTALE / -ENOENT / -EBADMSG / -errno with a message in rp->err. */
int cc_replay_check_files(struct citcat_replay *rp);
/* Apply a MAP, MEM, UNMAP or ZERO record (others are ignored). INITIAL: part of the image. */
int cc_replay_apply(struct citcat_replay *rp, const struct cc_rec *rec, int initial);
/* Load a REGS record's values into the simulator (RIP too when WITH_RIP). */
int cc_replay_set_regs(struct citcat_replay *rp, const uint64_t *v, bool with_rip);

#endif
