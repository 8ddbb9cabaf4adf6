/* profile/db.h - database-level operations on a daemon's profile directory: safety checks
 * (root-owned, no symlink, 0750/0640), the control socket client, merging several hosts'
 * databases, garbage-collecting old epochs, on-disk usage, and reading the status file. */
#ifndef SPENT_PROFILE_DB_H
#define SPENT_PROFILE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/profile.h"

#define DB_DIR_MODE 0750
#define DB_FILE_MODE 0640
#define DB_SOCKET_NAME "control"
#define DB_LOCK_NAME "daemon.lock"
#define DB_STATUS_NAME "status.json"
#define DB_MERGED_NAME "merged-from"
#define DB_MERGE_PENDING_NAME "merge-pending"

/*
 * Check that PATH may hold a database: not a symlink (-ELOOP), a directory (-ENOTDIR),
 * owned by root (-EPERM). With CREATE, a missing PATH is made (mode 0750; its parent must
 * exist). The directory's mode is set to 0750.
 */
int db_check_path(const char *path, bool create);

/* db_check_path + open (or create, with CREATE) the profile directory with the database's
 * file modes. *OUT is closed with spent_profile_dir_close. */
int db_open(const char *path, bool create, struct spent_profile_dir **out);

/* "DB/NAME" into OUT; -ENAMETOOLONG when it does not fit. */
int db_file_path(const char *db, const char *name, char *out, size_t outlen);

/*
 * Send one command line CMD to the daemon serving DB and read its whole reply into REPLY
 * (NUL-terminated, truncated to LEN). -ECONNREFUSED / -ENOENT when no daemon serves DB.
 * TIMEOUT_MS bounds the wait for the reply.
 */
int db_control(const char *db, const char *cmd, char *reply, size_t len, int timeout_ms);
/* Whether a daemon accepts a connection on DB's control socket within TIMEOUT_MS. */
bool db_control_answers(const char *db, int timeout_ms);

/* Sum every epoch of each database in SRCS into the same epoch number of DST; a source
 * merged before (by its host and creation time, listed in DST/merged-from) is skipped and
 * counted in *SKIPPED. A source that is DST itself or a copy of it (same meta: host, creation
 * time and id) is refused (-EINVAL); one with a corrupt file (reported via WARN) is merged not at
 * all and not listed (-EUCLEAN). Each source is merged whole or not at all and counted once,
 * even when the process dies mid-merge: its epochs are written into copies and staged with
 * the new merged-from in DST/merge-pending.tmp.PID.X; one rename (to DST/merge-pending)
 * commits them, and then they are put in place (db_merge_recover). Sources are taken in
 * order and the first failure stops: those before it stay merged. -EBUSY when a daemon or
 * another merge writes DST (an exclusive flock on its directory); -EINPROGRESS when a
 * source was merged (committed) but putting it in place failed: db_merge_recover finishes it
 * (the next merge or daemon start calls it). 0 or -errno. */
int db_merge(struct spent_profile_dir *dst, const char *const *srcs, size_t n, spent_profile_warn_fn warn,
	     void *ctx, size_t *skipped);

/* Finish a merge into DB that was committed but not put in place (the merging process died):
 * its epochs exchanged in, each once, and its merged-from list; and remove the stages of
 * merges that died before their commit. Called before anything writes DB's epochs
 * (db_merge, the daemon's start), under DB's directory lock: LOCKED says the caller holds it
 * (the daemon), else it is taken here (-EBUSY when a daemon or a merge holds it). 0 when
 * nothing was pending or it is done; -ENOTEMPTY when DB/merge-pending holds entries spent
 * did not write, -ENOTRECOVERABLE when a staged epoch is neither where the merge left it nor
 * in place (the database was copied mid-merge: its inodes changed), -ENOTDIR or -ELOOP when
 * it is not a directory; another -errno. Every entry is checked before anything changes. */
int db_merge_recover(const char *db, bool locked);
/* Whether DB's lock file (DB_LOCK_NAME) is flocked: a daemon runs (a merge locks only the
 * directory; daemons before the directory's lock locked only this file). */
bool db_lock_file_held(const char *db);

/* Before a change to DB's epochs other than the daemon's or a merge's (gc, a new epoch with
 * no daemon): DB's directory lock taken and a merge a crash left pending finished, *LOCK the
 * lock's fd for the caller to close when done. With a daemon running the lock is its own
 * (*LOCK -1, 0 returned): it writes only its current epoch, and no merge can be pending while
 * it runs. -EBUSY while a merge writes DB; db_merge_recover's errors. */
int db_lock_for_change(const char *db, int *lock);

/* Why db_merge_recover's error R stopped it, in words for a message. */
const char *db_merge_recover_strerror(int r);

/* Remove every epoch but the newest KEEP (KEEP >= 1); *REMOVED receives how many. Only
 * directories count as epochs. Nothing is followed: an epoch-NNNN symlink loses its link only;
 * any other entry that is not a directory is left alone and not counted, and -ENOTDIR
 * returned with the first one in *NOT_DIR; an epoch holding files spent did not write is
 * kept, the others removed, and -ENOTEMPTY returned with the first such epoch in
 * *KEPT_FOREIGN (UINT32_MAX when none). Another error stops the removal. */
int db_gc(struct spent_profile_dir *d, unsigned keep, size_t *removed, uint32_t *kept_foreign,
	  uint32_t *not_dir);

/* Remove each kallsyms-HEX copy no epoch of D has kernel samples of, except the running
 * kernel's (a daemon writes its copy before its epoch has kernel samples); *REMOVED receives
 * how many. 0 or -errno. */
int db_gc_kallsyms(struct spent_profile_dir *d, size_t *removed);

/* D's directory (DIRFD, open on it) was moved: D follows it to where it is now (its path into
 * OUT, LEN bytes). -ENOENT when it was removed (or moved again meanwhile), -errno. */
int db_follow_move(struct spent_profile_dir *d, int dirfd, char *out, size_t len);

/* Remove the temporaries writers that died left in D (its epochs, its pid-* profiles). */
void db_clean_stale(struct spent_profile_dir *d);

/*
 * Read the next member of a flat JSON object (the status file, which anyone who could write
 * the directory may have altered) at *POS: its key into KEY and its value into VAL (both
 * NUL-terminated, truncated to their sizes, which must be >= 1); a string value is unquoted
 * and its escapes decoded (\uXXXX to UTF-8), and *QUOTED says it was one. *POS moves past
 * it. 1 when a member was read, 0 at the end of the object or the text.
 */
int db_status_next_member(const char **pos, char *key, size_t klen, char *val, size_t vlen,
			  bool *quoted);

struct db_usage {
	size_t epochs;
	uint32_t current_epoch;
	size_t files;
	uint64_t bytes;
};
int db_usage(struct spent_profile_dir *d, struct db_usage *u);

#endif
