/* collect/daemon_kernel.c - copying the running kernel's text symbols into the daemon's
 * database (see daemon_kernel.h): the lines core/symbols reads (types t, T, w, W with an
 * address), so the copy is a fraction of /proc/kallsyms. */
#include "collect/daemon_kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"

/* "ADDR TYPE NAME..." with a non-zero address (zeros: kptr_restrict hides them) and a text type */
static int text_symbol(const char *line)
{
	size_t hex = strspn(line, "0123456789abcdef");
	if (!hex || strspn(line, "0") == hex || line[hex] != ' ' || !line[hex + 1] ||
	    line[hex + 2] != ' ')
		return 0;
	return strchr("tTwW", line[hex + 1]) != NULL;
}

int dkernel_save_kallsyms(const char *db, const char *kallsyms, mode_t mode)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/kallsyms", db);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	FILE *f = fopen(kallsyms, "re");
	if (!f)
		return -errno;
	struct binbuf b;
	char *line = NULL;
	size_t cap = 0, kept = 0;
	ssize_t len;
	int err = 0;
	binbuf_init(&b);
	while (!err && (len = getline(&line, &cap, f)) > 0)
		if (text_symbol(line) && line[len - 1] == '\n' && !(err = binbuf_put(&b, line, (size_t)len)))
			kept++;
	free(line);
	fclose(f);
	if (!err && !kept)
		err = -ENODATA;
	if (!err)
		err = outfile_write(path, b.data, b.len, mode);
	binbuf_release(&b);
	return err;
}
