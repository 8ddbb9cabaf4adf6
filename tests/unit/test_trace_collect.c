/* test_trace_collect.c - the recorder's FIFO demultiplexer (log_collect.c): frames of several
 * processes interleaved, split at any byte, become one stream per process in the log with
 * PROCESS/STREAM records the reconstructor reads back; a frame cut off at the end is -EPIPE, a
 * record whose process was killed between its frames is dropped (its stream counts as unended),
 * a malformed frame or a record before its process record -EBADMSG. Shared rings: records a
 * tool put in its ring file come out as if framed, the ring's space is handed back (and the
 * waiting tool woken), the file is removed; a bad ring note is -EBADMSG. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace/log_io.h"

static uint8_t fifo[1 << 16];
static size_t fifo_len;

/* Append one frame of PID holding record TYPE with LEN payload bytes. */
static void frame(uint32_t pid, uint32_t type, const void *payload, uint32_t len)
{
	struct log_frame f = { .pid = pid, .len = (uint32_t)(sizeof(struct log_rec_hdr) + ((len + 7u) & ~7u)) };
	struct log_rec_hdr h = { .type = (uint8_t)type, .len = len };
	memcpy(fifo + fifo_len, &f, sizeof(f));
	memcpy(fifo + fifo_len + sizeof(f), &h, sizeof(h));
	memset(fifo + fifo_len + sizeof(f) + sizeof(h), 0, (len + 7u) & ~7u);
	memcpy(fifo + fifo_len + sizeof(f) + sizeof(h), payload, len);
	fifo_len += sizeof(f) + f.len;
}

static void process(uint32_t pid, uint32_t ppid, uint32_t flags)
{
	uint8_t b[sizeof(struct log_process) + 8 + 8];
	struct log_process p = { .pid = pid, .ppid = ppid, .flags = flags, .path_len = 2,
				 .argv_len = 3, .argc = 1 };
	memset(b, 0, sizeof(b));
	memcpy(b, &p, sizeof(p));
	memcpy(b + sizeof(p), "/x", 2);
	memcpy(b + sizeof(p) + 8, "/x", 3);
	frame(pid, LOG_REC_PROCESS, b, sizeof(p) + 8 + 3);
}

static void thread_start(uint32_t pid)
{
	struct log_thread t = { .tid = 1 };
	frame(pid, LOG_REC_THREAD_START, &t, sizeof(t));
}

/* Feed the FIFO bytes in pieces of STEP, rings from RING_DIR (NULL: none); returns finish's
 * result. */
static int collect_rings(const char *path, size_t step, uint64_t *streams, const char *ring_dir)
{
	struct log_writer *w;
	struct log_collector *c;
	assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
	assert_int_equal(log_collector_new(w, NULL, &c), 0);
	if (ring_dir)
		assert_int_equal(log_collector_set_ring_dir(c, ring_dir), 0);
	int err = 0;
	for (size_t i = 0; i < fifo_len && !err; i += step)
		err = log_collector_feed(c, fifo + i, fifo_len - i < step ? fifo_len - i : step);
	if (!err)
		err = log_collector_finish(c);
	*streams = log_collector_totals(c)->streams;
	if (!err)
		assert_int_equal(log_writer_commit(w), 0);
	log_collector_free(c);
	log_writer_free(w);
	return err;
}

static int collect(const char *path, size_t step, uint64_t *streams)
{
	return collect_rings(path, step, streams, NULL);
}

/* The pids and stream*10+parent of the first 8 events of the log at PATH; returns how many. */
static int log_events(const char *path, uint32_t *pids, uint32_t *starts)
{
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	char err[256];
	int n = 0, rc;
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	while ((rc = spent_trace_source_next(src, &b)) > 0)
		for (size_t i = 0; i < b.n_events && n < 8; i++) {
			pids[n] = b.events[i].pid;
			starts[n++] = b.events[i].kind == SPENT_TRACE_EV_PROCESS_START ?
				      b.events[i].u.process.stream * 10 + b.events[i].u.process.parent_stream : 0;
		}
	assert_int_equal(rc, 0);
	spent_trace_source_free(src);
	return n;
}

