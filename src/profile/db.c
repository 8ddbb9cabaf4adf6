/* profile/db.c - the daemon's profile database as a whole: path safety checks, control
 * socket client, epoch garbage collection, disk usage, the status file's members, removing
 * temporaries a killed writer left. Merging other databases in: profile/db_merge.c. */
#include "profile/db.h"
#include "profile/profile_dir_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"
#include "core/outfile.h"
#include "core/procmaps.h"
#include "profile/export.h"

int db_file_path(const char *db, const char *name, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/%s", db, name);

	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int db_check_path(const char *path, bool create)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno != ENOENT || !create)
			return -errno;
		if (mkdir(path, DB_DIR_MODE) < 0 && errno != EEXIST)
			return -errno;
		if (lstat(path, &st) < 0)
			return -errno;
	}
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != 0)
		return -EPERM;
	/* only its owner (root) can fix the mode; a reader that is not root is then refused by
	 * the permissions themselves, with EACCES where it applies */
	if ((st.st_mode & 07777) != DB_DIR_MODE && geteuid() == st.st_uid &&
	    chmod(path, DB_DIR_MODE) < 0)
		return -errno;
	return 0;
}

int db_open(const char *path, bool create, struct spent_profile_dir **out)
{
	int err;

	*out = NULL;
	if ((err = db_check_path(path, create)))
		return err;
	err = create ? spent_profile_dir_open_or_create(path, out) : spent_profile_dir_open(path, out);
	if (err)
		return err;
	spent_profile_dir_set_modes(*out, DB_DIR_MODE, DB_FILE_MODE);
	(*out)->keep_counts_files = true;
	return 0;
}

bool db_lock_file_held(const char *db)
{
	char path[PATH_MAX];
	if (db_file_path(db, DB_LOCK_NAME, path, sizeof(path)))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);	/* a FIFO: no wait */
	if (fd < 0)
		return false;
	bool held = flock(fd, LOCK_SH | LOCK_NB) < 0;
	close(fd);
	return held;
}

/* A connection to DB's control socket: the fd, or -errno (-ECONNREFUSED / -ENOENT: no daemon,
 * -ETIMEDOUT). */
static int control_connect(const char *db, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (db_file_path(db, DB_SOCKET_NAME, sa.sun_path, sizeof(sa.sun_path)))
		return -ENAMETOOLONG;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a unix connect waits while the daemon's backlog is full (a stalled daemon): within the
	 * same timeout as the reply (it blocked for 44 s) */
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	if (timeout_ms > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		close(fd);
		return err;
	}
	return fd;
}

