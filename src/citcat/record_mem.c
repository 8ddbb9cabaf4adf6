/* citcat/record_mem.c - what the recorder captures from memory and the file system: tracee
 * memory reads/writes, MEM/MAP records, file identities with content hashes (and the copies of
 * mapped files, through filecache.c and recdir.c), a file mapping's pages that differ from the
 * file (found through /proc/PID/pagemap), and the initial memory image at the exec stop
 * (/proc/PID/maps). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "citcat/filecache.h"
#include "citcat/recdir.h"
#include "citcat/record_int.h"
#include "core/alloc.h"

#define PAGE 4096ULL
#define PAGE_DOWN(x) ((x) & ~(PAGE - 1))
#define PAGE_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))
/* files kept open at once (cc_file_ident.fd); beyond, they are read whole as without the cache */
#define CC_KEPT_FDS_MAX 128

int cc_mem_read(struct cc_tracer *tr, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(tr->memfd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int cc_mem_write(struct cc_tracer *tr, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(tr->memfd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : (n < 0 ? -errno : -EIO);
}

int cc_emit_mem_bytes(struct cc_tracer *tr, uint64_t addr, const uint8_t *p, size_t len)
{
	struct binbuf *b = &tr->w.payload;
	int err = binbuf_put_uvarint(b, addr);
	if (!err)
		err = binbuf_put_uvarint(b, len);
	if (!err)
		err = binbuf_put(b, p, len);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_MEM);
}

static int page_is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		if (v)
			return 0;
	}
	return 1;
}

/* Emit MEM for runs of pages of BUF (mapped at ADDR) selected by WANT (1 = emit); BASE is
 * compared against when not NULL (pages equal to it are skipped), else zero pages skipped. */
static int emit_pages(struct cc_tracer *tr, uint64_t addr, const uint8_t *buf, size_t len,
		      const uint8_t *base, size_t baselen, int skip_same)
{
	size_t run = 0, nrun = 0;
	for (size_t off = 0; ; off += PAGE) {
		int keep = 0;
		if (off < len) {
			size_t n = len - off < PAGE ? len - off : PAGE;
			if (!skip_same) {
				keep = 1;
			} else if (base) {
				uint8_t ref[PAGE];
				memset(ref, 0, sizeof(ref));
				if (off < baselen)
					memcpy(ref, base + off, baselen - off < n ? baselen - off : n);
				keep = memcmp(ref, buf + off, n) != 0;
			} else {
				keep = !page_is_zero(buf + off, n);
			}
		}
		if (keep) {
			if (!nrun)
				run = off;
			nrun++;
			continue;
		}
		if (nrun) {
			size_t end = run + nrun * PAGE > len ? len : run + nrun * PAGE;
			int err = cc_emit_mem_bytes(tr, addr + run, buf + run, end - run);
			if (err)
				return err;
			nrun = 0;
		}
		if (off >= len)
			return 0;
	}
}

int cc_emit_mem(struct cc_tracer *tr, uint64_t addr, uint64_t len, int skip_zero)
{
	const size_t chunk = 1 << 20;
	int err = 0;
	uint8_t *buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	while (len && !err) {
		/* page granular: after a first partial page, chunks stay page aligned */
		size_t head = (addr & (PAGE - 1)) ? PAGE - (addr & (PAGE - 1)) : chunk;
		size_t n = len < head ? len : head;
		if (cc_mem_read(tr, addr, buf, n) == 0) {
			err = emit_pages(tr, addr, buf, n, NULL, 0, skip_zero);
		} else if (n > PAGE) {
			/* read page by page, skipping holes (e.g. pages past a file's end) */
			for (size_t off = 0; off < n && !err; off += PAGE) {
				size_t m = n - off < PAGE ? n - off : PAGE;
				if (cc_mem_read(tr, addr + off, buf, m) == 0)
					err = emit_pages(tr, addr + off, buf, m, NULL, 0, skip_zero);
			}
		}
		addr += n;
		len -= n;
	}
	free(buf);
	return err;
}

/* A "regular file" whose bytes are generated at each read (/proc, /sys and the like: size 0
 * or one page, content varying): never checked or copied, its bytes are recorded as read. */