static void test_streams(void **state)
{
	char path[] = "/tmp/spent-test-collect-XXXXXX";
	close(mkstemp(path));
	fifo_len = 0;
	process(10, 1, LOG_PROC_EXEC);	/* the command */
	thread_start(10);
	process(11, 10, LOG_PROC_FORK);
	thread_start(11);
	thread_start(10);	/* back to 10: a STREAM record */
	process(11, 10, LOG_PROC_EXEC);	/* 11 execs: a third stream, same pid */
	thread_start(11);
	for (size_t step = 1; step <= 64; step *= 3) {
		uint64_t streams;
		assert_int_equal(collect(path, step, &streams), 0);
		assert_int_equal(streams, 3);
		uint32_t pids[8], starts[8];
		assert_int_equal(log_events(path, pids, starts), 7);
		uint32_t want_pid[] = { 10, 10, 11, 11, 10, 11, 11 };
		uint32_t want_start[] = { 10, 0, 21, 0, 0, 32, 0 };	/* stream*10 + parent */
		for (int i = 0; i < 7; i++) {
			assert_int_equal(pids[i], want_pid[i]);
			assert_int_equal(starts[i], want_start[i]);
		}
	}
	unlink(path);
}

/* A superblock at KEY of one instruction at KEY (LEN bytes), falling through to KEY + LEN. */
static void code(uint32_t pid, uint64_t key, uint16_t len)
{
	uint8_t b[sizeof(struct log_code) + 2 * sizeof(struct log_op)];
	struct log_code c = { .key = key, .n_ops = 2 };
	struct log_op ops[2] = { { .kind = LOG_OP_IMARK, .size = len, .val = key },
				 { .kind = LOG_OP_END, .val = key + len } };
	memcpy(b, &c, sizeof(c));
	memcpy(b + sizeof(c), ops, sizeof(ops));
	frame(pid, LOG_REC_CODE, b, sizeof(b));
}

/* The log's records of TYPE: their count, and the first 4 CODE_SAME indexes in SAME. */
static int count_records(const char *path, uint32_t type, uint32_t *same)
{
	struct log_reader *rd;
	struct log_record rec;
	char err[256];
	int n = 0, k = 0;
	assert_int_equal(log_reader_new_file(path, &rd, err, sizeof(err)), 0);
	while (log_reader_next(rd, &rec) == 1) {
		n += rec.type == type;
		if (rec.type == LOG_REC_CODE_SAME && k < 4) {
			struct log_code_same s;
			memcpy(&s, rec.payload, sizeof(s));
			same[k++] = s.index;
		}
	}
	log_reader_free(rd);
	return n;
}

/* A superblock described again, byte for byte, by another process (or by the same one after a
 * retranslation) is written once, then as CODE_SAME records naming it; the reconstructor reads
 * them as the description. One that differs in a byte is written whole. */
