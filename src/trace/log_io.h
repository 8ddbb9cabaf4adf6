/* trace/log_io.h - reading and writing `spent trace` log files (format: trace/log_format.h):
 * the block writer used by the recorder and by test generators, the validating block/record
 * reader, and the trace-source entry points registered in source_formats.c. */
#ifndef SPENT_TRACE_LOG_IO_H
#define SPENT_TRACE_LOG_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spent/trace.h"
#include "trace/log_format.h"

/* ---- writer ---- */
struct log_writer;

/* Start writing PATH atomically (core/outfile.h: a temporary in the same directory, mode
 * 0600, renamed by log_writer_commit). FLAGS: enum log_file_flag. 0 or -errno. */
int log_writer_new(const char *path, uint32_t flags, uint64_t max_insns, struct log_writer **out);
/* Append one whole record: TYPE and LEN payload bytes (padding is added). 0 or -errno. */
int log_writer_add(struct log_writer *w, uint32_t type, const void *payload, uint32_t len);
/* Commit with LOG_F_INCOMPLETE set in the header: the recording was cut short. */
void log_writer_mark_incomplete(struct log_writer *w);
/* Append the END record, flush, fsync and rename into place. 0 or -errno; either way the
 * writer is still freed with log_writer_free. */
int log_writer_commit(struct log_writer *w);
/* The LZ4 acceleration for the block after one of RAW_LEN bytes that compressed to COMP_LEN:
 * LOG_LZ4_ACCEL_POOR below a ratio of LOG_LZ4_POOR_TENTHS / 10 (data addresses: LZ4 finds
 * little to match there and its faster setting gives up sooner), 1 otherwise and after
 * blocks under half full. */
#define LOG_LZ4_ACCEL_POOR 64
#define LOG_LZ4_POOR_TENTHS 25
int log_block_accel(size_t raw_len, size_t comp_len);
/* Bytes written to the file so far. */
uint64_t log_writer_bytes(const struct log_writer *w);
/* Copies of the CODE payloads a CODE_SAME record may name (log_format.h: each CODE record, in
 * log order, whose payload still fits in LOG_CODE_SAME_MAX_BYTES with those kept before it).
 * The recorder and the readers keep them with the same function, so they agree on the rule. */
struct log_code_copies {
	uint8_t *bytes;
	size_t n, cap;
};
/* The next CODE record's payload P (LEN bytes): *OFF its copy's offset in K->bytes, or
 * UINT64_MAX when it does not fit (not kept, not an error). 0 or -ENOMEM. */
int log_code_copies_add(struct log_code_copies *k, const uint8_t *p, uint32_t len, uint64_t *off);
/* Free; removes the temporary file unless committed. Accepts NULL. */
void log_writer_free(struct log_writer *w);

/* ---- reader ---- */
struct log_reader;

struct log_record {
	uint32_t type;		/* enum log_rec_type */
	uint32_t len;		/* payload bytes */
	const uint8_t *payload;	/* valid until the next log_reader_next() */
	uint64_t block_offset;	/* file offset of the block holding it */
};

/* Read DATA (LEN bytes, not copied: must outlive the reader) as a log. 0 or -errno with a
 * message in ERR. */
int log_reader_new_mem(const uint8_t *data, size_t len, struct log_reader **out, char *err,
		       size_t errlen);
/* Map PATH and read it. */
int log_reader_new_file(const char *path, struct log_reader **out, char *err, size_t errlen);
/* 1 with a record, 0 after the END record, -errno on a truncated or corrupt log (message in
 * log_reader_error(); every record of every complete block before it was returned). */
int log_reader_next(struct log_reader *r, struct log_record *rec);
const char *log_reader_error(const struct log_reader *r);
uint32_t log_reader_flags(const struct log_reader *r);
uint32_t log_reader_version(const struct log_reader *r);
uint64_t log_reader_max_insns(const struct log_reader *r);
uint64_t log_reader_size(const struct log_reader *r);
/* Bytes of the log consumed so far: every block handed out up to the current one. */
uint64_t log_reader_pos(const struct log_reader *r);
void log_reader_free(struct log_reader *r);

/* ---- collector (log_collect.c): the tool's FIFO frames into log streams ---- */
struct log_collector;
struct log_collect_totals {
	uint64_t records, data, streams;
	uint64_t instructions;	/* the tree's, from the tools' progress notes (a lower bound) */
	/* after log_collector_finish: streams that ended without their EXIT record (a process
	 * killed by SIGKILL, an exec valgrind could not start), and the pid of the first */
	uint64_t unended;
	uint32_t unended_pid;
};
/* Called with each record before it is written (the recorder fills in image identities). */
typedef void (*log_collect_record_fn)(uint32_t type, uint8_t *payload, uint32_t len);

int log_collector_new(struct log_writer *w, log_collect_record_fn on_record,
		      struct log_collector **out);
/* Accept the tools' shared rings (LOG_PIPE_RING) from files in DIR: 0 or -errno. Without it a
 * ring note is a malformed record. */
int log_collector_set_ring_dir(struct log_collector *c, const char *dir);
/* N bytes read from the FIFO. 0, -EBADMSG on a malformed frame or record (a ring note naming
 * no usable ring file included), or the writer's -errno. */
int log_collector_feed(struct log_collector *c, const uint8_t *b, size_t n);
/* At EOF: -EPIPE when a frame was cut off (frames are written whole). A process's record cut
 * off is dropped: its stream counts as unended (totals), as does one without an EXIT record. */
int log_collector_finish(struct log_collector *c);
/* After the finish: the command PID (its latest stream) died with WAIT_STATUS, as the
 * recorder's wait gave it; when a signal killed it, a REAPED record in its stream says which
 * (the tool's EXIT record cannot). 0 or -errno from the writer. */
int log_collector_add_reaped(struct log_collector *c, uint32_t pid, int wait_status);
/* Whether some process announced an execve a new tool instance follows (LOG_PIPE_EXEC), less
 * than LOG_EXEC_GAP_MAX_NS ago, has sent nothing since, and ALIVE says its pid still runs: the
 * old instance has closed the FIFO and the new one has not opened it yet, so an EOF then is
 * not the end. Bounded in time: a pid can be reused, or be another namespace's. */
#define LOG_EXEC_GAP_MAX_NS 5000000000ull
bool log_collector_awaits(const struct log_collector *c, bool (*alive)(uint32_t pid));
const struct log_collect_totals *log_collector_totals(const struct log_collector *c);
void log_collector_free(struct log_collector *c);

/* ---- images ---- */
/* The identity of the file PATH as the log keeps it: its GNU build-id (first 20 bytes) with
 * *KIND = LOG_IMG_BUILD_ID, else the FNV-64 hash of its content (8 bytes, as profiles and
 * citcat identify files) with *KIND = LOG_IMG_CONTENT_HASH. 0 with *LEN set, or -errno. */
int log_image_identity(const char *path, uint8_t id[20], uint8_t *len, uint32_t *kind);

/* ---- trace source (source_formats.c) ---- */
int trace_log_probe(const char *path);
int trace_log_open_source(const char *path, struct spent_trace_source **out, char *err, size_t errlen);
/* Same over bytes in memory (must outlive the source); for the fuzz target and tests. */
int trace_log_open_mem(const uint8_t *data, size_t len, struct spent_trace_source **out, char *err,
		       size_t errlen);

#endif
