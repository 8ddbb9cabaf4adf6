/* tests/e2e/rwlock_count.c - an LD_PRELOAD oracle for `spent locks` on programs nobody here
 * wrote: it wraps the pthread_rwlock lock calls and counts, per lock address, the acquisitions
 * that succeeded (return 0) by readers and by writers; a reader's re-take of a lock its thread
 * already holds is no acquisition (spent counts the outer one). At exit it appends
 * "PID ADDR reads writes" lines to the file $RWLOCK_COUNT_OUT. Built by studies_locks.sh:
 *   cc -shared -fPIC -O1 -o rwlock_count.so rwlock_count.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_LOCKS 4096
#define MAX_HELD 64

static struct { void *lock; unsigned long reads, writes; } counts[MAX_LOCKS];
static unsigned n_counts;
static pthread_mutex_t counts_mtx = PTHREAD_MUTEX_INITIALIZER;
/* the read locks this thread holds, with their depth */
static __thread struct { void *lock; unsigned depth; } held[MAX_HELD];

static void count(void *lock, int reader)
{
	pthread_mutex_lock(&counts_mtx);
	unsigned i = 0;
	while (i < n_counts && counts[i].lock != lock)
		i++;
	if (i == n_counts && n_counts < MAX_LOCKS)
		counts[n_counts++].lock = lock;
	if (i < MAX_LOCKS) {
		if (reader)
			counts[i].reads++;
		else
			counts[i].writes++;
	}
	pthread_mutex_unlock(&counts_mtx);
}

/* A read lock taken: counted unless this thread held it already. */
static void read_taken(void *lock)
{
	int free_slot = -1;
	for (int i = 0; i < MAX_HELD; i++) {
		if (held[i].depth && held[i].lock == lock) {
			held[i].depth++;
			return;
		}
		if (!held[i].depth && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		held[free_slot].lock = lock;
		held[free_slot].depth = 1;
	}
	count(lock, 1);
}

typedef int (*lock_fn)(pthread_rwlock_t *);
typedef int (*timed_fn)(pthread_rwlock_t *, const struct timespec *);
static lock_fn next_rdlock, next_tryrdlock, next_wrlock, next_trywrlock, next_unlock;
static timed_fn next_timedrdlock, next_timedwrlock;

/* resolved before main: a wrapper's first call then makes no dlsym of its own (the dynamic
 * linker's locks inside a wrapped call) */
__attribute__((constructor)) static void resolve(void)
{
	next_rdlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	next_tryrdlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
	next_timedrdlock = (timed_fn)dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
	next_wrlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	next_trywrlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
	next_timedwrlock = (timed_fn)dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
	next_unlock = (lock_fn)dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
	if (!next_rdlock || !next_tryrdlock || !next_timedrdlock || !next_wrlock ||
	    !next_trywrlock || !next_timedwrlock || !next_unlock)
		abort();
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	int rc = next_rdlock(l);
	if (!rc)
		read_taken(l);
	return rc;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	int rc = next_tryrdlock(l);
	if (!rc)
		read_taken(l);
	return rc;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	int rc = next_timedrdlock(l, t);
	if (!rc)
		read_taken(l);
	return rc;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	int rc = next_wrlock(l);
	if (!rc)
		count(l, 0);
	return rc;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	int rc = next_trywrlock(l);
	if (!rc)
		count(l, 0);
	return rc;
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	int rc = next_timedwrlock(l, t);
	if (!rc)
		count(l, 0);
	return rc;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	for (int i = 0; i < MAX_HELD; i++)
		if (held[i].depth && held[i].lock == l) {
			held[i].depth--;
			break;
		}
	return next_unlock(l);
}

__attribute__((destructor)) static void write_counts(void)
{
	const char *path = getenv("RWLOCK_COUNT_OUT");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	for (unsigned i = 0; i < n_counts; i++)
		fprintf(f, "%d %p %lu %lu\n", (int)getpid(), counts[i].lock, counts[i].reads,
			counts[i].writes);
	fclose(f);
}
