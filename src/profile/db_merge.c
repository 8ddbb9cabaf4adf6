/* profile/db_merge.c - `spent db DIR merge OTHER...`: summing other databases' epochs into a
 * database, each source whole or not at all and counted once, even across a crash. A source's
 * merged epochs and the new merged-from list are staged in DIR/merge-pending.tmp.PID.X, which
 * one rename makes DIR/merge-pending (the commit point); putting its contents in place is then
 * redone by whoever opens the database for writing next (db_merge_recover) until it is done. */
#include "profile/db.h"
#include "profile/profile_dir_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"
#include "core/outfile.h"

/* "host H created T [id I]" of a database's meta, the key that says it was merged already
 * (databases made before meta had an id: "H T"). */
static int meta_key(const char *db, char *key, size_t len)
{
	char path[PATH_MAX], host[256] = "", id[32] = "", *s;
	uint8_t *data = NULL;
	size_t n;
	long long created = 0;
	int err;

	if ((err = db_file_path(db, "meta", path, sizeof(path))))
		return err;
	if ((err = binio_read_file(path, 4096, &data, &n)))
		return err;
	s = malloc(n + 1);
	if (!s) {
		free(data);
		return -ENOMEM;
	}
	memcpy(s, data, n);
	s[n] = '\0';
	free(data);
	char *h = strstr(s, "\nhost "), *c = strstr(s, "\ncreated "), *i = strstr(s, "\nid ");
	if (h)
		sscanf(h + 6, "%255s", host);
	if (c)
		created = atoll(c + 9);
	if (i)
		sscanf(i + 4, "%31[0-9a-f]", id);
	free(s);
	snprintf(key, len, "%s %lld%s%s", host, created, id[0] ? " " : "", id);
	return 0;
}

static bool merged_before(const char *list, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = list; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && (p[kl] == '\n' || p[kl] == '\0'))
			return true;
	return false;
}

/* Whether DIR has a kallsyms of no identity (plain, or compressed as spent record writes it);
 * its path into PATH when it has. */
static bool has_unidentified_kallsyms(const char *dir, char *path, size_t len)
{
	return (!db_file_path(dir, KALLSYMS_FILE_ZST, path, len) && access(path, F_OK) == 0) ||
	       (!db_file_path(dir, KALLSYMS_FILE_PLAIN, path, len) && access(path, F_OK) == 0);
}

/* The one kernel identity of the profiles PP[0..N), when they have kernel samples of exactly
 * one kernel and it carries a build-id with _text (as `spent record` names the kernel now,
 * like the daemon): *ID. False for none, several, or a build-id alone (older profiles). */
static bool one_kernel_with_text(struct spent_profile *const *pp, size_t n, struct spent_profile_image *id)
{
	size_t seen = 0;
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < spent_profile_nimages(pp[i]); k++) {
			const struct spent_profile_image *im = spent_profile_image_get(pp[i], k);
			if (strcmp(im->path, SPENT_PROFILE_KERNEL_PATH))
				continue;
			if (!kernel_id_has_text(im) ||
			    (seen && (im->id_len != id->id_len || memcmp(im->id, id->id, im->id_len))))
				return false;
			*id = *im;
			seen++;
		}
	return seen > 0;
}

