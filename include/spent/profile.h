/* spent/profile.h - the profile model shared by `spent record`, the daemon and the views:
 * counts keyed by (image identity, offset in image, event), `unknown` samples with a reason,
 * optional call stacks; and the profile directory that stores it (see docs/profile.md).
 *
 * Offsets are link-time virtual addresses inside the image (the address space of the image's
 * own symbol table: st_value), so they are the same in every process that maps the image,
 * whatever the load address. For [kernel.kallsyms] the offset is the kernel address itself.
 */
#ifndef SPENT_PROFILE_H
#define SPENT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spent/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- identities ------------------------------------------------------------------------ */

enum spent_profile_id_kind {
	SPENT_PROFILE_ID_NONE = 0,	/* nothing better than the path (e.g. a file that could not be read) */
	SPENT_PROFILE_ID_BUILDID = 1,	/* GNU build-id note bytes */
	SPENT_PROFILE_ID_HASH = 2,	/* 8-byte FNV-1a of the file content, little-endian */
};

#define SPENT_PROFILE_ID_MAX 32
#define SPENT_PROFILE_PATH_MAX 4096
#define SPENT_PROFILE_EVENT_NAME_MAX 256
#define SPENT_PROFILE_KERNEL_PATH "[kernel.kallsyms]"
#define SPENT_PROFILE_VDSO_PATH "[vdso]"

/* An image: a file mapped executable (or the kernel, or the vDSO). */
struct spent_profile_image {
	char *path;		/* owned by the profile */
	uint8_t id_kind;	/* enum spent_profile_id_kind */
	uint8_t id_len;
	uint8_t id[SPENT_PROFILE_ID_MAX];
};

/* Event description flags. */
#define SPENT_PROFILE_EV_FREQ 0x1u	/* period field is a sampling frequency in Hz (perf -F) */

/* An event as it was sampled: "cpu-clock" with a period of 1000003 (ns), or -F 997 Hz. */
struct spent_profile_event {
	char *name;		/* owned by the profile; the spec as the user wrote it, minus period */
	uint64_t period;
	uint32_t flags;		/* PROFILE_EV_* */
};

/* Why a sample could not be placed in an image. */
enum spent_profile_unknown_reason {
	SPENT_PROFILE_UNK_NO_MAPPING = 0,	/* the pc is not inside any known mapping of that process */
	SPENT_PROFILE_UNK_PROCESS_GONE = 1,	/* the process exited before its maps were known */
	SPENT_PROFILE_UNK_ANON = 2,		/* anonymous executable memory: JIT code, trampolines */
	SPENT_PROFILE_UNK_KERNEL = 3,		/* kernel pc but the kernel image is not available */
	SPENT_PROFILE_UNK_LOST = 4,		/* lost in the ring buffer (PERF_RECORD_LOST) */
	SPENT_PROFILE_UNK_THROTTLED = 5,	/* overflow interrupts throttled by the kernel */
	SPENT_PROFILE_UNK_NR
};
SPENT_API const char *spent_profile_unknown_reason_name(enum spent_profile_unknown_reason r);

/* One frame of a stack: IMAGE is an index into the profile's images, or SPENT_PROFILE_NO_IMAGE. */
#define SPENT_PROFILE_NO_IMAGE UINT32_MAX
struct spent_profile_frame {
	uint32_t image;
	uint64_t offset;	/* for SPENT_PROFILE_NO_IMAGE: the raw address */
};

/* One (offset, count) pair of a per-image, per-event histogram. */
struct spent_profile_count {
	uint64_t offset;
	uint64_t count;
};

/* ---- the in-memory profile --------------------------------------------------------------- */

struct spent_profile;

/* A new empty profile (NULL when out of memory); spent_profile_free accepts NULL. */
SPENT_API struct spent_profile *spent_profile_new(void);
SPENT_API void spent_profile_free(struct spent_profile *p);

/*
 * Add (or find) an image by identity + path; *IDX receives its index. The profile copies
 * IMG->path. 0, -EINVAL (bad lengths, empty path) or -ENOMEM.
 */
SPENT_API int spent_profile_image_intern(struct spent_profile *p, const struct spent_profile_image *img, uint32_t *idx);
/* Add (or find) an event by (name, period, flags); *IDX receives its index. */
SPENT_API int spent_profile_event_intern(struct spent_profile *p, const char *name, uint64_t period, uint32_t flags,
			 uint32_t *idx);

