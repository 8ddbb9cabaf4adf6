/* tests/unit/profile_test_util.h - what the profile unit tests (test_profile*.c, and the
 * symbol tests that build profiles of their own binary) share: a scratch directory per test
 * group, the test binary as a profile image, and one-line ways to intern an image, an event or
 * a task that fail the test when the library refuses. Included after <cmocka.h>. */
#ifndef SPENT_TEST_PROFILE_TEST_UTIL_H
#define SPENT_TEST_PROFILE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/procmaps.h"
#include "spent/profile.h"

static char tmpdir[64];

/* /tmp/spent-ut-NAME.XXXXXX, made for a group's setup: 0 or -1. */
static inline int tmpdir_make(const char *name)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/spent-ut-%s.XXXXXX", name);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int tmpdir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* This test binary as a profile image, identified as spent record identifies images. */
static inline struct spent_profile_image self_image(void)
{
	static char path[4096];
	struct spent_profile_image im = { .path = path };
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	assert_true(n > 0);
	path[n] = 0;
	assert_int_equal(image_identify(path, &im), 0);
	return im;
}

/* An image with a 20-byte build-id of PATH[1] repeated (distinct paths, distinct ids). */
static inline uint32_t add_image(struct spent_profile *p, const char *path)
{
	struct spent_profile_image im = { .path = (char *)path, .id_kind = SPENT_PROFILE_ID_BUILDID, .id_len = 20 };
	memset(im.id, path[1], 20);
	uint32_t idx;
	assert_int_equal(spent_profile_image_intern(p, &im, &idx), 0);
	return idx;
}

static inline uint32_t add_event(struct spent_profile *p, const char *name, uint64_t period)
{
	uint32_t ev;
	assert_int_equal(spent_profile_event_intern(p, name, period, 0, &ev), 0);
	return ev;
}

static inline uint32_t add_task(struct spent_profile *p, const char *comm, uint32_t pid, uint32_t tid,
				const char *cgroup)
{
	struct spent_profile_task t = { .comm = (char *)comm, .pid = pid, .tid = tid, .cgroup = (char *)cgroup };
	uint32_t idx;
	assert_int_equal(spent_profile_task_intern(p, &t, &idx), 0);
	return idx;
}

#endif