/* Whether an epoch of D has samples of the kernel ID. */
static bool has_kernel(struct spent_profile_dir *d, const struct spent_profile_image *id)
{
	uint32_t *ep = NULL;
	size_t n = 0;
	bool found = false;
	if (spent_profile_dir_epochs(d, &ep, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		struct spent_profile *p = spent_profile_new();
		size_t bad = 0;
		if (p && !spent_profile_dir_read_epoch(d, ep[i], p, NULL, NULL, &bad))
			for (uint32_t k = 0; k < spent_profile_nimages(p) && !found; k++) {
				const struct spent_profile_image *im = spent_profile_image_get(p, k);
				found = !strcmp(im->path, SPENT_PROFILE_KERNEL_PATH) && im->id_len == id->id_len &&
					!memcmp(im->id, id->id, id->id_len);
			}
		spent_profile_free(p);
	}
	free(ep);
	return found;
}

/* Copy the file FROM to TO (DB_FILE_MODE, atomically). */
static int copy_file(const char *from, const char *to)
{
	uint8_t *data = NULL;
	size_t len;
	int err = binio_read_file(from, 1u << 28, &data, &len);
	err = err ? err : binio_write_file_atomic(to, data, len, DB_FILE_MODE);
	free(data);
	return err;
}

/* The symbols of FROM (a recorded profile's kallsyms: what its samples need) as DST's copy of
 * its kernel ID: DST/kallsyms-HEX given the lines it lacks, or made. A new one starts from
 * DST's own kallsyms when DST has samples of that kernel (DST a recorded profile of it: that
 * file named them until now); -EXDEV when the two disagree (moved symbols), nothing left
 * written. */
static int add_identity_kallsyms(struct spent_profile_dir *dst, const char *from,
				 const struct spent_profile_image *id)
{
	const char *db = spent_profile_dir_path(dst);
	char name[128], to[PATH_MAX], own[PATH_MAX];
	int err = kernel_id_kallsyms_name(id, name, sizeof(name));
	err = err ? err : db_file_path(db, name, to, sizeof(to));
	if (err)
		return err;
	if (access(to, F_OK) == 0)
		return kallsyms_file_union(to, from, DB_FILE_MODE);
	if (!has_unidentified_kallsyms(db, own, sizeof(own)) || !has_kernel(dst, id))
		return copy_file(from, to);
	if (!(err = copy_file(own, to)) && (err = kallsyms_file_union(to, from, DB_FILE_MODE)))
		unlink(to);
	return err;
}

/* The kernel symbols SRC keeps that DST lacks, before any count of SRC is in DST:
 * - SRC's kallsyms-HEX (a daemon's, one per kernel identity): copied, or its lines added to
 *   DST's copy of that identity;
 * - the kallsyms (or kallsyms.zst) of a recorded profile (the symbols its samples need): as
 *   DST's kallsyms-HEX of its kernel (PP[0..N)) when that is one kernel named by build-id
 *   and _text, so a profile and a daemon's epochs of one boot are one kernel and each boot
 *   keeps its own symbols; else (profiles and databases from before identities) copied when
 *   DST has no such file or added to DST's (DST's alone named SRC's kernel samples after its
 *   nearest, __pfx_d_path for dd's read_zero), -EXDEV when SRC's were saved under another
 *   boot of the kernel (its symbols moved), nothing written. */
static int copy_kernel_symbols(struct spent_profile_dir *dstd, const char *src, struct spent_profile *const *pp,
			       size_t n)
{
	const char *dst = spent_profile_dir_path(dstd);
	char from[PATH_MAX], to[PATH_MAX], own[PATH_MAX];
	struct spent_profile_image kid;
	struct dirent *de;
	int err = 0;
	bool by_identity = one_kernel_with_text(pp, n, &kid);
	DIR *dh = opendir(src);
	if (!dh)
		return -errno;
	while (!err && (de = readdir(dh)) != NULL) {
		struct stat st;
		bool unidentified = !strcmp(de->d_name, KALLSYMS_FILE_PLAIN) || !strcmp(de->d_name, KALLSYMS_FILE_ZST);
		if ((!kernel_id_is_kallsyms_name(de->d_name) && !unidentified) ||
		    db_file_path(src, de->d_name, from, sizeof(from)) ||
		    db_file_path(dst, de->d_name, to, sizeof(to)) ||
		    /* never through a symlink: a source's link to another file would be copied out */
		    lstat(from, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (unidentified && by_identity)
			err = add_identity_kallsyms(dstd, from, &kid);
		else if (unidentified && has_unidentified_kallsyms(dst, own, sizeof(own)))
			err = kallsyms_file_union(own, from, DB_FILE_MODE);
		else if (access(to, F_OK) == 0)	/* the same identity's (or DST's own kallsyms) */
			err = unidentified ? 0 : kallsyms_file_union(to, from, DB_FILE_MODE);
		else
			err = copy_file(from, to);
	}
	closedir(dh);
	return err;
}

/* Remove a merge's staging directory DIR (its epoch copies and files) or, from a merge of
 * before the staging directory, one epoch's copy. */
static int remove_stage(const char *dir)
{
	char p[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dh = opendir(dir);
	while (dh && (de = readdir(dh)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p) || lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			outdir_remove_flat(p);
		else
			unlink(p);
	}
	if (dh)
		closedir(dh);
	return rmdir(dir) < 0 ? -errno : 0;
}

/* A rename into or out of DIR survives a power loss once DIR is synced. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* A copy of epoch directory FROM in the new directory TO: hard links to its files, which is
 * a snapshot since every file of an epoch is replaced by rename, never written in place. An
 * entry that is not a regular file (spent writes none) is named through WARN and refused
 * (-ENOTRECOVERABLE): the copy could not carry it. */
static int link_epoch_copy(const char *from, const char *to, spent_profile_warn_fn warn, void *ctx)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *dh = opendir(from);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(dh)) != NULL) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(a, sizeof(a), "%s/%s", from, de->d_name) >= (int)sizeof(a) ||
		    snprintf(b, sizeof(b), "%s/%s", to, de->d_name) >= (int)sizeof(b))
			err = -ENAMETOOLONG;
		else if (lstat(a, &st) < 0)
			err = -errno;
		else if (!S_ISREG(st.st_mode)) {
			if (warn)
				warn(ctx, a, "not a file spent writes (a directory, link or device)");
			err = -ENOTRECOVERABLE;
		}
		else if (link(a, b) < 0)
			err = -errno;
	}
	closedir(dh);
	return err;
}

