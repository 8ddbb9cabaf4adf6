/* profile/frame_name.c - the display name of a profile frame, shared by every view and
 * export (report tables, folded stacks, pprof, flame graphs): the exact function name, else
 * the nearest symbol + offset, else the image's file name + offset. */
#include <stdio.h>
#include <string.h>

#include "core/symbols.h"
#include "profile/export.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

void profile_frame_name(const struct profile *p, struct symbols *sym,
		       const struct profile_frame *f, char *out, size_t outlen)
{
	if (f->image == PROFILE_NO_IMAGE) {
		snprintf(out, outlen, "[unknown]");
		return;
	}
	const struct profile_image *img = profile_image_get(p, f->image);
	struct sym_info si;
	if (symbols_lookup_name(sym, img, f->offset, &si) == 0 && si.name && si.exact)
		snprintf(out, outlen, "%s", si.name);
	else if (si.name)
		snprintf(out, outlen, "%s+0x%llx", si.name, (unsigned long long)(f->offset - si.start));
	else
		snprintf(out, outlen, "%s+0x%llx", base_name(img->path), (unsigned long long)f->offset);
}