SPENT_API size_t spent_profile_nimages(const struct spent_profile *p);
SPENT_API const struct spent_profile_image *spent_profile_image_get(const struct spent_profile *p, uint32_t idx);
SPENT_API size_t spent_profile_nevents(const struct spent_profile *p);
SPENT_API const struct spent_profile_event *spent_profile_event_get(const struct spent_profile *p, uint32_t idx);
/* Index of the event called NAME (first match), -ENOENT, or -EINVAL (NAME NULL). */
SPENT_API int spent_profile_event_find(const struct spent_profile *p, const char *name);

/*
 * Counts never wrap: an add or merge that would take an event's sum of placed + unknown
 * counts, of stack counts or of detail-row counts past UINT64_MAX returns -EOVERFLOW and
 * changes nothing. Every cell, image total, event total and file total is part of one of
 * those sums, so none of them wraps either, and what spent_profile_dir_write_epoch writes
 * the readers accept.
 */

/* Add COUNT hits at OFFSET of image IMG for event EV. 0, -EINVAL (bad index), -ENOMEM,
 * -EOVERFLOW. */
SPENT_API int spent_profile_add(struct spent_profile *p, uint32_t img, uint64_t offset, uint32_t ev, uint64_t count);
/* Add COUNT samples that could not be placed, with a reason. 0, -EINVAL, -EOVERFLOW. */
SPENT_API int spent_profile_add_unknown(struct spent_profile *p, enum spent_profile_unknown_reason why, uint32_t ev,
			uint64_t count);
/* Add COUNT of one call stack (FRAMES[0] is the leaf) for event EV. 0, -EINVAL, -ENOMEM,
 * -ENOSPC, -EOVERFLOW. */
SPENT_API int spent_profile_add_stack(struct spent_profile *p, uint32_t ev, const struct spent_profile_frame *frames,
		      size_t n, uint64_t count);

/* Sum of SRC into DST (images, events and tasks interned by identity; detail rows summed;
 * spans united). Detail rows keep one bucket width: a DST without rows takes SRC's, else the
 * coarser of the two wins and every row is rounded down to it. 0 or -errno; -EOVERFLOW (DST
 * unchanged) when a sum of DST's would wrap. DST may be SRC: its counts double. */
SPENT_API int spent_profile_merge(struct spent_profile *dst, const struct spent_profile *src);

/*
 * The histogram of image IMG for event EV as a new array sorted by offset (caller frees
 * *OUT; *N may be 0 and *OUT NULL). 0 or -ENOMEM / -EINVAL.
 */
SPENT_API int spent_profile_counts(const struct spent_profile *p, uint32_t img, uint32_t ev,
		   struct spent_profile_count **out, size_t *n);
/* Total hits of image IMG for event EV (0 when none). */
SPENT_API uint64_t spent_profile_image_total(const struct spent_profile *p, uint32_t img, uint32_t ev);
/* Total hits for event EV: placed + unknown. */
SPENT_API uint64_t spent_profile_event_total(const struct spent_profile *p, uint32_t ev);
SPENT_API uint64_t spent_profile_unknown_count(const struct spent_profile *p, uint32_t ev,
			       enum spent_profile_unknown_reason why);
/* Number of distinct (image, offset, event) cells with a count. */
SPENT_API size_t spent_profile_ncells(const struct spent_profile *p);

/* Stacks: iterate with an index in [0, spent_profile_nstacks). Pointers stay valid until the
 * profile changes. */
SPENT_API size_t spent_profile_nstacks(const struct spent_profile *p);
SPENT_API int spent_profile_stack_get(const struct spent_profile *p, size_t i, uint32_t *ev,
		      const struct spent_profile_frame **frames, size_t *nframes, uint64_t *count);
/* The next stack of event EV at or after *I (start with *I = 0): 1 with *I advanced past it,
 * 0 when there are no more. */
SPENT_API int spent_profile_stack_next(const struct spent_profile *p, uint32_t ev, size_t *i,
		       const struct spent_profile_frame **frames, size_t *nframes, uint64_t *count);

/* Iterate every (image, event) pair that has at least one count: calls FN for each. */
typedef int (*spent_profile_pair_fn)(void *ctx, uint32_t img, uint32_t ev);
SPENT_API int spent_profile_foreach_pair(const struct spent_profile *p, spent_profile_pair_fn fn, void *ctx);

/* ---- who and when: tasks, sample times, epoch spans (docs/profile.md "Dimensions") -------
 *
 * Besides the (image, offset, event) histograms above, a profile may keep *detail rows*: how
 * many samples of event EV a task (comm, pid, tid, cgroup) took at one call chain during one
 * time bucket. `spent record` adds one per sample (tid and 10 ms buckets), the daemon one per
 * (process, pc, event) per drain (tid 0, the drain's time). Views that sort or filter by
 * comm/pid/tid or by time read these rows; the histograms stay the fast path for the rest.
 * Collectors add both (spent_profile_add / spent_profile_add_stack and spent_profile_add_detail): the two are
 * independent, so a profile written before detail rows existed still reads.
 */

