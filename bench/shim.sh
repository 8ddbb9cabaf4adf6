#!/bin/bash
# bench/shim.sh - Shim's costs, measured side by side in one run (prints numbers, not a test):
#  1. the achieved sample period of the observer loop with two software signals (a tag and a
#     counter): the mean over the run (includes times the observer was descheduled) and the
#     median gap between consecutive logged samples (the loop's own period while it runs);
#  2. the application's slowdown with the observer running (flat out, and paced at 1 us) vs
#     without, runs alternated (PAIRS, default 5), from the program's own CPU time (robust to
#     other load on the machine) and wall time for fixed work.
# Usage: bench/shim.sh  (SPENT=path/to/spent PAIRS=N BLOCKS=N to override)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
PROGS=$top/build/progs
pairs=${PAIRS:-5}
blocks=${BLOCKS:-4000000}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$SPENT" shim --tag phase=phase --counter blocks=blocks --buffer 1000000 -o "$tmp/p.shim" --json \
	-- "$PROGS/shim_bench" 1000000 >"$tmp/p.out" || exit 1
"$SPENT" shim dump "$tmp/p.shim" --json --limit 1000000 >"$tmp/p.dump" || exit 1
python3 - "$tmp/p.out" "$tmp/p.dump" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"type":"summary"')][0]
t = [json.loads(l)["t_ns"] for l in open(sys.argv[2]) if l.startswith('{"type":"sample"')]
gaps = sorted(b - a for a, b in zip(t, t[1:]))
med = gaps[len(gaps) // 2] if gaps else 0
print("sample period, two software signals (flat out): mean %.1f ns over the run, median %.1f ns "
      "between consecutive samples (goal <= 100 ns; %d samples, observer cpu %d, app cpu %d)"
      % (s["period_ns"], med, s["samples"], s["observer_cpu"], s["app_cpu"]))
print("app_cpu %d" % s["app_cpu"], file=open(sys.argv[1] + ".cpu", "w"))
PY
app_cpu=$(awk '{ print $2 }' "$tmp/p.out.cpu")

for i in $(seq "$pairs"); do
	taskset -c "$app_cpu" "$PROGS/shim_bench" "$blocks" | sed 's/^/without /' >>"$tmp/runs"
	"$SPENT" shim --tag phase=phase --counter blocks=blocks -- "$PROGS/shim_bench" "$blocks" \
		| grep '^cpu_ns' | sed 's/^/flat_out /' >>"$tmp/runs"
	"$SPENT" shim --tag phase=phase --counter blocks=blocks --period-ns 1000 -- \
		"$PROGS/shim_bench" "$blocks" | grep '^cpu_ns' | sed 's/^/paced_1us /' >>"$tmp/runs"
done
python3 - "$tmp/runs" <<'PY'
import sys
runs = {}
for l in open(sys.argv[1]):
    f = l.split()
    r = runs.setdefault(f[0], {"cpu": [], "wall": []})
    r["cpu"].append(int(f[2])); r["wall"].append(int(f[4]))
med = lambda v: sorted(v)[len(v) // 2]
for mode in ("flat_out", "paced_1us"):
    for k in ("cpu", "wall"):
        a, b = med(runs[mode][k]), med(runs["without"][k])
        print("app %s time for fixed work, median of %d alternated runs: observer %s %.1f ms, "
              "without %.1f ms, slowdown %+.2f%% (goal <= 2%%)" % (k, len(runs[mode][k]),
              mode.replace("_", " "), a / 1e6, b / 1e6, 100.0 * (a - b) / b))
PY
