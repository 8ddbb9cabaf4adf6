#!/bin/bash
# tests/e2e/trace_errors.sh - bad logs and bad input: a changed binary (build-id mismatch), a
# truncated log (everything up to its last complete block, then an error naming the byte), a
# corrupt block, a non-log file, bad flags; nothing partial is left behind. Also (issue "Nothing
# lost, nothing leaked, nothing hangs"): a binary rebuilt without a build-id (content hash), a
# flipped header byte (header CRC), an old format version, data after the end record, an image
# path that became a FIFO, --start naming no function, numbers with signs or garbage.
source "$(dirname "$0")/lib.sh"
SRC=$SPENT_TOP/tests/progs/trace_small.c

# changed_binary WHAT BIN LOG [GCC-FLAGS...]: trace BIN built from SRC, rebuild it changed: the
# log is refused, naming BIN and WHAT identified it ("build-id", or "content hash" without one)
changed_binary() {
	local what=$1 bin=$2 log=$3 rc
	shift 3
	gcc -O1 "$@" -o "$bin" "$SRC"
	"$SPENT" trace -o "$log" -- "$bin" 0 > /dev/null 2>&1
	"$SPENT" trace stats "$log" > /dev/null 2>&1
	check "log of the original binary ($what) reads cleanly" test $? -eq 0
	gcc -O1 -DVARIANT "$@" -o "$bin" "$SRC"
	"$SPENT" trace stats "$log" > /dev/null 2> "$log.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "changed since it was traced: $what" "$log.err" && grep -q "$bin" "$log.err"; then
		pass "changed binary is refused by its $what, named"
	else
		fail "changed binary is refused by its $what, named: rc $rc, '$(cat "$log.err")'"
	fi
}
changed_binary build-id "$TMP/prog" "$TMP/c.log"
# rebuilt without a build-id: the content hash the recorder keeps tells
changed_binary "content hash" "$TMP/nobid" "$TMP/nb.log" -Wl,--build-id=none