/* A staged epoch is named "epoch-NNNN@INO": the epoch it replaces and the inode of its own
 * directory. Once exchanged with the epoch in place, the name holds the old epoch, whose
 * inode differs: that is how a second try knows the exchange was done. This parses such a
 * name (the epoch's directory name into EPOCH); false for any other. */
static bool parse_staged_name(const char *name, char *epoch, size_t len, ino_t *ino)
{
	const char *at = strchr(name, '@');
	size_t el = at ? (size_t)(at - name) : 0;
	if (!at || el < 7 || el >= len || strncmp(name, "epoch-", 6) || at[1] < '0' || at[1] > '9')
		return false;
	for (const char *p = name + 6; p < at; p++)
		if (*p < '0' || *p > '9')
			return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(at + 1, &end, 10);
	if (*end || errno)
		return false;
	memcpy(epoch, name, el);
	epoch[el] = '\0';
	*ino = (ino_t)v;
	return true;
}

/* The merged copy of epoch EPOCH of DST, staged in STAGE as "epoch-NNNN@INO": DST's files
 * linked (a snapshot, since every file of an epoch is replaced by rename) and P added. */
static int stage_epoch(struct spent_profile_dir *dst, const char *stage, uint32_t epoch,
		       const struct spent_profile *p, spent_profile_warn_fn warn, void *ctx)
{
	char final[PATH_MAX], tmp[PATH_MAX], named[PATH_MAX];
	struct stat st;
	int err = profile_dir_epoch_path(dst, epoch, final, sizeof(final));
	if (!err && snprintf(tmp, sizeof(tmp), "%s/%s", stage, strrchr(final, '/') + 1) >= (int)sizeof(tmp))
		err = -ENAMETOOLONG;
	if (!err && (mkdir(tmp, dst->dir_mode) < 0 || chmod(tmp, dst->dir_mode) < 0))
		err = -errno;
	err = err ? err : link_epoch_copy(final, tmp, warn, ctx);
	err = err ? err : profile_dir_write_epoch_at(dst, tmp, p, warn, ctx);
	if (!err && lstat(tmp, &st) < 0)
		err = -errno;
	if (!err && snprintf(named, sizeof(named), "%s@%ju", tmp, (uintmax_t)st.st_ino) >= (int)sizeof(named))
		err = -ENAMETOOLONG;
	if (!err && rename(tmp, named) < 0)
		err = -errno;
	return err;	/* on an error the caller removes the whole stage */
}

/* The epochs of SRC read whole before anything is written, so a source with a corrupt file
 * is merged not at all (-EUCLEAN) rather than in part, and can be merged again once mended.
 * The merged epochs are staged in the directory STAGE. */