/* Who took a sample. Interned by all four fields. */
struct spent_profile_task {
	char *comm;		/* process (thread) name as the kernel reports it; never NULL */
	uint32_t pid;		/* process id (tgid); 0 when unknown */
	uint32_t tid;		/* thread id; 0 when the collector keeps processes only (daemon) */
	char *cgroup;		/* cgroup v2 path ("/system.slice/ssh.service"), or NULL */
};
#define SPENT_PROFILE_NO_TASK UINT32_MAX
#define SPENT_PROFILE_COMM_MAX 256

/* Width of record's time buckets, and the default of a new profile. */
#define SPENT_PROFILE_TIME_BUCKET_NS 10000000ull

/* Add (or find) a task; the profile copies COMM and CGROUP. 0, -EINVAL, -ENOMEM. */
SPENT_API int spent_profile_task_intern(struct spent_profile *p, const struct spent_profile_task *t, uint32_t *idx);
SPENT_API size_t spent_profile_ntasks(const struct spent_profile *p);
SPENT_API const struct spent_profile_task *spent_profile_task_get(const struct spent_profile *p, uint32_t idx);

/* Bucket width for the time of detail rows added from now on (>= 1; default
 * SPENT_PROFILE_TIME_BUCKET_NS): a row's time is TIME_NS rounded down to a multiple of it. */
SPENT_API int spent_profile_set_time_bucket(struct spent_profile *p, uint64_t bucket_ns);
SPENT_API uint64_t spent_profile_time_bucket(const struct spent_profile *p);

/*
 * Add COUNT samples of event EV taken by TASK (an index, or SPENT_PROFILE_NO_TASK) at wall-clock
 * time TIME_NS (Unix epoch nanoseconds, CLOCK_REALTIME; 0 = unknown) with call chain FRAMES
 * (leaf first, N >= 1; one frame when there is no call stack). Rows with the same (event,
 * task, bucket, chain) are summed. 0, -EINVAL (bad index, N == 0 or > 1024), -ENOMEM,
 * -EOVERFLOW.
 */
SPENT_API int spent_profile_add_detail(struct spent_profile *p, uint32_t ev, uint32_t task, uint64_t time_ns,
				 const struct spent_profile_frame *frames, size_t n, uint64_t count);

/* One detail row as the iterator returns it (pointers valid until the profile changes). */
struct spent_profile_detail_row {
	uint32_t event;
	uint32_t task;			/* index or SPENT_PROFILE_NO_TASK */
	uint64_t time_ns;		/* start of the bucket; 0 = unknown */
	const struct spent_profile_frame *frames;	/* leaf first */
	size_t nframes;
	uint64_t count;
};
SPENT_API size_t spent_profile_ndetail(const struct spent_profile *p);
/* Row I in [0, spent_profile_ndetail): 0 or -EINVAL. Order is unspecified. */
SPENT_API int spent_profile_detail_get(const struct spent_profile *p, size_t i, struct spent_profile_detail_row *row);

/* The wall-clock span the profile covers (Unix ns): a collector sets it from its start and
 * end; merging takes the union. Both 0 when unknown (profiles written before spans existed). */
SPENT_API void spent_profile_extend_span(struct spent_profile *p, uint64_t start_ns, uint64_t end_ns);
SPENT_API void spent_profile_span(const struct spent_profile *p, uint64_t *start_ns, uint64_t *end_ns);

/* ---- the profile directory -------------------------------------------------------------- */

/* Reported for each file a reader skipped: PATH and why (e.g. "bad magic"). */
typedef void (*spent_profile_warn_fn)(void *ctx, const char *path, const char *why);

struct spent_profile_dir;

/*
 * Create a new profile directory DIR (mkdir + DIR/meta). Fails with -EEXIST when DIR exists
 * and is not empty. *OUT is freed with spent_profile_dir_close.
 */
SPENT_API int spent_profile_dir_create(const char *dir, struct spent_profile_dir **out);
/*
 * Open an existing profile directory: -ENOENT when DIR does not exist, -ENOTDIR when not a
 * directory, -EBADMSG when DIR/meta is missing or not a spent profile meta file (its first
 * line is exactly "spent-profile-dir N": "1x" or "01" is no version), -EPROTONOSUPPORT when
 * N is not 1 (a later spent's directory).
 */
