/* shim/shim_format.h - the Shim sample file written by `spent shim -o FILE`: the run's
 * summary, each signal's results (rate summaries, tag histograms with symbols) and the
 * bounded log of the last samples. Little-endian; "uvarint"/"svarint" are LEB128 (core/binio).
 *
 *   offset 0   8 bytes  magic "SPNTSHIM"
 *   offset 8   le32     version (2; readers also accept 1)
 *   offset 12  le32     flags: bit 0 = the eBPF thread channel was active (thread words valid)
 *   then:
 *     uvarint  tsc_hz            clock ticks per second (rdtscp), calibrated on CLOCK_MONOTONIC
 *     svarint  observer_cpu, app_cpu
 *     svarint  exit_status       the command's exit code, or 128 + signal number
 *     svarint  pid               the observed process (its samples carry it as tgid)
 *     uvarint  period_req_ns     --period-ns (0 = flat out)
 *     le64     ratio_lo, ratio_hi  the rate filter bounds (IEEE-754 double bits)
 *     uvarint  samples           observer loop iterations
 *     uvarint  samples_app       ... while the app CPU ran the observed process (these
 *                                feed the tag histograms)
 *     uvarint  samples_other     ... while it ran something else or idled
 *     uvarint  samples_gap       version 2 only (0 in version 1): ... with the app on its CPU
 *                                but a context switch on the app or observer CPU within the
 *                                sample; excluded from the histograms like samples_other
 *     uvarint  app_ns            version 2 only (0 in version 1): how long the histograms
 *                                watched the app (between consecutive app samples with no
 *                                context switch in between, summed)
 *     uvarint  first_tsc, last_tsc  clock at the first sample's start, last sample's end
 *     str      note              uvarint length (<= 1024) + bytes, no NUL: a caveat or ""
 *     uvarint  ncounters (<= 8), ntags (<= 8)
 *     (kept: rate samples whose clock intervals agree within [ratio_lo, ratio_hi]; dropped: the
 *      rest; offcpu: samples spanning a context switch on the app CPU or the observer's,
 *      not rated)
 *     per signal, counters first then tags:
 *       u8       kind            1 counter, 2 rate (counters); 3 tag (tags)
 *       u8       source          1 memory load, 2 perf event read
 *       str      name (<= 31), symbol (<= 255), image (<= 4096)
 *       uvarint  addr            run-time address loaded (0 for events)
 *       counters: uvarint first_value, last_value, kept, dropped, offcpu, nrates
 *                 le64 rate_min, rate_median, rate_max (events per second, double bits)
 *       tags:     uvarint overflow, nrows; per row: uvarint value, uvarint samples,
 *                 str symbol ("" when the value is not inside a known symbol)
 *     uvarint  nlog              logged samples, oldest first, each of
 *                                W = 3 + ncounters + ntags le64 words:
 *                                start clock, end clock, thread ((tgid << 32) | tid, 0 =
 *                                idle or unknown; version 2: bit 63 set when a context
 *                                switch happened within the sample, which is then not in
 *                                the histograms), counter values, tag values
 *     le64 * nlog * W
 *   le32 crc32 (zlib polynomial) of every byte before it
 *
 * Readers check the magic, the version, the checksum, every count against the bytes left,
 * and that the body ends exactly at the checksum.
 */
#ifndef SPENT_SHIM_FORMAT_H
#define SPENT_SHIM_FORMAT_H

#include <stddef.h>

#include "shim/shim.h"

#define SHIM_FILE_MAGIC "SPNTSHIM"
#define SHIM_FILE_VERSION 2
#define SHIM_FILE_FLAG_SCHED 1u
#define SHIM_FILE_MAX_BYTES (4ULL << 30)

/* Serialise R and write PATH atomically (nothing is left behind on error); 0 or -errno. */
int shim_file_write(const char *path, const struct shim_result *r);
/* Parse LEN bytes into a new result (caller frees with shim_result_free). -EBADMSG corrupt or
 * truncated, -EPROTO an unknown version, -ENOMEM. */
int shim_file_parse(const void *data, size_t len, struct shim_result **out);
/* Read and parse PATH; same errors plus those of open/read. */
int shim_file_read(const char *path, struct shim_result **out);

#endif