static int pseudo_file(const char *path)
{
	static const long magics[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, SECURITYFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, BPF_FS_MAGIC,
		EFIVARFS_MAGIC, PSTOREFS_MAGIC,
	};
	struct statfs sf;
	if (statfs(path, &sf) != 0)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(magics); i++)
		if ((long)sf.f_type == magics[i])
			return 1;
	return 0;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
}

static uint64_t ctime_ns(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec;
}

static int same_identity(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       mtime_ns(a) == mtime_ns(b) && ctime_ns(a) == ctime_ns(b);
}

/* The cross-recording cache (filecache.h), found at the first file: NULL when disabled or
 * unusable (a read-only home: recording works as without it). */
static const char *file_cache(struct cc_tracer *tr)
{
	if (!tr->cache_tried) {
		char dir[CC_MAX_PATH];
		tr->cache_tried = 1;
		if (cc_cache_open(dir, sizeof(dir)) == 0)
			tr->cache_dir = strdup(dir);
	}
	return tr->cache_dir;
}

/* The copy of a mapped file (identity ST, content hash HASH) into the recording's files/:
 * linked from the cache (stored there first unless CACHED: the cache had it), else written
 * here. */
static int store_copy(struct cc_tracer *tr, const struct stat *st, uint64_t hash,
		      const uint8_t *content, size_t len, int cached)
{
	const char *cache = file_cache(tr);
	uint64_t bytes = 0;
	int err = -ENOENT;
	if (cache && (cached || cc_cache_store(cache, st, hash, content, len) == 0))
		err = cc_cache_link(cache, tr->dir, hash, &bytes);
	/* no cache, or it failed (full, another file system refusing): as before; a file the
	 * cache had was not read (CONTENT is NULL), so its linking's error stands */
	if (err && content)
		err = cc_copy_write(tr->dir, hash, content, len, &bytes);
	else if (!err)
		tr->cache_hits += cached;
	tr->copies += bytes > 0;
	tr->copy_bytes += bytes;
	return err;
}

static int emit_file(struct cc_tracer *tr, const struct cc_file_ident *f, const char *path,
		     uint64_t hash)
{
	struct binbuf *b = &tr->w.payload;
	int err = binbuf_put_uvarint(b, f->id);
	err = err ? err : binbuf_put_str(b, path);
	err = err ? err : binbuf_put_uvarint(b, f->dev);
	err = err ? err : binbuf_put_uvarint(b, f->ino);
	err = err ? err : binbuf_put_uvarint(b, f->size);
	err = err ? err : binbuf_put_uvarint(b, f->mtime_ns);
	err = err ? err : binbuf_put_le64(b, hash);
	err = err ? err : binbuf_put_uvarint(b, f->flags);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_FILE);
}

