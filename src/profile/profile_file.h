/* profile/profile_file.h - the binary layout of one profile file (one image x event, the
 * unknown samples of an event, the call stacks of an event, or the detail rows of an event)
 * and of an epoch's span file. docs/profile.md has the prose.
 *
 *   offset 0   4 bytes  magic "SPPF"
 *          4   le32     version: 1 for kinds 1-3, 4 for kind 4 (readers accept 1 to 4;
 *                       kind 4 in 2 to 4, so a reader older than samples files skips
 *                       them as "unsupported profile file version")
 *          8   u8       kind: 1 counts, 2 unknown, 3 stacks, 4 samples
 *          9   ...      body (all integers LEB128 uvarints, svarint = zigzag, strings uvarint
 *                       length + bytes):
 *     event:   str name, uvarint period, uvarint flags (PROFILE_EV_*)
 *     kind 1:  image (str path, u8 id_kind, u8 id_len, id_len bytes),
 *              uvarint n, uvarint total, n x (uvarint offset delta from the previous offset
 *              (the first from 0), uvarint count > 0); offsets strictly increasing, sum == total
 *     kind 2:  uvarint n, n x (uvarint reason < SPENT_PROFILE_UNK_NR, uvarint count), reasons unique
 *     kind 3:  uvarint nimages, nimages x image; uvarint nstacks, uvarint total,
 *              nstacks x (uvarint count > 0, uvarint depth in 1..1024,
 *                         depth x (uvarint image index + 1 (0 = no image), uvarint offset)),
 *              leaf frame first; sum of counts == total
 *     kind 4:  detail rows (event, task, time bucket, call chain) -> count:
 *              uvarint flags: bit 0 (PROFILE_SAMPLES_STACKS) = the chains are the event's
 *                             call stacks: each chain with the sum of its rows' counts is
 *                             one stack, and there is no stacks file of the event
 *                     bit 1 (PROFILE_SAMPLES_COUNTS, version 4 only) = the chains' leaf
 *                             frames are the event's per-image counts too: each chain whose
 *                             leaf frame has an image adds the sum of its rows' counts at
 *                             (that image, that offset), as a kind-1 file would, and the
 *                             images so counted have no counts file of the event; other
 *                             bits must be 0
 *              uvarint bucket_ns >= 1, uvarint origin_ns (the time of time index 1)
 *              version 3 and 4: u8 method (0 stored, 1 zstd), uvarint body length L, then to the
 *                         CRC the body: L bytes (stored) or one zstd frame of exactly L
 *                         bytes, L <= 64 x its compressed size (samples_int.h's bounds)
 *              the body (version 2: the rest of the file):
 *              uvarint nstrings, nstrings x str          comm and cgroup names
 *              uvarint ntasks, ntasks x (uvarint comm string, uvarint pid, uvarint tid,
 *                                        uvarint cgroup string + 1 (0 = none))
 *              uvarint nimages, nimages x image
 *              version 3 and 4, the chains as a trie rooted at the leaf frame, nodes breadth-first,
 *              siblings strictly increasing by (image, offset), in columns:
 *                uvarint nnodes; nnodes + 1 x uvarint child count (the root's first, then
 *                each node's: the root's children are the leaf frames, a node's its callers)
 *                nnodes x uvarint image index + 1 (0 = no image)
 *                a u8 chain end for each node with children, in node order (1: a chain
 *                                       is this node and its ancestors, leaf frame first;
 *                                       a node without children always ends one)
 *                the offsets in two columns: first svarint offset of each node that does
 *                not follow a sibling of its image, then uvarint offset - the previous
 *                node's - 1 of each node that does
 *                depth <= 1024; the chains are the end nodes in node order; their frames
 *                together <= 1024 x the body's bytes in the file + 2^20
 *              version 2, the chains as a trie rooted at the outermost frame:
 *                uvarint nnodes, nnodes x (uvarint parent: 0 = a chain's outermost frame,
 *                                       else this node's index - the parent's (>= 1),
 *                                       uvarint image index + 1 (0 = no image),
 *                                       svarint offset - the previous node's offset (the
 *                                       first from 0), wrapping mod 2^64); depth <= 1024
 *                uvarint nchains, nchains x uvarint node (the chain's leaf frame; the chain
 *                                       is that node and its parents, leaf first; no node
 *                                       is the leaf of two chains)
 *              uvarint ngroups, uvarint nrows, uvarint total
 *              ngroups x (uvarint task index + 1 (0 = no task), strictly increasing across
 *                         groups; uvarint n >= 1; version 2: its n rows follow)
 *              a row, within its group sorted by (time index, chain), both strictly
 *              increasing as a pair; version 2, each row's fields together:
 *                uvarint key = chain step << 3 | count code << 1 | new time
 *                [new time: uvarint time index - the previous row's - 1 (the first row of a
 *                 group from 0)]
 *                [count code 3: uvarint count - 4; else the count is code + 1]
 *              version 3 and 4, after all group headers, the rows' fields in columns, rows in
 *              group order: nrows x u8 key = (chain step & 31) << 3 | count code << 1 |
 *              new time; nrows x uvarint chain step >> 5; the time steps of the new-time
 *              rows; the counts - 4 of the code-3 rows
 *              a chain step is chain - (the previous row's chain + 1), or the chain itself
 *              on a new time or a group's first row; time index 0 = unknown time, k >= 1 =
 *              origin_ns + (k - 1) x bucket_ns; rows add up to nrows and counts to total
 *   end-4      le32     CRC-32 of every byte before it
 *
 * DIR/epoch-NNNN/span (text): "spent-span 1 START_NS END_NS\n", Unix nanoseconds,
 * 0 < START_NS <= END_NS: the wall-clock interval the epoch's samples were taken in.
 */
