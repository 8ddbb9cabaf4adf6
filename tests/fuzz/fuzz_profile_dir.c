/* tests/fuzz/fuzz_profile_dir.c - libFuzzer target for the walk of a profile directory: the
 * input is a bundle of files (fuzz_util.h: meta, kallsyms.zst or kallsyms, kallsyms-HEX,
 * merged-from, epoch-NNNN/NAME.prof, with every .prof's CRC recomputed so mutations reach the
 * file parser's checks) unpacked into a scratch directory, then read as `spent report` reads
 * it (every epoch; the kernel's samples looked up in the DIR/kallsyms-HEX of their identity,
 * else DIR/kallsyms.zst or DIR/kallsyms, plain or zstd with its decompressed size capped, and
 * the symbols they fall in saved again as `spent record` does) and merged into itself as
 * `spent db DIR merge` does twice (DIR/merged-from makes the second a no-op), then its usage
 * and gc; detail rows are walked and every epoch's span read as `spent db DIR list` reads it.
 * Images other than the kernel are not looked up: their paths would name files of this
 * machine. Never crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/kallsyms_file.h"
#include "core/symbols.h"
#include "fuzz_util.h"
#include "profile/db.h"
#include "spent/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fix_entry(const char *name, uint8_t *d, size_t n)
{
	size_t l = strlen(name);
	if (l > 5 && !strcmp(name + l - 5, ".prof"))
		fuzz_fix_trailing_crc(d, n);
}

static void count_warning(void *ctx, const char *path, const char *why)
{
	(*(size_t *)ctx)++;
	(void)path;
	(void)why;
}

/* Every kernel sample's symbol from ROOT/kallsyms.zst (decompressed, bounded), else
 * ROOT/kallsyms as `spent report` chooses, then the subset saved to another file (compressed)
 * and read back. */
static void kernel_symbols(const struct spent_profile *p, const char *root)
{
	char path[4200], saved[4200];
	struct symbols *sym = NULL;
	struct stat st;
	snprintf(path, sizeof(path), "%s/" KALLSYMS_FILE_ZST, root);
	if (stat(path, &st))
		snprintf(path, sizeof(path), "%s/" KALLSYMS_FILE_PLAIN, root);
	if (stat(path, &st) || !S_ISREG(st.st_mode) || symbols_new(&sym))
		return;	/* without the file the real /proc/kallsyms would be read */
	symbols_set_kallsyms(sym, path);
	symbols_set_kallsyms_dir(sym, root);	/* a daemon's kallsyms-HEX per kernel identity */
	for (uint32_t i = 0; i < spent_profile_nimages(p); i++) {
		const struct spent_profile_image *img = spent_profile_image_get(p, i);
		if (strcmp(img->path, SPENT_PROFILE_KERNEL_PATH))
			continue;
		for (uint32_t e = 0; e < spent_profile_nevents(p); e++) {
			struct spent_profile_count *c = NULL;
			size_t n = 0;
			if (spent_profile_counts(p, i, e, &c, &n))
				continue;
			for (size_t k = 0; k < n && k < 256; k++) {
				struct sym_info si;
				(void)symbols_lookup_name(sym, img, c[k].offset, &si);
			}
			free(c);
		}
	}
	snprintf(saved, sizeof(saved), "%s/kallsyms-saved", root);
	if (!symbols_save_kernel(sym, p, saved)) {
		struct kallsyms_file k;
		if (!kallsyms_file_open(saved, &k))
			kallsyms_file_close(&k);
	}
	symbols_free(sym);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *scratch = fuzz_scratch_dir();
	char root[128];
	struct spent_profile_dir *d = NULL;
	struct spent_profile *p = NULL;
	size_t warnings = 0, skipped = 0;
	if (!scratch || size > (1u << 20))
		return 0;
	snprintf(root, sizeof(root), "%s/p", scratch);
	mkdir(root, 0755);
	fuzz_bundle_unpack(data, size, root, fix_entry);
	if (spent_profile_dir_open(root, &d))
		return 0;
	if ((p = spent_profile_new()) && spent_profile_dir_read_all(d, p, count_warning, &warnings, &skipped) == 0) {
		for (size_t i = 0; i < spent_profile_nstacks(p); i++) {
			uint32_t ev;
			const struct spent_profile_frame *f;
			size_t nf;
			uint64_t cnt;
			spent_profile_stack_get(p, i, &ev, &f, &nf, &cnt);
		}
		for (size_t i = 0; i < spent_profile_ndetail(p); i++) {
			struct spent_profile_detail_row r;
			spent_profile_detail_get(p, i, &r);
			(void)spent_profile_task_get(p, r.task);
		}
		kernel_symbols(p, root);
	}
	spent_profile_free(p);
	uint32_t *ep = NULL;
	size_t nep = 0;
	if (!spent_profile_dir_epochs(d, &ep, &nep))
		for (size_t i = 0; i < nep; i++) {
			uint64_t s, e;
			(void)spent_profile_dir_epoch_span(d, ep[i], &s, &e);
		}
	free(ep);
	struct db_usage u;
	const char *src[1] = { root };
	(void)db_usage(d, &u);
	(void)db_merge(d, src, 1, count_warning, &warnings, &skipped);
	(void)db_merge(d, src, 1, count_warning, &warnings, &skipped);
	uint32_t kept, not_dir;
	(void)db_gc(d, 1, &skipped, &kept, &not_dir);
	spent_profile_dir_close(d);
	return 0;
}