int cc_file_register(struct cc_tracer *tr, int fd, const char *path, int mapped, uint64_t *id)
{
	char link[64], real[CC_MAX_PATH];
	const char *at = real;
	struct stat st, after;
	*id = 0;
	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", tr->pid, fd);
		ssize_t n = readlink(link, real, sizeof(real) - 1);
		if (n <= 0 || stat(link, &st) != 0)
			return 0;
		real[n] = 0;
		at = link;
	} else {
		snprintf(real, sizeof(real), "%s", path);
		if (stat(real, &st) != 0)
			return 0;
	}
	if (!S_ISREG(st.st_mode) || real[0] != '/' || pseudo_file(at))
		return 0;
	/* mapped: the replay needs the bytes (a copy, or the path checked); opened: with copies,
	 * the read records hold everything the program got, so nothing is read or checked */
	uint64_t flags = tr->copy_files ? (mapped ? CC_FILE_COPY : 0) : CC_FILE_CHECK;
	for (size_t i = 0; i < tr->nfiles; i++) {
		struct cc_file_ident *f = &tr->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == (uint64_t)st.st_size &&
		    f->mtime_ns == mtime_ns(&st) && (f->flags & flags) == flags) {
			*id = f->id;
			return 0;
		}
	}
	uint8_t *content = NULL;
	size_t clen = (size_t)st.st_size;
	uint64_t hash = 0;
	int cached = 0, keep = -1;
	if (flags) {
		const char *cache = file_cache(tr);
		cached = cache && cc_cache_lookup(cache, &st, &hash);
		/* hash known: keep the file open and read only the pages compared (few) */
		if (cached && tr->kept_fds < CC_KEPT_FDS_MAX &&
		    (keep = open(at, O_RDONLY | O_CLOEXEC)) >= 0 &&
		    (fstat(keep, &after) || !same_identity(&st, &after))) {
			close(keep);
			keep = -1;
		}
	}
	if (flags && keep < 0) {
		if (binio_read_file(at, (size_t)8 << 30, &content, &clen))
			return 0;	/* unreadable: not checkable, data still recorded by content */
		/* written to meanwhile: no stable content to name; recorded by content instead */
		if (stat(at, &after) != 0 || clen != (size_t)st.st_size || !same_identity(&st, &after)) {
			free(content);
			return 0;
		}
		if (!cached)
			hash = binio_fnv64(BINIO_FNV64_INIT, content, clen);
	}
	if (ALLOC_GROW(tr->files, tr->nfiles + 1, tr->capfiles)) {
		free(content);
		if (keep >= 0)
			close(keep);
		return -ENOMEM;
	}
	struct cc_file_ident *f = &tr->files[tr->nfiles++];
	f->id = tr->nfiles;
	f->dev = st.st_dev, f->ino = st.st_ino, f->size = clen, f->mtime_ns = mtime_ns(&st);
	f->ctime_ns = ctime_ns(&st);
	f->flags = flags;
	f->content = content;
	f->content_len = content || keep >= 0 ? clen : 0;
	f->fd = keep;
	tr->kept_fds += keep >= 0;
	int err = 0;
	if (flags & CC_FILE_COPY)
		err = store_copy(tr, &st, hash, content, clen, cached);
	err = err ? err : emit_file(tr, f, real, hash);
	*id = f->id;
	return err;
}

static int emit_map_rec(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot,
			int kind, uint64_t id, uint64_t offset)
{
	struct binbuf *b = &tr->w.payload;
	int err = binbuf_put_uvarint(b, start);
	err = err ? err : binbuf_put_uvarint(b, len);
	err = err ? err : binbuf_put_uvarint(b, prot);
	err = err ? err : binbuf_put_uvarint(b, (uint64_t)kind);
	err = err ? err : binbuf_put_uvarint(b, id);
	err = err ? err : binbuf_put_uvarint(b, offset);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_MAP);
}

int cc_emit_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot, int kind)
{
	return emit_map_rec(tr, start, len, prot, kind, 0, 0);
}

int cc_emit_range(struct cc_tracer *tr, enum cc_rec_kind kind, uint64_t start, uint64_t len)
{
	int err = binbuf_put_uvarint(&tr->w.payload, start);
	err = err ? err : binbuf_put_uvarint(&tr->w.payload, len);
	return err ? err : cc_writer_emit(&tr->w, kind);
}

/* /proc/PID/pagemap bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_FILE (1ULL << 61)	/* a page-cache (or shared) page: not a private copy */

/* Which of the NPAGES pages from START may differ from the file's bytes, one byte each in
 * CHANGED: the private copies (written since the mapping was made: relocations, cpuid sites
 * patched, the kernel zeroing past a segment's end), present or swapped out. A page not
 * present, or present from the page cache, reads as the file's bytes, which the caller read
 * and checked unchanged: comparing those would fault every page of every library in. 0, or
 * -errno when pagemap cannot be read (every page is then compared). */
static int private_pages(struct cc_tracer *tr, uint64_t start, uint64_t npages, uint8_t *changed)
{
	char path[64];
	uint64_t buf[512];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", tr->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = 0;
	for (uint64_t done = 0; done < npages && !err;) {
		uint64_t n = npages - done < 512 ? npages - done : 512;
		ssize_t got = pread(fd, buf, n * 8, (off_t)((start / PAGE + done) * 8));
		if (got != (ssize_t)(n * 8)) {
			err = got < 0 ? -errno : -EIO;
			break;
		}
		for (uint64_t i = 0; i < n; i++)
			changed[done + i] = (buf[i] & PM_SWAPPED) ||
					    ((buf[i] & PM_PRESENT) && !(buf[i] & PM_FILE));
		done += n;
	}
	close(fd);
	return err;
}

