/* tests/unit/test_daemon_maps.c - the daemon's process maps: overlapping mmaps split regions,
 * fork copies, exec keeps the old maps until reaped, exited processes live until their drain,
 * late records of an exited process stay with it, a /proc scan finds this very process; each
 * process's name and cgroup: from COMM records, inherited at fork, kept after exit until reaped,
 * read from /proc for this very process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/daemon_maps.h"
#include "core/procmaps.h"

static void map(struct dmaps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		const char *path, uint64_t ino)
{
	struct dmaps_mmap mm = { .pid = pid, .start = start, .len = len, .pgoff = pgoff,
				 .dev = 1, .ino = ino, .prot = PROT_READ | PROT_EXEC, .path = path };
	assert_int_equal(dmaps_mmap(m, &mm), 0);
}

static const char *image_at(struct dmaps *m, pid_t pid, uint64_t pc, uint64_t *off)
{
	uint32_t id;
	uint64_t o;

	if (dmaps_resolve(m, pid, pc, &id, &o))
		return NULL;
	if (off)
		*off = o;
	return dmaps_image(m, id)->path;
}

static void test_overlapping_mmap_splits_region(void **state)
{
	struct dmaps *m;
	uint64_t off;

	assert_int_equal(dmaps_new(&m), 0);
	map(m, 10, 0x1000, 0x9000, 0, "/nonexistent/a", 1);
	map(m, 10, 0x4000, 0x1000, 0x100000, "/nonexistent/b", 2);
	assert_string_equal(image_at(m, 10, 0x1500, &off), "/nonexistent/a");
	assert_int_equal(off, 0x500);
	assert_string_equal(image_at(m, 10, 0x4010, &off), "/nonexistent/b");
	assert_int_equal(off, 0x100010);
	/* the right part of a keeps its file offset */
	assert_string_equal(image_at(m, 10, 0x6000, &off), "/nonexistent/a");
	assert_int_equal(off, 0x5000);
	assert_null(image_at(m, 10, 0xa000, NULL));
	dmaps_free(m);
}

static void test_non_exec_mmap_ignored_and_kernel_pc(void **state)
{
	struct dmaps *m;
	struct dmaps_mmap mm = { .pid = 5, .start = 0x1000, .len = 0x1000, .prot = PROT_READ,
				 .path = "/nonexistent/data" };
	uint32_t id;
	uint64_t off;

	assert_int_equal(dmaps_new(&m), 0);
	assert_int_equal(dmaps_mmap(m, &mm), 0);
	assert_int_equal(dmaps_resolve(m, 5, 0x1800, &id, &off), -ESRCH);
	assert_int_equal(dmaps_resolve(m, 0, 0xffffffff81000010ULL, &id, &off), 0);
	assert_int_equal(id, DIMAGE_KERNEL);
	assert_int_equal(off, 0xffffffff81000010ULL);
	dmaps_free(m);
}

/* perf names anonymous memory "//anon" (ino 0), which starts with '/' like a file: it is
 * anonymous all the same (JIT code), with the address as its offset */
static void test_perf_anon_is_anonymous(void **state)
{
	struct dmaps *m;
	struct dmaps_mmap mm = { .pid = 7, .start = 0x7000, .len = 0x2000, .pgoff = 0x7000,
				 .prot = PROT_READ | PROT_EXEC, .path = "//anon" };
	uint64_t off;

	assert_int_equal(dmaps_new(&m), 0);
	assert_int_equal(dmaps_mmap(m, &mm), 0);
	assert_string_equal(image_at(m, 7, 0x7010, &off), "[anon]");
	map(m, 7, 0x20000, 0x1000, 0, "/nonexistent/lib.so", 3);	/* a file stays a file */
	assert_string_equal(image_at(m, 7, 0x20010, &off), "/nonexistent/lib.so");
	dmaps_free(m);
}

/* the kernel image carries the running kernel's build-id (it had none: id length 0) */
static void test_kernel_image_has_build_id(void **state)
{
	struct dmaps *m;
	struct image_info want = { 0 };

	image_describe_kernel(&want);
	if (!want.id.id_len)
		skip();	/* no /sys/kernel/notes build-id to compare with */
	assert_int_equal(dmaps_new(&m), 0);
	const struct dimage *k = dmaps_image(m, DIMAGE_KERNEL);
	assert_int_equal(k->id_kind, SPENT_PROFILE_ID_BUILDID);
	assert_int_equal(k->id_len, want.id.id_len);
	assert_memory_equal(k->ident, want.id.id, want.id.id_len);
	dmaps_free(m);
}

static void test_fork_exec_exit_reap(void **state)
{
	struct dmaps *m;
	struct dmaps_stats st;

	assert_int_equal(dmaps_new(&m), 0);
	map(m, 100, 0x1000, 0x1000, 0, "/nonexistent/bash", 1);
	assert_int_equal(dmaps_fork(m, 101, 100), 0);
	assert_string_equal(image_at(m, 101, 0x1800, NULL), "/nonexistent/bash");
	/* exec twice within one drain: every earlier image still resolves */
	assert_int_equal(dmaps_exec(m, 101), 0);
	map(m, 101, 0x5000, 0x1000, 0, "/nonexistent/env", 2);
	assert_int_equal(dmaps_exec(m, 101), 0);
	map(m, 101, 0x9000, 0x1000, 0, "/nonexistent/prog", 3);
	assert_string_equal(image_at(m, 101, 0x9800, NULL), "/nonexistent/prog");
	assert_string_equal(image_at(m, 101, 0x5800, NULL), "/nonexistent/env");
	assert_string_equal(image_at(m, 101, 0x1800, NULL), "/nonexistent/bash");
	dmaps_exit(m, 101, 7);
	/* a late mmap record of the exited process stays with it */
	map(m, 101, 0xc000, 0x1000, 0, "/nonexistent/lib", 4);
	assert_string_equal(image_at(m, 101, 0xc800, NULL), "/nonexistent/lib");
	dmaps_get_stats(m, &st);
	assert_int_equal(st.exited_pending, 1);
	dmaps_reap(m, 6);	/* an earlier drain: still there */
	assert_string_equal(image_at(m, 101, 0x9800, NULL), "/nonexistent/prog");
	dmaps_reap(m, 7);
	assert_null(image_at(m, 101, 0x9800, NULL));
	dmaps_get_stats(m, &st);
	assert_int_equal(st.exited_pending, 0);
	/* the parent is untouched */
	assert_string_equal(image_at(m, 100, 0x1800, NULL), "/nonexistent/bash");
	dmaps_free(m);
}

