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
# pool_check NAME LOG OUT [PID]: those checks on the pool of LOG (process PID of a tree), whose
# output is OUT; writes $TMP/NAME.json and .svg
pool_check() {
	local name=$1 log=$2 out=$3 pid=${4:-}
	"$SPENT" locks "$log" --json --svg "$TMP/$name.svg" ${pid:+--pid "$pid"} > "$TMP/$name.json" 2> "$TMP/$name.err"
	check "$name: locks exits 0" test $? -eq 0
	[ -s "$log.stats" ] || "$SPENT" trace stats --json "$log" > "$log.stats" 2>/dev/null
	python3 - "$TMP/$name.json" "$out" "$log.stats" "$TMP/$name.svg" "$name" "$pid" <<'PY'
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = dict(l.split() for l in open(sys.argv[2]))
tasks, inw, outw = int(prog["tasks"]), int(prog["in_work"]), int(prog["out_work"])
procs = json.load(open(sys.argv[3]))["processes"]
name, pid = sys.argv[5], sys.argv[6]
n = sum(p["instructions"] for p in procs if not pid or str(p["pid"]) == pid)
m = [r for r in rows if r["symbol"] == "mtx"]
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + name + ": " + what)
check("the mutex mtx is found", len(m) == 1)
if m:
    m = m[0]
    check(f"mtx held at least tasks x in_work x 3 = {tasks * inw * 3} ({m['total_hold']})",
          m["total_hold"] >= tasks * inw * 3)
    check(f"mtx held at most 10% of the run ({m['total_hold']} of {n}): cond waits release it",
          m["total_hold"] <= n // 10)
    check(f"no hold spans the work done outside the lock ({m['max_hold']} < {outw})",
          m["max_hold"] < outw)
    check("all three threads held it", len(m["holders"]) == 3)
    check(f"mtx acquired at least once a task by main and by a worker ({m['acquisitions']})",
          m["acquisitions"] >= 2 * tasks)
check("no lock is held longer than the trace", all(r["total_hold"] <= n for r in rows))
check("the condvar cv is no lock", not any(r["symbol"].startswith("cv") for r in rows))
# the timeline: no two threads hold one lock at once
iv = {}
for t in re.findall(r"<title>tid (\d+) holds (\S+) \[(\d+), (\d+)\)</title>", open(sys.argv[4]).read()):
    iv.setdefault(t[1], []).append((int(t[2]), int(t[3]), t[0]))
overlap = 0
for k, v in iv.items():
    v.sort()
    overlap += sum(1 for a, b in zip(v, v[1:]) if b[0] < a[1] and b[2] != a[2])
check(f"no lock held by two threads at once ({sum(map(len, iv.values()))} holds)", overlap == 0 and iv)
PY
}
P=$PROGS/studies_condpool
"${E[@]}" "$SPENT" trace -o "$TMP/cp.log" -- "$P" > "$TMP/cp.out" 2> "$TMP/cp.err"
check "studies_condpool runs under spent trace" test $? -eq 0
pool_check pool "$TMP/cp.log" "$TMP/cp.out"
# a tree of two pools whose libcs are mapped at different addresses (the second links more
# libraries before it): each process's calls are found by its own images' symbols, and its
# variables named by them (one table for the tree lost the second's mutex, named another's).
# The second waits in pthread_cond_timedwait: glibc 2.36's .dynsym lists its compat version
# (@GLIBC_2.2.5) before the default one programs call; watching the compat entry, a worker's
# whole wait was a hold.
cc -O1 -pthread -o "$TMP/condpool_shifted" "$SPENT_TOP/tests/progs/studies_condpool.c" \
	-Wl,--no-as-needed -lstdc++ -lm
"${E[@]}" "$SPENT" trace -o "$TMP/cptree.log" -- /bin/sh -c \
	"'$P' > '$TMP/cptree1.out'; '$TMP/condpool_shifted' timed > '$TMP/cptree2.out'" 2> "$TMP/cptree.err"
