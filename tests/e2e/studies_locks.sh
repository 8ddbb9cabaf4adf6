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

# a thread pool on a condition variable: a worker waiting in pthread_cond_wait does not hold
# the mutex. By construction (tests/progs/studies_condpool.c) the main thread holds `mtx` for
# TASKS x IN_WORK loop iterations (>= 3 instructions each) and the long work is outside it.
P=$PROGS/studies_condpool
"${E[@]}" "$SPENT" trace -o "$TMP/cp.log" -- "$P" > "$TMP/cp.out" 2> "$TMP/cp.err"
check "studies_condpool runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/cp.log" --json --svg "$TMP/cp.svg" > "$TMP/cp.json" 2> "$TMP/cpl.err"
check "locks on the pool exits 0" test $? -eq 0
n=$("$SPENT" trace stats "$TMP/cp.log" | awk '$1 == "instructions" { print $2 }')
python3 - "$TMP/cp.json" "$TMP/cp.out" "$n" "$TMP/cp.svg" <<'PY'
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = dict(l.split() for l in open(sys.argv[2]))
tasks, inw, outw, n = int(prog["tasks"]), int(prog["in_work"]), int(prog["out_work"]), int(sys.argv[3])
m = [r for r in rows if r["symbol"] == "mtx"]
def check(name, ok):
    print(("PASS " if ok else "FAIL ") + name)
check("pool: the mutex mtx is found", len(m) == 1)
if m:
    m = m[0]
    check(f"pool: mtx held at least tasks x in_work x 3 = {tasks * inw * 3} ({m['total_hold']})",
          m["total_hold"] >= tasks * inw * 3)
    check(f"pool: mtx held at most 10% of the run ({m['total_hold']} of {n}): cond waits release it",
          m["total_hold"] <= n // 10)
    check(f"pool: no hold spans the work done outside the lock ({m['max_hold']} < {outw})",
          m["max_hold"] < outw)
    check("pool: all three threads held it", len(m["holders"]) == 3)
check("pool: no lock is held longer than the trace", all(r["total_hold"] <= n for r in rows))
check("pool: the condvar cv is no lock", not any(r["symbol"].startswith("cv") for r in rows))
# the timeline: no two threads hold one lock at once
iv = {}
for t in re.findall(r"<title>tid (\d+) holds (\S+) \[(\d+), (\d+)\)</title>", open(sys.argv[4]).read()):
    iv.setdefault(t[1], []).append((int(t[2]), int(t[3]), t[0]))
overlap = 0
for k, v in iv.items():
    v.sort()
    overlap += sum(1 for a, b in zip(v, v[1:]) if b[0] < a[1] and b[2] != a[2])
check(f"pool: no lock held by two threads at once ({sum(map(len, iv.values()))} holds)", overlap == 0 and iv)
PY
check "pool: the band labels are inside the picture, above their bands" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
labs = [e for e in r.iter("{http://www.w3.org/2000/svg}text") if (e.text or "").startswith("instructions ")]
ok = len(labs) == 4 and all(float(e.get("x")) >= 0 and e.get("text-anchor") == "start" for e in labs)
sys.exit(0 if ok else 1)' "$TMP/cp.svg"
