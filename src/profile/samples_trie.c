/* profile/samples_trie.c - the call chains of a samples file as a trie of frames: version 3
 * (rooted at the leaf frame, nodes in breadth-first order with siblings sorted, written as
 * columns: child counts, images, chain ends of the nodes with children, offsets) and the reading of version 2's (rooted
 * at the outermost frame, a node per (parent, image, offset delta), then a chain table).
 * Why version 3: a -g profile of a large program is mostly chains seen once, so the per-node
 * parent and the chain table were most of the file; breadth-first child counts cost a byte a
 * node before compression and almost nothing after, the chains are the nodes that end one
 * (numbered in node order, no table), and sorted siblings make their offsets small steps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/samples_int.h"

/* ---- encoding ---------------------------------------------------------------------------- */

struct tnode {
	uint32_t parent;	/* SAMPLES_NONE for a leaf frame (a child of the root) */
	uint32_t image;		/* local image + 1, 0 = none */
	uint64_t offset;
	uint32_t depth;		/* 1 for leaf frames */
	uint32_t id;		/* breadth-first position */
	uint32_t chain;		/* the chain ending here, SAMPLES_NONE = none */
};

struct trie {
	struct tnode *n;
	size_t len;
	uint32_t *slot;		/* open addressing: node + 1, 0 = empty */
	size_t cap;
};

static uint64_t node_hash(uint32_t parent, uint32_t image, uint64_t offset)
{
	uint64_t h = (offset ^ ((uint64_t)parent << 32 | image)) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 31);
}

/* The node (PARENT, IMAGE, OFFSET), made when new: its index, or SAMPLES_NONE when full. */
static uint32_t trie_child(struct trie *t, uint32_t parent, uint32_t image, uint64_t offset)
{
	size_t mask = t->cap - 1, j = node_hash(parent, image, offset) & mask;
	for (; t->slot[j]; j = (j + 1) & mask) {
		const struct tnode *nd = &t->n[t->slot[j] - 1];
		if (nd->parent == parent && nd->image == image && nd->offset == offset)
			return t->slot[j] - 1;
	}
	if (t->len >= SAMPLES_NONE - 1)
		return SAMPLES_NONE;
	uint32_t depth = parent == SAMPLES_NONE ? 1 : t->n[parent].depth + 1;
	t->n[t->len] = (struct tnode){ parent, image, offset, depth, 0, SAMPLES_NONE };
	t->slot[j] = (uint32_t)++t->len;
	return (uint32_t)t->len - 1;
}

