/* tests/fuzz/fuzz_citcat_replay.c - libFuzzer target for the citcat replay path: a recording
 * (every frame CRC recomputed, fuzz_util.h) is loaded as `spent citcat replay` loads it (the
 * files it names are checked, the simulator is built from its initial state) and replayed
 * for a bounded number of instructions, so no input can make a run long: the fast path
 * (block counting) for even sizes, the trace-source path (per-instruction sink, data
 * references, events; one batch) for odd ones. The recording lives in a memfd named by its
 * /proc/self/fd path. Never crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "citcat/citcat.h"
#include "citcat/replay_int.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_STEPS 20000	/* instructions of the fast path per input */

static int rec_fd = -1;
static char rec_path[64];

static int write_recording(const uint8_t *data, size_t size)
{
	if (rec_fd < 0) {
		rec_fd = memfd_create("fuzz-recording", MFD_CLOEXEC);
		if (rec_fd < 0)
			return -1;
		snprintf(rec_path, sizeof(rec_path), "/proc/self/fd/%d", rec_fd);
	}
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return -1;
	memcpy(copy, data, size);
	fuzz_fix_citcat_crcs(copy, size);
	int ok = ftruncate(rec_fd, 0) == 0 && pwrite(rec_fd, copy, size, 0) == (ssize_t)size;
	free(copy);
	return ok ? 0 : -1;
}

/* SPENT_FUZZ_VERBOSE=1 says how far each input got (to check that seeds replay). */
static void verbose(const char *what, int rc, const char *msg)
{
	if (getenv("SPENT_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_citcat_replay: %s: %d %s\n", what, rc, msg);
}

static void replay_fast(void)
{
	struct citcat_replay *rp = NULL;
	struct citcat_summary sum;
	char err[512] = "";
	int rc = citcat_replay_new(rec_path, &rp, err, sizeof(err));
	verbose("load", rc, err);
	if (rc)
		return;
	rc = cc_replay_step(rp, REPLAY_STEPS);
	citcat_replay_summary(rp, &sum);
	snprintf(err, sizeof(err), "%llu instructions: %s", (unsigned long long)sum.instructions,
		 rp->err);
	verbose("fast path", rc, err);
	citcat_replay_free(rp);
}

static void replay_source(void)
{
	struct spent_trace_source *src = NULL;
	struct spent_trace_batch b;
	char err[512];
	int rc = citcat_source_new(rec_path, 1, &src, NULL, err, sizeof(err));
	verbose("load", rc, err);
	if (rc)
		return;
	rc = spent_trace_source_next(src, &b);
	snprintf(err, sizeof(err), "%zu instructions: %s", rc > 0 ? b.n_insns : 0,
		 spent_trace_source_error(src));
	verbose("source path", rc, err);
	spent_trace_source_free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (4u << 20) || write_recording(data, size))
		return 0;
	if (size % 2)
		replay_source();
	else
		replay_fast();
	return 0;
}