#ifndef SPENT_PROFILE_FILE_H
#define SPENT_PROFILE_FILE_H

#include "core/binio.h"
#include "spent/profile.h"

#define PROFILE_FILE_MAGIC "SPPF"
#define PROFILE_FILE_VERSION 1		/* kinds 1-3 */
#define PROFILE_FILE_VERSION_SAMPLES_V2 2	/* kind 4 as first written: still read */
#define PROFILE_FILE_VERSION_SAMPLES_V3 3	/* kind 4 without PROFILE_SAMPLES_COUNTS: still read */
#define PROFILE_FILE_VERSION_SAMPLES 4	/* kind 4 (and readers of kinds 1-3 too) */
#define PROFILE_FILE_MAXLEN (1u << 30)

enum profile_file_kind {
	PROFILE_FILE_COUNTS = 1,
	PROFILE_FILE_UNKNOWN = 2,
	PROFILE_FILE_STACKS = 3,
	PROFILE_FILE_SAMPLES = 4,
};

/* Encode P's data for (IMG, EV) / unknown of EV / stacks of EV into B (appended).
 * *EMPTY (may be NULL) is set when there is nothing to write. 0 or -ENOMEM. */
int profile_file_encode_counts(const struct spent_profile *p, uint32_t img, uint32_t ev,
			       struct binbuf *b);
int profile_file_encode_unknown(const struct spent_profile *p, uint32_t ev, struct binbuf *b,
				bool *empty);
int profile_file_encode_stacks(const struct spent_profile *p, uint32_t ev, struct binbuf *b,
			       bool *empty);
/* The detail rows of EV (profile_samples.c) with FLAGS: PROFILE_SAMPLES_STACKS only when
 * profile_samples_hold_stacks(P, EV), and then no stacks file is written for EV;
 * PROFILE_SAMPLES_COUNTS only when profile_samples_hold_counts(P, EV), and then no counts
 * file of EV is left for the images the leaf frames name. */
#define PROFILE_SAMPLES_STACKS 1u	/* kind-4 flag: the chains are the event's call stacks */
#define PROFILE_SAMPLES_COUNTS 2u	/* kind-4 flag (version 4): the leaves are its counts */
int profile_file_encode_samples(const struct spent_profile *p, uint32_t ev, unsigned flags,
				struct binbuf *b, bool *empty);
/* Whether P's call stacks of EV are exactly the sum of its detail rows' chains of EV (a chain
 * that is a stack of the same count), so the samples file can carry both. */
bool profile_samples_hold_stacks(const struct spent_profile *p, uint32_t ev);
/* Whether P's per-image counts of EV are exactly the sums of its detail rows of EV by leaf
 * frame (rows whose leaf frame has no image aside), with at least one row: then the samples
 * file can carry the counts. 0 (no), 1 (yes) or -ENOMEM. */
int profile_samples_hold_counts(const struct spent_profile *p, uint32_t ev);

/* File names (into OUT of OUTLEN bytes) for each kind; -ENAMETOOLONG when they do not fit. */
int profile_file_name_counts(const struct spent_profile *p, uint32_t img, uint32_t ev, char *out,
			     size_t outlen);
int profile_file_name_unknown(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen);
int profile_file_name_stacks(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen);
int profile_file_name_samples(const struct spent_profile *p, uint32_t ev, char *out, size_t outlen);

/* Shared by the kinds' encoders and parsers (profile_file.c). */
int profile_file_put_header(struct binbuf *b, uint32_t version, uint8_t kind,
			    const struct spent_profile_event *e);
int profile_file_put_image(struct binbuf *b, const struct spent_profile_image *img);
/* The CRC of B's bytes from START, appended. */
int profile_file_put_crc(struct binbuf *b, size_t start);
/* An image into IMG (IMG->path new, the caller frees it, also on error); -EBADMSG + *WHY. */
int profile_file_get_image(struct binreader *r, struct spent_profile_image *img, const char **why);
/* The body of a samples file of VERSION (2 to 4) after its event header into T (event EV):
 * 0 or -EBADMSG with *WHY, or -ENOMEM. */
int profile_file_parse_samples(struct binreader *r, struct spent_profile *t, uint32_t ev,
			       uint32_t version, const char **why);

/* An epoch's span file: encode into OUT (at least PROFILE_SPAN_TEXT_MAX bytes; returns
 * the length), parse (0 or -EBADMSG). */
#define PROFILE_SPAN_TEXT_MAX 64
size_t profile_span_encode(uint64_t start_ns, uint64_t end_ns, char *out);
int profile_span_parse(const uint8_t *data, size_t len, uint64_t *start_ns, uint64_t *end_ns);

#endif
