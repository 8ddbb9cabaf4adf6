/* profile/export.h - profile exports: folded stacks (flamegraph.pl / speedscope input) and
 * pprof (gzip-compressed protobuf, readable by `go tool pprof`). */
#ifndef SPENT_PROFILE_EXPORT_H
#define SPENT_PROFILE_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/symbols.h"
#include "spent/profile.h"

/* Folded stacks of one event: "root;caller;leaf" and a count, merged, sorted by name. When the
 * profile has no stacks for EV, each sample's leaf function is a one-frame stack. */
/* Display name of frame F (function, symbol+0xoff, or image+0xoff) into OUT. */
void profile_frame_name(const struct spent_profile *p, struct symbols *sym,
			const struct spent_profile_frame *f, char *out, size_t outlen);

struct folded {
	char **stacks;
	uint64_t *counts;
	size_t n;
	uint64_t total;
};

/* What folded lines carry besides the frames, as flamegraph.pl's stackcollapse tools offer. */
enum folded_flags {
	FOLDED_ROOT = 1 << 0,		/* the program's name (profile_main_image) as the root frame */
	FOLDED_KERNEL_MARKS = 1 << 1,	/* kernel frames end in "_[k]" (flamegraph.pl colours them) */
};
int folded_build(const struct spent_profile *p, struct symbols *sym, uint32_t ev, unsigned flags,
		 struct folded **out);

/* The image of the program a profile is about: the executable (not a shared library, not the
 * kernel, vDSO or anonymous memory) with the most samples of events EVS; else any image with
 * the most samples; -1 when there is none. pprof's first mapping, folded stacks' root. */
long profile_main_image(const struct spent_profile *p, const uint32_t *evs, size_t nev);
/* Whether IMAGE is the kernel ("[kernel.kallsyms]"). */
bool profile_image_is_kernel(const struct spent_profile_image *img);
/* The names that keep P's kernels apart where rows are keyed by image name: *OUT NULL when P
 * has samples of at most one kernel (every image goes by its path); else an array of
 * spent_profile_nimages(P) entries, "[kernel.kallsyms:FIRST..LAST]" (core/kernel_id.h) for
 * each kernel and NULL for the other images. Freed with profile_kernel_labels_free. 0 or
 * -ENOMEM. */
int profile_kernel_labels(const struct spent_profile *p, char ***out);
void profile_kernel_labels_free(char **labels, size_t n);
void folded_free(struct folded *f);
/* "stack count\n" lines. 0 or -errno (-EIO when the stream kept no reason). */
int folded_write(const struct folded *f, FILE *out);

/*
 * Write events EVS of P as a pprof profile to PATH (atomically, or stdout for "-"): two sample
 * types per event, samples/count and the event's amount (cpu/nanoseconds for the clock events,
 * EVENT/count with a fixed period), the period type and period of the first event, locations
 * per (image, offset) with function and line, mappings per image with the main program's
 * first, stacks when recorded. 0 or -errno.
 */
/* Write LEN bytes of an export to PATH atomically (core/outfile.h), or to standard output when
 * PATH is "-". 0 or -errno. */
int export_write(const char *path, const void *data, size_t len);

int pprof_write(const struct spent_profile *p, struct symbols *sym, const uint32_t *evs, size_t nev,
		const char *path);

#endif
