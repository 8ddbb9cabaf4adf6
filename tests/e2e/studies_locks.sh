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
check("no holder ran more of a hold than the hold spans",
      all(r["own_total_hold"] <= r["total_hold"] and r["own_max_hold"] <= r["max_hold"] for r in rows))
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

# read-write locks (tests/progs/studies_rwlock.c, whose output counts what it did): two readers
# holding `rw` at once (they meet at a barrier inside), writers in turn, a writer waiting for a
# sleeping reader and a reader for a sleeping writer, a reader's re-take, and every call that
# must fail (EBUSY, ETIMEDOUT) while main holds it. Readers' holds overlap; a writer's never
# overlaps another thread's hold; failed calls are no acquisitions.
"${E[@]}" "$SPENT" trace -o "$TMP/rw.log" -- "$PROGS/studies_rwlock" > "$TMP/rw.out" 2> "$TMP/rw.err"
check "studies_rwlock runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/rw.log" --json --svg "$TMP/rw.svg" > "$TMP/rw.json" 2> "$TMP/rw.lerr"
check "locks on studies_rwlock exits 0" test $? -eq 0
"$SPENT" locks "$TMP/rw.log" > "$TMP/rw.txt" 2>/dev/null
check "the human table gives rw's read acquisitions" \
	awk -v want="$(awk '$1 == "reads" { print $2 }' "$TMP/rw.out")" \
	'$4 == "rw" && $5 == "pthread_rwlock" && $7 == want { f = 1 } END { exit !f }' "$TMP/rw.txt"
python3 - "$TMP/rw.json" "$TMP/rw.out" "$TMP/rw.svg" <<'PY'
import json, re, sys
rows = {r["symbol"]: r for r in map(json.loads, open(sys.argv[1]))}
prog = {k: int(v) for k, v in (l.split() for l in open(sys.argv[2]))}
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "rwlock: " + what)
rw, rt = rows.get("rw"), rows.get("rw_try")
check("rw and rw_try are found as read-write locks", rw and rt and
      rw["how"] == rt["how"] == "pthread_rwlock")
if rw and rt:
    check("rw: acquisitions by readers and writers as the program counts them (%d + %d, want %d + %d)"
          % (rw["read_acquisitions"], rw["acquisitions"] - rw["read_acquisitions"], prog["reads"], prog["writes"]),
          rw["read_acquisitions"] == prog["reads"] and rw["acquisitions"] == prog["reads"] + prog["writes"])
    check("rw: the two waits are its contended acquisitions (%d, want %d)" % (rw["contended"], prog["contended"]),
          rw["contended"] == prog["contended"] and len(rw["waiters"]) == 2)
    check("rw: held by both workers and main (%s)" % rw["holders"], len(rw["holders"]) == 3)
    check("rw_try: one read and one write (%d, %d)" % (rt["acquisitions"], rt["read_acquisitions"]),
          rt["acquisitions"] == prog["try_reads"] + prog["try_writes"] and rt["read_acquisitions"] == prog["try_reads"])
    check("no hold spans the work outside (max %d < %d)" % (rw["max_hold"], 3 * prog["out_work"]),
          rw["max_hold"] < 3 * prog["out_work"])
iv = set(re.findall(r"<title>tid (\d+) (holds|reads) rw \[(\d+), (\d+)\)</title>", open(sys.argv[3]).read()))
iv = [(int(a), int(b), t, k) for t, k, a, b in iv]
reads = [x for x in iv if x[3] == "reads"]
writes = [x for x in iv if x[3] == "holds"]
check("one interval per acquisition (%d reads, %d writes)" % (len(reads), len(writes)),
      len(reads) == prog["reads"] and len(writes) == prog["writes"])
check("each hold lasts its in_work at least (shortest %d >= %d)" % (min(b - a for a, b, _, _ in iv), 3 * prog["in_work"]),
      min(b - a for a, b, _, _ in iv) >= 3 * prog["in_work"])
over = lambda x, y: x[2] != y[2] and x[0] < y[1] and y[0] < x[1]
shared = sum(over(x, y) for i, x in enumerate(reads) for y in reads[i + 1:])
check("readers held it together in each of the 4 barrier phases (%d overlapping pairs)" % shared, shared >= 4)
clash = [(w, x) for w in writes for x in iv if x != w and over(w, x)]
check("no writer's hold overlaps another thread's hold (%s)" % clash[:2], not clash)
PY

