/* shim/shim.h - libspent's Shim API: run a command under the observer (coordinator.c), the
 * results model (histograms, rate summaries, the bounded sample log), its file format
 * (shim_format.h, shim_file.c, shim_reader.c) and ELF symbol help (shim_elf.c). */
#ifndef SPENT_SHIM_SHIM_H
#define SPENT_SHIM_SHIM_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/shm_layout.h"

/* ---- configuration ---- */

struct shim_signal_spec {
	enum shim_sig_kind kind;
	char name[SHIM_NAME_MAX];	/* user's NAME */
	char symbol[128];		/* SYMBOL, looked up as is, then as spent_shim_sig_SYMBOL */
};

struct shim_event_spec {
	char name[SHIM_NAME_MAX];	/* canonical event name */
	struct perf_event_attr attr;	/* from spent_event_parse */
};

#define SHIM_MAX_SIGNALS (SHIM_MAX_COUNTERS + SHIM_MAX_TAGS)

struct shim_config {
	char *const *argv;		/* command to run, NULL-terminated */
	struct shim_signal_spec sigs[SHIM_MAX_SIGNALS];
	size_t nsigs;
	struct shim_event_spec events[SHIM_MAX_COUNTERS];
	size_t nevents;			/* counted on the app CPU, read by the observer */
	int observer_cpu;		/* -1: choose */
	int app_cpu;			/* -1: choose (SMT sibling, else another core) */
	uint64_t period_ns;		/* 0: flat out */
	double ratio_lo, ratio_hi;	/* rate filter, e.g. 0.99 and 1.01 */
	uint64_t buffer_samples;	/* samples kept in the log (the last ones) */
	const char *preload;		/* path of libspent-shim.so */
};

/* Fill CFG with defaults (flat out, [0.99, 1.01], 65536 logged samples, CPUs chosen). */
void shim_config_init(struct shim_config *cfg);

/* ---- results ---- */

struct shim_hist_row {
	uint64_t value;		/* the tag value, or the symbol's address when symbol is set */
	uint64_t samples;
	char *symbol;		/* function/object the value falls in, or NULL */
};

struct shim_signal_result {
	enum shim_sig_kind kind;
	uint32_t source;	/* enum shim_sig_source */
	char name[SHIM_NAME_MAX];
	char *symbol;		/* symbol or event name */
	char *image;		/* image path ("" for events) */
	uint64_t addr;		/* run-time address (0 for events) */
	/* counters and rates */
	uint64_t first_value, last_value;
	uint64_t kept, dropped;	/* rate samples passing / failing the clock-ratio filter */
	uint64_t offcpu;	/* rate samples spanning a context switch on the app or observer
				 * CPU (not rated) */
	uint64_t nrates;	/* rates the summary is computed from (a uniform reservoir) */
	double rate_min, rate_median, rate_max;	/* events per second */
	/* tags */
	struct shim_hist_row *rows;	/* by samples, descending */
	size_t nrows;
	uint64_t overflow;	/* samples whose value did not fit the observer's table */
};

#define SHIM_RESULT_SCHED_CHANNEL 1u	/* the eBPF thread channel was active */

struct shim_result {
	uint32_t flags;
	int32_t observer_cpu, app_cpu;
	int32_t exit_status;	/* the command's exit code, or 128 + signal */
	int32_t pid;		/* the observed process */
	uint64_t tsc_hz;	/* clock ticks per second (calibrated) */
	uint64_t period_req_ns;	/* --period-ns, 0 = flat out */
	double ratio_lo, ratio_hi;
	/* samples = samples_app (histogrammed) + samples_other (app CPU ran another task or
	 * idled) + samples_gap (a context switch on the app or observer CPU within the sample) */
	uint64_t samples, samples_app, samples_other, samples_gap;
	uint64_t app_ns;	/* time the histograms watched the app: between consecutive app
				 * samples with no context switch in between, summed */
	uint64_t first_tsc, last_tsc;
	uint32_t ncounters, ntags;	/* signals[] holds counters first, then tags */
	struct shim_signal_result *signals;
	uint64_t nlog;		/* samples in log */
	uint64_t *log;		/* nlog * shim_sample_words(ncounters, ntags) words, oldest first */
	char note[256];		/* why the thread channel is missing, or "" */
};

