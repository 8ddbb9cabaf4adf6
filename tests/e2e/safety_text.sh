#!/bin/bash
# tests/e2e/safety_text.sh - the text outputs of every command stay one line per row, and no
# byte of a name reaches the terminal as a control character, when the names come from hostile
# files: a program path holding an escape sequence (ESC [ 3 1 m) and a newline (also its comm),
# a symbol holding one in a patched ELF, a shell's `-c` script of two lines, a shim tag. Such names
# show escaped (core/text.h: \n, \t, \xHH); the SVGs built from them are well-formed XML.
# Before, `trace stats` broke a `python3 -c` script's row into lines, and a symbol's escape
# sequence recoloured the terminal of `spent report`. (safety_json.sh: the same names in JSON.)
source "$(dirname "$0")/lib.sh"
NL=$'\n'
ESC=$'\033'
PROG="$TMP/p$ESC[31m${NL}x"	# the program: p ESC [31m <newline> x
SHOWN='p\x1b[31m\nx'		# how a table shows it
gcc -g -O1 -fno-inline -o "$PROG" "$SPENT_TOP/tests/progs/demo.c"
# the symbol `heavy` renamed in place to h ESC [1m (same length; .symtab and .debug_str)
python3 - "$PROG" <<'PY'
import sys
p = sys.argv[1]
d = open(p, "rb").read()
assert b"heavy\0" in d
open(p, "wb").write(d.replace(b"heavy\0", b"h\x1b[1m\0"))
PY
SYM_SHOWN='h\x1b[1m'
cp "$PROGS/studies_mutex" "$TMP/m$ESC[1mutex"

# clean NAME FILE [SHOWN...]: FILE is not empty, holds no control character but newline (C0,
# DEL, C1; a tab too when TABS=1) and no byte that is not UTF-8, and each SHOWN is in it
clean() {
	local name=$1 file=$2; shift 2
	local why
	why=$(TABS=${TABS:-0} python3 - "$file" "$@" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
if not data:
    print("no output"); sys.exit()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print("not UTF-8: %s" % e); sys.exit()
ok = "\n\t" if os.environ["TABS"] == "1" else "\n"
bad = [c for c in text if (ord(c) < 0x20 and c not in ok) or 0x7f <= ord(c) < 0xa0]
if bad:
    i = text.index(bad[0])
    print("control character %r in %r" % (bad[0], text[max(0, i - 40):i + 20])); sys.exit()
for s in sys.argv[2:]:
    if s not in text:
        print("%r not in the output (%r...)" % (s, text[:300])); sys.exit()
print("ok")
PY
)
	if [ "$why" = ok ]; then pass "text: $name"; else fail "text: $name: $why"; fi
}

# well_formed NAME SVG: python3's XML parser reads the whole file
well_formed() {
	check "svg: $1 is well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$2"
}

# ---- trace: a process tree whose shell script has two lines and runs the program ----
"$SPENT" trace -o "$TMP/t.log" -- /bin/sh -c "\"\$0\" 0.005${NL}true" "$PROG" > /dev/null 2>&1
"$SPENT" trace stats "$TMP/t.log" > "$TMP/ts.txt"
clean "trace stats" "$TMP/ts.txt" "$SHOWN" '0.005\ntrue'
# one row per process below the table's header, each starting with its stream number
rows=$(sed -n '/^stream /,$p' "$TMP/ts.txt" | tail -n +2)
check "trace stats: one row per process, every row a stream's" \
	test "$(grep -c . <<<"$rows")" -eq 3 -a "$(grep -cv '^[0-9]' <<<"$rows")" -eq 0
