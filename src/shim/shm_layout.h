/* shim/shm_layout.h - the shared memory between the coordinator (spent shim, in libspent) and
 * the observer thread (libspent-shim.so inside the application): configuration in, online
 * analyses (tag histograms, rate reservoirs, counts) and the bounded sample ring out.
 *
 * Protocol: the coordinator creates a memfd of shim_shm_size(), fills the configuration part
 * of struct shim_shm, and passes the fd number in SPENT_SHIM_FD to the application (inherited
 * across exec, like the perf and BPF map fds it names). The observer claims the region (state
 * 0 -> 1), resolves each signal's (image, offset) to a run-time address with dl_iterate_phdr,
 * records the loaded images, then samples until the application exits (state 3) or sets
 * state -1 with errmsg when the configuration cannot be honoured. Both sides are the same
 * machine and build, so the layout is native; magic and version guard against mismatches.
 */
#ifndef SPENT_SHIM_SHM_LAYOUT_H
#define SPENT_SHIM_SHM_LAYOUT_H

#include <stdint.h>

#define SHIM_SHM_MAGIC 0x314d485354505353ULL /* "SSPTSHM1" */
#define SHIM_SHM_VERSION 2
#define SHIM_ENV_FD "SPENT_SHIM_FD"

#define SHIM_MAX_COUNTERS 8	/* counters, rates and hardware events */
#define SHIM_MAX_TAGS 8
#define SHIM_NAME_MAX 32
#define SHIM_PATH_MAX 256
#define SHIM_MAX_IMAGES 64
#define SHIM_HIST_SLOTS 8192	/* per tag, power of two */
#define SHIM_HIST_PROBES 32
#define SHIM_RESV_CAP 65536	/* rate samples kept per counter (reservoir) */

enum shim_sig_kind {
	SHIM_SIG_COUNTER = 1,	/* read between the clock readings; value logged */
	SHIM_SIG_RATE = 2,	/* like a counter, reported as a rate (events per second) */
	SHIM_SIG_TAG = 3,	/* read after the clock readings; histogrammed */
};

enum shim_sig_source {
	SHIM_SRC_MEMORY = 1,	/* a 64-bit load from the application's address space */
	SHIM_SRC_PERF_READ = 2,	/* read(2) of a perf event fd (counts on the app CPU) */
};

enum shim_state {
	SHIM_STATE_ERROR = -1,
	SHIM_STATE_IDLE = 0,
	SHIM_STATE_CLAIMED = 1,
	SHIM_STATE_RUNNING = 2,
	SHIM_STATE_DONE = 3,
};

struct shim_shm_signal {
	uint32_t kind;		/* enum shim_sig_kind */
	uint32_t source;	/* enum shim_sig_source */
	int32_t fd;		/* perf event fd for SHIM_SRC_PERF_READ, else -1 */
	uint32_t in_main;	/* 1: image is the main executable */
	uint64_t offset;	/* symbol value (st_value) in the image */
	uint64_t addr;		/* out: run-time address the observer loads */
	char name[SHIM_NAME_MAX];	/* user's NAME */
	char image[SHIM_PATH_MAX];	/* realpath of the image defining the symbol */
};

struct shim_hist_slot {
	uint64_t value;
	uint64_t count;		/* 0: slot empty */
};

struct shim_image_map {
	uint64_t base;		/* dlpi_addr: run-time address minus ELF virtual address */
	char path[SHIM_PATH_MAX];	/* "" for the main executable is replaced by its realpath */
};

struct shim_shm {
	/* --- configuration, written by the coordinator --- */
	uint64_t magic;
	uint32_t version;
	uint32_t ncounters;	/* entries used in counters[] */
	uint64_t size;		/* bytes of the whole region */
	uint32_t ntags;		/* entries used in tags[] */
	int32_t observer_cpu;
	int32_t app_cpu;
	int32_t sched_fd;	/* mmap-able BPF array of struct sched_slot, or -1 */
	uint64_t sched_map_bytes;	/* bytes to mmap from sched_fd */
	uint64_t period_ticks;	/* TSC ticks between samples; 0 = flat out */
	double ratio_lo, ratio_hi;	/* rate filter on consecutive clock intervals */
	uint64_t ring_cap;	/* samples in the log ring; 0 = no log */
	uint64_t ring_off;	/* byte offset of the ring (uint64_t words) */
	uint64_t hist_off;	/* byte offset of ntags * SHIM_HIST_SLOTS slots */
	uint64_t resv_off;	/* byte offset of ncounters * SHIM_RESV_CAP doubles */
	struct shim_shm_signal counters[SHIM_MAX_COUNTERS];
	struct shim_shm_signal tags[SHIM_MAX_TAGS];

	/* --- results, written by the observer --- */
	int32_t state;		/* enum shim_state */
	int32_t pid;		/* the observed process */
	char errmsg[256];
	uint32_t nimages;
	uint32_t pad;
	struct shim_image_map images[SHIM_MAX_IMAGES];
	uint64_t samples;	/* loop iterations */
	uint64_t samples_app;	/* ... while the app CPU ran a thread of pid (histogrammed) */
	uint64_t samples_other;	/* ... while it ran another process or was idle */
	uint64_t samples_gap;	/* ... app on its CPU, but a context switch on the app or the
				 * observer CPU happened within the sample (not histogrammed) */
	uint64_t app_ticks;	/* clock ticks between consecutive app samples with no switch
				 * between them: how long the histograms watched the app */
	uint64_t first_tsc, last_tsc;	/* first sample's start, last sample's end */
	uint64_t ring_head;	/* samples written to the ring so far */
	uint64_t kept[SHIM_MAX_COUNTERS];	/* rate samples passing the filter */
	uint64_t dropped[SHIM_MAX_COUNTERS];	/* ... failing it */
	uint64_t offcpu[SHIM_MAX_COUNTERS];	/* ... spanning a context switch on the app CPU
						 * or the observer's */
	uint64_t resv_seen[SHIM_MAX_COUNTERS];	/* kept rates offered to the reservoir */
	uint64_t first_value[SHIM_MAX_COUNTERS], last_value[SHIM_MAX_COUNTERS];
	uint64_t hist_overflow[SHIM_MAX_TAGS];	/* samples whose value found no slot */
};

/* Set in a logged sample's thread word when a context switch happened within the sample
 * (SHIM_SAMPLE_GAP, shim/sample_class.h): thread ids stay below 2^22, tgids below 2^54. */
#define SHIM_LOG_THREAD_GAP (1ULL << 63)

/* Words per logged sample: start clock, end clock, thread, counters, tags. */
static inline uint64_t shim_sample_words(uint32_t ncounters, uint32_t ntags)
{
	return 3 + (uint64_t)ncounters + ntags;
}

/* Layout the region for the given shape: fills the offsets and size of SHM. */
static inline void shim_shm_layout(struct shim_shm *shm)
{
	uint64_t off = (sizeof(*shm) + 4095) & ~4095ULL;
	shm->hist_off = off;
	off += (uint64_t)shm->ntags * SHIM_HIST_SLOTS * sizeof(struct shim_hist_slot);
	shm->resv_off = off;
	off += (uint64_t)shm->ncounters * SHIM_RESV_CAP * sizeof(double);
	shm->ring_off = off;
	off += shm->ring_cap * shim_sample_words(shm->ncounters, shm->ntags) * sizeof(uint64_t);
	shm->size = (off + 4095) & ~4095ULL;
}

#endif
