#!/bin/bash
# tests/e2e/shim_histogram.sh - `spent shim --histogram` on a three-phase program that measures
# its own phase times by the clock (the oracle): each phase's share of the tag samples is within
# 2 points of the program's own split, for the preloaded observer and for the static-link
# alternative (libspent-shim.a). The JSON summary carries the fields the issue names.
# test: serial (the shim's observer busy-loops on a CPU of its own)
source "$(dirname "$0")/lib.sh"

# shares PROGOUT JSONOUT: print "truth1 truth2 truth3 got1 got2 got3" (percent among phases 1-3)
shares() {
	python3 - "$1" "$2" <<'PY'
import json, sys
prog = open(sys.argv[1]).read().split("\n")
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
summ = [r for r in rows if r["type"] == "summary"][0]
# with the eBPF thread channel only on-CPU samples are histogrammed: compare with CPU time
key = "cpu_ns" if summ["thread_channel"] else "wall_ns"
truth = {}
for l in prog:
    f = l.split()
    if len(f) == 6 and f[0] == "phase":
        truth[int(f[1])] = int(f[f.index(key) + 1])
got = {int(r["value"]): r["samples"] for r in rows if r["type"] == "histogram" and r["tag"] == "phase"}
tt = sum(truth.get(p, 0) for p in (1, 2, 3)); gt = sum(got.get(p, 0) for p in (1, 2, 3))
if not tt or not gt:
    print("0 0 0 100 100 100"); sys.exit()
print(" ".join("%.3f" % (100.0 * truth.get(p, 0) / tt) for p in (1, 2, 3)),
      " ".join("%.3f" % (100.0 * got.get(p, 0) / gt) for p in (1, 2, 3)))
PY
}

check_run() { # NAME PROGRAM
	local name=$1 prog=$2
	if ! "$SPENT" shim --tag phase=phase --histogram phase --json -- "$prog" 1.2 \
		>"$TMP/$name.json" 2>"$TMP/$name.err"; then
		fail "$name: spent shim failed: $(head -2 "$TMP/$name.err")"
		return
	fi
	grep -v '^{' "$TMP/$name.json" >"$TMP/$name.prog"
	grep '^{' "$TMP/$name.json" >"$TMP/$name.jl"
	read -r t1 t2 t3 g1 g2 g3 < <(shares "$TMP/$name.prog" "$TMP/$name.jl")
	local ok=1
	for i in 1 2 3; do
		local t g
		eval "t=\$t$i g=\$g$i"
		awk -v a="$t" -v b="$g" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 2.0) }' || ok=0
	done
	if [ $ok = 1 ]; then
		pass "$name phase shares within 2 points of the program's clock ($g1/$g2/$g3 vs $t1/$t2/$t3)"
	else
		fail "$name phase shares $g1/$g2/$g3 differ from the program's clock $t1/$t2/$t3 by more than 2 points"
	fi
}

check_run shim_histogram_preload "$PROGS/shim_phases"
check_run shim_histogram_static "$PROGS/shim_phases-static"

# the summary object names samples, period_ns, kept, dropped; histogram rows tag/value/samples/percent
summary=$(grep '"type":"summary"' "$TMP/shim_histogram_preload.jl")
row=$(grep -m1 '"type":"histogram"' "$TMP/shim_histogram_preload.jl")
ok=1
for k in samples period_ns kept dropped; do [ -n "$(jfield "$summary" $k)" ] || ok=0; done
for k in tag value samples percent; do [ -n "$(jfield "$row" $k)" ] || ok=0; done
check "shim_json_fields summary has samples/period_ns/kept/dropped, rows tag/value/samples/percent" [ $ok = 1 ]
# the period the summary reports is the run's time over its samples
secs=$(jfield "$summary" seconds); n=$(jfield "$summary" samples); per=$(jfield "$summary" period_ns)
check "shim_period_consistent period_ns equals seconds/samples" \
	within "$per" "$(awk -v s="$secs" -v n="$n" 'BEGIN { print s * 1e9 / (n - 1) }')" 1

# a period longer than the run: the observer's wait for its next sample ends with the app,
# whose exit it held for up to the destructor's bounded wait, after which the last counts were
# never published (summary "samples":0 beside a histogram of 1)
t0=$(date +%s.%N)
"$SPENT" shim --tag phase=phase --period-ns 100000000000 --json -- "$PROGS/shim_phases" 0.05 \
	> "$TMP/long.jl" 2> "$TMP/long.err"
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
n=$(jfield "$(grep '"type":"summary"' "$TMP/long.jl")" samples)
h=$(grep '"type":"histogram"' "$TMP/long.jl" | python3 -c 'import json, sys
print(sum(json.loads(l)["samples"] for l in sys.stdin))')
check "shim_long_period_publishes_its_last_counts (summary ${n:-none}, histogram $h samples; ${secs} s for a 0.05 s program)" \
	test "${n:-0}" -ge 1 -a "${n:-0}" -ge "${h:-0}"
