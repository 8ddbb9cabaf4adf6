#!/bin/bash
# tests/e2e/stat_breakdown.sh - --per-thread and --per-process for launched commands, against
# the threads' own CPU clocks and page counts (printed by the program itself).
# test: serial (its counts and timings are of a machine nothing else is using)
source "$(dirname "$0")/lib.sh"

st0=$(steal_ticks)
"$SPENT" stat --per-thread --json -o "$TMP/t.json" -e task-clock,page-faults -- "$PROGS/threads3" 30 > "$TMP/truth.txt"
stolen=$(stolen_slack_ms "$st0" "$(steal_ticks)")
check "threads3 ran and printed its three threads" test "$(grep -c '^thread' "$TMP/truth.txt")" -eq 3
python3 - "$TMP/t.json" "$TMP/truth.txt" "$stolen" <<'PY'
import json, sys
stolen = float(sys.argv[3])  # ms the host stole during the run: in task-clock, not in the clock
rows = [json.loads(l) for l in open(sys.argv[1])]
per = {}
total = {}
for r in rows:
    if "event" not in r: continue
    if "thread" in r: per.setdefault(r["thread"], {})[r["event"]] = r["value"]
    else: total[r["event"]] = r["value"]
ok = True
for line in open(sys.argv[2]):
    _, k, _, tid, _, pages, _, cpu = line.split()
    tid, pages, cpu = int(tid), int(pages), float(cpu)
    got = per.get(tid)
    if not got:
        print(f"FAIL per-thread row for thread {k} (tid {tid}) is missing"); ok = False; continue
    tc, pf = got["task-clock"], got["page-faults"]
    # + 2 ms for the thread's exit path after its clock read
    if -(0.10 * cpu + 2.0) <= tc - cpu <= 0.10 * cpu + 2.0 + stolen:
        print(f"PASS thread {k} task-clock {tc:.1f} ms matches its own CPU clock {cpu:.1f} ms (host stole {stolen:.0f} ms)")
    else:
        print(f"FAIL thread {k} task-clock {tc:.1f} ms vs its own CPU clock {cpu:.1f} ms (host stole {stolen:.0f} ms)"); ok = False
    if pages <= pf <= pages + 30:
        print(f"PASS thread {k} page faults {pf:.0f} for {pages} touched pages")
    else:
        print(f"FAIL thread {k} page faults {pf:.0f} for {pages} touched pages")
for ev in ("task-clock", "page-faults"):
    s = sum(v[ev] for v in per.values())
    if abs(s - total[ev]) <= 0.01 * total[ev] + 0.5:
        print(f"PASS per-thread {ev} rows add up to the total ({s:.1f} vs {total[ev]:.1f})")
    else:
        print(f"FAIL per-thread {ev} rows add up to {s:.1f}, total {total[ev]:.1f}")
PY

# -I with a breakdown: every interval has each thread's (process's, CPU's) counts since the last,
# as perf prints them, so a thread's interval rows add up exactly to its row for the whole run
# (the same counters read at each interval and at its exit). -I 10 on a run of 0.07-0.3 s.
interval_rows_add_up() { # JSON KEY: for every KEY (thread or pid), the interval rows' sum
	python3 - "$1" "$2" <<'PY'
import json, sys
key = sys.argv[2]
rows = [json.loads(l) for l in open(sys.argv[1]) if '"event"' in l]
by = [r for r in rows if key in r and (key == "thread" or "thread" not in r)]
whole = {(r[key], r["event"]): r["counter_value"] for r in by if "interval" not in r}
parts, stamps = {}, set()
for r in by:
    if "interval" in r:
        k = (r[key], r["event"])
        parts[k] = parts.get(k, 0) + r["counter_value"]
        stamps.add(r["interval"])
names = {r["comm"] for r in by} if key != "cpu" else {"threads3"}
bad = [k for k in whole if parts.get(k, 0) != whole[k]] + [k for k in parts if k not in whole]
print(f"{len(whole)} {key} rows, {len(stamps)} intervals with {key} rows, names {sorted(names)}, "
      f"{len(bad)} sums differ {bad[:3]}")
sys.exit(0 if whole and len(stamps) >= 2 and not bad and names == {"threads3"} else 1)
PY
}
"$SPENT" stat -I 10 --per-thread --json -o "$TMP/it.json" -e task-clock,page-faults -- "$PROGS/threads3" 30 > /dev/null
out=$(interval_rows_add_up "$TMP/it.json" thread)
check "-I --per-thread: each thread's interval rows add up to its run's row ($out)" test $? -eq 0
"$SPENT" stat -I 10 --per-process --json -o "$TMP/ip.json" -e task-clock,page-faults -- "$PROGS/threads3" 30 > /dev/null
out=$(interval_rows_add_up "$TMP/ip.json" pid)
check "-I --per-process: the process's interval rows add up to its run's row ($out)" test $? -eq 0
"$SPENT" stat -a --per-cpu -I 50 --json -o "$TMP/ic.json" -e cpu-clock -- sleep 0.2
out=$(interval_rows_add_up "$TMP/ic.json" cpu)
check "-a --per-cpu -I: each CPU's interval rows add up to its run's row ($out)" test $? -eq 0

