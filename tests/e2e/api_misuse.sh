#!/bin/bash
# tests/e2e/api_misuse.sh - libspent.so's sessions used as a program might misuse them: a wait
# after a start that could not run the command returns -EINVAL at once (it waited for ever)
# and a second start may follow; a wait or commit twice is -EINVAL; a tracer without its
# valgrind_lib is refused (its child crashed); freeing a session whose command still runs
# leaves no child unreaped.
source "$(dirname "$0")/lib.sh"
cat > "$TMP/misuse.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <spent/events.h>
#include <spent/record.h>
#include <spent/stat.h>
#include <spent/trace_record.h>

static int no_child_left(void)
{
	return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

int main(int argc, char **argv)
{
	const char *vglib = argv[1];
	char *missing[] = { "spent-no-such-command-xyz", NULL }, *sleeper[] = { "sleep", "30", NULL };
	char err[256];
	struct spent_event ev;
	if (argc < 3 || spent_event_parse("task-clock", &ev, err, sizeof(err)))
		return 2;
	struct spent_stat_opts so = { .events = &ev, .n_events = 1 };
	struct spent_stat *s;
	spent_stat_new(&so, &s);
	printf("stat_start_missing %d\n", spent_stat_start(s, missing));
	printf("stat_wait_after %d\n", spent_stat_wait(s, NULL));
	printf("stat_start_again %d\n", spent_stat_start(s, missing));
	spent_stat_free(s);
	spent_stat_new(&so, &s);
	printf("stat_start_nothing %d %s\n", spent_stat_start(s, NULL), spent_stat_error(s));
	spent_stat_free(s);
	spent_stat_new(&so, &s);
	spent_stat_start(s, sleeper);
	spent_stat_free(s);
	printf("stat_free_running_reaped %d\n", no_child_left());

	struct spent_record_opts ro = { 0 };
	struct spent_record *r;
	spent_record_new(&ro, &r);
	printf("record_start_dir %d\n", spent_record_start(r, (char *[]){ "/tmp", NULL }, 0));
	printf("record_wait_after %d\n", spent_record_wait(r, NULL));
	spent_record_free(r);
	spent_record_new(&ro, &r);
	spent_record_start(r, sleeper, 0);
	spent_record_free(r);
	printf("record_free_running_reaped %d\n", no_child_left());
	/* a stack size the kernel refuses: said at new, not as "cannot open event: EINVAL" */
	struct spent_record_opts bad = { .callgraph = SPENT_RECORD_CG_DWARF, .dwarf_stack_bytes = 7 };
	int rc = spent_record_new(&bad, &r);
	printf("record_new_bad_stack %d %s\n", rc, spent_record_error(r));
	spent_record_free(r);
	/* no_inherit with per-thread events (they follow new threads): refused at the start,
	 * before the command runs */
	struct spent_record_opts ni = { .per_thread = 1, .no_inherit = 1 };
	spent_record_new(&ni, &r);
	rc = spent_record_start(r, sleeper, 0);
	printf("record_no_inherit_per_thread %d %s\n", rc, spent_record_error(r));
	spent_record_free(r);
	printf("record_no_inherit_no_child %d\n", no_child_left());
	/* delay_ms delays a command: with a pid alone it is refused, saying so */
	struct spent_record_opts dl = { .delay_ms = 10 };
	spent_record_new(&dl, &r);
	rc = spent_record_start(r, NULL, getpid());
	printf("record_delay_pid %d %s\n", rc, spent_record_error(r));
	spent_record_free(r);
	/* cpus picks CPUs of a recording of every CPU: with a command alone it is refused */
	int cpu0 = 0;
	struct spent_record_opts oc = { .cpus = &cpu0, .n_cpus = 1 };
	spent_record_new(&oc, &r);
	rc = spent_record_start(r, sleeper, 0);
	printf("record_cpus_command %d %s\n", rc, spent_record_error(r));
	spent_record_free(r);

	struct spent_trace_opts to = { .valgrind_lib = NULL };
	struct spent_trace *t;
	printf("trace_new_no_vglib %d\n", spent_trace_new(&to, argv[2], &t));
	spent_trace_free(t);
	to.valgrind_lib = vglib;
	spent_trace_new(&to, argv[2], &t);
	int st;
	spent_trace_start(t, (char *[]){ "/bin/true", NULL });
	printf("trace_wait %d\n", spent_trace_wait(t, &st));
	printf("trace_wait_again %d\n", spent_trace_wait(t, &st));
	printf("trace_commit %d\n", spent_trace_commit(t));
	printf("trace_commit_again %d\n", spent_trace_commit(t));
	spent_trace_free(t);
	spent_trace_new(&to, argv[2], &t);
	spent_trace_start(t, sleeper);
	spent_trace_free(t);
	printf("trace_free_running_reaped %d\n", no_child_left());
	return 0;
}
C
if ! cc_libspent "$TMP/misuse" "$TMP/misuse.c"; then
	fail "the misuse program builds against libspent.so: $(head -3 "$TMP/misuse.err")"
	exit 0
fi
export LD_LIBRARY_PATH=$TMP/lib
timeout 60 "$TMP/misuse" "$SPENT_BUILD/valgrind/lib" "$TMP/t.log" > "$TMP/out" 2> "$TMP/err"
rc=$?
check "the misuse program ends (exit $rc: $(tail -1 "$TMP/err"))" test $rc -eq 0
want() { grep -qx "$1" "$TMP/out"; }
check "stat: a start that cannot run the command fails" want "stat_start_missing -2"
check "... a wait after it is -EINVAL at once (it hung)" want "stat_wait_after -22"
check "... a second start is not 'already counting' (-EBUSY)" want "stat_start_again -2"
check "stat: a start with nothing to count says so" grep -q '^stat_start_nothing -22 nothing to count' "$TMP/out"
check "stat: freeing it while the command runs leaves no child" want "stat_free_running_reaped 1"
check "record: a start that cannot run the command fails" want "record_start_dir -13"
check "... a wait after it is -EINVAL at once (it hung)" want "record_wait_after -22"
check "record: freeing it while the command runs leaves no child" want "record_free_running_reaped 1"
check "record: a dwarf stack size that is no multiple of 8 is refused at new, saying so" \
	grep -q '^record_new_bad_stack -22 bad user stack size 7' "$TMP/out"
check "record: no_inherit with per_thread is refused at the start, saying so" \
	grep -q '^record_no_inherit_per_thread -22 no_inherit samples the first threads alone' "$TMP/out"
check "... and no command was started" want "record_no_inherit_no_child 1"
check "record: cpus without every CPU is refused, saying so" \
	grep -q '^record_cpus_command -22 cpus picks the CPUs of a recording of every CPU' "$TMP/out"
check "record: delay_ms with a pid alone is refused, saying so" \
	grep -q '^record_delay_pid -22 delay_ms delays the sampling of a command' "$TMP/out"
check "trace: no valgrind_lib is refused (its child crashed)" want "trace_new_no_vglib -22"
check "trace: wait, then wait again is -EINVAL" bash -c "grep -qx 'trace_wait 0' '$TMP/out' && grep -qx 'trace_wait_again -22' '$TMP/out'"
check "trace: commit, then commit again is -EINVAL" bash -c "grep -qx 'trace_commit 0' '$TMP/out' && grep -qx 'trace_commit_again -22' '$TMP/out'"
check "trace: freeing it while the command runs leaves no child" want "trace_free_running_reaped 1"
