/* collect/daemon_kernel.c - the daemon's kernel identity and its copy of the running kernel's
 * text symbols (see daemon_kernel.h): the lines core/symbols reads (types t, T, w, W with an
 * address), so the copy is a fraction of /proc/kallsyms, stored zstd-compressed as a profile's
 * kallsyms.zst is (core/kallsyms_file.c reads either form). */
#include "collect/daemon_kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/binio.h"
#include "core/kallsyms_file.h"
#include "core/kernel_id.h"

/* "ADDR TYPE NAME..." with a non-zero address (zeros: kptr_restrict hides them) and a text type */
static int text_symbol(const char *line)
{
	size_t hex = strspn(line, "0123456789abcdef");
	if (!hex || strspn(line, "0") == hex || line[hex] != ' ' || !line[hex + 1] ||
	    line[hex + 2] != ' ')
		return 0;
	return strchr("tTwW", line[hex + 1]) != NULL;
}

/* The text symbols of KALLSYMS into B and the address of _text into *TEXT (0: not seen). */
static int read_text_symbols(const char *kallsyms, struct binbuf *b, uint64_t *text)
{
	FILE *f = fopen(kallsyms, "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0, kept = 0;
	ssize_t len;
	int err = 0;
	*text = 0;
	while (!err && (len = getline(&line, &cap, f)) > 0) {
		if (!text_symbol(line) || line[len - 1] != '\n')
			continue;
		if (!*text)
			*text = kernel_id_text_address(line);
		if (!(err = binbuf_put(b, line, (size_t)len)))
			kept++;
	}
	free(line);
	fclose(f);
	return !err && !kept ? -ENODATA : err;
}

int dkernel_save_identity(const char *db, const char *kallsyms, mode_t mode, struct spent_profile_image *id)
{
	char name[128], path[PATH_MAX];
	struct binbuf b;
	uint64_t text = 0, have = 0;
	binbuf_init(&b);
	int err = read_text_symbols(kallsyms, &b, &text);
	if (!err && (!text || kernel_id_add_text(id, text)))
		err = -ENOKEY;
	if (!err && !(err = kernel_id_kallsyms_name(id, name, sizeof(name)))) {
		int n = snprintf(path, sizeof(path), "%s/%s", db, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			err = -ENAMETOOLONG;
		else if (access(path, F_OK))
			err = kallsyms_file_write_zst(path, b.data, b.len, mode);
		else if (kallsyms_file_text_size(path, &have) || have < b.len)
			/* the same identity's, but only what a merged recorded profile needed: a
			 * copy as large as every text symbol is complete (a daemon's, or a union
			 * with one), and decompressing it at every start cost 0.3 s */
			err = kallsyms_file_union_text(path, (const char *)b.data, b.len, mode);
	}
	binbuf_release(&b);
	return err;
}