static void test_pid_reuse_after_fork_gets_new_maps(void **state)
{
	struct dmaps *m;

	assert_int_equal(dmaps_new(&m), 0);
	map(m, 1, 0x1000, 0x1000, 0, "/nonexistent/init", 1);
	map(m, 50, 0x2000, 0x1000, 0, "/nonexistent/old", 2);
	dmaps_exit(m, 50, 1);
	assert_int_equal(dmaps_fork(m, 50, 1), 0);	/* pid 50 again, from pid 1 */
	assert_string_equal(image_at(m, 50, 0x1800, NULL), "/nonexistent/init");
	assert_null(image_at(m, 50, 0x2800, NULL));
	dmaps_free(m);
}

static void test_scan_proc_finds_this_test(void **state)
{
	struct dmaps *m;

	assert_int_equal(dmaps_new(&m), 0);
	assert_int_equal(dmaps_scan_proc(m, "/proc"), 0);
	const char *img = image_at(m, getpid(), (uint64_t)(uintptr_t)&test_scan_proc_finds_this_test, NULL);
	assert_non_null(img);
	assert_non_null(strstr(img, "test_daemon_maps"));
	dmaps_free(m);
}

/* pids no process has (above the largest pid_max) */
#define FAKE_PARENT 5000001
#define FAKE_CHILD 5000002

static void test_comm_fork_exit_reap(void **state)
{
	struct dmaps *m;
	const char *comm, *cg;

	assert_int_equal(dmaps_new(&m), 0);
	dmaps_comm(m, FAKE_PARENT, "alpha", true);
	assert_int_equal(dmaps_fork(m, FAKE_CHILD, FAKE_PARENT), 0);
	assert_int_equal(dmaps_task(m, FAKE_CHILD, &comm, &cg), 0);
	assert_string_equal(comm, "alpha");	/* a forked child runs as its parent */
	assert_null(cg);
	dmaps_comm(m, FAKE_CHILD, "beta-with-a-very-long-name", true);
	assert_int_equal(dmaps_task(m, FAKE_CHILD, &comm, &cg), 0);
	assert_string_equal(comm, "beta-with-a-ver");	/* TASK_COMM_LEN, as the kernel cuts it */
	assert_int_equal(dmaps_task(m, FAKE_PARENT, &comm, &cg), 0);
	assert_string_equal(comm, "alpha");
	/* exited: still named until the drain that takes its last samples */
	dmaps_exit(m, FAKE_CHILD, 3);
	assert_int_equal(dmaps_task(m, FAKE_CHILD, &comm, &cg), 0);
	assert_string_equal(comm, "beta-with-a-ver");
	dmaps_reap(m, 3);
	assert_int_equal(dmaps_task(m, FAKE_CHILD, &comm, &cg), -ESRCH);
	assert_string_equal(comm, "[unknown]");
	assert_int_equal(dmaps_task(m, 0, &comm, &cg), 0);
	assert_string_equal(comm, "swapper");
	dmaps_free(m);
}

/* The first line of FILE starting with PREFIX, without it and its newline, into BUF. */
static bool proc_line(const char *file, const char *prefix, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");
	bool found = false;
	char line[4096];

	while (f && !found && fgets(line, sizeof(line), f))
		if (!strncmp(line, prefix, strlen(prefix))) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line + strlen(prefix));
			found = true;
		}
	if (f)
		fclose(f);
	return found;
}

static void test_scan_proc_names_this_test(void **state)
{
	struct dmaps *m;
	const char *comm, *cg;
	char want[4096];

	assert_int_equal(dmaps_new(&m), 0);
	assert_int_equal(dmaps_scan_proc(m, "/proc"), 0);
	assert_int_equal(dmaps_task(m, getpid(), &comm, &cg), 0);
	assert_true(proc_line("/proc/self/comm", "", want, sizeof(want)));
	assert_string_equal(comm, want);
	if (proc_line("/proc/self/cgroup", "0::", want, sizeof(want))) {
		assert_non_null(cg);
		assert_string_equal(cg, want);
	} else {
		assert_null(cg);	/* cgroup v1 only: no v2 path to give */
	}
	dmaps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlapping_mmap_splits_region),
		cmocka_unit_test(test_non_exec_mmap_ignored_and_kernel_pc),
		cmocka_unit_test(test_perf_anon_is_anonymous),
		cmocka_unit_test(test_kernel_image_has_build_id),
		cmocka_unit_test(test_fork_exec_exit_reap),
		cmocka_unit_test(test_pid_reuse_after_fork_gets_new_maps),
		cmocka_unit_test(test_scan_proc_finds_this_test),
		cmocka_unit_test(test_comm_fork_exit_reap),
		cmocka_unit_test(test_scan_proc_names_this_test),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