static void test_repeated_code(void **state)
{
	char path[] = "/tmp/spent-test-collect-XXXXXX";
	uint32_t same[4] = { 0 };
	uint64_t streams;
	close(mkstemp(path));
	fifo_len = 0;
	process(10, 1, LOG_PROC_EXEC);
	code(10, 0x1000, 3);		/* CODE 0 */
	code(10, 0x2000, 2);		/* CODE 1 */
	process(11, 10, LOG_PROC_FORK);
	code(11, 0x2000, 2);		/* = CODE 1 */
	code(11, 0x1000, 4);		/* differs in a byte: CODE 2 */
	code(11, 0x1000, 3);		/* = CODE 0 */
	code(10, 0x2000, 2);		/* = CODE 1, in its own stream again */
	assert_int_equal(collect(path, 7, &streams), 0);
	assert_int_equal(streams, 2);
	assert_int_equal(count_records(path, LOG_REC_CODE, same), 3);
	assert_int_equal(count_records(path, LOG_REC_CODE_SAME, same), 3);
	assert_int_equal(same[0], 1);
	assert_int_equal(same[1], 0);
	assert_int_equal(same[2], 1);
	uint32_t pids[8], starts[8];
	assert_int_equal(log_events(path, pids, starts), 2);	/* it reads back: both processes */

	/* a tool may not send one: it is the recorder's */
	fifo_len = 0;
	process(10, 1, LOG_PROC_EXEC);
	struct log_code_same s = { 0, 0 };
	frame(10, LOG_REC_CODE_SAME, &s, sizeof(s));
	assert_int_equal(collect(path, 64, &streams), -EBADMSG);

	/* a CODE_SAME naming a record the log does not hold is corrupt */
	struct log_writer *w;
	struct spent_trace_source *src;
	struct spent_trace_batch b;
	char err[256];
	assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
	s.index = 0;
	assert_int_equal(log_writer_add(w, LOG_REC_CODE_SAME, &s, sizeof(s)), 0);
	assert_int_equal(log_writer_commit(w), 0);
	log_writer_free(w);
	assert_int_equal(spent_trace_source_open(path, &src, err, sizeof(err)), 0);
	assert_int_equal(spent_trace_source_next(src, &b), -EBADMSG);
	assert_non_null(strstr(spent_trace_source_error(src), "names superblock record 0, which the log does not hold"));
	spent_trace_source_free(src);
	unlink(path);
}

static bool always_alive(uint32_t pid)
{
	(void)pid;
	return true;
}

static void test_errors(void **state)
{
	char path[] = "/tmp/spent-test-collect-XXXXXX";
	uint64_t streams;
	close(mkstemp(path));
	fifo_len = 0;
	process(10, 1, 0);
	thread_start(10);
	fifo_len -= 8;	/* the last record cut off: its frame too */
	assert_int_equal(collect(path, 7, &streams), -EPIPE);
	/* a process killed between the two frames of one record: the part is dropped, the
	 * others' records stand, and it counts as a stream without its exit record */
	fifo_len = 0;
	process(10, 1, 0);
	process(11, 10, LOG_PROC_FORK);
	struct log_exit ex = { .status = 0 };
	frame(10, LOG_REC_EXIT, &ex, sizeof(ex));
	size_t at = fifo_len;
	thread_start(11);
	struct log_frame half;
	memcpy(&half, fifo + at, sizeof(half));
	half.len = sizeof(struct log_rec_hdr);	/* the record's header only */
	memcpy(fifo + at, &half, sizeof(half));
	fifo_len = at + sizeof(half) + half.len;
	{
		struct log_writer *w;
		struct log_collector *c;
		assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
		assert_int_equal(log_collector_new(w, NULL, &c), 0);
		assert_int_equal(log_collector_feed(c, fifo, fifo_len), 0);
		assert_int_equal(log_collector_finish(c), 0);
		assert_int_equal(log_collector_totals(c)->unended, 1);
		assert_int_equal(log_collector_totals(c)->unended_pid, 11);
		log_collector_free(c);
		log_writer_free(w);
	}
	/* an exec into an untraced program (--no-children) ends the stream: not unended; one a
	 * new tool instance follows keeps it open, and the recorder waits across the gap */
	fifo_len = 0;
	process(10, 1, 0);
	struct log_exec_note xn = { .followed = 0 };
	frame(10, LOG_PIPE_EXEC, &xn, sizeof(xn));
	process(11, 10, LOG_PROC_FORK);
	xn.followed = 1;
	frame(11, LOG_PIPE_EXEC, &xn, sizeof(xn));
	{
		struct log_writer *w;
		struct log_collector *c;
		assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
		assert_int_equal(log_collector_new(w, NULL, &c), 0);
		assert_int_equal(log_collector_feed(c, fifo, fifo_len), 0);
		assert_true(log_collector_awaits(c, always_alive));
		assert_int_equal(log_collector_finish(c), 0);
		assert_int_equal(log_collector_totals(c)->unended, 1);	/* 11: no program followed */
		assert_int_equal(log_collector_totals(c)->unended_pid, 11);
		log_collector_free(c);
		log_writer_free(w);
	}
	fifo_len = 0;
	thread_start(10);	/* before its process record */
	assert_int_equal(collect(path, 7, &streams), -EBADMSG);
	fifo_len = 0;
	process(10, 1, 0);
	struct log_frame f = { .pid = 10, .len = LOG_FRAME_MAX };	/* too long for one write */
	memcpy(fifo + fifo_len, &f, sizeof(f));
	fifo_len += sizeof(f) + 16;
	assert_int_equal(collect(path, 64, &streams), -EBADMSG);
	unlink(path);
}