"$SPENT" trace -o "$TMP/t.log" -- "$PROGS/trace_threads" > /dev/null 2>&1
"$SPENT" trace dump "$TMP/t.log" > "$TMP/full.dump"
size=$(stat -c %s "$TMP/t.log")
# cut in the middle of the second block (block headers: magic, raw, comp, crc; 40-byte file header)
cut=$(python3 - "$TMP/t.log" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
p, blocks = 40, []
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
# a missing path or a plain directory is said as such, by every study, not as a format question
for study in cachesim hitcurve memmap locks; do
	"$SPENT" $study "$TMP/no-such.log" > /dev/null 2> "$TMP/nosuch.err"
	rc=$?
	check "$study: a missing log is 'No such file or directory', exit 1 (rc $rc)" sh -c \
		'test "$1" -eq 1 && grep -q "cannot read trace .*: No such file or directory" "$2"' _ $rc "$TMP/nosuch.err"
	"$SPENT" $study "$TMP" > /dev/null 2> "$TMP/dir.err"
	check "$study: a directory that is no recording is said to be one" grep -q "is a directory, not a citcat recording" "$TMP/dir.err"
done
# a TMPDIR where the FIFO cannot go: one line naming it, exit 1, no log left behind
TMPDIR="$TMP/no-such-dir" "$SPENT" trace -o "$TMP/notmp.log" -- /bin/true > /dev/null 2> "$TMP/notmp.err"
rc=$?
check "trace with a missing TMPDIR: exit 1, one line naming it (rc $rc)" test $rc -eq 1 -a \
	"$(cat "$TMP/notmp.err")" = "spent: cannot create the tool's FIFO in '$TMP/no-such-dir' (TMPDIR): No such file or directory"
check "... and no log or temporary is left" test -z "$(ls "$TMP" | grep notmp.log)"
# every reader names the path it cannot open, once, in the one wording of
# spent_trace_source_open() (trace dump said only "No such file or directory")
"$SPENT" trace dump "$TMP/no-such.log" > /dev/null 2> "$TMP/nosuch.err"
rc=$?
check "trace dump: a missing log is named, exit 1 (rc $rc)" test $rc -eq 1 -a \
	"$(cat "$TMP/nosuch.err")" = "spent: cannot read trace '$TMP/no-such.log': No such file or directory"
# trace stats opens logs as dump does: the same line for the same bad input (it said "not a
# spent trace log (bad magic ...)" for an empty file, "not a regular file" for /dev/null)
: > "$TMP/empty.log"
for bad in "$TMP/no-such.log" "$TMP/empty.log" /dev/null "$TMP/text"; do
	"$SPENT" trace dump "$bad" > /dev/null 2> "$TMP/bad-dump.err"
	"$SPENT" trace stats "$bad" > /dev/null 2> "$TMP/bad-stats.err"
	rc=$?
	check "trace stats $(basename "$bad"): exit 1, dump's one error line (rc $rc)" test $rc -eq 1 -a \
		"$(wc -l < "$TMP/bad-stats.err")" -eq 1 -a "$(cat "$TMP/bad-stats.err")" = "$(cat "$TMP/bad-dump.err")"
done
"$SPENT" trace stats /dev/null > /dev/null 2> "$TMP/bad-stats.err"
check "trace stats /dev/null: neither a log nor a recording, as for dump and the studies" test \
	"$(cat "$TMP/bad-stats.err")" = "spent: '/dev/null' is neither a spent trace log nor a citcat recording"
"$SPENT" cachesim "$TMP/text" > /dev/null 2> "$TMP/text.err"
check "a study names a non-log once, in trace dump's words" \
	test "$(cat "$TMP/text.err")" = "spent: cachesim: '$TMP/text' is neither a spent trace log nor a citcat recording"

"$SPENT" trace -o "$TMP/none.log" -- "$TMP/does-not-exist" > /dev/null 2>&1
check "a command that cannot run exits non-zero" test $? -ne 0
check "a command that cannot run leaves no log" test ! -e "$TMP/none.log"
check "no temporary files are left behind" test -z "$(ls "$TMP" | grep '\.tmp\.')"
"$SPENT" trace --max-instructions abc -- true > /dev/null 2> "$TMP/flag.err"
check "a bad --max-instructions is refused" grep -q "max-instructions takes a non-negative number.*'abc'" "$TMP/flag.err"
# the common option parser: one unknown-option message, --opt=value, --man
"$SPENT" trace --bogus -- true > /dev/null 2> "$TMP/unk.err"
rc=$?
check "an unknown option is refused with exit 2 and one message" \
	test $rc -eq 2 -a "$(cat "$TMP/unk.err")" = "spent trace: unknown option '--bogus': see 'spent trace -h'"
"$SPENT" trace --man > "$TMP/man.out"
check "--man prints the man page from the option table" grep -q -- 'no\\-children' "$TMP/man.out"
"$SPENT" trace > /dev/null 2> "$TMP/nocmd.err"
check "no command is refused" grep -q "no command to trace" "$TMP/nocmd.err"

# --max-instructions: the stream stops at exactly N
"$SPENT" trace --max-instructions 5000 -o "$TMP/m.log" -- "$PROGS/trace_small" > /dev/null 2>&1
js=$("$SPENT" trace stats --json "$TMP/m.log")
check "--max-instructions 5000 yields exactly 5000 instructions" test "$(jfield "$js" instructions)" = 5000
# on a tree the limit is each process's (each tool instance counts its own, a forked child
# from 0): every exec'd program shows its first N (the reader stopped after N of the whole
# tree, hiding processes the log holds)
"$SPENT" trace --max-instructions 20000 -o "$TMP/mt.log" -- sh -c "'$PROGS/trace_small' | cat" > /dev/null 2>&1
mt=$("$SPENT" trace stats --json "$TMP/mt.log" | python3 -c 'import json,sys; p=json.load(sys.stdin)["processes"]; print(" ".join(str(q["instructions"]) for q in p if q["start"] == "exec"))')
check "--max-instructions on a tree: each exec'd process has 20000 ($mt)" test "$mt" = "20000 20000 20000"
# the tool stops logging soon after N, not 3-4x later: a small loop is one superblock with a
# side exit per unrolled copy, whose fall-through used to count only the first copy (the log's
# own count is read with the header's limit cleared)
cat > "$TMP/loop.c" <<'C'
#include <stdio.h>
volatile long s;
int main(void) { for (long i = 0; i < 3000000; i++) s += i; printf("%ld\n", s); return 0; }
C
cc -O1 -o "$TMP/loop" "$TMP/loop.c"
"$SPENT" trace --max-instructions 1000000 -o "$TMP/ml.log" -- "$TMP/loop" > /dev/null 2>&1
python3 - "$TMP/ml.log" "$TMP/ml-nomax.log" <<'PY'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
d[24:32] = bytes(8)
d[36:40] = struct.pack("<I", zlib.crc32(bytes(d[0:36])))
open(sys.argv[2], "wb").write(d)
PY
logged=$(jfield "$("$SPENT" trace stats --json "$TMP/ml-nomax.log")" instructions)
check "--max-instructions 1000000 stops logging soon after (logged ${logged:-none}, 18 M in the run)" \
	test "${logged:-0}" -ge 1000000 -a "${logged:-0}" -le 1050000
check "dump --limit=N (the --opt=value form) prints N instructions" \
	test "$("$SPENT" trace dump --limit=7 "$TMP/m.log" | grep -c ' I  ')" = 7


# the header has a CRC: byte 24 (max_insns) flipped made stats report 16 instructions, exit 0
"$SPENT" trace -o "$TMP/h.log" -- "$PROGS/trace_small" > /dev/null 2>&1
cp "$TMP/h.log" "$TMP/h24.log"
printf '\x10' | dd of="$TMP/h24.log" bs=1 seek=24 conv=notrunc 2> /dev/null
"$SPENT" trace stats "$TMP/h24.log" > "$TMP/h24.out" 2> "$TMP/h24.err"
rc=$?
check "flipped header byte 24: stats exits 1" test $rc -eq 1
check "flipped header byte 24: the error names the header checksum" grep -q "corrupt log: header checksum mismatch" "$TMP/h24.err"
check "flipped header byte 24: no instruction count is printed" test ! -s "$TMP/h24.out"
python3 - "$TMP/h.log" "$TMP/v1.log" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[8:12] = (1).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)
PY
"$SPENT" trace dump "$TMP/v1.log" > /dev/null 2> "$TMP/v1.err"
rc=$?
check "a version 1 log is refused with exit 1" test $rc -eq 1
check "a version 1 log is refused naming both versions" grep -q "trace log format version 1 is not supported: this spent reads versions 3 to 6" "$TMP/v1.err"
# a damaged version field (one byte flipped) is corruption, not "written by a newer spent"
cp "$TMP/v1.log" "$TMP/vx.log"
printf '\xaa' | dd of="$TMP/vx.log" bs=1 seek=10 conv=notrunc 2> /dev/null
"$SPENT" trace stats "$TMP/vx.log" > /dev/null 2> "$TMP/vx.err"
check "a flipped version byte is a header checksum mismatch ($(cat "$TMP/vx.err"))" \
	grep -q "corrupt log: header checksum mismatch (bytes 0-35; its version field reads" "$TMP/vx.err"

