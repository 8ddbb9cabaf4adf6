#!/bin/bash
# tests/e2e/api_stat.sh - a program counts a command through libspent.so's spent_stat_*
# (docs/examples/stat_command.c): the task-clock of a shell running the burner twice (its
# children, folded in) agrees with the CPU time the kernel charged those children (getrusage),
# the command's exit status comes back, and a command that cannot run gives the shell's code.
# test: serial (its counts and timings are of a machine nothing else is using)
source "$(dirname "$0")/lib.sh"

cc_example stat_command || exit 0
EX=$TMP/stat_command

s0=$(steal_ticks)
"$EX" task-clock,page-faults sh -c "'$PROGS/top_burner' 0.3 >/dev/null; '$PROGS/top_burner' 0.3 >/dev/null" > "$TMP/burn.out" 2> "$TMP/burn.err"
check "spent_stat_* counts the command (exit 0: $(head -1 "$TMP/burn.err"))" test $? -eq 0
s1=$(steal_ticks)
tc=$(awk '$1 == "task-clock" { print $2 }' "$TMP/burn.out")
ru=$(awk '$1 == "elapsed" { print $7 }' "$TMP/burn.out")
slack_ns=$(($(stolen_slack_ms "$s0" "$s1") * 1000000))
check "the burners' CPU time is there to compare with (${ru:-none} ns)" test "${ru:-0}" -gt 20000000
# the burners are the shell's children: without them folded in, task-clock is the shell's alone
check "task-clock (${tc:-none} ns) is the children's CPU time (${ru:-none} ns) within 10% + stolen ${slack_ns} ns" \
	awk -v a="${tc:-0}" -v b="${ru:-0}" -v s="$slack_ns" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= b * 0.10 + s + 2e6) }'
check "page-faults are counted too" awk '$1 == "page-faults" && $2 > 0 { ok = 1 } END { exit !ok }' "$TMP/burn.out"

"$EX" task-clock sh -c 'exit 5' > /dev/null 2>&1
check "the counted command's exit status comes back (5)" test $? -eq 5
"$EX" task-clock spent-no-such-command-xyz > /dev/null 2> "$TMP/none.err"
check "a missing command gives 127" test $? -eq 127
check "a missing command is named in spent_stat_error ($(head -1 "$TMP/none.err"))" grep -q "spent-no-such-command-xyz" "$TMP/none.err"
