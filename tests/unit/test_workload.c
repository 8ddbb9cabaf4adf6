/* tests/unit/test_workload.c - the workload launcher (core/workload): a held command runs only
 * once started, a failed exec comes back as -errno with exit 127, setup runs in the child,
 * PATH lookup, exit-code conventions, argv of any length, SIGTERM forwarded. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/workload.h"

static char tmpdir[] = "/tmp/spent-workload-XXXXXX";

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void runs_and_reports_exit_status(void **state)
{
	(void)state;
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct workload w = WORKLOAD_INIT;
	int status;
	assert_int_equal(workload_spawn(&w, argv, NULL), 0);
	assert_int_equal(workload_start(&w), 0);
	assert_int_equal(workload_wait(w.pid, &status, 0), w.pid);
	assert_int_equal(workload_exit_code(status), 7);
}

static void held_command_runs_only_when_started(void **state)
{
	(void)state;
	char mark[PATH_MAX], script[PATH_MAX + 32];
	snprintf(mark, sizeof(mark), "%s/ran", tmpdir);
	snprintf(script, sizeof(script), "touch '%s'", mark);
	char *argv[] = { "sh", "-c", script, NULL };
	const struct workload_opts held = { .hold = true };
	struct workload w = WORKLOAD_INIT;
	int status;
	assert_int_equal(workload_spawn(&w, argv, &held), 0);
	usleep(100 * 1000);
	assert_int_equal(waitpid(w.pid, &status, WNOHANG), 0);	/* still waiting */
	assert_int_not_equal(access(mark, F_OK), 0);
	assert_int_equal(workload_start(&w), 0);
	assert_int_equal(workload_wait(w.pid, &status, 0), w.pid);
	assert_int_equal(workload_exit_code(status), 0);
	assert_int_equal(access(mark, F_OK), 0);
}

static void aborted_command_never_runs(void **state)
{
	(void)state;
	char mark[PATH_MAX], script[PATH_MAX + 32];
	snprintf(mark, sizeof(mark), "%s/aborted", tmpdir);
	snprintf(script, sizeof(script), "touch '%s'", mark);
	char *argv[] = { "sh", "-c", script, NULL };
	const struct workload_opts held = { .hold = true };
	struct workload w = WORKLOAD_INIT;
	assert_int_equal(workload_spawn(&w, argv, &held), 0);
	workload_abort(&w);
	assert_int_not_equal(access(mark, F_OK), 0);
	assert_int_equal(kill(w.pid, 0), -1);	/* reaped */
}

static void failed_exec_is_minus_errno_and_127(void **state)
{
	(void)state;
	char *argv[] = { "spent-no-such-command-xyz", NULL };
	struct workload w = WORKLOAD_INIT;
	int status;
	for (int hold = 0; hold < 2; hold++) {
		const struct workload_opts o = { .hold = hold };
		assert_int_equal(workload_spawn(&w, argv, &o), 0);
		assert_int_equal(workload_start(&w), -ENOENT);
		assert_int_equal(workload_wait(w.pid, &status, 0), w.pid);
		assert_int_equal(workload_exit_code(status), 127);
	}
	/* a file that exists but is no program: -EACCES, which a shell reports as 126 */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/data", tmpdir);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	char *argv2[] = { path, NULL };
	assert_int_equal(workload_spawn(&w, argv2, NULL), 0);
	int err = workload_start(&w);
	assert_int_equal(err, -EACCES);
	assert_int_equal(workload_exec_exit_code(err), 126);
	assert_int_equal(workload_exec_exit_code(-ENOENT), 127);
	workload_wait(w.pid, NULL, 0);
}

static int setup_env(void *arg)
{
	return setenv("SPENT_WORKLOAD_TEST", arg, 1) ? errno : 0;
}

static int setup_fails(void *arg)
{
	(void)arg;
	return EPERM;
}

static void setup_runs_in_the_child_and_its_error_comes_back(void **state)
{
	(void)state;
	char *argv[] = { "sh", "-c", "test \"$SPENT_WORKLOAD_TEST\" = yes", NULL };
	struct workload w = WORKLOAD_INIT;
	int status;
	const struct workload_opts o = { .setup = setup_env, .setup_arg = "yes" };
	assert_int_equal(workload_spawn(&w, argv, &o), 0);
	assert_int_equal(workload_start(&w), 0);
	workload_wait(w.pid, &status, 0);
	assert_int_equal(workload_exit_code(status), 0);
	assert_null(getenv("SPENT_WORKLOAD_TEST"));	/* the parent's environment is untouched */

	const struct workload_opts bad = { .setup = setup_fails };
	assert_int_equal(workload_spawn(&w, argv, &bad), 0);
	assert_int_equal(workload_start(&w), -EPERM);
	workload_wait(w.pid, &status, 0);
	assert_int_equal(workload_exit_code(status), 127);
}