/* Breadth-first: by depth, then the parent's position, then (image, offset). */
static int bfs_cmp(const void *a, const void *b, void *ctx)
{
	const struct tnode *n = ctx, *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];
	uint32_t px = x->parent == SAMPLES_NONE ? 0 : n[x->parent].id + 1;
	uint32_t py = y->parent == SAMPLES_NONE ? 0 : n[y->parent].id + 1;
	if (px != py)
		return px < py ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* ORDER gets the nodes breadth-first (a level's parents all have their ids when it is sorted). */
static void trie_order(struct trie *t, uint32_t *order, uint32_t *level_start, uint32_t maxdepth)
{
	memset(level_start, 0, (maxdepth + 2) * sizeof(*level_start));
	for (size_t i = 0; i < t->len; i++)
		level_start[t->n[i].depth + 1]++;
	for (uint32_t d = 1; d <= maxdepth + 1; d++)
		level_start[d] += level_start[d - 1];
	for (size_t i = 0; i < t->len; i++)
		order[level_start[t->n[i].depth]++] = (uint32_t)i;
	/* level_start[d] now ends level d; level d starts where d - 1 ended */
	uint32_t start = 0;
	for (uint32_t d = 1; d <= maxdepth; d++) {
		uint32_t end = level_start[d];
		qsort_r(order + start, end - start, sizeof(*order), bfs_cmp, t->n);
		for (uint32_t k = start; k < end; k++)
			t->n[order[k]].id = k;
		start = end;
	}
}

static int trie_write(struct binbuf *b, const struct trie *t, const uint32_t *order,
		      struct samples_cuts *cuts)
{
	uint32_t *kids = calloc(t->len + 1, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (size_t i = 0; i < t->len; i++)
		kids[t->n[i].parent == SAMPLES_NONE ? 0 : t->n[t->n[i].parent].id + 1]++;
	samples_cut(cuts, b);
	int err = binbuf_put_uvarint(b, t->len);
	for (size_t i = 0; i <= t->len && !err; i++)
		err = binbuf_put_uvarint(b, kids[i]);
	samples_cut(cuts, b);
	for (size_t i = 0; i < t->len && !err; i++)
		err = binbuf_put_uvarint(b, t->n[order[i]].image);
	samples_cut(cuts, b);
	/* a node without children always ends a chain: only the others say */
	for (size_t i = 0; i < t->len && !err; i++)
		if (kids[t->n[order[i]].id + 1])
			err = binbuf_put_u8(b, t->n[order[i]].chain != SAMPLES_NONE);
	samples_cut(cuts, b);
	/* offsets in two columns (each compresses better alone): first the nodes that do not
	 * follow a sibling of their image, then the steps of those that do */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < t->len && !err; i++) {
			const struct tnode *nd = &t->n[order[i]], *pv = i ? &t->n[order[i - 1]] : NULL;
			bool step = pv && pv->parent == nd->parent && pv->image == nd->image;
			if (step && pass == 1)
				err = binbuf_put_uvarint(b, nd->offset - pv->offset - 1);
			else if (!step && pass == 0)
				err = binbuf_put_svarint(b, (int64_t)nd->offset);
			if (i + 1 == t->len)
				samples_cut(cuts, b);
		}
	free(kids);
	return err;
}

int samples_trie_put(struct binbuf *b, const struct samples_chains *c)
{
	const struct profile_detail *d = c->d;
	struct trie t = { 0 };
	uint32_t *order = NULL, *level = NULL, *end = NULL, maxdepth = 1;
	size_t nframes = 0;
	int err = -ENOMEM;
	for (uint32_t l = 0; l < c->nused; l++)
		nframes += d->chains[c->used[l]].n;
	for (t.cap = 16; t.cap < 2 * nframes + 2; t.cap *= 2)
		;
	t.n = malloc((nframes + 1) * sizeof(*t.n));
	t.slot = calloc(t.cap, sizeof(*t.slot));
	end = malloc(((size_t)c->nused + 1) * sizeof(*end));
	if (!t.n || !t.slot || !end)
		goto out;
	for (uint32_t l = 0; l < c->nused; l++) {
		const struct detail_chain *ch = &d->chains[c->used[l]];
		uint32_t node = SAMPLES_NONE;
		for (size_t k = 0; k < ch->n; k++) {
			const struct spent_profile_frame *f = &d->frames[ch->off + k];
			uint32_t img = f->image == SPENT_PROFILE_NO_IMAGE ? 0 : c->image_local[f->image] + 1;
			if ((node = trie_child(&t, node, img, f->offset)) == SAMPLES_NONE) {
				err = -ENOSPC;
				goto out;
			}
		}
		/* distinct chains end at distinct nodes */
		end[l] = node;
		t.n[node].chain = 0;
		if (t.n[node].depth > maxdepth)
			maxdepth = t.n[node].depth;
	}
	order = malloc((t.len + 1) * sizeof(*order));
	level = malloc((maxdepth + 2) * sizeof(*level));
	if (!order || !level)
		goto out;
	trie_order(&t, order, level, maxdepth);
	/* chains are numbered as their end nodes come */
	uint32_t nchains = 0;
	for (size_t i = 0; i < t.len; i++)
		if (t.n[order[i]].chain != SAMPLES_NONE)
			t.n[order[i]].chain = nchains++;
	for (uint32_t l = 0; l < c->nused; l++)
		c->chain_local[c->used[l]] = t.n[end[l]].chain;
	err = trie_write(b, &t, order, c->cuts);
out:
	free(t.n);
	free(t.slot);
	free(order);
	free(level);
	free(end);
	return err;
}

/* ---- parsing ------------------------------------------------------------------------------ */

#define BAD(msg) do { *why = (msg); err = -EBADMSG; goto out; } while (0)

struct dnode {
	uint32_t parent;	/* SAMPLES_NONE = a leaf frame */
	uint32_t image;		/* local image + 1, 0 = none */
	uint64_t offset;
	uint16_t depth;
	uint8_t has_kids, end;
};

/* The child counts: every node is a child of an earlier one (or of the root). */
static int get_shape(struct binreader *r, struct dnode *n, uint64_t nn, const char **why)
{
	uint64_t c0, next;
	int err = 0;
	if (binreader_get_uvarint(r, &c0) || c0 > nn)
		BAD("bad frame child count");
	for (next = 0; next < c0; next++)
		n[next] = (struct dnode){ .parent = SAMPLES_NONE, .depth = 1 };
	for (uint64_t i = 0; i < nn; i++) {
		uint64_t c;
		if (binreader_get_uvarint(r, &c) || c > nn - next)
			BAD("bad frame child count");
		if (i >= next)
			BAD("frame without a parent");
		if (c && n[i].depth >= SAMPLES_MAX_DEPTH)
			BAD("call chain deeper than 1024");
		n[i].has_kids = c != 0;
		for (uint64_t k = 0; k < c; k++, next++)
			n[next] = (struct dnode){ .parent = (uint32_t)i,
						  .depth = (uint16_t)(n[i].depth + 1) };
	}
	if (next != nn)
		BAD("bad frame child count");
out:
	return err;
}

/* Images, chain ends and offsets; siblings strictly increasing by (image, offset). */
static int get_columns(struct binreader *r, struct dnode *n, uint64_t nn, uint64_t nimages,
		       uint64_t *nchains, const char **why)
{
	int err = 0;
	for (uint64_t i = 0; i < nn; i++) {
		uint64_t img;
		if (binreader_get_uvarint(r, &img) || img > nimages)
			BAD("frame image out of range");
		n[i].image = (uint32_t)img;
		if (i && n[i - 1].parent == n[i].parent && n[i - 1].image > n[i].image)
			BAD("sibling frames out of order");
	}
	*nchains = 0;
	for (uint64_t i = 0; i < nn; i++) {
		n[i].end = 1;
		if (n[i].has_kids && (binreader_get_u8(r, &n[i].end) || n[i].end > 1))
			BAD("bad chain end flag");
		*nchains += n[i].end;
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < nn; i++) {
			bool step = i && n[i - 1].parent == n[i].parent && n[i - 1].image == n[i].image;
			uint64_t d;
			int64_t v;
			if (step && pass == 1) {
				if (binreader_get_uvarint(r, &d) || d >= UINT64_MAX - n[i - 1].offset)
					BAD("bad frame offset");
				n[i].offset = n[i - 1].offset + d + 1;
			} else if (!step && pass == 0) {
				if (binreader_get_svarint(r, &v))
					BAD("bad frame offset");
				n[i].offset = (uint64_t)v;
			}
		}
out:
	return err;
}

int samples_trie_get(struct binreader *r, struct profile_detail *t, const uint32_t *images,
		     uint64_t nimages, uint64_t frame_budget, struct samples_dec_chains *x,
		     const char **why)
{
	struct spent_profile_frame fr[SAMPLES_MAX_DEPTH];
	struct dnode *n = NULL;
	uint64_t nn, frames = 0;
	int err = 0;
	/* a node is at least three bytes: its child count, image and offset */
	if (binreader_get_uvarint(r, &nn) || nn > binreader_left(r) / 3)
		BAD("bad frame count");
	if (!(n = malloc((nn + 1) * sizeof(*n))))
		return -ENOMEM;
	if ((err = get_shape(r, n, nn, why)) || (err = get_columns(r, n, nn, nimages, &x->nchains, why)))
		goto out;
	for (uint64_t i = 0; i < nn; i++)
		frames += n[i].end ? n[i].depth : 0;
	if (frames > frame_budget)
		BAD("call chains hold too many frames for the file's size");
	if (!(x->chains = malloc((x->nchains + 1) * sizeof(*x->chains)))) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0, c = 0; i < nn; i++) {
		if (!n[i].end)
			continue;
		size_t depth = n[i].depth, k = depth;
		for (uint32_t j = (uint32_t)i; j != SAMPLES_NONE; j = n[j].parent)
			fr[--k] = (struct spent_profile_frame){
				n[j].image ? images[n[j].image - 1] : SPENT_PROFILE_NO_IMAGE, n[j].offset };
		if ((err = profile_detail_chain_intern(t, fr, depth, &x->chains[c++])))
			goto out;
	}
out:
	free(n);
	return err;
}

