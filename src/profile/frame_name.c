/* profile/frame_name.c - the display name of a profile frame, shared by every view and
 * export (report tables, folded stacks, pprof, flame graphs): the exact function name, else
 * the nearest symbol + offset, else the image's file name + offset; C++ and Rust names
 * demangled (core/demangle.h). */
#include <stdio.h>
#include <string.h>

#include "core/demangle.h"
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
	char shown[1024];
	int found = symbols_lookup_name(sym, img, f->offset, &si) == 0 && si.name;
	const char *name = found ? demangle_name(si.name, shown, sizeof(shown)) : NULL;
	if (name && si.exact)
		snprintf(out, outlen, "%s", name);
	else if (name)
		snprintf(out, outlen, "%s+0x%llx", name, (unsigned long long)(f->offset - si.start));
	else
		snprintf(out, outlen, "%s+0x%llx", base_name(img->path), (unsigned long long)f->offset);
}