static void file_is_executed_without_path_lookup(void **state)
{
	(void)state;
	char *argv[] = { "not-a-real-name", "-c", "exit 3", NULL };
	const struct workload_opts o = { .file = "/bin/sh" };
	struct workload w = WORKLOAD_INIT;
	int status;
	assert_int_equal(workload_spawn(&w, argv, &o), 0);
	assert_int_equal(workload_start(&w), 0);
	workload_wait(w.pid, &status, 0);
	assert_int_equal(workload_exit_code(status), 3);
}

static void killed_command_is_128_plus_signal(void **state)
{
	(void)state;
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct workload w = WORKLOAD_INIT;
	int status;
	assert_int_equal(workload_spawn(&w, argv, NULL), 0);
	assert_int_equal(workload_start(&w), 0);
	workload_wait(w.pid, &status, 0);
	assert_int_equal(workload_exit_code(status), 128 + SIGTERM);
}

static void find_looks_up_path_like_execvp(void **state)
{
	(void)state;
	char out[PATH_MAX], prog[PATH_MAX], path[PATH_MAX + 64];
	snprintf(prog, sizeof(prog), "%s/myprog", tmpdir);
	int fd = open(prog, O_WRONLY | O_CREAT, 0755);
	assert_true(fd >= 0);
	close(fd);
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	snprintf(path, sizeof(path), "/nonexistent-dir:%s", tmpdir);
	setenv("PATH", path, 1);
	assert_int_equal(workload_find("myprog", out, sizeof(out)), 0);
	assert_string_equal(out, prog);
	assert_int_equal(workload_find("spent-no-such-command-xyz", out, sizeof(out)), -ENOENT);
	assert_int_equal(workload_find("myprog", out, 4), -ENAMETOOLONG);
	assert_int_equal(workload_find(prog, out, sizeof(out)), 0);	/* a path: itself */
	assert_int_equal(workload_find("/nonexistent/prog", out, sizeof(out)), -ENOENT);
	/* a path that is there but not runnable: the shell's 126, not "not found" */
	assert_int_equal(chmod(prog, 0644), 0);
	assert_int_equal(workload_find(prog, out, sizeof(out)), -EACCES);
	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
}

static void argv_of_any_length(void **state)
{
	(void)state;
	enum { N = 1000 };
	static char *cmd[N + 1];
	static char bufs[N][16];
	for (int i = 0; i < N; i++) {
		snprintf(bufs[i], sizeof(bufs[i]), "a%d", i);
		cmd[i] = bufs[i];
	}
	cmd[N] = NULL;
	char *pre[] = { "sh", "-c", "test $# = 999 && test \"$1\" = a1 && eval test \\${$#} = a999" };
	char **argv = workload_argv_join(pre, 3, cmd);
	assert_non_null(argv);
	assert_string_equal(argv[3], "a0");
	assert_string_equal(argv[3 + N - 1], "a999");
	assert_null(argv[3 + N]);
	struct workload w = WORKLOAD_INIT;
	int status;
	assert_int_equal(workload_spawn(&w, argv, NULL), 0);
	free(argv);
	assert_int_equal(workload_start(&w), 0);
	workload_wait(w.pid, &status, 0);
	assert_int_equal(workload_exit_code(status), 0);
	argv = workload_argv_join(pre, 2, NULL);
	assert_non_null(argv);
	assert_null(argv[2]);
	free(argv);
}

static void sigterm_is_forwarded_while_waiting(void **state)
{
	(void)state;
	char *argv[] = { "sleep", "30", NULL };
	struct workload w = WORKLOAD_INIT;
	struct workload_signals saved;
	int status;
	assert_int_equal(workload_spawn(&w, argv, NULL), 0);
	assert_int_equal(workload_start(&w), 0);
	workload_forward_signals(w.pid, &saved);
	raise(SIGTERM);		/* we survive it; the command does not */
	raise(SIGINT);		/* ignored here */
	assert_int_equal(workload_wait(w.pid, &status, 0), w.pid);
	workload_restore_signals(&saved);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_and_reports_exit_status),
		cmocka_unit_test(held_command_runs_only_when_started),
		cmocka_unit_test(aborted_command_never_runs),
		cmocka_unit_test(failed_exec_is_minus_errno_and_127),
		cmocka_unit_test(setup_runs_in_the_child_and_its_error_comes_back),
		cmocka_unit_test(file_is_executed_without_path_lookup),
		cmocka_unit_test(killed_command_is_128_plus_signal),
		cmocka_unit_test(find_looks_up_path_like_execvp),
		cmocka_unit_test(argv_of_any_length),
		cmocka_unit_test(sigterm_is_forwarded_while_waiting),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