check "two pools in a tree run under spent trace" test $? -eq 0
"$SPENT" trace stats --json "$TMP/cptree.log" > "$TMP/cptree.log.stats" 2>/dev/null
pids=$(python3 -c '
import json, sys
ps = json.load(sys.stdin)["processes"]
print(" ".join(str(p["pid"]) for p in ps if "condpool" in p.get("path", "") or "condpool" in p.get("exe", "")))' < "$TMP/cptree.log.stats")
set -- $pids
check "two pool processes in the tree ($pids)" test $# -eq 2
# (the first pool is the one above; the whole-tree row check below covers it in the tree)
[ $# -eq 2 ] && pool_check tree_shifted_timedwait "$TMP/cptree.log" "$TMP/cptree2.out" "$2"
"$SPENT" locks "$TMP/cptree.log" --json > "$TMP/cptree.json" 2>/dev/null
check "the whole tree: one mtx row per pool process" \
	test "$(grep -c '"symbol":"mtx"' "$TMP/cptree.json")" = 2
check "pool: the band labels are inside the picture, above their bands" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
labs = [e for e in r.iter("{http://www.w3.org/2000/svg}text") if (e.text or "").startswith("instructions ")]
ok = len(labs) == 4 and all(float(e.get("x")) >= 0 and e.get("text-anchor") == "start" for e in labs)
sys.exit(0 if ok else 1)' "$TMP/pool.svg"

# a recursive mutex taken again by its holder (tests/progs/studies_recursive.c): the inner
# lock is no acquisition, and each hold runs from the outer lock to the outer unlock, at least
# IN_WORK loop iterations (>= 3 instructions each) past the inner unlock, never across the
# OUT_WORK outside it (a hold ended at the inner unlock before: max_hold was ~100)
"${E[@]}" "$SPENT" trace -o "$TMP/r.log" -- "$PROGS/studies_recursive" > "$TMP/r.out" 2> "$TMP/r.err"
check "studies_recursive runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/r.log" --json > "$TMP/r.json" 2> "$TMP/r.lerr"
check "locks on the recursive mutex's log exits 0" test $? -eq 0
python3 - "$TMP/r.json" "$TMP/r.out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = dict(l.split() for l in open(sys.argv[2]))
tasks, threads = int(prog["tasks"]), int(prog["threads"])
inw, outw = int(prog["in_work"]), int(prog["out_work"])
m = [r for r in rows if r["symbol"] == "rmtx"]
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "recursive: " + what)
check("the mutex rmtx is found", len(m) == 1)
if m:
    r = m[0]
    check("acquisitions are the outer locks only (%d, want %d)" % (r["acquisitions"], tasks * threads),
          r["acquisitions"] == tasks * threads)
    check("every hold lasts past the inner unlock (total %d >= %d)" % (r["total_hold"], 3 * inw * tasks * threads),
          r["total_hold"] >= 3 * inw * tasks * threads)
    check("no hold spans the work outside the lock (max %d < %d)" % (r["max_hold"], 3 * outw),
          3 * inw <= r["max_hold"] < 3 * outw)
PY

# synchronization that is no lock (tests/progs/studies_notlocks.c): semaphores and the dynamic
# linker's lazy binding (each worker's first call of a libc function stores 1 into its scope
# flag and resets it with an xchg, a spin lock's pattern the other way round), a counter freed
# and reused and an xchg'd list head beside the mutex mtx, two bare spin locks and the
# read-write lock rw (taken by writers); then the program execs itself in the same pid.
# Before, each worker "held" its scope flag from one lazy binding to the next (120162
# instructions, across the work outside any lock), the heap semaphore was held until its
# freed memory was written again, and the two programs' mtx were one row with both programs'
# acquisitions.
P=$PROGS/studies_notlocks
check "studies_notlocks binds lazily (else the test shows nothing)" \
	sh -c "! readelf -d '$P' | grep -Eq 'BIND_NOW|FLAGS_1.* NOW'"
"${E[@]}" "$SPENT" trace -o "$TMP/nl.log" -- "$P" exec > "$TMP/nl.out" 2> "$TMP/nl.err"
check "studies_notlocks and its exec run under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/nl.log" --json > "$TMP/nl.json" 2> "$TMP/nl.lerr"
check "locks on studies_notlocks exits 0" test $? -eq 0
python3 - "$TMP/nl.json" "$TMP/nl.out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = {}
for l in open(sys.argv[2]):
    k, v = l.split()
    prog[k] = int(v)
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "notlocks: " + what)
for name in ("mtx", "spin_flag", "spin_word"):
    m = [r for r in rows if r["symbol"] == name]
    check("%s: one row for each of the two programs of the pid (%s)" % (name, [(r["pid"], r.get("stream")) for r in m]),
          len(m) == 2 and m[0]["pid"] == m[1]["pid"] and m[0].get("stream") != m[1].get("stream")
          and all(r.get("exe", "").endswith("/studies_notlocks") for r in m))
    check("%s: each program's acquired as often as it says, by both workers (%s, want %d)"
          % (name, [r["acquisitions"] for r in m], prog["lock_acquisitions"]),
          all(r["acquisitions"] == prog["lock_acquisitions"] and len(r["holders"]) == 2 for r in m))
    check("%s: held at least in_work x 3 instructions each time (%s)" % (name, [r["total_hold"] for r in m]),
          all(r["total_hold"] >= prog["lock_acquisitions"] * prog["in_work"] * 3 for r in m))
check("the semaphores are no locks (%s)" % [r["symbol"] for r in rows],
      not any(r["symbol"].startswith("sem_") for r in rows))
rw = [r for r in rows if r["symbol"] == "rw"]
check("rw: a read-write lock taken by writers only, in each program (%s)"
      % [(r["how"], r["acquisitions"], r.get("read_acquisitions")) for r in rw],
      len(rw) == 2 and all(r["how"] == "pthread_rwlock" and r["read_acquisitions"] == 0 and
                           r["acquisitions"] == prog["lock_acquisitions"] for r in rw))
check("no other bare atomic is taken for a lock (%s)"
      % [(r["lock"], r["max_hold"]) for r in rows if r["how"] == "atomic" and not r["symbol"].startswith("spin_")],
      all(r["symbol"].startswith("spin_") for r in rows if r["how"] == "atomic"))
check("no hold spans the work outside the locks (max %d < %d)"
      % (max(r["max_hold"] for r in rows), prog["out_work"]),
      all(r["max_hold"] < prog["out_work"] for r in rows))
PY
