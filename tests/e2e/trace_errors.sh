#!/bin/bash
# tests/e2e/trace_errors.sh - bad logs and bad input: a changed binary (build-id mismatch), a
# truncated log (everything up to its last complete block, then an error naming the byte), a
# corrupt block, a non-log file, bad flags; nothing partial is left behind.
source "$(dirname "$0")/lib.sh"
SRC=$SPENT_TOP/tests/progs/trace_small.c

gcc -O1 -o "$TMP/prog" "$SRC"
"$SPENT" trace -o "$TMP/c.log" -- "$TMP/prog" 0 > /dev/null 2>&1
"$SPENT" trace stats "$TMP/c.log" > /dev/null 2>&1
check "log of the original binary reads cleanly" test $? -eq 0
gcc -O1 -DVARIANT -o "$TMP/prog" "$SRC"
"$SPENT" trace stats "$TMP/c.log" > /dev/null 2> "$TMP/c.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "changed since it was traced: build-id" "$TMP/c.err" && grep -q "$TMP/prog" "$TMP/c.err"; then
	pass "changed binary is refused with a build-id mismatch naming it"
else
	fail "changed binary is refused with a build-id mismatch naming it: rc $rc, '$(cat "$TMP/c.err")'"
fi

"$SPENT" trace -o "$TMP/t.log" -- "$PROGS/trace_threads" > /dev/null 2>&1
"$SPENT" trace dump "$TMP/t.log" > "$TMP/full.dump"
size=$(stat -c %s "$TMP/t.log")
# cut in the middle of the second block (block headers: magic, raw, comp, crc; 32-byte file header)
cut=$(python3 - "$TMP/t.log" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
p, blocks = 32, []
while p + 16 <= len(d):
    comp = struct.unpack("<4I", d[p:p + 16])[2]
    blocks.append((p, comp))
    p += 16 + comp
print(blocks[1][0] + 16 + blocks[1][1] // 2 if len(blocks) >= 2 else 0)
PY
)
check "threads log has at least 2 blocks to truncate" test "$cut" -gt 0
head -c "$cut" "$TMP/t.log" > "$TMP/trunc.log"
"$SPENT" trace dump "$TMP/trunc.log" > "$TMP/trunc.dump" 2> "$TMP/trunc.err"
rc=$?
n=$(grep -c ' I  ' "$TMP/trunc.dump")
check "truncated log: dump fails" test $rc -ne 0
check "truncated log: the error says truncated and names the byte" grep -qE "truncated at byte [0-9]+" "$TMP/trunc.err"
check "truncated log: instructions of the complete blocks are yielded" test "$n" -gt 0
check "truncated log: what it yields is a prefix of the full stream" \
	cmp -s "$TMP/trunc.dump" <(head -n "$(wc -l < "$TMP/trunc.dump")" "$TMP/full.dump")

cp "$TMP/t.log" "$TMP/bad.log"
printf '\xff\xff\xff\xff' | dd of="$TMP/bad.log" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
"$SPENT" trace stats "$TMP/bad.log" > /dev/null 2> "$TMP/bad.err"
rc=$?
check "corrupt block: stats fails" test $rc -ne 0
check "corrupt block: the error names the checksum and the byte" grep -qE "corrupt log: .*at byte [0-9]+" "$TMP/bad.err"

echo "not a log" > "$TMP/text"
"$SPENT" trace dump "$TMP/text" > /dev/null 2> "$TMP/text.err"
check "a non-log file is refused" grep -q "neither a spent trace log" "$TMP/text.err"

"$SPENT" trace -o "$TMP/none.log" -- "$TMP/does-not-exist" > /dev/null 2>&1
check "a command that cannot run exits non-zero" test $? -ne 0
check "a command that cannot run leaves no log" test ! -e "$TMP/none.log"
check "no temporary files are left behind" test -z "$(ls "$TMP" | grep '\.tmp\.')"
"$SPENT" trace --max-instructions abc -- true > /dev/null 2> "$TMP/flag.err"
check "a bad --max-instructions is refused" grep -q "bad --max-instructions 'abc'" "$TMP/flag.err"
"$SPENT" trace > /dev/null 2> "$TMP/nocmd.err"
check "no command is refused" grep -q "no command to trace" "$TMP/nocmd.err"

# --max-instructions: the stream stops at exactly N
"$SPENT" trace --max-instructions 5000 -o "$TMP/m.log" -- "$PROGS/trace_small" > /dev/null 2>&1
js=$("$SPENT" trace stats --json "$TMP/m.log")
check "--max-instructions 5000 yields exactly 5000 instructions" test "$(jfield "$js" instructions)" = 5000
