/* bench/profile_detail.c - the cost of detail rows (who and when) at scale: a profile of
 * THREADS threads sampled for SECONDS at 1 kHz each (10 ms buckets, a hot set of call chains
 * with a long tail), timed through spent_profile_add_detail, spent_profile_merge, spent_profile_dir_write_epoch
 * (first write, then a second one that merges with the file), spent_profile_dir_read_epoch; prints
 * rows, bytes of the samples file per row and per sample. Times are the process's CPU time
 * (shared machines: wall time would measure the neighbours). Not a test: numbers.
 *   usage: profile_detail DIR [SECONDS=1000] [THREADS=4]     (DIR must not exist) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "spent/profile.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "profile_detail: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: profile_detail DIR [SECONDS] [THREADS]\n");
		return 2;
	}
	uint64_t secs = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	uint32_t nthreads = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 4;
	struct spent_profile *p = spent_profile_new(), *m = spent_profile_new(), *r = spent_profile_new();
	struct spent_profile_dir *d;
	struct spent_profile_image im[2] = { { .path = (char *)"/usr/bin/app", .id_kind = SPENT_PROFILE_ID_HASH,
					 .id_len = 8 },
				       { .path = (char *)"/lib/libc.so.6", .id_kind = SPENT_PROFILE_ID_HASH,
					 .id_len = 8 } };
	uint32_t img[2], ev, task[64];
	int err;
	if (!p || !m || !r || nthreads == 0 || nthreads > 64)
		return fail("arguments", -EINVAL);
	if ((err = spent_profile_image_intern(p, &im[0], &img[0])) ||
	    (err = spent_profile_image_intern(p, &im[1], &img[1])) ||
	    (err = spent_profile_event_intern(p, "cpu-clock", 1000000, 0, &ev)))
		return fail("setup", err);
	for (uint32_t t = 0; t < nthreads; t++) {
		struct spent_profile_task tk = { .comm = (char *)"app", .pid = 1000, .tid = 1000 + t };
		if ((err = spent_profile_task_intern(p, &tk, &task[t])))
			return fail("task", err);
	}
	/* 1 kHz per thread: a hot set of 8 leaf functions under 3 callers (80%), a tail of 400 */
	const uint64_t t0 = 1700000000000000000ull;
	uint64_t samples = secs * 1000 * nthreads;
	double a = now();
	for (uint64_t ms = 0; ms < secs * 1000; ms++)
		for (uint32_t t = 0; t < nthreads; t++) {
			uint64_t x = next(), leaf = x % 100 < 80 ? x % 8 : 8 + (x >> 8) % 400;
			struct spent_profile_frame f[4] = {
				{ img[leaf % 5 == 4], 0x401000 + 16 * leaf },
				{ img[0], 0x402000 + 32 * ((x >> 20) % 3) },
				{ img[0], 0x403010 },
				{ img[1], 0x29d90 },
			};
			err = spent_profile_add_detail(p, ev, task[t], t0 + ms * 1000000 + t * 17, f, 4, 1);
			if (err)
				return fail("add", err);
		}
	double add_s = now() - a;
	size_t rows = spent_profile_ndetail(p);
	printf("%llu samples (%u threads x %llu s at 1 kHz), %zu rows (10 ms buckets)\n",
	       (unsigned long long)samples, nthreads, (unsigned long long)secs, rows);
	printf("  spent_profile_add_detail   %.3f s  (%.0f ns/sample)\n", add_s, add_s * 1e9 / (double)samples);
	a = now();
	if ((err = spent_profile_merge(m, p)))
		return fail("merge", err);
	double merge_s = now() - a;
	printf("  spent_profile_merge        %.3f s  (%.0f ns/row)\n", merge_s, merge_s * 1e9 / (double)rows);
	spent_profile_extend_span(p, t0, t0 + secs * 1000000000ull);
	if ((err = spent_profile_dir_create(argv[1], &d)))
		return fail(argv[1], err);
	a = now();
	if ((err = spent_profile_dir_write_epoch(d, 0, p, NULL, NULL)))
		return fail("write", err);
	double w1 = now() - a;
	char path[4200];
	struct stat st;
	snprintf(path, sizeof(path), "%s/epoch-0000/samples@cpu-clock-1000000.prof", argv[1]);
	if (stat(path, &st) < 0)
		return fail(path, -errno);
	printf("  write_epoch (new)    %.3f s; samples file %lld bytes: %.2f bytes/row, "
	       "%.3f bytes/sample\n", w1, (long long)st.st_size, (double)st.st_size / (double)rows,
	       (double)st.st_size / (double)samples);
	a = now();
	if ((err = spent_profile_dir_write_epoch(d, 0, p, NULL, NULL)))
		return fail("write again", err);
	printf("  write_epoch (merge)  %.3f s\n", now() - a);
	a = now();
	if ((err = spent_profile_dir_read_epoch(d, 0, r, NULL, NULL, NULL)))
		return fail("read", err);
	size_t read_rows = spent_profile_ndetail(r);
	printf("  read_epoch           %.3f s  (%zu rows)\n", now() - a, read_rows);
	spent_profile_dir_close(d);
	spent_profile_free(p);
	spent_profile_free(m);
	spent_profile_free(r);
	return read_rows == rows ? 0 : 1;
}
