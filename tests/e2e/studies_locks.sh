#!/bin/bash
# tests/e2e/studies_locks.sh - `spent locks` on a three-thread program contending for one mutex
# `mtx` reports, for that lock, the program's own counts (acquisitions; contended acquisitions,
# which the program counts with a failed trylock), all three threads as holders, waiters, and
# writes a timeline SVG with holds and spins.
source "$(dirname "$0")/lib.sh"
P=$PROGS/studies_mutex
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" trace -o "$TMP/m.log" -- "$P" > "$TMP/m.out" 2> "$TMP/m.err"
check "studies_mutex runs under spent trace" test $? -eq 0
want_c=$(awk '/^contended/ { print $2 }' "$TMP/m.out")
want_a=$(awk '/^acquired/ { print $2 }' "$TMP/m.out")
"$SPENT" locks "$TMP/m.log" --json --svg "$TMP/locks.svg" > "$TMP/l.json" 2> "$TMP/l.err"
check "locks --json exits 0" test $? -eq 0
line=$(grep '"symbol":"mtx"' "$TMP/l.json")
check "the mutex is found and named 'mtx'" test -n "$line"
check "the program saw contention (test is not trivial)" test "${want_c:-0}" -gt 0
check "acquisitions equal the program's count ($want_a)" test "$(jfield "$line" acquisitions)" = "$want_a"
check "contended acquisitions equal the program's failed trylocks ($want_c)" \
	test "$(jfield "$line" contended)" = "$want_c"
check "three threads held it" python3 -c 'import json,sys; sys.exit(len(json.loads(sys.argv[1])["holders"]) != 3)' "$line"
check "waiters are listed" python3 -c 'import json,sys; sys.exit(len(json.loads(sys.argv[1])["waiters"]) < 2)' "$line"
check "futex waits were seen on it" test "$(jfield "$line" futex_waits)" -gt 0
check "hold time is within the run" python3 -c '
import json, sys
o = json.loads(sys.argv[1]); n = int(sys.argv[2])
sys.exit(0 if 0 < o["total_hold"] <= n and o["max_hold"] <= o["total_hold"] else 1)' "$line" \
	"$("$SPENT" trace stats --json "$TMP/m.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')"
check "the timeline SVG parses and has hold bars and spin lines" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
t = [e.text or "" for e in r.iter("{http://www.w3.org/2000/svg}title")]
sys.exit(0 if any(" holds mtx" in x for x in t) and any("spins on mtx" in x for x in t) else 1)' "$TMP/locks.svg"
"$SPENT" locks "$TMP/m.log" > "$TMP/human.txt"
check "the human table has a row for mtx" grep -q ' mtx ' "$TMP/human.txt"
