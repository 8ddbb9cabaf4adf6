#!/bin/bash
# tests/e2e/trace_progress.sh - `spent trace` shows a progress line on stderr when it is a
# terminal (instructions so far, processes, log size), updated a few times per second from
# the tools' progress notes, cleared before the final message; with stderr not a terminal it
# prints nothing but that message. The shown counts are a lower bound of the log's.
# test: serial (a terminal's progress line is read within seconds)
source "$(dirname "$0")/lib.sh"
# a tree of two processes running for a fixed time (a few progress updates at any speed)
TREE="'$PROGS/top_burner' 0.4; '$PROGS/top_burner' 0.4"

"$SPENT" trace -o "$TMP/plain.log" -- "$PROGS/top_burner" 0.3 > /dev/null 2> "$TMP/plain.err"
check "spent trace without a terminal exits 0" test $? -eq 0
check "without a terminal stderr is the one final message ($(head -c 300 "$TMP/plain.err" | tr '\r\n' '^|'))" \
	test "$(grep -c '' "$TMP/plain.err")" = 1 -a "$(grep -c "^spent: wrote trace log '$TMP/plain.log'" "$TMP/plain.err")" = 1
check "without a terminal no carriage return or escape on stderr" \
	python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); sys.exit(b"\r" in b or b"\033" in b)' "$TMP/plain.err"

if ! command -v script > /dev/null; then
	skip "trace_progress_tty" "no script(1) to give spent trace a terminal"
	exit 0
fi
# stderr on script's pty; stdout to a file
script -qfec "'$SPENT' trace -o '$TMP/tty.log' -- /bin/sh -c \"$TREE\" > '$TMP/tty.out'" "$TMP/tty.ts" > /dev/null
check "spent trace on a terminal exits 0" test $? -eq 0
# the log's count, the oracle: read by the plain build when there is one (the sanitized build
# takes 19 s over these 0.8 G instructions, the plain one 3 s)
oracle=$SPENT
[ -x "$SPENT_TOP/build/spent" ] && oracle=$SPENT_TOP/build/spent
total=$("$oracle" trace stats --json "$TMP/tty.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')
python3 - "$TMP/tty.ts" "$total" > "$TMP/tty.check" <<'EOF'
import re, sys
ts = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
total = int(sys.argv[2])
lines = re.findall(r"\rspent: trace: ([0-9.]+) M instructions, ([0-9]+) process(?:es)?, ([0-9.]+) MB of log\033\[K", ts)
insns = [float(m[0]) * 1e6 for m in lines]
procs = [int(m[1]) for m in lines]
print("updates", len(lines))
print("nonzero", int(any(i > 0 for i in insns)))
print("monotone", int(all(a <= b for a, b in zip(insns, insns[1:])) and all(a <= b for a, b in zip(procs, procs[1:]))))
print("bound", int(bool(insns) and insns[-1] <= total * 1.0001))
print("procs", max(procs) if procs else 0)
print("cleared", int("\r\033[Kspent: wrote trace log" in ts))
EOF
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/tty.check"; }
check "on a terminal the progress line is updated several times ($(v updates))" test "$(v updates)" -ge 2
check "the progress line counts instructions" test "$(v nonzero)" = 1
check "instructions and processes shown never go down" test "$(v monotone)" = 1
check "the instructions shown are at most the log's ($total)" test "$(v bound)" = 1
check "the processes of the tree are counted ($(v procs))" test "$(v procs)" -ge 2
check "the progress line is cleared before the final message" test "$(v cleared)" = 1
check "on a terminal stdout is the program's alone" test "$(grep -c '^sink ' "$TMP/tty.out")" = 2
