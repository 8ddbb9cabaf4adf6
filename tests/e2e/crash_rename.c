/* tests/e2e/crash_rename.c - an LD_PRELOAD library the e2e scripts build (cc -shared) to kill
 * the process right after a rename, as a power cut or kill -9 would at that point:
 * SPENT_CRASH_AT=N after the N-th rename of any kind (rename, renameat, renameat2);
 * SPENT_CRASH_AFTER=TEXT after the first rename whose new path ends in TEXT. And, without a
 * kill: SPENT_EXCHANGE_EIO=1 makes every renameat2 RENAME_EXCHANGE fail with EIO. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int calls;

static void after(const char *to)
{
	const char *at = getenv("SPENT_CRASH_AT"), *text = getenv("SPENT_CRASH_AFTER");
	size_t tl = text ? strlen(text) : 0, l = strlen(to);
	++calls;
	if ((at && calls == atoi(at)) || (tl && l >= tl && !strcmp(to + l - tl, text)))
		raise(SIGKILL);
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	int r = real(from, to);
	after(to);
	return r;
}

int renameat(int fdfrom, const char *from, int fdto, const char *to)
{
	int (*real)(int, const char *, int, const char *) =
		(int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	int r = real(fdfrom, from, fdto, to);
	after(to);
	return r;
}

int renameat2(int fdfrom, const char *from, int fdto, const char *to, unsigned flags)
{
	int (*real)(int, const char *, int, const char *, unsigned) =
		(int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
	const char *eio = getenv("SPENT_EXCHANGE_EIO");
	if (eio && *eio == '1' && (flags & RENAME_EXCHANGE)) {
		errno = EIO;
		return -1;
	}
	int r = real(fdfrom, from, fdto, to, flags);
	after(to);
	return r;
}
