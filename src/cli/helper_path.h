/* cli/helper_path.h - finding the files spent runs but does not link: the spent Valgrind tool
 * and the preloaded observer library. */
#ifndef SPENT_CLI_HELPER_PATH_H
#define SPENT_CLI_HELPER_PATH_H

#include <stddef.h>

/* The first of NAMES (paths relative to a helper directory, NULL-terminated; each directory is
 * tried with every name before the next directory) that access(2) allows with MODE, searched
 * in $SPENT_LIB_DIR alone when it is set, else in the running binary's directory (the build
 * tree), the installed directory relative to the binary (an install moved as a whole or staged
 * under DESTDIR), and the installed directory compiled in. 0 with the path in OUT; -ENOENT
 * with OUT holding the directories searched ("A, B, C"), for the error message. */
int helper_find(const char *const names[], int mode, char *out, size_t len);

#endif