/* Records of the FIFO bytes [FROM, fifo_len) (one record per frame), moved into the ring at
 * data offset OFF: the frames are taken off the FIFO; returns the records' length. */
static uint32_t move_to_ring(uint8_t *ring, size_t from, size_t off)
{
	size_t at = from, n = 0;
	while (at < fifo_len) {
		struct log_frame f;
		memcpy(&f, fifo + at, sizeof(f));
		memcpy(ring + LOG_RING_HDR_BYTES + off + n, fifo + at + sizeof(f), f.len);
		n += f.len;
		at += sizeof(f) + f.len;
	}
	fifo_len = from;
	return (uint32_t)n;
}

static void ring_note(uint32_t pid, const char *name, uint32_t ring_bytes)
{
	uint8_t b[sizeof(struct log_ring_open) + 80];
	struct log_ring_open o = { .ring_bytes = ring_bytes, .name_len = (uint32_t)strlen(name) };
	memcpy(b, &o, sizeof(o));
	memcpy(b + sizeof(o), name, o.name_len);
	frame(pid, LOG_PIPE_RING, b, (uint32_t)sizeof(o) + o.name_len);
}

static void ring_data(uint32_t pid, uint64_t vpos, uint32_t len)
{
	struct log_ring_data d = { .vpos = vpos, .len = len };
	frame(pid, LOG_PIPE_RING_DATA, &d, sizeof(d));
}

/* A ring file NAME in DIR of SIZE bytes, mapped (the collector removes the name). */
static uint8_t *ring_file(const char *dir, const char *name, size_t size)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	uint8_t *m = mmap(NULL, LOG_RING_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	return m;
}

