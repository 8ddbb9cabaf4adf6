#!/bin/bash
# tests/e2e/api_record.sh - a program records a profile through libspent.so's spent_record_*
# (docs/examples/record_command.c): the burner's hot function is in `spent report` of the
# directory it writes, the command's exit status comes back, and a command that cannot run
# is refused with the shell's code and no directory.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

cc_example record_command || exit 0
EX=$TMP/record_command

# the burner spends its half second in top_burner_spin
"$EX" task-clock "$TMP/burn" "$PROGS/top_burner" 0.5 | grep -v '^sink' > "$TMP/burn.out" 2> "$TMP/burn.err"
check "spent_record_* records the burner (exit 0)" test "${PIPESTATUS[0]}" -eq 0
check "the summary counts samples ($(cat "$TMP/burn.out"))" grep -Eq '^[1-9][0-9]* samples' "$TMP/burn.out"
"$SPENT" report -i "$TMP/burn" > "$TMP/burn.rep" 2>&1
check "spent report -i reads the directory spent_record_write wrote" test $? -eq 0
top=$(grep -v '^#' "$TMP/burn.rep" | grep -m1 -o 'top_burner_spin')
check "the hot function leads the report ($(grep -v '^#' "$TMP/burn.rep" | sed -n 2,3p | tr -s ' '))" \
	test "$top" = top_burner_spin
check "the call graph was recorded (SPENT_RECORD_CG_FP)" grep -Eq ' [1-9][0-9]* call stacks' "$TMP/burn.out"

# the command's exit status is spent_record_exit_code's
"$EX" task-clock "$TMP/three" sh -c 'exit 3' > "$TMP/three.out" 2>&1
check "the recorded command's exit status comes back (3)" test $? -eq 3

# a command that does not exist: 127, the reason, nothing written
"$EX" task-clock "$TMP/none" spent-no-such-command-xyz > /dev/null 2> "$TMP/none.err"
check "a missing command gives 127" test $? -eq 127
check "a missing command is named in spent_record_error" grep -q "cannot run 'spent-no-such-command-xyz'" "$TMP/none.err"
check "a missing command leaves no directory" test ! -e "$TMP/none"

# an unknown event: the reason from spent_record_error, no directory
"$EX" no-such-event-xyz "$TMP/bad" true > /dev/null 2> "$TMP/bad.err"
check "an unknown event fails with 2" test $? -eq 2
check "an unknown event is named ($(head -1 "$TMP/bad.err"))" grep -q "no-such-event-xyz" "$TMP/bad.err"
check "an unknown event leaves no directory" test ! -e "$TMP/bad"

# a directory that is not a profile is refused before the run and left alone
mkdir "$TMP/mine" && echo keep > "$TMP/mine/file"
"$EX" task-clock "$TMP/mine" true > /dev/null 2> "$TMP/mine.err"
check "spent_record_check_output refuses a directory that is not a profile" test $? -eq 2 -a "$(cat "$TMP/mine/file")" = keep

# spent record -p stops on Ctrl-C through spent_record_stop (async-signal-safe), writes the
# profile and leaves the process running
"$PROGS/top_burner" 5 > /dev/null & bpid=$!
"$SPENT" record -e cpu-clock -p "$bpid" -o "$TMP/attach" > /dev/null 2> "$TMP/attach.err" & rpid=$!
sleep 0.5
kill -INT "$rpid"
wait "$rpid"
check "record -p ends at SIGINT with 0 ($(tail -1 "$TMP/attach.err"))" test $? -eq 0
check "the attached process is still running" kill -0 "$bpid"
kill "$bpid" 2> /dev/null; wait "$bpid" 2> /dev/null
check "the profile of the attached process has its hot function" \
	sh -c "'$SPENT' report -i '$TMP/attach' 2>/dev/null | grep -q top_burner_spin"
