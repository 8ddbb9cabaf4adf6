/* bench/synth_profile.c - a daemon-like profile for bench/record.sh: N distinct sampled
 * offsets spread over the executable code of the images given (as a long-running system-wide
 * database collects), written as a profile directory.   usage: synth_profile OUT N IMAGE... */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/procmaps.h"
#include "spent/profile.h"

int main(int argc, char **argv)
{
	struct image_cache *c;
	struct spent_profile *p = spent_profile_new();
	struct spent_profile_dir *d;
	uint32_t ev;
	if (argc < 4 || !p || image_cache_new(&c) ||
	    spent_profile_event_intern(p, "cpu-clock", 100000, 0, &ev)) {
		fprintf(stderr, "usage: synth_profile OUT N IMAGE...\n");
		return 2;
	}
	long n = atol(argv[2]);
	int nimg = argc - 3;
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < nimg; i++) {
		const struct image_info *info;
		uint32_t img;
		if (image_cache_get(c, argv[3 + i], &info) || !info->nloads ||
		    spent_profile_image_intern(p, &info->id, &img)) {
			fprintf(stderr, "synth_profile: %s: not an ELF image with code\n", argv[3 + i]);
			return 1;
		}
		for (long k = 0; k < n / nimg; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;	/* xorshift: repeatable */
			uint64_t off = info->loads[0].vaddr + x % info->loads[0].filesz;
			if (spent_profile_add(p, img, off, ev, 1 + x % 7))
				return 1;
		}
	}
	int err = spent_profile_dir_create(argv[1], &d);
	if (!err)
		err = spent_profile_dir_write_epoch(d, 0, p, NULL, NULL);
	if (err) {
		fprintf(stderr, "synth_profile: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	spent_profile_dir_close(d);
	spent_profile_free(p);
	image_cache_free(c);
	return 0;
}