# anything after the end record is corruption, not ignored
cp "$TMP/h.log" "$TMP/tail.log"
printf 'trailing bytes' >> "$TMP/tail.log"
"$SPENT" trace stats "$TMP/tail.log" > /dev/null 2> "$TMP/tail.err"
rc=$?
check "data after the end record: stats exits 1" test $rc -eq 1
check "data after the end record: a corrupt-log error" grep -q "corrupt log: 14 bytes after the end record" "$TMP/tail.err"

# an image path the log names that became a FIFO: an error, never a hang
cp "$PROGS/trace_small" "$TMP/fifoprog"
"$SPENT" trace -o "$TMP/f.log" -- "$TMP/fifoprog" > /dev/null 2>&1
rm "$TMP/fifoprog" && mkfifo "$TMP/fifoprog"
timeout 20 "$SPENT" trace stats "$TMP/f.log" > /dev/null 2> "$TMP/f.err"
rc=$?
check "image path now a FIFO: stats does not hang (rc $rc)" test $rc -ne 124
check "image path now a FIFO: stats fails naming the image" grep -q "image '$TMP/fifoprog' changed since it was traced" "$TMP/f.err"
timeout 20 "$SPENT" cachesim "$TMP/f.log" > /dev/null 2>&1
check "image path now a FIFO: cachesim does not hang" test $? -ne 124
rm -f "$TMP/fifoprog"

# --start with a symbol that is never entered: an error naming it, no 0-instruction log
"$SPENT" trace -o "$TMP/s.log" --start nosuchsym -- "$PROGS/trace_small" > /dev/null 2> "$TMP/s.err"
rc=$?
check "--start nosuchsym exits 1" test $rc -eq 1
check "--start nosuchsym names the symbol" grep -q "^spent: --start 'nosuchsym': no function of that name was entered" "$TMP/s.err"
check "--start nosuchsym writes no log" test ! -e "$TMP/s.log"
"$SPENT" trace -o "$TMP/m.log" --start main -- "$PROGS/trace_small" > /dev/null 2>&1
n=$(jfield "$("$SPENT" trace stats --json "$TMP/m.log")" instructions)
check "--start main still traces ($n instructions)" test "${n:-0}" -gt 1000

# numbers: one strict parser (no blanks, signs, garbage, overflow)
for bad in ' -1' '-1' '12abc' '99999999999999999999999' '' '1 '; do
	"$SPENT" trace --max-instructions "$bad" -- true > /dev/null 2> "$TMP/n.err"
	rc=$?
	check "--max-instructions '$bad' is refused with exit 2" test $rc -eq 2
	"$SPENT" trace dump --limit "$bad" "$TMP/h.log" > /dev/null 2> "$TMP/n.err"
	rc=$?
	check "dump --limit '$bad' is refused with exit 2" test $rc -eq 2
done

# a log outlives a rebuild of spent: the client runs Valgrind's trampoline page, which lies in
# the tool binary; it is logged with its bytes (as the vDSO), so a changed tool binary does not
# make the log unreadable ("image '.../spent-amd64-linux' changed since it was traced")
cp -a "$SPENT_BUILD/valgrind/lib" "$TMP/vglib"
SPENT_VALGRIND_LIB=$TMP/vglib "$SPENT" trace -o "$TMP/rebuilt.log" -- "$PROGS/trace_small" > /dev/null 2>&1
printf 'x' >> "$TMP/vglib/spent-amd64-linux"
"$SPENT" trace stats "$TMP/rebuilt.log" > /dev/null 2> "$TMP/rebuilt.err"
check "a log reads after the tool binary changed ($?: $(head -c 200 "$TMP/rebuilt.err"))" test ! -s "$TMP/rebuilt.err"