/* Version 2: nodes rooted at the outermost frame (parent as a backwards distance, offset as
 * a delta from the previous node's), then a chain table naming each chain's leaf node. */
struct v2node {
	uint32_t parent;
	uint32_t image;		/* T's image or SPENT_PROFILE_NO_IMAGE */
	uint64_t offset;
};

static int v2_nodes(struct binreader *r, const uint32_t *images, uint64_t nimages,
		    struct v2node *nodes, uint16_t *depth, uint64_t nnodes, const char **why)
{
	uint64_t prev = 0;
	int err = 0;
	for (uint64_t i = 0; i < nnodes; i++) {
		uint64_t up, img;
		int64_t delta;
		if (binreader_get_uvarint(r, &up) || binreader_get_uvarint(r, &img) ||
		    binreader_get_svarint(r, &delta))
			BAD("truncated frame");
		if (up > i || img > nimages)
			BAD("frame parent or image out of range");
		depth[i] = up ? depth[i - up] + 1 : 1;
		if (depth[i] > SAMPLES_MAX_DEPTH)
			BAD("call chain deeper than 1024");
		prev += (uint64_t)delta;
		nodes[i] = (struct v2node){ up ? (uint32_t)(i - up) : SAMPLES_NONE,
					    img ? images[img - 1] : SPENT_PROFILE_NO_IMAGE, prev };
	}
out:
	return err;
}

