#!/bin/bash
# tests/e2e/studies_falseshare.sh - `spent cachesim --cores 2` on a two-thread program whose
# counters share one cache line names that line as false sharing by its variable (`counters`,
# checked against nm); padded 64 bytes apart, the line disappears.
source "$(dirname "$0")/lib.sh"
P=$PROGS/studies_falseshare
E=(env -i PATH=/usr/bin:/bin)
caddr=$(nm "$P" | awk '$3 == "counters" { print $1 }')

for mode in adjacent pad; do
	arg=; [ $mode = pad ] && arg=pad
	"${E[@]}" "$SPENT" trace -o "$TMP/$mode.log" -- "$P" $arg > "$TMP/$mode.out" 2> "$TMP/$mode.err"
	check "$mode: program counts 800000 under spent trace" grep -qx 800000 "$TMP/$mode.out"
	"$SPENT" cachesim "$TMP/$mode.log" --cores 2 --json > "$TMP/$mode.json" 2> "$TMP/$mode.cerr"
	check "$mode: cachesim --cores 2 exits 0" test $? -eq 0
done

# the row naming counters: address in the same place of its page as nm's (PIE load bias aside)
row() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("symbol") == "counters": print(o["shared_line"], o["false_sharing"], o["writers"], o["invalidations"])' "$1"
}
read -r line fs writers inv < <(row "$TMP/adjacent.json")
check "adjacent: a shared line is named 'counters'" test -n "$line"
check "adjacent: the counters line is flagged as false sharing" test "$fs" = True
check "adjacent: two cores wrote it" test "$writers" = 2
check "adjacent: it was invalidated at least twice" test "${inv:-0}" -ge 2
check "adjacent: the line is counters' line per nm (same offset in its page)" \
	test $(( (0x${line#0x} & 0xfff) )) -eq $(( (0x$caddr & 0xfc0) ))
check "padded: no shared line is named 'counters'" test -z "$(row "$TMP/pad.json")"

"$SPENT" cachesim "$TMP/adjacent.log" --cores 2 > "$TMP/human.txt"
check "the human table lists counters as false sharing" grep -Eq 'yes +counters$' "$TMP/human.txt"
"$SPENT" cachesim "$TMP/adjacent.log" --cores 99 > /dev/null 2> "$TMP/cores.err"
check "--cores beyond 64 is refused" test $? -eq 2

# a tree: a shell running the program twice. Each process names its lines by its own images
# (tagged as its addresses are): before, one table of every image the tree loaded named both
# programs' counters line by the shell's PLT symbols mapped there first (qsort@plt).
"${E[@]}" "$SPENT" trace -o "$TMP/tree.log" -- /bin/sh -c "'$P'; '$P'" > "$TMP/tree.out" 2> "$TMP/tree.err"
check "tree: both programs count 800000 under spent trace" test "$(grep -cx 800000 "$TMP/tree.out")" = 2
"$SPENT" cachesim "$TMP/tree.log" --cores 2 --json > "$TMP/tree.json" 2> "$TMP/tree.cerr"
check "tree: cachesim --cores 2 exits 0" test $? -eq 0
"$SPENT" trace stats "$TMP/tree.log" | awk -v p="$P" '$5 == "exec" && $9 == p { print $2 }' | sort > "$TMP/tree.pids"
check "tree: stats lists the two programs' pids" test "$(wc -l < "$TMP/tree.pids")" = 2
# each line is shown as the program's address (no process tag in bits 48-63) with its pid
check "tree: each program's false-shared line is named 'counters', shown with its pid" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if "shared_line" in l]
fs = [r for r in rows if r["false_sharing"] and r["writers"] == 2 and r["invalidations"] >= 100]
pids = sorted(str(r.get("pid")) for r in fs)
want = open(sys.argv[2]).read().split()
print([(r["shared_line"], r.get("pid"), r["symbol"]) for r in fs], want)
sys.exit(0 if len(fs) == 2 and pids == sorted(want) and all(r["symbol"] == "counters" for r in fs)
         and all(int(r["shared_line"], 16) >> 48 == 0 for r in fs) else 1)' "$TMP/tree.json" "$TMP/tree.pids"
"$SPENT" cachesim "$TMP/tree.log" --cores 2 > "$TMP/tree.txt"
check "tree: the human table has a pid column with both programs' counters lines" \
	test "$(awk 'NR == FNR { want[$1] = 1; next } $1 ~ /^0x/ && ($2 in want) && $NF == "counters" { n++ } END { print n + 0 }' \
		"$TMP/tree.pids" "$TMP/tree.txt")" = 2