/* Zeroed result on the heap; NULL on ENOMEM. Free with shim_result_free (accepts NULL). */
struct shim_result *shim_result_new(void);
void shim_result_free(struct shim_result *r);
/* Mean time between samples in ns (0 with fewer than two samples). */
double shim_result_period_ns(const struct shim_result *r);
/* Percent of the tag's histogram samples in ROW. */
double shim_hist_percent(const struct shim_signal_result *s, const struct shim_hist_row *row);

/* Find the command CMD as exec would (its path into EXE): 0, or -ENOENT (none by that name) /
 * -EACCES (there but not runnable) with one line in ERR. shim_run starts with it; a caller
 * that maps those to the shell's 127/126 calls it first. */
int shim_find_command(const char *cmd, char *exe, size_t exelen, char *err, size_t errlen);

/*
 * Run CFG->argv under the observer and collect the results into *OUT (caller frees with
 * shim_result_free). Errors: -ENOENT unknown command (shim_find_command) or symbol, -EACCES a
 * command that cannot be run, -EINVAL bad CPU or
 * configuration, -ENOEXEC a static program without libspent-shim.a or an observer that never
 * started; ERR holds one line saying what and what to do.
 */
int shim_run(const struct shim_config *cfg, struct shim_result **out, char *err, size_t errlen);

/* ---- analyses (analysis.c) ---- */

/* Rates per second from a reservoir of per-tick rates: min, median, max. */
void shim_rates_summarise(double *per_tick, size_t n, uint64_t tsc_hz, double *min,
			  double *median, double *max);

struct shim_image_syms;	/* symbol tables of the images loaded in the observed process */
/* Build from the observer's image list; caller frees with shim_image_syms_free. */
struct shim_image_syms *shim_image_syms_new(const struct shim_image_map *maps, size_t n);
void shim_image_syms_free(struct shim_image_syms *is);
/*
 * Histogram rows from the observer's table: values inside a known symbol are merged under it.
 * *ROWS is a new array (caller frees with shim_hist_rows_free); 0 or -ENOMEM.
 */
int shim_hist_build(const struct shim_hist_slot *slots, size_t nslots,
		    struct shim_image_syms *is, struct shim_hist_row **rows, size_t *nrows);
void shim_hist_rows_free(struct shim_hist_row *rows, size_t n);

/* ---- ELF (shim_elf.c) ---- */

struct shim_elf;	/* one image: symbols, load range, interpreter, DT_NEEDED */
/* Open PATH; caller frees with shim_elf_free. -ENOENT, -ENOEXEC (not ELF), -ENOMEM. */
int shim_elf_open(const char *path, struct shim_elf **out);
void shim_elf_free(struct shim_elf *e);
/* True when the image has no PT_INTERP (static executable). */
bool shim_elf_is_static(const struct shim_elf *e);
/* Value of defined data/function symbol NAME; 0 or -ENOENT (-EINVAL for a TLS symbol). */
int shim_elf_find(const struct shim_elf *e, const char *name, uint64_t *value);
/* Symbol containing VADDR (ELF virtual address); name (owned by E) or NULL; *START its value. */
const char *shim_elf_lookup(const struct shim_elf *e, uint64_t vaddr, uint64_t *start);
/* Whether VADDR lies in one of the image's PT_LOAD segments. */
bool shim_elf_contains(const struct shim_elf *e, uint64_t vaddr);
/* DT_NEEDED entry I (owned by E), or NULL past the end. */
const char *shim_elf_needed(const struct shim_elf *e, size_t i);
/* Find library SONAME the way ld.so would for E (LD_LIBRARY_PATH, RUNPATH, system dirs). */
int shim_elf_find_library(const struct shim_elf *e, const char *soname, char *out, size_t outlen);

#endif
