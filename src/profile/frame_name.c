/* profile/frame_name.c - the display name of a profile frame, shared by every view and
 * export (report tables, folded stacks, pprof, flame graphs): the exact function name, else
 * the nearest symbol + offset, else the image's file name + offset; C++ and Rust names
 * demangled (core/demangle.h); and the labels that tell the kernels of several boots or hosts
 * apart where rows are keyed by image name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/demangle.h"
#include "core/kernel_id.h"
#include "core/path.h"
#include "core/symbols.h"
#include "profile/export.h"
#include "profile/jitmap.h"

void profile_frame_name(const struct spent_profile *p, struct symbols *sym,
		       const struct spent_profile_frame *f, char *out, size_t outlen)
{
	if (f->image == SPENT_PROFILE_NO_IMAGE) {
		snprintf(out, outlen, "[unknown]");
		return;
	}
	const struct spent_profile_image *img = spent_profile_image_get(p, f->image);
	uint64_t jit_start;
	if (jitmap_is_map_path(img->path)) {	/* JIT code: named by the map (offset = address) */
		if (jitmap_lookup(img->path, f->offset, out, outlen, &jit_start))
			snprintf(out, outlen, "[jit]+0x%llx", (unsigned long long)f->offset);
		return;
	}
	struct sym_info si;
	char shown[1024];
	int found = symbols_lookup_name(sym, img, f->offset, &si) == 0 && si.name;
	const char *name = found ? demangle_name(si.name, shown, sizeof(shown)) : NULL;
	if (name && si.exact)
		snprintf(out, outlen, "%s", name);
	else if (name)
		snprintf(out, outlen, "%s+0x%llx", name, (unsigned long long)(f->offset - si.start));
	else
		snprintf(out, outlen, "%s+0x%llx", path_base_name(img->path), (unsigned long long)f->offset);
}

bool profile_image_is_kernel(const struct spent_profile_image *img)
{
	return !strncmp(img->path, "[kernel", 7);
}

/* Not the program itself: the kernel, [vdso], //anon, shared libraries (lib*.so*, ld.so). */
static bool is_program_candidate(const char *path)
{
	const char *b = path_base_name(path);
	return path[0] == '/' && !strstr(b, ".so") && strncmp(path, "//", 2);
}

long profile_main_image(const struct spent_profile *p, const uint32_t *evs, size_t nev)
{
	long best = -1, best_any = -1;
	uint64_t most = 0, most_any = 0;
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		uint64_t n = 0;
		for (size_t e = 0; e < nev; e++) {
			struct spent_profile_count *c = NULL;
			size_t k = 0;
			if (spent_profile_counts(p, i, evs[e], &c, &k) == 0)
				for (size_t j = 0; j < k; j++)
					n += c[j].count;
			free(c);
		}
		if (is_program_candidate(spent_profile_image_get(p, i)->path) && (best < 0 || n > most)) {
			best = i;
			most = n;
		}
		if (best_any < 0 || n > most_any) {
			best_any = i;
			most_any = n;
		}
	}
	return best >= 0 ? best : best_any;
}

/* Whether image IMG of P is a kernel with samples (detail rows may name a kernel that has no
 * counts of its own in this profile: it is not one more kernel to tell apart) */
static bool counted_kernel(const struct spent_profile *p, uint32_t img)
{
	if (!profile_image_is_kernel(spent_profile_image_get(p, img)))
		return false;
	for (uint32_t ev = 0; ev < spent_profile_nevents(p); ev++)
		if (spent_profile_image_total(p, img, ev))
			return true;
	return false;
}

int profile_kernel_labels(const struct spent_profile *p, char ***out)
{
	size_t n = spent_profile_nimages(p), kernels = 0;
	*out = NULL;
	for (uint32_t i = 0; i < n; i++)
		kernels += counted_kernel(p, i);
	if (kernels < 2)
		return 0;
	char **labels = calloc(n, sizeof(char *));
	if (!labels)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct spent_profile_image *im = spent_profile_image_get(p, i);
		char label[128];
		if (!profile_image_is_kernel(im))
			continue;
		kernel_id_label(im, label, sizeof(label));
		if (!(labels[i] = strdup(label))) {
			profile_kernel_labels_free(labels, n);
			return -ENOMEM;
		}
	}
	*out = labels;
	return 0;
}

void profile_kernel_labels_free(char **labels, size_t n)
{
	for (size_t i = 0; labels && i < n; i++)
		free(labels[i]);
	free(labels);
}
