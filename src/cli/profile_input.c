/* cli/profile_input.c - load a profile directory for the views, with the error lines. */
#include <errno.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_input.h"

static void warn_skip(void *ctx, const char *path, const char *why)
{
	cli_warn("skipping corrupt profile file '%s': %s", path, why);
}

int profile_input_load(const char *dir, struct profile **out, size_t *nskipped)
{
	struct profile_dir *d = NULL;
	struct profile *p = NULL;
	int err = profile_dir_open(dir, &d);
	*nskipped = 0;
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		cli_error("profile '%s' not found: record one with 'spent record -o %s -- CMD'", dir, dir);
		return err;
	case -ENOTDIR:
		cli_error("'%s' is not a directory: give a profile directory written by spent record or spent daemon", dir);
		return err;
	case -EBADMSG:
		cli_error("'%s' is not a spent profile directory (no valid 'meta' file): give the -o directory of spent record", dir);
		return err;
	case -EACCES:
	case -EPERM:
		cli_error("cannot read profile '%s': permission denied (a daemon's database is readable "
			  "by root only)", dir);
		return err;
	case -EPROTONOSUPPORT:
		cli_error("profile '%s' was written by a newer spent (format version): upgrade spent to read it", dir);
		return err;
	default:
		cli_error("cannot open profile '%s': %s", dir, strerror(-err));
		return err;
	}
	p = profile_new();
	err = p ? profile_dir_read_all(d, p, warn_skip, NULL, nskipped) : -ENOMEM;
	profile_dir_close(d);
	if (err) {
		cli_error("cannot read profile '%s': %s", dir, strerror(-err));
		profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}