"$SPENT" stat --per-process --json -o "$TMP/p.json" -e page-faults -- sh -c "$PROGS/sleeper; $PROGS/sleeper"
n=$(grep -c '"comm":"sleeper"' "$TMP/p.json")
check "--per-process shows both sleeper processes of sh -c 'prog; prog' ($n rows)" test "$n" -eq 2
check "--per-process shows the shell itself" grep -q '"comm":"sh"' "$TMP/p.json"

# the table form names threads as comm-tid, like perf's --per-thread
"$SPENT" stat --per-thread -e task-clock -- "$PROGS/threads3" 2 >/dev/null 2>"$TMP/table.txt"
check "--per-thread table has a row per thread" test "$(grep -c 'threads3-[0-9]' "$TMP/table.txt")" -eq 4

# -p: an existing process's threads. It spins until its 4 threads' counters are open (spent's
# perf fds), then is killed: a run sized in iterations could end before a sanitized spent,
# on a slower CPU, attached ("process not found").
"$PROGS/threads3" 1000000 > /dev/null & tpid=$!
four_tasks() { test "$(ls "/proc/$tpid/task" 2> /dev/null | wc -l)" -eq 4; }
wait_until 30 four_tasks
"$SPENT" stat -p "$tpid" --per-thread --json -o "$TMP/pp.json" -e task-clock & spid=$!
perf_fds() { ! kill -0 "$spid" 2>/dev/null || test "$(ls -l "/proc/$spid/fd" 2>/dev/null | grep -c perf_event)" -ge 4; }
wait_until 60 perf_fds
kill -KILL "$tpid"
wait "$spid"
wait "$tpid" 2>/dev/null
n=$(grep -c '"thread"' "$TMP/pp.json")
check "-p PID --per-thread shows the running threads ($n rows)" test "$n" -ge 2
# the threads had ended when the counts were printed: they are named as at attach (they read
# '?' then)
bad=$(grep '"thread"' "$TMP/pp.json" | grep -vc '"comm":"threads3"')
check "-p PID --per-thread names threads that ended ($bad rows without the name)" test "$bad" -eq 0

# threads that end while the counters open: each row is named as the thread was when its
# counters opened, and a thread that ended before that has no row (it read '?' with zeros).
# Each count ends with the pool's process (1.2 s: a sanitized spent on a loaded machine may
# take a few tenths of a second to attach).
runs=0 rows=0 bad=0
for i in 1 2 3; do
    "$PROGS/thread_churn" 1.2 & cpid=$!
    sleep 0.2
    rm -f "$TMP/churn.json"
    if "$SPENT" stat -p "$cpid" --per-thread --json -o "$TMP/churn.json" -e task-clock 2>/dev/null; then
        runs=$((runs + 1))
        rows=$((rows + $(grep -c '"thread"' "$TMP/churn.json")))
        bad=$((bad + $(grep '"thread"' "$TMP/churn.json" | grep -vc '"comm":"thread_churn"')))
    fi
    wait "$cpid"
done
check "-p PID --per-thread on a pool of threads that keep ending: every row named ($runs of 3 runs, $rows rows, $bad without the name)" \
    test "$runs" -eq 3 -a "$rows" -ge 3 -a "$bad" -eq 0