static int merge_one(struct spent_profile_dir *dst, struct spent_profile_dir *src, spent_profile_warn_fn warn,
		     void *ctx, const char *stage)
{
	uint32_t *ep = NULL;
	size_t n = 0, bad = 0;
	struct spent_profile **pp = NULL;
	int err = spent_profile_dir_epochs(src, &ep, &n);

	if (!err && n && !(pp = calloc(n, sizeof(*pp))))
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		size_t s = 0;
		err = (pp[i] = spent_profile_new()) ? spent_profile_dir_read_epoch(src, ep[i], pp[i], warn, ctx, &s)
					       : -ENOMEM;
		bad += s;
	}
	if (!err && bad)
		err = -EUCLEAN;
	/* before the counts: an epoch of DST is never there without its kernel's symbols */
	if (!err)
		err = copy_kernel_symbols(dst, spent_profile_dir_path(src), pp, n);
	for (size_t i = 0; i < n && !err; i++)
		err = stage_epoch(dst, stage, ep[i], pp[i], warn, ctx);
	for (size_t i = 0; pp && i < n; i++)
		spent_profile_free(pp[i]);
	free(pp);
	free(ep);
	return err;
}

/* What became of a staged epoch: still to be put in place (its entry holds its inode), in
 * place (DB/epoch-NNNN holds it; the entry, when there, holds the epoch it replaced), or in
 * place with the replaced copy removed (the entry is gone). */
enum staged_state { STAGED_TO_PLACE, STAGED_PLACED, STAGED_DONE };

/* The state of the staged epoch FROM (its directory's inode INO) that goes in as TO.
 * -ENOTRECOVERABLE when neither holds INO (the database was copied or restored mid-merge:
 * inodes changed, so nothing tells what was done) or FROM is not a directory. */
static int staged_state(const char *from, const char *to, ino_t ino, enum staged_state *state)
{
	struct stat f, t;
	if (lstat(from, &f) < 0) {
		*state = STAGED_DONE;
		return errno == ENOENT ? 0 : -errno;
	}
	if (!S_ISDIR(f.st_mode))
		return -ENOTRECOVERABLE;
	if (f.st_ino == ino) {
		*state = STAGED_TO_PLACE;
		return 0;
	}
	if (lstat(to, &t) == 0 && S_ISDIR(t.st_mode) && t.st_ino == ino && t.st_dev == f.st_dev) {
		*state = STAGED_PLACED;
		return 0;
	}
	return -ENOTRECOVERABLE;
}

/* Put the staged epoch FROM in as TO (the epoch there exchanged out, then removed; on a file
 * system without an exchange it moves to ASIDE first: a crash between the two renames leaves
 * FROM to place and no TO, which the next try places). */
static int place_staged_epoch(const char *from, const char *to, const char *aside)
{
	struct stat old;
	if (lstat(to, &old) < 0)
		return errno != ENOENT ? -errno : rename(from, to) < 0 ? -errno : 0;
	if (!S_ISDIR(old.st_mode))
		return S_ISLNK(old.st_mode) ? -ELOOP : -EEXIST;
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) {
		outdir_remove_flat(from);
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (rename(to, aside) < 0 || rename(from, to) < 0)
		return -errno;
	outdir_remove_flat(aside);
	return 0;
}

/* One entry NAME of the pending directory PEND of DB, checked (DO_IT false: nothing changes,
 * an entry spent did not put there is -ENOTEMPTY, one whose state cannot be told
 * -ENOTRECOVERABLE) or carried out (DO_IT true, after every entry checked): a staged epoch
 * put in place once, the epoch it replaced removed. The list (merged-from) and the epochs a
 * file system without an exchange moved aside are the caller's. */