# programs nobody here wrote: OpenSSL 3 takes read-write locks around its algorithm and
# property lookups (openssl dgst; python3's hashlib from a thread pool). The oracle is an
# LD_PRELOAD wrapper counting each lock's successful read and write acquisitions in the same
# traced run (tests/e2e/rwlock_count.c): every lock it saw has those counts in `spent locks`.
# python3 in the plain pass only: its 246 M-instruction trace costs the sanitized pass 14 s, and
# openssl's run goes through the same code.
cc -shared -fPIC -O1 -o "$TMP/rwlock_count.so" "$SPENT_TOP/tests/e2e/rwlock_count.c" -ldl
check "the counting wrapper builds" test -f "$TMP/rwlock_count.so"
printf 'import hashlib, concurrent.futures as cf\ndata = [bytes([i]) * 20000 for i in range(16)]\nwith cf.ThreadPoolExecutor(max_workers=4) as ex:\n    print(len(set(ex.map(lambda b: hashlib.sha256(b).hexdigest() + hashlib.md5(b).hexdigest(), data))))\n' > "$TMP/hashpool.py"
head -c 200000 /usr/bin/perl > "$TMP/dgst.in"
progs=("openssl dgst -sha256 $TMP/dgst.in")
spent_sanitized || progs+=("python3 $TMP/hashpool.py")
for prog in "${progs[@]}"; do
	name=${prog%% *}
	rm -f "$TMP/$name.counts"
	# the wrapper goes into the traced program only (an ASan build of spent refuses it)
	"${E[@]}" "$SPENT" trace -o "$TMP/$name.rw.log" -- env RWLOCK_COUNT_OUT="$TMP/$name.counts" \
		LD_PRELOAD="$TMP/rwlock_count.so" $prog > "$TMP/$name.rw.out" 2> "$TMP/$name.rw.err"
	check "$name runs under spent trace with the wrapper" test $? -eq 0
	"$SPENT" locks "$TMP/$name.rw.log" --json > "$TMP/$name.rw.json" 2>/dev/null
	python3 - "$TMP/$name.rw.json" "$TMP/$name.counts" "$name" <<'PY'
import json, sys
rows = {(r["pid"], int(r["lock"], 16)): r for r in map(json.loads, open(sys.argv[1]))}
want = [l.split() for l in open(sys.argv[2])]
bad = []
for pid, a, rd, wr in want:
    r = [v for (p, l), v in rows.items() if p == int(pid) and l == int(a, 16) and v["how"] == "pthread_rwlock"]
    if len(r) != 1 or r[0]["acquisitions"] != int(rd) + int(wr) or r[0]["read_acquisitions"] != int(rd):
        bad.append((a, rd, wr, [(x["acquisitions"], x["read_acquisitions"]) for x in r]))
n = sum(int(rd) + int(wr) for _, _, rd, wr in want)
print(("PASS " if want and n > 100 and not bad else "FAIL ") +
      "%s: %d read-write locks, %d acquisitions, each lock's reads and writes as the wrapper counted (%s)"
      % (sys.argv[3], len(want), n, bad[:3]))
PY
done

# glibc's own read-write locks (setlocale's, gettext's) are static variables: Debian strips
# them from libc.so.6, and its separate debug file (libc6-dbg, which valgrind depends on)
# names them. The oracle is nm on that file: each lock's offset in libc is its symbol's.
"${E[@]}" LANG=C.UTF-8 "$SPENT" trace -o "$TMP/ls.log" -- /bin/ls -l / > /dev/null 2> "$TMP/ls.err"
check "ls runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/ls.log" --json > "$TMP/ls.json" 2>/dev/null
"$SPENT" trace dump --limit 400000 "$TMP/ls.log" 2>/dev/null | grep -m1 ' image .*/libc\.so\.6 ' > "$TMP/ls.libc"
libc=$(awk '{ print $4 }' "$TMP/ls.libc")
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
nm "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" > "$TMP/libc.nm" 2>/dev/null
check "libc's debug file has its symbols (libc6-dbg)" test -s "$TMP/libc.nm"
python3 - "$TMP/ls.json" "$TMP/ls.libc" "$TMP/libc.nm" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = int(open(sys.argv[2]).read().split("base")[1].split()[0], 16)
nm = {}	# a static's name may be several files' (lock.0)
for l in open(sys.argv[3]):
    p = l.split()
    if len(p) == 3:
        nm.setdefault(p[2], set()).add(int(p[0], 16))
