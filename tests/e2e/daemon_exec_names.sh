#!/bin/bash
# tests/e2e/daemon_exec_names.sh - a forked child runs its parent's program until it execs:
# the samples it took then are its parent's name's, as perf names them. A child spins 0.4 s
# of CPU in the parent's binary, then execs daemon_split for 0.3 s; by --comm, the parent's
# name holds the spin and daemon_split's holds none of the parent's binary (the daemon named
# every sample drained after the exec by the new program).
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

cat > "$TMP/forkspin.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void before_exec(double secs)
{
	struct timespec t;
	unsigned long x = 1;
	double end;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	end = t.tv_sec + t.tv_nsec / 1e9 + secs;
	do {	/* sized by CPU time, not by a count tuned to one CPU */
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while (t.tv_sec + t.tv_nsec / 1e9 < end);
	sink = x;
}
int main(int argc, char **argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		before_exec(0.4);
		execl(argv[1], argv[1], "0.3", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
C
cc -O1 -o "$TMP/forkspin" "$TMP/forkspin.c"
DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_exec_names_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi
"$TMP/forkspin" "$PROGS/daemon_split" > /dev/null
check "daemon_exec_names_workload_ran" test $? = 0
"$SPENT" db "$DB" flush > /dev/null
check daemon_exec_names_stops_on_sigterm stop_daemon

# samples of the forkspin binary under each name
in_image() { # COMM
	"$SPENT" report -i "$DB" --comm "$1" --json 2> /dev/null | python3 -c '
import json, sys
print(sum(r.get("samples", 0) for r in (json.loads(l) for l in sys.stdin if l.strip())
          if r.get("image") == sys.argv[1]))' "$TMP/forkspin"
}
own=$(in_image forkspin)
new=$(in_image daemon_split)
check "daemon_exec_names_pre_exec_spin_is_the_parents_name (forkspin $own samples of its binary)" \
	test "${own:-0}" -ge 200
check "daemon_exec_names_new_program_has_none_of_it (daemon_split $new samples of forkspin)" \
	test "${new:-1}" -le 5