bool db_control_answers(const char *db, int timeout_ms)
{
	int fd = control_connect(db, timeout_ms);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int db_control(const char *db, const char *cmd, char *reply, size_t len, int timeout_ms)
{
	size_t got = 0;
	int fd, err = 0;

	if (len == 0)
		return -EINVAL;
	reply[0] = '\0';
	if ((fd = control_connect(db, timeout_ms)) < 0)
		return fd;
	/* The daemon answers a refused peer (not root) and closes without reading: the command
	 * then meets a closed socket (EPIPE, never SIGPIPE) and the refusal is still there to read. */
	size_t cl = strlen(cmd);
	if (send(fd, cmd, cl, MSG_NOSIGNAL) != (ssize_t)cl || send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		if (errno != EPIPE && errno != ECONNRESET) {
			err = -errno;
			goto out;
		}
	} else {
		shutdown(fd, SHUT_WR);
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		if (r == 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (r < 0) {
			err = -errno;
			break;
		}
		ssize_t n = read(fd, reply + got, len - 1 - got);
		if (n <= 0) {
			/* a peer that closes without reading what we sent resets the connection after
			 * its reply: that reply is the whole answer */
			err = n < 0 && !(errno == ECONNRESET && got > 0) ? -errno : 0;
			break;
		}
		got += (size_t)n;
		if (got == len - 1)
			break;
	}
	reply[got] = '\0';
out:
	close(fd);
	return err;
}

int db_follow_move(struct spent_profile_dir *d, int dirfd, char *out, size_t len)
{
	char link[64];
	struct stat now, locked;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	ssize_t n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	/* a removed directory reads "PATH (deleted)", which names nothing or another one */
	if (fstat(dirfd, &locked) < 0)
		return -errno;
	if (stat(out, &now) < 0 || now.st_dev != locked.st_dev || now.st_ino != locked.st_ino)
		return -ENOENT;
	char *p = strdup(out);
	if (!p)
		return -ENOMEM;
	free(d->path);
	d->path = p;
	return 0;
}

int db_gc(struct spent_profile_dir *d, unsigned keep, size_t *removed, uint32_t *kept_foreign,
	  uint32_t *not_dir)
{
	uint32_t *ep = NULL;
	size_t n = 0, k = 0;
	int err, foreign = 0;

	*removed = 0;
	*kept_foreign = *not_dir = UINT32_MAX;
	if (keep < 1)
		return -EINVAL;
	if ((err = spent_profile_dir_epochs(d, &ep, &n)))
		return err;
	/* only directories are epochs: a file named like the newest one counted as a kept epoch
	 * and the last real epoch was removed. A symlink loses its link (no data goes); any
	 * other entry is left alone and named. */
	for (size_t i = 0; i < n && !err; i++) {
		struct stat st;
		char path[PATH_MAX];
		if (profile_dir_epoch_is_dir(d, ep[i])) {
			ep[k++] = ep[i];
		} else if (!profile_dir_epoch_path(d, ep[i], path, sizeof(path)) &&
			   lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			err = spent_profile_dir_remove_epoch(d, ep[i]);
		} else if (*not_dir == UINT32_MAX) {
			*not_dir = ep[i];
		}
	}
	n = k;
	for (size_t i = 0; i + keep < n && !err; i++) {
		err = spent_profile_dir_remove_epoch(d, ep[i]);
		if (err == -ENOTEMPTY) {	/* kept; the others still go (a cron gc would
						 * otherwise never free anything again) */
			if (!foreign++)
				*kept_foreign = ep[i];
			err = 0;
		} else if (!err) {
			(*removed)++;
		}
	}
	free(ep);
	return err ? err : foreign ? -ENOTEMPTY : *not_dir != UINT32_MAX ? -ENOTDIR : 0;
}

/* The kallsyms-HEX name of the kernel running here into OUT ("" when it has no identity):
 * its build-id and the _text address /proc/kallsyms shows, as the daemon names its copy. */
static void running_kernel_name(char *out, size_t len)
{
	struct image_info info;
	uint64_t text = kernel_id_running_text();
	out[0] = 0;
	image_describe_kernel(&info);
	if (!text || kernel_id_add_text(&info.id, text) || kernel_id_kallsyms_name(&info.id, out, len))
		out[0] = 0;
}

/* Whether NAME is one of the N names in NAMES (each KALLSYMS_NAME_MAX bytes). */
#define KALLSYMS_NAME_MAX 128
static bool name_listed(const char (*names)[KALLSYMS_NAME_MAX], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int db_gc_kallsyms(struct spent_profile_dir *d, size_t *removed)
{
	char (*used)[KALLSYMS_NAME_MAX] = NULL, path[PATH_MAX];
	size_t nused = 0, cap = 0, n = 0;
	uint32_t *ep = NULL;
	int err = spent_profile_dir_epochs(d, &ep, &n);
	*removed = 0;
	/* the kernels the epochs left have samples of, and the one running here (a daemon's
	 * copy is there before its epoch has kernel samples) */
	for (size_t i = 0; i <= n && !err; i++) {
		struct spent_profile *p = i < n ? spent_profile_new() : NULL;
		if (i < n && !p)
			err = -ENOMEM;
		else if (i < n)
			err = spent_profile_dir_read_epoch(d, ep[i], p, NULL, NULL, NULL);
		for (uint32_t k = 0; p && !err && k < spent_profile_nimages(p); k++) {
			const struct spent_profile_image *im = spent_profile_image_get(p, k);
			if (!profile_image_is_kernel(im))
				continue;
			if (ALLOC_GROW(used, nused + 1, cap))
				err = -ENOMEM;
			else if (kernel_id_kallsyms_name(im, used[nused], KALLSYMS_NAME_MAX) == 0)
				nused++;
		}
		if (i == n && !err && !ALLOC_GROW(used, nused + 1, cap)) {
			running_kernel_name(used[nused], KALLSYMS_NAME_MAX);
			nused += used[nused][0] != 0;
		} else if (i == n && !err) {
			err = -ENOMEM;
		}
		spent_profile_free(p);
	}
	DIR *dh = err ? NULL : opendir(spent_profile_dir_path(d));
	if (!err && !dh)
		err = -errno;
	for (struct dirent *de; dh && !err && (de = readdir(dh));) {
		if (!kernel_id_is_kallsyms_name(de->d_name) || name_listed(used, nused, de->d_name) ||
		    db_file_path(spent_profile_dir_path(d), de->d_name, path, sizeof(path)))
			continue;
		if (unlink(path) == 0)
			(*removed)++;
		else if (errno != ENOENT)
			err = -errno;
	}
	if (dh)
		closedir(dh);
	free(used);
	free(ep);
	return err;
}

/* Stale temporaries in DIR and, DEPTH levels down, in its epoch-* and pid-* directories. */
static void clean_stale_tree(const char *dir, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;

	outfile_clean_stale(dir, NULL, NULL);
	DIR *dh = depth > 0 ? opendir(dir) : NULL;
	while (dh && (de = readdir(dh)) != NULL) {
		if (strncmp(de->d_name, "epoch-", 6) && strncmp(de->d_name, "pid-", 4))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) < (int)sizeof(sub) &&
		    lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			clean_stale_tree(sub, depth - 1);
	}
	if (dh)
		closedir(dh);
}

void db_clean_stale(struct spent_profile_dir *d)
{
	clean_stale_tree(spent_profile_dir_path(d), 2);
}

int db_usage(struct spent_profile_dir *d, struct db_usage *u)
{
	uint32_t *ep = NULL;
	size_t n = 0;
	char dir[PATH_MAX], p[PATH_MAX];
	int err;

	memset(u, 0, sizeof(*u));
	if ((err = spent_profile_dir_epochs(d, &ep, &n)))
		return err;
	u->epochs = n;
	u->current_epoch = n ? ep[n - 1] : 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/epoch-%04u", spent_profile_dir_path(d), ep[i]);
		DIR *dh = opendir(dir);
		struct dirent *de;
		struct stat st;
		while (dh && (de = readdir(dh)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
				continue;
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				u->files++;
				u->bytes += (uint64_t)st.st_size;
			}
		}
		if (dh)
			closedir(dh);
	}
	free(ep);
	return 0;
}

/* Append the UTF-8 encoding of code point CP to VAL (room for VLEN - 1 bytes). */
static void put_utf8(char *val, size_t vlen, size_t *v, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (size_t i = 0; i < n && *v < vlen - 1; i++)
		val[(*v)++] = u[i];
}

/* The 4 hex digits at P as a number, or -1. */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Decode the escape after the backslash at *P into VAL; *P moves to its last character. */
static void unescape(const char **pp, char *val, size_t vlen, size_t *v)
{
	const char *p = *pp;
	long cp;

	switch (*p) {
	case 'b': put_utf8(val, vlen, v, '\b'); break;
	case 'f': put_utf8(val, vlen, v, '\f'); break;
	case 'n': put_utf8(val, vlen, v, '\n'); break;
	case 'r': put_utf8(val, vlen, v, '\r'); break;
	case 't': put_utf8(val, vlen, v, '\t'); break;
	case 'u':
		cp = hex4(p + 1);
		if (cp < 0) {
			put_utf8(val, vlen, v, 0xfffd);
			break;
		}
		p += 4;
		if (cp >= 0xd800 && cp < 0xdc00 && p[1] == '\\' && p[2] == 'u') {
			long lo = hex4(p + 3);
			if (lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
		}
		/* a lone surrogate or NUL cannot be carried: the replacement character */
		put_utf8(val, vlen, v, cp == 0 || (cp >= 0xd800 && cp < 0xe000) ? 0xfffd : (uint32_t)cp);
		break;
	default:	/* \" \\ \/ and anything else: the character itself */
		if (*v < vlen - 1)
			val[(*v)++] = *p;
		break;
	}
	*pp = p;
}

int db_status_next_member(const char **pos, char *key, size_t klen, char *val, size_t vlen,
			  bool *quoted)
{
	const char *p = *pos;
	size_t k = 0, v = 0;

	key[0] = val[0] = '\0';
	*quoted = false;
	if (!p || !*p || *p == '}')
		return 0;
	p = strchr(p, '"');
	if (!p)
		goto end;
	for (p++; *p && *p != '"'; p++)
		if (k < klen - 1)
			key[k++] = *p;
	key[k] = '\0';
	p = strchr(p, ':');
	if (!p)
		goto end;
	p++;
	if (*p == '"') {
		*quoted = true;
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				unescape(&p, val, vlen, &v);
			} else if (v < vlen - 1) {
				val[v++] = *p;
			}
		}
		if (*p)
			p++;
	} else {
		for (; *p && *p != ',' && *p != '}'; p++)
			if (v < vlen - 1)
				val[v++] = *p;
	}
	val[v] = '\0';
	if (*p == ',')
		p++;
	*pos = p;
	return 1;
end:
	*pos = NULL;
	return 0;
}
