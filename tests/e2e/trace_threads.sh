#!/bin/bash
# tests/e2e/trace_threads.sh - a multi-threaded program: every thread's stream is complete (each
# worker's calls of tick() in the trace equal the counts the program prints) and the stream's
# chunk timestamps never go backwards.
source "$(dirname "$0")/lib.sh"
P=$PROGS/trace_threads

"$SPENT" trace -o "$TMP/t.log" -- "$P" > "$TMP/t.out" 2> "$TMP/t.err"
check "trace_threads exits 0 under spent trace" test $? -eq 0
js=$("$SPENT" trace stats --json "$TMP/t.log")
check "stats count 4 threads (main + 3 workers)" test "$(jfield "$js" threads)" = 4
check "chunk timestamps are in stream order" test "$(jfield "$js" time_ordered)" = True
check "log reads to its end record" test "$(jfield "$js" complete)" = True

sym=$(nm "$P" | awk '$3 == "tick" { print $1 }')
"$SPENT" trace dump "$TMP/t.log" > "$TMP/t.dump"
res=$(python3 - "$TMP/t.dump" "$P" "$sym" "$TMP/t.out" <<'PY'
import sys, collections
dump, prog, sym, out = sys.argv[1:5]
base = None
per_tid = collections.Counter()
want = None
for line in open(dump):
    if line.startswith("#") and " image " in line and line.split()[3] == prog and base is None:
        base = int(line.split()[-1], 16)
        want = "I  %08x," % (base + int(sym, 16))
    elif want and want in line and not line.startswith("#"):
        per_tid[int(line.split()[0])] += 1
expected = sorted(int(l.split()[1]) for l in open(out) if l.startswith("ticks"))
got = sorted(per_tid.values())
print("ok" if got == expected and len(per_tid) == 3 else f"tick() calls per thread {dict(per_tid)}, program says {expected}")
PY
)
if [ "$res" = ok ]; then pass "each worker thread's stream has all its tick() calls"; else fail "each worker thread's stream has all its tick() calls: $res"; fi
