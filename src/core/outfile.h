/* core/outfile.h - the one way spent writes an output (docs/outputs.md): checked before the
 * run, written to a temporary in the same directory (PATH.tmp.PID.XXXXXX, O_EXCL|O_NOFOLLOW,
 * mode 0600), fsynced, closed with its result checked, renamed over PATH; a symlink at PATH is
 * refused, a character device or FIFO (/dev/null) is written in place, a directory output
 * replaces only a directory its caller recognises as its own kind. Temporaries left by a
 * killed run are removed at the next start once their owning pid is dead. */
#ifndef SPENT_CORE_OUTFILE_H
#define SPENT_CORE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* What a user's outputs are created with: perf.data's modes. Profiles, kallsyms copies and
 * logs hold kernel and program addresses, which other local users must not read. */
#define OUTFILE_MODE 0600
#define OUTDIR_MODE 0700

/*
 * Before the run: can PATH be written as a file output? 0 when PATH does not exist (and its
 * directory does and is writable), is a regular file (it will be replaced) or a character
 * device or FIFO (written in place). -ELOOP a symlink, -EISDIR a directory, -EINVAL another
 * kind (block device, socket), -ENOENT / -ENOTDIR / -EACCES / -EROFS for its directory.
 * Also removes the temporaries of PATH that killed runs left (their pid is dead).
 */
int outfile_check(const char *path);

/* The directory and last component of PATH as an output names them: DIR "." when PATH has no
 * slash, trailing slashes ignored; BASE holds NAME_MAX + 1 bytes. 0 or -errno (-EISDIR: PATH
 * ends in "." or "..", -ENOENT: empty, -ENAMETOOLONG). */
int outfile_split_path(const char *path, char *dir, size_t dlen, char *base);

/* One line for a user: why outfile_check / outdir_check / a commit refused (static text). */
const char *outfile_strerror(int err);

struct outfile;

/* Start writing PATH: its temporary is created now (or the device opened). 0 or -errno
 * (the same refusals as outfile_check). */
int outfile_open(const char *path, mode_t mode, struct outfile **out);
/* The descriptor to write to (a seekable file unless PATH is a device or FIFO). */
int outfile_fd(const struct outfile *f);
/* A stdio stream over it (made once, owned by F; NULL when out of memory). */
FILE *outfile_stream(struct outfile *f);
/* Flush, fsync, close (checked), rename over PATH, fsync the directory. Frees F; on any
 * error the temporary is removed and PATH is untouched. 0 or -errno. */
int outfile_commit(struct outfile *f);
/* The first half of outfile_commit: flush, fsync and close (checked), keeping the temporary
 * for a later outfile_commit (the rename) or outfile_abort, so several files can be written
 * in full before any of them replaces its path. On error the temporary is removed (F still
 * wants outfile_abort). 0 or -errno. */
int outfile_prepare(struct outfile *f);
/* Drop what was written: the temporary is removed, PATH untouched. Frees F; NULL is fine. */
void outfile_abort(struct outfile *f);

/* open + write LEN bytes + commit. */
int outfile_write(const char *path, const void *data, size_t len, mode_t mode);
/* open + write LEN bytes + outfile_prepare: *OUT awaits outfile_commit or outfile_abort. */
int outfile_write_prepared(const char *path, const void *data, size_t len, mode_t mode,
			   struct outfile **out);

/* Directory outputs (a profile directory). IS_OWN(path) returns 0 when an existing directory
 * there is of the caller's kind and may be replaced (-errno otherwise). */
typedef int (*outdir_kind_fn)(const char *path);
/* Before the run: 0 when PATH does not exist (its directory is writable) or IS_OWN accepts
 * it; -ELOOP a symlink, -ENOTDIR not a directory, IS_OWN's error. Removes stale temporaries
 * (directories through REMOVE, NULL: files only). */
int outdir_check(const char *path, outdir_kind_fn is_own, outdir_kind_fn remove);
/* Make an empty directory next to PATH (PATH.tmp.PID.XXXXXX) with MODE; its path into TMP. */
int outdir_make_temp(const char *path, mode_t mode, char *tmp, size_t tmplen);
/* Put the directory TMP at PATH. When a directory was there (IS_OWN accepted it just now)
 * the two are exchanged atomically: *REPLACED is set and the old one is at TMP for the
 * caller to remove. 0 or -errno (TMP stays where it was). */
int outdir_commit(const char *tmp, const char *path, outdir_kind_fn is_own, bool *replaced);

/*
 * Remove the temporaries killed runs left in directory DIR: names NAME.tmp.PID.XXXXXX whose
 * PID no longer runs (NAME must equal BASE unless BASE is NULL). Regular files are unlinked,
 * directories given to REMOVE (kept when NULL), nothing is followed. Returns how many were
 * removed, or -errno when DIR cannot be read.
 */
int outfile_clean_stale(const char *dir, const char *base, outdir_kind_fn remove);

/* Remove the flat directory DIR (files only: nothing below it is followed) and what it holds;
 * 0 or rmdir's -errno. */
int outdir_remove_flat(const char *dir);

#endif