/* MEM records for the bytes of [start, start+n) that differ from the file's (BASE, AVAIL
 * bytes of it), reading the process's memory. */
static int emit_file_diff(struct cc_tracer *tr, uint64_t start, uint64_t n, const uint8_t *base,
			  uint64_t avail)
{
	uint8_t *buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	int err;
	if (cc_mem_read(tr, start, buf, n) == 0)
		err = emit_pages(tr, start, buf, n, base, avail, 1);
	else
		err = cc_emit_mem(tr, start, n, 1);	/* unreadable holes: page by page */
	free(buf);
	return err;
}

/* MEM records for the run of N bytes at START (file offset FOFF, AVAIL file bytes from there)
 * of F's mapping that differ from the file, read from F's open file. */
static int emit_file_diff_fd(struct cc_tracer *tr, const struct cc_file_ident *f, uint64_t start,
			     uint64_t n, uint64_t foff, uint64_t avail)
{
	uint64_t m = avail < n ? avail : n;
	uint8_t *base = malloc(m ? m : 1);
	if (!base)
		return -ENOMEM;
	int err = 0;
	for (uint64_t done = 0; done < m && !err;) {
		ssize_t got = pread(f->fd, base + done, m - done, (off_t)(foff + done));
		if (got <= 0)
			err = got < 0 ? -errno : -EIO;
		else
			done += (uint64_t)got;
	}
	/* unreadable now: every byte, whatever the file holds */
	err = err ? cc_emit_mem(tr, start, n, 0) : emit_file_diff(tr, start, n, base, m);
	free(base);
	return err;
}

int cc_emit_file_map(struct cc_tracer *tr, uint64_t start, uint64_t len, uint64_t prot,
		     uint64_t id, uint64_t offset)
{
	struct cc_file_ident *f = &tr->files[id - 1];
	int err = emit_map_rec(tr, start, len, prot, CC_MAP_FILE, id, offset);
	if (err)
		return err;
	/* the part backed by the file: compare the process's bytes with the file's */
	uint64_t avail = offset < f->content_len ? f->content_len - offset : 0;
	uint64_t n = PAGE_UP(avail) < len ? PAGE_UP(avail) : len;
	if (!n)
		return 0;
	struct stat now;
	if (!f->content && (fstat(f->fd, &now) || (uint64_t)now.st_size != f->size ||
			    mtime_ns(&now) != f->mtime_ns || ctime_ns(&now) != f->ctime_ns))
		return cc_emit_mem(tr, start, n, 0);	/* changed since: its bytes as they are */
	uint64_t npages = n / PAGE;
	uint8_t *changed = malloc(npages);
	if (!changed)
		return -ENOMEM;
	if (private_pages(tr, start, npages, changed))
		memset(changed, 1, npages);	/* no pagemap: every page compared */
	/* runs of private pages only */
	for (uint64_t p = 0; p < npages && !err;) {
		if (!changed[p]) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < npages && changed[q])
			q++;
		uint64_t at = p * PAGE, left = avail > at ? avail - at : 0;
		err = f->content ? emit_file_diff(tr, start + at, (q - p) * PAGE, f->content + offset + at,
						  left) :
		      emit_file_diff_fd(tr, f, start + at, (q - p) * PAGE, offset + at, left);
		p = q;
	}
	free(changed);
	return err;
}

void cc_files_release(struct cc_tracer *tr)
{
	for (size_t i = 0; i < tr->nfiles; i++) {
		free(tr->files[i].content);
		if (tr->files[i].fd >= 0)
			close(tr->files[i].fd);
	}
	tr->kept_fds = 0;
	free(tr->files);
	free(tr->cache_dir);
	tr->cache_dir = NULL;
	tr->files = NULL;
	tr->nfiles = tr->capfiles = 0;
}

/* The MXCSR_MASK this CPU's fxsave stores (the recorder runs on the program's CPU): a
 * program's fxsave images hold it, and the simulator's differ where it is not 0xffff. */