# the shell's record, then the program's (a process picked by its program's name)
"$SPENT" trace dump "$TMP/t.log" --limit 2000 > "$TMP/td.txt"
clean "trace dump (the shell's two-line script)" "$TMP/td.txt" '0.005\ntrue'
"$SPENT" trace dump "$TMP/t.log" --comm "$(basename "$PROG")" --limit 2000 > "$TMP/td2.txt"
clean "trace dump --comm (the program's path and argv)" "$TMP/td2.txt" "exec $TMP/$SHOWN: $TMP/$SHOWN 0.005"
check "trace dump: the shell's process record is one line" grep -qF "/bin/sh -c \"\$0\" 0.005\\ntrue $TMP/$SHOWN" "$TMP/td.txt"
"$SPENT" trace -o "$TMP/m.log" -- "$TMP/m$ESC[1mutex" > /dev/null 2>&1
"$SPENT" locks "$TMP/m.log" --svg "$TMP/locks.svg" > "$TMP/lk.txt"
clean "locks (program column)" "$TMP/lk.txt" 'm\x1b[1mutex'
well_formed "locks --svg" "$TMP/locks.svg"

# ---- record, report, annotate: the symbol and the image ----
"$SPENT" record -g -o "$TMP/prof" -- "$PROG" 0.3 > /dev/null 2>&1
"$SPENT" report -i "$TMP/prof" > "$TMP/r.txt"
clean "report (symbol and image)" "$TMP/r.txt" "$SYM_SHOWN" "$SHOWN"
"$SPENT" report -i "$TMP/prof" -g > "$TMP/rg.txt"
clean "report -g (call chains)" "$TMP/rg.txt" "$SYM_SHOWN"
"$SPENT" report -i "$TMP/prof" --diff "$TMP/prof" > "$TMP/rd.txt"
clean "report --diff" "$TMP/rd.txt" "$SYM_SHOWN"
"$SPENT" report -i "$TMP/prof" --sort comm,function > "$TMP/rw.txt"
clean "report --sort comm,function" "$TMP/rw.txt" "$SYM_SHOWN"
"$SPENT" annotate -i "$TMP/prof" $'h\033[1m' > "$TMP/an.txt" 2>&1
# (the source lines are shown as the file has them, tabs and all)
TABS=1 clean "annotate (header)" "$TMP/an.txt" "# $SYM_SHOWN in "
# db dump: tab-separated, one count per line, its detail rows' comm and frames too
"$SPENT" db "$TMP/prof" dump > "$TMP/dump.txt"
TABS=1 clean "db dump" "$TMP/dump.txt" "$TMP/$SHOWN	" "	$(basename "$SHOWN")	"
check "db dump: every line has its 4 fields, every detail row 9" python3 -c '
import sys
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    n = len(l.split("\t"))
    assert n == (9 if l.startswith("[detail]") else 4), (n, l)' "$TMP/dump.txt"
"$SPENT" report -i "$TMP/prof" --flamegraph "$TMP/fg.svg" > /dev/null 2>&1
well_formed "report --flamegraph" "$TMP/fg.svg"
check "svg: the flame graph keeps the symbol's printable part" grep -q 'h\[1m' "$TMP/fg.svg"

# ---- stat: the comm of each thread ----
"$SPENT" stat --per-thread -e task-clock -o "$TMP/st.txt" -- "$PROG" 0.05 > /dev/null
clean "stat --per-thread" "$TMP/st.txt" 'p\x1b[31m\nx-'

# ---- shim: a tag (signal) name, shown by the run and by its sample file's dump ----
"$SPENT" shim --tag "t$ESC[1m${NL}g=phase" --buffer 1000 -o "$TMP/run.shim" -- "$PROGS/shim_phases" 0.1 \
	> "$TMP/shim.out" 2> /dev/null
clean "shim (histogram of the tag)" "$TMP/shim.out" "histogram of tag 't\x1b[1m\ng'"
"$SPENT" shim dump "$TMP/run.shim" --limit 5 > "$TMP/shimd.txt" 2> /dev/null
clean "shim dump (the sample file's signal names)" "$TMP/shimd.txt" 't\x1b[1m\ng'
