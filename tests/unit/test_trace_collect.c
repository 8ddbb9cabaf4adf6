/* test_trace_collect.c - the recorder's FIFO demultiplexer (log_collect.c): frames of several
 * processes interleaved, split at any byte, become one stream per process in the log with
 * PROCESS/STREAM records the reconstructor reads back; a frame cut off at the end is -EPIPE, a
 * record whose process was killed between its frames is dropped (its stream counts as unended),
 * a malformed frame or a record before its process record -EBADMSG. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Feed the FIFO bytes in pieces of STEP; returns finish's result. */
static int collect(const char *path, size_t step, uint64_t *streams)
{
	struct log_writer *w;
	struct log_collector *c;
	assert_int_equal(log_writer_new(path, 0, 0, &w), 0);
	assert_int_equal(log_collector_new(w, NULL, &c), 0);
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
		struct spent_trace_source *src;
		struct spent_trace_batch b;
		char err[256];
		uint32_t pids[8], starts[8];
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
		assert_int_equal(n, 7);
		uint32_t want_pid[] = { 10, 10, 11, 11, 10, 11, 11 };
		uint32_t want_start[] = { 10, 0, 21, 0, 0, 32, 0 };	/* stream*10 + parent */
		for (int i = 0; i < 7; i++) {
			assert_int_equal(pids[i], want_pid[i]);
			assert_int_equal(starts[i], want_start[i]);
		}
	}
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
