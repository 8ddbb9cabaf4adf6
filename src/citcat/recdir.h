/* citcat/recdir.h - the recording directory (layout in recording_format.h): the copies of
 * mapped files in DIR/files (written by the recorder, read and verified by the replay), and
 * recognising and removing a recording directory without touching anything not part of it. */
#ifndef SPENT_CITCAT_RECDIR_H
#define SPENT_CITCAT_RECDIR_H

#include <stddef.h>
#include <stdint.h>

/* Store DATA (LEN bytes whose content hash is HASH) as DIR/files/<hash>.zst (mode 0600,
 * fsync'd), unless a copy with that hash is there already. *WRITTEN: the compressed bytes
 * written (0 for an existing copy). 0 or -errno; a failed write leaves no partial copy. */
int cc_copy_write(const char *dir, uint64_t hash, const uint8_t *data, size_t len,
		  uint64_t *written);
/* Write DATA (LEN bytes) compressed as a new file PATH (O_EXCL: -EEXIST when it exists; mode
 * 0600, fsync'd); *WRITTEN its bytes. 0 or -errno, no partial file left. */
int cc_copy_create(const char *path, const uint8_t *data, size_t len, uint64_t *written);
/* DIR/files/<hash>.zst into BUF. */
void cc_copy_path(char *buf, size_t len, const char *dir, uint64_t hash);
/* Read DIR/files/<hash>.zst, decompress it and check that it is SIZE bytes whose content hash
 * is HASH. 0 with *OUT (the caller frees it) and *STORED (the copy's compressed bytes);
 * -ENOENT when the copy is missing, -EBADMSG when it is corrupt, else -errno. */
int cc_copy_read(const char *dir, uint64_t hash, uint64_t size, uint8_t **out, size_t *stored);
/* 1 when the directory DIR holds nothing but a recording's own files (recording, files/ and
 * copies in it), 0 when it holds anything else, -errno when it cannot be read. */
int cc_recdir_only_own(const char *dir);
/* Remove the recording directory DIR: its own files, then DIR itself. -ENOTEMPTY, with nothing
 * removed, when DIR holds anything else. 0 or -errno. */
int cc_recdir_remove(const char *dir);
/* Before a recording: can OUT take one (absent, or a recording holding only its own files)?
 * 0, or -errno with one line for the user in ERR. */
int cc_recdir_check_out(const char *out, char *err, size_t errlen);

#endif
