#!/bin/bash
# tests/e2e/workload.sh - every command that runs a program starts it the same way
# (core/workload.c): the program gets its whole argv (trace dropped what came past ~254), its
# exit status is spent's, a command that cannot run is exit 127 with one message.
source "$(dirname "$0")/lib.sh"

args=$(seq 1 400)
# argc_is N CMD...: the command runs a shell that exits 0 only when it got N arguments
"$SPENT" stat -o /dev/null -- sh -c 'test $# = 400 && test "${400}" = 400' sh $args 2>/dev/null
check "stat passes 400 arguments" test $? -eq 0
"$SPENT" record -o "$TMP/p" -- sh -c 'test $# = 400 && test "${400}" = 400' sh $args > /dev/null 2>&1
check "record passes 400 arguments" test $? -eq 0
"$SPENT" trace -o "$TMP/t.log" -- sh -c 'test $# = 400 && test "${400}" = 400' sh $args > /dev/null 2>&1
check "trace passes 400 arguments (it dropped those past ~254)" test $? -eq 0

for c in stat record trace; do
	out=$TMP/$c.out
	[ $c = stat ] && out=/dev/null
	"$SPENT" $c -o "$out" -- sh -c 'exit 5' > /dev/null 2>&1
	check "$c exits with the command's status" test $? -eq 5
	"$SPENT" $c -o "$out" -- sh -c 'kill -TERM $$' > /dev/null 2>&1
	check "$c exits 128+SIGTERM when the command is killed" test $? -eq 143
done
"$SPENT" record -o "$TMP/none" -- spent-no-such-command-xyz > /dev/null 2> "$TMP/rec.err"
check "record: a command not in PATH exits 127" test $? -eq 127
check "record: a command not in PATH is one line" test "$(wc -l < "$TMP/rec.err")" -eq 1
"$SPENT" stat -- spent-no-such-command-xyz > /dev/null 2> "$TMP/stat.err"
check "stat: a command not in PATH exits 127" test $? -eq 127
check "stat: names the command" grep -q "cannot run 'spent-no-such-command-xyz'" "$TMP/stat.err"
# found (a directory passes the execute-permission check) but not runnable: 126, as stat,
# and no empty profile (record wrote one and exited 127)
mkdir -p "$TMP/adir"
"$SPENT" record -o "$TMP/dirprof" -- "$TMP/adir" > /dev/null 2> "$TMP/dir.err"
check "record: a command that cannot be executed exits 126" test $? -eq 126
check "record: a command that cannot be executed leaves no profile" test ! -e "$TMP/dirprof"
check "record: a command that cannot be executed is said once" test "$(grep -c "cannot run '$TMP/adir'" "$TMP/dir.err")" -eq 1
"$SPENT" stat -- "$TMP/adir" > /dev/null 2>&1
check "stat: a command that cannot be executed exits 126" test $? -eq 126
