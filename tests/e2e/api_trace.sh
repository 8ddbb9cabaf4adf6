#!/bin/bash
# tests/e2e/api_trace.sh - a program writes a trace log through libspent.so's spent_trace_*
# (docs/examples/trace_command.c): `spent trace stats` of the log counts the same instructions
# as `spent trace` of the same deterministic program, the command's exit status comes back,
# and a log that could not be written leaves nothing at its path.
source "$(dirname "$0")/lib.sh"

command -v valgrind > /dev/null || { skip "api_trace: valgrind is not installed"; exit 0; }
cc_example trace_command || exit 0
EX=$TMP/trace_command
VL=$SPENT_TOP/build/valgrind/lib
insns() { "$SPENT" trace stats --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])'; }

# the same environment for both: the loader's instructions depend on it
E=(env -i PATH="$PATH" LD_LIBRARY_PATH="$TMP/lib" TMPDIR="${TMPDIR:-/tmp}" SPENT_VALGRIND_LIB="$VL")
"${E[@]}" "$EX" "$VL" "$TMP/lib.log" "$PROGS/trace_small" > "$TMP/lib.out" 2> "$TMP/lib.err"
check "spent_trace_* traces trace_small (exit 0: $(head -1 "$TMP/lib.err"))" test $? -eq 0
# (and a stdout of the same kind: stdio sets up a character device and a file differently)
"${E[@]}" "$SPENT" trace -o "$TMP/cli.log" -- "$PROGS/trace_small" > "$TMP/cli.out" 2>&1
a=$(insns "$TMP/lib.log" 2>/dev/null) b=$(insns "$TMP/cli.log" 2>/dev/null)
check "its log holds the instructions spent trace counts ($a = $b)" test -n "$a" -a "$a" = "$b" -a "${a:-0}" != 0

"$EX" "$VL" "$TMP/three.log" /bin/sh -c 'exit 3' > /dev/null 2>&1
check "the traced command's exit status comes back (3)" test $? -eq 3

"$EX" "$TMP/no-such-dir" "$TMP/novg.log" /bin/true > /dev/null 2> "$TMP/novg.err"
check "no tool in the valgrind_lib directory: a failure" test $? -ne 0
check "no tool: nothing left at the log's path" test ! -e "$TMP/novg.log"