static void test_rings(void **state)
{
	char path[] = "/tmp/spent-test-collect-XXXXXX", dir[] = "/tmp/spent-test-rings-XXXXXX";
	char file[400];
	uint64_t streams;
	close(mkstemp(path));
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/10-0-1", dir);
	for (size_t step = 1; step <= 64; step *= 3) {
		/* pid 10's records in its ring, in two chunks, the second past a wrap; pid 11's
		 * in frames between them */
		uint8_t *ring = ring_file(dir, "10-0-1", LOG_RING_FILE_BYTES);
		struct log_ring_hdr *h = (struct log_ring_hdr *)ring;
		h->waits = 1;	/* the tool waits for room */
		fifo_len = 0;
		ring_note(10, "10-0-1", LOG_RING_BYTES);
		size_t at = fifo_len;
		process(10, 1, LOG_PROC_EXEC);
		thread_start(10);
		uint32_t n1 = move_to_ring(ring, at, 0);
		ring_data(10, 0, n1);
		process(11, 10, LOG_PROC_FORK);
		thread_start(11);
		at = fifo_len;
		thread_start(10);
		struct log_exit ex = { .status = 0 };
		frame(10, LOG_REC_EXIT, &ex, sizeof(ex));
		uint64_t v2 = 2ull * LOG_RING_BYTES + 4096;
		uint32_t n2 = move_to_ring(ring, at, 4096);
		ring_data(10, v2, n2);
		assert_int_equal(collect_rings(path, step, &streams, dir), 0);
		assert_int_equal(streams, 2);
		assert_int_equal(access(file, F_OK), -1);	/* taken: removed */
		assert_int_equal(h->tail, v2 + n2);
		assert_int_equal(h->waits, 0);
		assert_int_equal(h->seq, 1);	/* woken once: it waited once */
		munmap(ring, LOG_RING_FILE_BYTES);
		uint32_t pids[8], starts[8];
		assert_int_equal(log_events(path, pids, starts), 6);
		uint32_t want_pid[] = { 10, 10, 11, 11, 10, 10 };
		uint32_t want_start[] = { 10, 0, 21, 0, 0, 0 };
		for (int i = 0; i < 6; i++) {
			assert_int_equal(pids[i], want_pid[i]);
			assert_int_equal(starts[i], want_start[i]);
		}
	}
	/* bad notes: each is -EBADMSG and leaves no mapping behind. sub/10-0-1 is a good ring
	 * file, but not one the note may name. */
	char sub[300];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0700), 0);

	struct {
		const char *name;	/* of the note; the file is 10-0-1 */
		uint32_t ring_bytes;
		size_t file_size;
		uint64_t vpos;
		uint32_t len, cut;	/* chunk length, bytes of its last record left out */
		bool with_dir, nested;
	} bad[] = {
		{ "10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 0, false, false },	/* no ring directory */
		{ "sub/10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 0, true, false },	/* a path */
		{ "11-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 0, true, false },	/* no such file */
		{ "10-0-1", LOG_RING_BYTES / 2, LOG_RING_FILE_BYTES, 0, 0, 0, true, false },
		{ "10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES - 4096, 0, 0, 0, true, false },
		{ "10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, LOG_RING_BYTES - 8, 16, 0, true, false },
		{ "10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 8, true, false },	/* a record cut */
		{ "10-0-1", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 0, true, true },	/* a note in a chunk */
		{ "", LOG_RING_BYTES, LOG_RING_FILE_BYTES, 0, 0, 0, true, false },	/* data with no ring */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* the records go where the note points, so only the check refuses them */
		bool in_sub = strncmp(bad[i].name, "sub/", 4) == 0;
		uint8_t *ring = ring_file(in_sub ? sub : dir, "10-0-1", bad[i].file_size);
		if (bad[i].nested)
			munmap(ring_file(dir, "10-0-2", LOG_RING_FILE_BYTES), LOG_RING_FILE_BYTES);
		fifo_len = 0;
		if (bad[i].name[0])
			ring_note(10, bad[i].name, bad[i].ring_bytes);
		size_t at = fifo_len;
		process(10, 1, LOG_PROC_EXEC);
		thread_start(10);
		if (bad[i].nested)
			ring_note(10, "10-0-2", LOG_RING_BYTES);
		uint32_t n = move_to_ring(ring, at, bad[i].vpos % LOG_RING_BYTES < LOG_RING_BYTES - 4096 ?
						    bad[i].vpos % LOG_RING_BYTES : 0);
		ring_data(10, bad[i].vpos, bad[i].len ? bad[i].len : n - bad[i].cut);
		assert_int_equal(collect_rings(path, 64, &streams, bad[i].with_dir ? dir : NULL), -EBADMSG);
		munmap(ring, LOG_RING_FILE_BYTES);
		unlink(file);
		snprintf(file, sizeof(file), "%s/10-0-2", dir);
		unlink(file);
		snprintf(file, sizeof(file), "%s/10-0-1", dir);
	}
	snprintf(file, sizeof(file), "%s/10-0-1", sub);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_repeated_code),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_rings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