rw = [r for r in rows if r["how"] == "pthread_rwlock"]
named = [(r["symbol"], int(r["lock"], 16) - base) for r in rw]
ok = rw and all(off in nm.get(s, ()) for s, off in named) and \
     any(s in ("__libc_setlocale_lock", "_nl_state_lock") for s, _ in named)
print(("PASS " if ok else "FAIL ") + "ls: libc's read-write locks named as its debug file's nm says (%s)"
      % [(s, hex(o), o in nm.get(s, ())) for s, o in named])
PY

# glibc's own lock (tests/progs/studies_stdiolock.c): stderr's stream lock, taken by a cmpxchg
# in flockfile and released by an xchg in funlockfile, waited for in __lll_lock_wait_private.
# Its counts are the program's, holds across a mutex's lock and unlock calls included (those
# were all lost: the calls forgot every open bare atomic); its name is the debug file's
# (_IO_stdfile_2_lock); its holds last the program's in_work, never its out_work, and never
# overlap.
"${E[@]}" "$SPENT" trace -o "$TMP/sl.log" -- "$PROGS/studies_stdiolock" > "$TMP/sl.out" 2> "$TMP/sl.err"
check "studies_stdiolock runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/sl.log" --json --svg "$TMP/sl.svg" > "$TMP/sl.json" 2>/dev/null
check "locks on studies_stdiolock exits 0" test $? -eq 0
python3 - "$TMP/sl.json" "$TMP/sl.out" "$TMP/sl.svg" <<'PY'
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = {k: int(v) for k, v in (l.split() for l in open(sys.argv[2]))}
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "stdiolock: " + what)
m = [r for r in rows if r["symbol"] == "_IO_stdfile_2_lock"]
check("stderr's lock is found as glibc's lock (%s)" % [(r["symbol"], r["how"]) for r in rows[:3]],
      len(m) == 1 and m[0]["how"] == "glibc_lock")
if m:
    r = m[0]
    check("acquired as often as the program says (%d, want %d)" % (r["acquisitions"], prog["acquisitions"]),
          r["acquisitions"] == prog["acquisitions"])
    check("the wait is its contended acquisition, with a futex wait (%d, %d)" % (r["contended"], r["futex_waits"]),
          r["contended"] == prog["contended"] and r["futex_waits"] >= 1 and len(r["waiters"]) == 1)
    check("held by both workers (%s)" % r["holders"], len(r["holders"]) == 2)
    check("each hold lasts in_work, none spans out_work (total %d, max %d)" % (r["total_hold"], r["max_hold"]),
          r["total_hold"] >= prog["acquisitions"] * prog["in_work"] * 3 and r["max_hold"] < 3 * prog["out_work"])
iv = sorted(set((int(a), int(b), t) for t, a, b in
                re.findall(r"<title>tid (\d+) holds _IO_stdfile_2_lock \[(\d+), (\d+)\)</title>", open(sys.argv[3]).read())))
check("one interval per acquisition, none overlapping another thread's (%d)" % len(iv),
      len(iv) == prog["acquisitions"] and not any(y[0] < x[1] and x[2] != y[2] for x, y in zip(iv, iv[1:])))
check("no bare atomic is taken for a lock (%s)" % [r["symbol"] for r in rows if r["how"] == "atomic"],
      not any(r["how"] == "atomic" for r in rows))
mi = [r for r in rows if r["symbol"] == "inner"]
check("the mutex taken inside the holds is acquired as often as the program says (%s, want %d)"
      % ([r["acquisitions"] for r in mi], prog["inner"]),
      len(mi) == 1 and mi[0]["how"] == "pthread_mutex" and mi[0]["acquisitions"] == prog["inner"])
PY