SPENT_API int spent_profile_dir_open(const char *dir, struct spent_profile_dir **out);
/* Open DIR when it is a profile directory, else create it (the daemon's case). */
SPENT_API int spent_profile_dir_open_or_create(const char *dir, struct spent_profile_dir **out);
SPENT_API void spent_profile_dir_close(struct spent_profile_dir *d);
/* Permission bits for the directory, its meta, and the epoch directories and files written
 * from now on (default 0700 and 0600; the daemon's database uses 0750 and 0640). */
SPENT_API void spent_profile_dir_set_modes(struct spent_profile_dir *d, mode_t dir_mode, mode_t file_mode);
/*
 * May DIR be replaced as a profile directory? 0 when it is one (its meta says so) holding
 * only what spent writes there (meta, kallsyms, epoch-NNNN/ of profile files); -EBADMSG not a
 * profile directory, -ENOTEMPTY anything else in it, -ELOOP a symlink.
 */
SPENT_API int spent_profile_dir_check_replaceable(const char *dir);
/* Remove DIR when it holds only what spent writes into a profile directory (-ENOTEMPTY and
 * nothing removed otherwise). No symlink is followed. */
SPENT_API int spent_profile_dir_remove(const char *dir);
/* Remove epoch EPOCH the same way; an epoch name that is a symlink loses only the link. */
SPENT_API int spent_profile_dir_remove_epoch(struct spent_profile_dir *d, uint32_t epoch);
SPENT_API const char *spent_profile_dir_path(const struct spent_profile_dir *d);

/* The highest epoch number: a reader takes epoch-0000 .. epoch-4294967294 only, so
 * functions given a higher EPOCH return -EINVAL rather than write what is never read. */
#define SPENT_PROFILE_EPOCH_MAX (UINT32_MAX - 1)

/* Epoch numbers present, ascending, in a new array the caller frees. */
SPENT_API int spent_profile_dir_epochs(struct spent_profile_dir *d, uint32_t **epochs, size_t *n);
/* Make the next epoch directory (highest + 1, or 0) and return its number: -EOVERFLOW when
 * the highest is SPENT_PROFILE_EPOCH_MAX already. */
SPENT_API int spent_profile_dir_new_epoch(struct spent_profile_dir *d, uint32_t *epoch);
/* The current (highest) epoch, creating epoch 0 when there is none. */
SPENT_API int spent_profile_dir_current_epoch(struct spent_profile_dir *d, uint32_t *epoch);

/*
 * Merge P into epoch EPOCH: for every (image, event) file, existing counts are summed with
 * P's and the file is rewritten atomically; same for unknown, stack and detail (samples@)
 * files; the epoch's span file becomes the union of its span and P's. A corrupt
 * existing file is reported via WARN and replaced by P's data (its counts are lost, the old
 * file is kept as NAME.corrupt). 0 or -errno (the first failing write; earlier files stay);
 * -EINVAL when EPOCH > SPENT_PROFILE_EPOCH_MAX.
 */
SPENT_API int spent_profile_dir_write_epoch(struct spent_profile_dir *d, uint32_t epoch, const struct spent_profile *p,
			    spent_profile_warn_fn warn, void *ctx);

/*
 * Read epoch EPOCH into INTO (summed). Each file that fails validation is reported via WARN
 * and skipped. *NSKIPPED (may be NULL) receives how many were skipped. 0 or -errno for
 * errors that stop the whole read (epoch missing, out of memory, -EOVERFLOW: the sum with
 * what INTO holds would wrap; a file whose counts would wrap the epoch's is skipped).
 */
SPENT_API int spent_profile_dir_read_epoch(struct spent_profile_dir *d, uint32_t epoch, struct spent_profile *into,
			   spent_profile_warn_fn warn, void *ctx, size_t *nskipped);
/* The wall-clock span of epoch EPOCH as written (DIR/epoch-NNNN/span), without reading its
 * profile files: 0 (both 0 when the epoch has no span file), -ENOENT no such epoch. */
SPENT_API int spent_profile_dir_epoch_span(struct spent_profile_dir *d, uint32_t epoch, uint64_t *start_ns,
				     uint64_t *end_ns);
/* All epochs summed. */
SPENT_API int spent_profile_dir_read_all(struct spent_profile_dir *d, struct spent_profile *into, spent_profile_warn_fn warn,
			 void *ctx, size_t *nskipped);

/* ---- single files (for tools and the fuzz target) ----------------------------------------- */

/* Parse one profile file's bytes and add its contents to INTO. 0 or -EBADMSG (*WHY says
 * what was wrong; static string). Nothing is added when the file is invalid, nor when
 * adding it would wrap a sum of INTO's (-EOVERFLOW). */
SPENT_API int spent_profile_file_parse(const uint8_t *data, size_t len, struct spent_profile *into, const char **why);

#ifdef __cplusplus
}
#endif
#endif
