/* profile/profile_file.h - the binary layout of one profile file (one image x event, the
 * unknown samples of an event, or the call stacks of an event). docs/profile.md has the prose.
 *
 *   offset 0   4 bytes  magic "SPPF"
 *          4   le32     version (1)
 *          8   u8       kind: 1 counts, 2 unknown, 3 stacks
 *          9   ...      body (all integers LEB128 uvarints, strings uvarint length + bytes):
 *     event:   str name, uvarint period, uvarint flags (PROFILE_EV_*)
 *     kind 1:  image (str path, u8 id_kind, u8 id_len, id_len bytes),
 *              uvarint n, uvarint total, n x (uvarint offset delta from the previous offset
 *              (the first from 0), uvarint count > 0); offsets strictly increasing, sum == total
 *     kind 2:  uvarint n, n x (uvarint reason < PROFILE_UNK_NR, uvarint count), reasons unique
 *     kind 3:  uvarint nimages, nimages x image; uvarint nstacks, uvarint total,
 *              nstacks x (uvarint count > 0, uvarint depth in 1..1024,
 *                         depth x (uvarint image index + 1 (0 = no image), uvarint offset)),
 *              leaf frame first; sum of counts == total
 *   end-4      le32     CRC-32 of every byte before it
 */
#ifndef SPENT_PROFILE_FILE_H
#define SPENT_PROFILE_FILE_H

#include "core/binio.h"
#include "spent/profile.h"

#define PROFILE_FILE_MAGIC "SPPF"
#define PROFILE_FILE_VERSION 1
#define PROFILE_FILE_MAXLEN (1u << 30)

enum profile_file_kind {
	PROFILE_FILE_COUNTS = 1,
	PROFILE_FILE_UNKNOWN = 2,
	PROFILE_FILE_STACKS = 3,
};

/* Encode P's data for (IMG, EV) / unknown of EV / stacks of EV into B (appended).
 * *EMPTY (may be NULL) is set when there is nothing to write. 0 or -ENOMEM. */
int profile_file_encode_counts(const struct profile *p, uint32_t img, uint32_t ev,
			       struct binbuf *b);
int profile_file_encode_unknown(const struct profile *p, uint32_t ev, struct binbuf *b,
				bool *empty);
int profile_file_encode_stacks(const struct profile *p, uint32_t ev, struct binbuf *b,
			       bool *empty);

/* File names (into OUT of OUTLEN bytes) for each kind; -ENAMETOOLONG when they do not fit. */
int profile_file_name_counts(const struct profile *p, uint32_t img, uint32_t ev, char *out,
			     size_t outlen);
int profile_file_name_unknown(const struct profile *p, uint32_t ev, char *out, size_t outlen);
int profile_file_name_stacks(const struct profile *p, uint32_t ev, char *out, size_t outlen);

#endif