# glibc malloc's arena locks (tests/progs/studies_arena.c): every malloc and free of a block
# the thread cache does not take locks the worker's arena once, so the arenas the workers
# used were acquired threads x rounds x 2 times (a few more for choosing the arenas), and no
# two threads hold one at once. (No bound on a hold: Valgrind may switch threads while one
# holds the lock, and the hold then spans what the others ran: 1287 instructions once.)
"${E[@]}" "$SPENT" trace -o "$TMP/ar.log" -- "$PROGS/studies_arena" > "$TMP/ar.out" 2> "$TMP/ar.err"
check "studies_arena runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/ar.log" --json --svg "$TMP/ar.svg" > "$TMP/ar.json" 2>/dev/null
python3 - "$TMP/ar.json" "$TMP/ar.out" "$TMP/ar.svg" <<'PY'
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = {k: int(v) for k, v in (l.split() for l in open(sys.argv[2]))}
workers = set(range(2, 2 + prog["threads"]))
arenas = [r for r in rows if r["how"] == "glibc_lock" and set(r["holders"]) & workers and r["acquisitions"] > 100]
n = sum(r["acquisitions"] for r in arenas)
want = prog["threads"] * prog["rounds"] * 2
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "arena: " + what)
check("the workers' arenas were acquired threads x rounds x 2 times (%d, want %d to %d; %s)"
      % (n, want, want + 4 * prog["threads"], [r["symbol"] for r in arenas]),
      arenas and want <= n <= want + 4 * prog["threads"])
iv = {}
for t, l, a, b in set(re.findall(r"<title>tid (\d+) holds (\S+) \[(\d+), (\d+)\)</title>", open(sys.argv[3]).read())):
    iv.setdefault(l, []).append((int(a), int(b), t))
names = {r["symbol"] for r in arenas}
over = sum(1 for l, v in iv.items() if l in names
           for x, y in zip(sorted(v), sorted(v)[1:]) if y[0] < x[1] and x[2] != y[2])
check("no two workers hold an arena at once (%d holds, %d overlaps)"
      % (sum(len(v) for l, v in iv.items() if l in names), over),
      arenas and over == 0 and sum(len(v) for l, v in iv.items() if l in names) == n)
PY

# a hold across another thread's work (tests/progs/studies_ownhold.c): main sleeps inside each
# of its holds of mtx while a burner that never takes the lock runs. The holds span the
# burner's work (Valgrind's quantum, about 2 M instructions here) on the instruction axis;
# their own instructions are main's 2 x IN_WORK iterations (3 to 20 instructions each).
"${E[@]}" "$SPENT" trace -o "$TMP/oh.log" -- "$PROGS/studies_ownhold" > "$TMP/oh.out" 2> "$TMP/oh.err"
check "studies_ownhold runs under spent trace" test $? -eq 0
"$SPENT" locks "$TMP/oh.log" --json > "$TMP/oh.json" 2>/dev/null
check "locks on studies_ownhold exits 0" test $? -eq 0
"$SPENT" locks "$TMP/oh.log" > "$TMP/oh.txt" 2>/dev/null
python3 - "$TMP/oh.json" "$TMP/oh.out" "$TMP/oh.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
prog = {k: int(v) for k, v in (l.split() for l in open(sys.argv[2]))}
def check(what, ok):
    print(("PASS " if ok else "FAIL ") + "ownhold: " + what)
m = [r for r in rows if r["symbol"] == "mtx"]
check("mtx is acquired once a hold (%s, want %d)" % ([r["acquisitions"] for r in m], prog["holds"]),
      len(m) == 1 and m[0]["acquisitions"] == prog["holds"])
if m:
    r, inw = m[0], prog["in_work"]
    check("a hold spans the burner's work (max hold %d >= 10 x max own %d)" % (r["max_hold"], r["own_max_hold"]),
          r["max_hold"] >= 10 * r["own_max_hold"])
    check("the own hold is main's work alone (max %d in [%d, %d), total %d >= %d)"
          % (r["own_max_hold"], 3 * inw, 20 * inw, r["own_total_hold"], 3 * inw * prog["holds"]),
          3 * inw <= r["own_max_hold"] < 20 * inw and r["own_total_hold"] >= 3 * inw * prog["holds"])
    lines = open(sys.argv[3]).read().split("\n")
    row = next((l.split() for l in lines if " mtx " in l), [])
    # the header's "total hold  max hold   max own": the own column follows the max hold
    k = row.index(str(r["max_hold"])) if str(r["max_hold"]) in row else -1
    check("the table's 'max own' column, after 'max hold', is the own hold (%s)" % row,
          " max hold   max own " in lines[1] and k > 0 and row[k + 1] == str(r["own_max_hold"]))
PY
