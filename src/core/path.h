/* core/path.h - the file name of a path, as every table and label of spent shows images,
 * programs and source files. */
#ifndef SPENT_CORE_PATH_H
#define SPENT_CORE_PATH_H

#include <string.h>

/* What follows PATH's last '/', or PATH itself (no '/', or one at its end). */
static inline const char *path_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

#endif