static int pending_entry(const char *db, const char *pend, const char *name, bool do_it)
{
	char from[PATH_MAX], to[PATH_MAX], aside[PATH_MAX], epoch[NAME_MAX + 1];
	struct stat st;
	ino_t ino;
	if (db_file_path(pend, name, from, sizeof(from)))
		return -ENAMETOOLONG;
	if (!strcmp(name, DB_MERGED_NAME) || (!strncmp(name, "old-epoch-", 10) &&
					       strspn(name + 10, "0123456789") == strlen(name + 10))) {
		/* what spent puts there: a file, a directory (never followed through a link) */
		if (lstat(from, &st) < 0 || (name[0] == 'o' ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
			return -ENOTEMPTY;
		return 0;
	}
	if (!parse_staged_name(name, epoch, sizeof(epoch), &ino))
		return -ENOTEMPTY;
	if (db_file_path(db, epoch, to, sizeof(to)) ||
	    snprintf(aside, sizeof(aside), "%s/old-%s", pend, epoch) >= (int)sizeof(aside))
		return -ENAMETOOLONG;
	enum staged_state state;
	int err = staged_state(from, to, ino, &state);
	if (!err && state == STAGED_TO_PLACE && lstat(to, &st) == 0 && !S_ISDIR(st.st_mode))
		err = S_ISLNK(st.st_mode) ? -ELOOP : -EEXIST;	/* never through a link */
	if (err || !do_it || state == STAGED_DONE)
		return err;
	if (state == STAGED_TO_PLACE)
		return place_staged_epoch(from, to, aside);
	outdir_remove_flat(from);	/* the epoch it replaced, a real directory (staged_state) */
	return 0;
}

/* The names in directory DIR, NULL-terminated, in *NAMES (free each and the array). */
static int list_names(const char *dir, char ***names)
{
	size_t n = 0, cap = 0;
	char **v = NULL;
	struct dirent *de;
	int err = 0;
	DIR *dh = opendir(dir);
	if (!dh)
		return -errno;
	while (!err && (de = readdir(dh)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	closedir(dh);
	if (v)
		v[n] = NULL;
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	*names = v;
	return 0;
}

const char *db_merge_recover_strerror(int r)
{
	return r == -ENOTEMPTY ? "it holds files spent did not write" :
	       r == -ENOTRECOVERABLE ? "its staged epochs are neither where the merge left them nor in "
				       "place (was the database copied mid-merge?): finish it where it "
				       "was made, or move it away" :
	       r == -EBUSY ? "a daemon or another merge is writing the database" : strerror(-r);
}

/* db_merge_recover with DB's lock held. Every entry of DB/merge-pending is checked before
 * anything changes: one spent did not put there, or a staged epoch whose state cannot be
 * told, leaves it all as it is. */
static int recover_locked(const char *db)
{
	char pend[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	char **names = NULL;
	struct stat st;
	int err = db_file_path(db, DB_MERGE_PENDING_NAME, pend, sizeof(pend));
	if (err)
		return err;
	/* the stages of merges killed before their commit point (nothing of them is in place),
	 * and the epoch copies of merges from before the stage */
	outfile_clean_stale(db, NULL, remove_stage);
	if (lstat(pend, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
	if ((err = list_names(pend, &names)))
		return err;
	bool has_list = false;
	for (size_t i = 0; names && names[i] && !err; i++) {
		err = pending_entry(db, pend, names[i], false);
		has_list |= !strcmp(names[i], DB_MERGED_NAME);
	}
	for (size_t i = 0; names && names[i] && !err; i++)
		err = pending_entry(db, pend, names[i], true);
	/* the list after the epochs, as without a crash (either order would be redone alike) */
	if (!err && has_list && !(err = db_file_path(pend, DB_MERGED_NAME, from, sizeof(from))) &&
	    !(err = db_file_path(db, DB_MERGED_NAME, to, sizeof(to))) && rename(from, to) < 0)
		err = -errno;
	err = err ? err : sync_dir(db);
	/* the epochs a file system without an exchange moved aside (real directories: checked) */
	for (size_t i = 0; names && names[i] && !err; i++)
		if (!strncmp(names[i], "old-epoch-", 10) && !db_file_path(pend, names[i], from, sizeof(from)))
			outdir_remove_flat(from);
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	if (!err && rmdir(pend) < 0)
		err = -errno;
	return err;
}

/* True when A and B name one directory. */
static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Merge SRC (its key KEY) into DST, and LIST (DST's merged-from with KEY appended, LEN
 * bytes) with it: staged whole, committed by one rename, then put in place. */
static int merge_committed(struct spent_profile_dir *dst, struct spent_profile_dir *src, const uint8_t *list,
			   size_t len, spent_profile_warn_fn warn, void *ctx)
{
	const char *db = spent_profile_dir_path(dst);
	char pend[PATH_MAX], stage[PATH_MAX], lpath[PATH_MAX];
	int err = db_file_path(db, DB_MERGE_PENDING_NAME, pend, sizeof(pend));
	if (err || (err = outdir_make_temp(pend, dst->dir_mode, stage, sizeof(stage))))
		return err;
	err = merge_one(dst, src, warn, ctx, stage);
	err = err ? err : db_file_path(stage, DB_MERGED_NAME, lpath, sizeof(lpath));
	err = err ? err : binio_write_file_atomic(lpath, list, len, DB_FILE_MODE);
	err = err ? err : sync_dir(stage);
	if (!err && rename(stage, pend) < 0)
		err = -errno;
	if (err) {
		remove_stage(stage);
		return err;
	}
	/* committed: should putting it in place fail, the next merge or daemon start finishes
	 * it (-EINPROGRESS: merged, not yet all in place) */
	return recover_locked(db) ? -EINPROGRESS : 0;
}

/* An exclusive flock on DST's directory for the merge (a daemon holds one while it runs):
 * the fd, or -EBUSY when a daemon or another merge writes DST. */
static int lock_db(const char *db)
{
	int fd = open(db, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return err;
	}
	return fd;
}

int db_lock_for_change(const char *db, int *lock)
{
	*lock = -1;
	int fd = lock_db(db);
	if (fd == -EBUSY)
		return db_lock_file_held(db) ? 0 : -EBUSY;
	if (fd < 0)
		return fd;
	int err = recover_locked(db);
	if (err) {
		close(fd);
		return err;
	}
	*lock = fd;
	return 0;
}

int db_merge_recover(const char *db, bool locked)
{
	int lock = locked ? -1 : lock_db(db);
	if (lock < 0 && !locked)
		return lock;
	int err = recover_locked(db);
	if (lock >= 0)
		close(lock);
	return err;
}

int db_merge(struct spent_profile_dir *dst, const char *const *srcs, size_t n, spent_profile_warn_fn warn,
	     void *ctx, size_t *skipped)
{
	const char *db = spent_profile_dir_path(dst);
	char listpath[PATH_MAX], key[300], self[300];
	uint8_t *list = NULL;
	size_t llen = 0;
	struct binbuf nb;
	int err, lock;

	*skipped = 0;
	if ((err = db_file_path(db, DB_MERGED_NAME, listpath, sizeof(listpath))) ||
	    (err = meta_key(db, self, sizeof(self))))
		return err;
	if ((lock = lock_db(db)) < 0)
		return lock;
	binbuf_init(&nb);
	/* a merge a crash interrupted goes in first: the list read next must include it */
	err = recover_locked(db);
	err = err ? err : binio_read_file(listpath, 1 << 20, &list, &llen);
	if (err == -ENOENT)
		err = 0;
	err = err ? err : binbuf_put(&nb, list ? list : (const uint8_t *)"", llen);
	err = err ? err : binbuf_put_u8(&nb, 0);
	nb.len = llen;	/* keep a terminator after the old list while appending */
	for (size_t i = 0; i < n && !err; i++) {
		struct spent_profile_dir *src = NULL;
		if ((err = spent_profile_dir_open(srcs[i], &src)))
			break;
		err = meta_key(srcs[i], key, sizeof(key));
		/* itself, or a copy of itself (the same meta): its counts would double */
		if (!err && (same_dir(srcs[i], db) || !strcmp(key, self))) {
			err = -EINVAL;
		} else if (!err && merged_before((const char *)nb.data, key)) {
			(*skipped)++;
		} else if (!err) {
			size_t old_len = nb.len;
			err = binbuf_put(&nb, key, strlen(key));
			err = err ? err : binbuf_put_u8(&nb, '\n');
			err = err ? err : binbuf_put_u8(&nb, 0);
			nb.len--;
			err = err ? err : merge_committed(dst, src, nb.data, nb.len, warn, ctx);
			if (err)
				nb.len = old_len;
		}
		spent_profile_dir_close(src);
	}
	free(list);
	binbuf_release(&nb);
	close(lock);
	return err;
}
