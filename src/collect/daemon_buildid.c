/* collect/daemon_buildid.c - which image identities the daemon has already offered to the
 * build-id cache (a set of 64-bit hashes of identity + path), and the saving itself through
 * core/symbols.h with a short-lived symbols object, so no image stays open in the daemon. */
#include "core/alloc.h"
#include "collect/daemon_buildid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buildid_cache.h"
#include "core/hashtab.h"
#include "core/symbols.h"

struct dbuildid {
	struct hashtab seen;	/* identity hashes already noted (keys only) */
	struct spent_profile_image *queue;	/* noted, not saved yet (paths owned) */
	size_t nqueue, capqueue;
	bool grown;		/* saved since the last prune */
	bool off;		/* the cache is off (SPENT_BUILDID_DIR=off): nothing more to do */
	struct dbuildid_stats st;
};

int dbuildid_new(struct dbuildid **out)
{
	struct dbuildid *b = calloc(1, sizeof(*b));
	if (b)
		b->seen = (struct hashtab)HASHTAB_INIT(uint64_t);
	*out = b;
	return b ? 0 : -ENOMEM;
}

void dbuildid_free(struct dbuildid *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nqueue; i++)
		free(b->queue[i].path);
	free(b->queue);
	hashtab_release(&b->seen);
	free(b);
}

/* FNV-1a over the identity and the path (the same build-id under two paths is one entry in
 * the cache, but asking twice costs only an access()) */
static uint64_t identity_hash(const struct spent_profile_image *img)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = img->id;
	for (uint32_t i = 0; i < img->id_len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	h = (h ^ img->id_kind) * 1099511628211ull;
	for (const char *c = img->path; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h ? h : 1;
}

/* Insert H; true when it was not there yet (or the set cannot grow: then ask again later). */
static bool seen_insert(struct dbuildid *b, uint64_t h)
{
	void *entry;	/* the key is all an entry holds */
	return hashtab_insert(&b->seen, h, &entry) != 0;	/* 1 new, or -ENOMEM */
}

void dbuildid_note(struct dbuildid *b, const struct spent_profile_image *img)
{
	if (!b || b->off || img->id_kind == SPENT_PROFILE_ID_NONE || img->path[0] == '[' ||
	    !seen_insert(b, identity_hash(img)))
		return;
	if (ALLOC_GROW(b->queue, b->nqueue + 1, b->capqueue))
		return;
	struct spent_profile_image *q = &b->queue[b->nqueue];
	*q = *img;
	if ((q->path = strdup(img->path)))
		b->nqueue++;
}

/* The bytes of IMG's cache entry: its symbols and, when saved with them, its lines. */
static uint64_t entry_bytes(const struct spent_profile_image *img)
{
	char symtab[4096], lines[4096];
	struct stat st;
	uint64_t n = 0;
	if (buildid_cache_symtab_path(img, 0, symtab, sizeof(symtab)))
		return 0;
	if (stat(symtab, &st) == 0)
		n += (uint64_t)st.st_size;
	if (buildid_cache_entry_file(symtab, "lines", lines, sizeof(lines)) == 0 && stat(lines, &st) == 0)
		n += (uint64_t)st.st_size;
	return n;
}

/* Child exit codes: saved, nothing to save, the cache is off; else CHILD_ERR + errno. */
enum { CHILD_SAVED, CHILD_NOTHING, CHILD_OFF, CHILD_ERR };

/* What a save in this process gives, as a child exit code. */
static int save_here(const struct spent_profile_image *img)
{
	struct symbols *s = NULL;
	bool saved = false;
	int err = symbols_new(&s);
	if (!err)
		err = symbols_cache_image(s, img, &saved);
	symbols_free(s);
	if (err == -ECANCELED)
		return CHILD_OFF;
	if (err)
		return CHILD_ERR + (-err < 250 ? -err : 250);
	return saved ? CHILD_SAVED : CHILD_NOTHING;
}

/* Save one image's symbols (and lines) now, in a child process: reading an image's DWARF
 * takes tens of MB for a moment, which a child gives back whole (the daemon's RSS stays flat,
 * also under ASan's quarantine), and a crash in libdw on a malformed file costs the child only. */
static void save(struct dbuildid *b, const struct spent_profile_image *img)
{
	int status = 0, code;
	pid_t pid = fork();
	if (pid == 0)
		_exit(save_here(img));	/* _exit: no atexit handlers, no stdio of the daemon's */
	if (pid < 0) {
		code = CHILD_ERR + errno;
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		code = WIFEXITED(status) ? WEXITSTATUS(status) : CHILD_ERR + EIO;
	}
	if (code == CHILD_OFF) {
		b->off = true;
	} else if (code >= CHILD_ERR) {
		b->st.errors++;
		b->st.last_error = -(code - CHILD_ERR);
	} else if (code == CHILD_SAVED) {
		b->st.saved++;
		b->st.bytes += entry_bytes(img);
		b->grown = true;
	}
}

void dbuildid_step(struct dbuildid *b, size_t max)
{
	for (size_t i = 0; b && i < max && b->nqueue; i++) {
		struct spent_profile_image img = b->queue[0];
		memmove(b->queue, b->queue + 1, --b->nqueue * sizeof(*b->queue));
		if (!b->off)
			save(b, &img);
		free(img.path);
	}
	if (b && !b->nqueue)
		dbuildid_prune(b);
}

void dbuildid_prune(struct dbuildid *b)
{
	if (!b || !b->grown)
		return;
	b->grown = false;
	int err = buildid_cache_prune(BUILDID_CACHE_DEFAULT_MAX, NULL, NULL);
	if (err) {
		b->st.errors++;
		b->st.last_error = err;
	}
}

void dbuildid_get_stats(const struct dbuildid *b, struct dbuildid_stats *st)
{
	*st = b ? b->st : (struct dbuildid_stats){ 0 };
	if (b) {
		st->queued = b->nqueue;
		st->off = b->off;
	}
}
