/* profile/samples_int.h - what the samples file's parts share (profile_samples.c: tables,
 * rows, the compressed body; samples_trie.c: the chains as a trie of frames, version 3 and
 * the older version 2). Layout in profile_file.h. */
#ifndef SPENT_PROFILE_SAMPLES_INT_H
#define SPENT_PROFILE_SAMPLES_INT_H

#include "core/binio.h"
#include "profile/profile_int.h"

#define SAMPLES_MAX_DEPTH 1024
#define SAMPLES_NONE UINT32_MAX

/* Where the body's columns end (byte offsets into it), so its compression starts a new zstd
 * block at each: a block's entropy tables then fit one column (~2.5% smaller on the g++ -g
 * profile's body); the frame and what it decompresses to are the same. */
#define SAMPLES_MAX_CUTS 16
struct samples_cuts {
	size_t at[SAMPLES_MAX_CUTS];
	unsigned n;
};

/* A column of B ends here (nothing once AT is full: the body is still right). */
static inline void samples_cut(struct samples_cuts *c, const struct binbuf *b)
{
	if (c && c->n < SAMPLES_MAX_CUTS && (!c->n || c->at[c->n - 1] < b->len))
		c->at[c->n++] = b->len;
}

/* The chains of one event's rows, as the encoder sees them. */
struct samples_chains {
	const struct profile_detail *d;
	const uint32_t *used;		/* the profile chains written, NUSED of them */
	uint32_t nused;
	const uint32_t *image_local;	/* profile image -> local image (all used ones set) */
	uint32_t *chain_local;		/* out: profile chain -> the file's chain number */
	struct samples_cuts *cuts;	/* out (may be NULL): where its columns end */
};

/* The version-3 frame trie of C into B: 0, -ENOMEM or -ENOSPC. */
int samples_trie_put(struct binbuf *b, const struct samples_chains *c);

/* A parsed file's chains: the file's chain number -> T's chain. */
struct samples_dec_chains {
	uint32_t *chains;
	uint64_t nchains;
};

/* The frame trie (version 3, or version 2's nodes and chain table) from R into T's chains;
 * IMAGES maps the file's local images (NIMAGES of them) to T's. FRAME_BUDGET caps the frames
 * the chains may hold together (a small file must not make it allocate without bound).
 * 0, -EBADMSG with *WHY, or -ENOMEM; X->chains is the caller's to free, also on error. */
int samples_trie_get(struct binreader *r, struct profile_detail *t, const uint32_t *images,
		     uint64_t nimages, uint64_t frame_budget, struct samples_dec_chains *x,
		     const char **why);
int samples_trie_get_v2(struct binreader *r, struct profile_detail *t, const uint32_t *images,
			uint64_t nimages, struct samples_dec_chains *x, const char **why);

#endif