/* Chains name distinct leaves (as the encoder's trie makes them): rebuilding them then costs
 * at most 1024 frames per frame of the file, never 1024 per byte of a chain table that
 * repeats one deep leaf. */
int samples_trie_get_v2(struct binreader *r, struct profile_detail *t, const uint32_t *images,
			uint64_t nimages, struct samples_dec_chains *x, const char **why)
{
	struct spent_profile_frame fr[SAMPLES_MAX_DEPTH];
	struct v2node *nodes = NULL;
	uint16_t *depth = NULL;
	uint8_t *used = NULL;
	uint64_t nnodes;
	int err = 0;
	if (binreader_get_uvarint(r, &nnodes) || nnodes > binreader_left(r) / 3)
		BAD("bad frame count");
	nodes = malloc((nnodes + 1) * sizeof(*nodes));
	depth = malloc((nnodes + 1) * sizeof(*depth));
	used = calloc(nnodes + 1, 1);
	if (!nodes || !depth || !used) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = v2_nodes(r, images, nimages, nodes, depth, nnodes, why)))
		goto out;
	if (binreader_get_uvarint(r, &x->nchains) || x->nchains > binreader_left(r) ||
	    x->nchains > nnodes)
		BAD("bad chain count");
	if (!(x->chains = malloc((x->nchains + 1) * sizeof(*x->chains)))) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < x->nchains; i++) {
		uint64_t leaf;
		if (binreader_get_uvarint(r, &leaf) || leaf >= nnodes)
			BAD("bad chain");
		if (used[leaf]++)
			BAD("two chains end at one frame");
		size_t n = 0;
		for (uint32_t k = (uint32_t)leaf; k != SAMPLES_NONE; k = nodes[k].parent)
			fr[n++] = (struct spent_profile_frame){ nodes[k].image, nodes[k].offset };
		if ((err = profile_detail_chain_intern(t, fr, n, &x->chains[i])))
			goto out;
	}
out:
	free(nodes);
	free(depth);
	free(used);
	return err;
}