static uint32_t cpu_mxcsr_mask(void)
{
	uint8_t area[512] __attribute__((aligned(16))) = { 0 };
	uint32_t mask;
	__asm__ volatile("fxsave64 %0" : "=m"(area));
	memcpy(&mask, area + 28, sizeof(mask));
	return mask;
}

static int emit_meta(struct cc_tracer *tr, char *const *argv)
{
	struct binbuf cmd;
	char cwd[CC_MAX_PATH];
	struct timespec ts;
	binbuf_init(&cmd);
	for (int i = 0; argv[i]; i++) {
		if (i)
			binbuf_put_u8(&cmd, ' ');
		binbuf_put(&cmd, argv[i], strlen(argv[i]));
	}
	binbuf_put_u8(&cmd, 0);
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "?");
	clock_gettime(CLOCK_REALTIME, &ts);
	struct binbuf *b = &tr->w.payload;
	int err = cmd.data ? binbuf_put_str(b, (char *)cmd.data) : -ENOMEM;
	err = err ? err : binbuf_put_str(b, cwd);
	err = err ? err : binbuf_put_uvarint(b, (uint64_t)tr->pid);
	err = err ? err : binbuf_put_uvarint(b, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	err = err ? err : binbuf_put_uvarint(b, (uint64_t)tr->cpuid_mode);
	err = err ? err : binbuf_put_uvarint(b, cpu_mxcsr_mask());
	err = err ? err : cc_writer_emit(&tr->w, CC_REC_META);
	binbuf_release(&cmd);
	return err;
}

int cc_emit_regs(struct cc_tracer *tr, const struct user_regs_struct *regs)
{
	const unsigned long long *v = (const unsigned long long *)regs;
	int err = binbuf_put_uvarint(&tr->w.payload, CC_NREGS);
	for (int i = 0; i < CC_NREGS && !err; i++)
		err = binbuf_put_uvarint(&tr->w.payload, v[i]);
	return err ? err : cc_writer_emit(&tr->w, CC_REC_REGS);
}

uint64_t cc_mapping_end(struct cc_tracer *tr, uint64_t addr)
{
	char mp[64], line[CC_MAX_PATH + 256];
	uint64_t end = 0;
	snprintf(mp, sizeof(mp), "/proc/%d/maps", tr->pid);
	FILE *f = fopen(mp, "re");
	while (f && !end && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && addr >= s && addr < e)
			end = e;
	}
	if (f)
		fclose(f);
	return end;
}

/* One line of /proc/PID/maps into the initial image. */
static int capture_mapping(struct cc_tracer *tr, const char *line)
{
	unsigned long long s, e, off;
	char perms[8], path[CC_MAX_PATH] = "";
	int n = sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off, path);
	if (n < 4)
		return 0;
	uint64_t prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | (perms[2] == 'x' ? 4 : 0);
	if (!strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]"))
		return 0;	/* kernel data the program cannot reach without the vDSO */
	if (path[0] == '/') {
		uint64_t id = 0;
		int err = cc_file_register(tr, -1, path, 1, &id);
		if (err)
			return err;
		if (id)
			return cc_emit_file_map(tr, s, e - s, prot, id, off);
	}
	int kind = !strcmp(path, "[stack]") ? CC_MAP_STACK :
		   !strcmp(path, "[vdso]") ? CC_MAP_VDSO : CC_MAP_ANON;
	int err = cc_emit_map(tr, s, e - s, prot, kind);
	return err ? err : cc_emit_mem(tr, s, e - s, 1);
}

int cc_capture_initial(struct cc_tracer *tr, const struct user_regs_struct *regs, char *const *argv)
{
	char mp[64], line[CC_MAX_PATH + 256];
	int err = emit_meta(tr, argv);
	if (!err)
		err = cc_emit_regs(tr, regs);
	snprintf(mp, sizeof(mp), "/proc/%d/maps", tr->pid);
	FILE *f = err ? NULL : fopen(mp, "re");
	if (!f && !err)
		err = -errno;
	while (!err && fgets(line, sizeof(line), f))
		err = capture_mapping(tr, line);
	if (f)
		fclose(f);
	if (!err)
		err = cc_writer_emit(&tr->w, CC_REC_START);
	return err;
}
