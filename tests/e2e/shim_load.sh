#!/bin/bash
# tests/e2e/shim_load.sh - `spent shim --histogram` on a busy machine: the three-phase program
# with a 40/35/25 split (weights 8,7,5: short phases, so the few milliseconds in which the app
# and the observer happen to run at once still span many rounds) runs while 6 busy loops
# compete for each of the two CPUs it uses (12 on a 2-CPU machine, the same on a bigger one;
# started before and killed after the run, so the load lasts as long as it does). Samples taken
# while the app is off its CPU, or across a context switch within the sample, must be
# excluded: the phase shares stay within 3 points of 40/35/25, the excluded samples are
# reported (JSON and text) and every sample is accounted for.
# The shares rest on the moments when the app and the observer run at once. With other load
# on the machine the scheduler may give the observer a few milliseconds every 100 ms or so,
# and a 1.5 s run may see none of them overlap the app's: the run is repeated for 3 s, 6 s,
# then 12 s, until 20000 samples saw the app on its CPU. On a machine loaded 12-20 deep the
# overlap came to 0.2-1 ms per second (measured: 1.6 ms in 1.5 s, none in 3 s, 4-10 ms in
# 12 s), so 10.5 s could end with too few samples; the shares were within 0.7 points of
# 40/35/25 from 1.6 ms on (20000 samples: the observer samples every ~50 ns while both run).
# test: serial (the shim's observer busy-loops on a CPU of its own)
source "$(dirname "$0")/lib.sh"

# a run too short to see many phases says its shares are uncertain (before any load starts)
"$SPENT" shim --tag phase=phase -- "$PROGS/shim_phases" 0.02 >"$TMP/thin" 2>&1
check "shim_thin_note a 20 ms run notes that the histograms watched the app for under 100 ms" \
	grep -q "^note: the histograms watched the app for only [0-9.]* ms" "$TMP/thin"

loads=()
stop_load() {
	[ ${#loads[@]} -gt 0 ] && kill "${loads[@]}" 2>/dev/null
	wait "${loads[@]}" 2>/dev/null
	loads=()
}
trap 'stop_load; rm -rf "$TMP"' EXIT
read -r app_cpu obs_cpu < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[1])')
# each loop also ends by itself after 120 s, should this script be killed before its trap runs
for cpu in $app_cpu $obs_cpu; do
	for _ in 1 2 3 4 5 6; do
		taskset -c "$cpu" timeout 120 sh -c 'while :; do :; done' &
		loads+=($!)
	done
done
sleep 0.2
for secs in 1.5 3 6 12; do
	"$SPENT" shim --tag phase=phase --histogram phase --json -o "$TMP/load.shim" \
		--app-cpu "$app_cpu" --observer-cpu "$obs_cpu" \
		-- "$PROGS/shim_phases" "$secs" 8,7,5 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -ne 0 ] && break
	{ read -r app; read -r app_ms; } < <(jfields "$(grep '"type":"summary"' "$TMP/out")" samples_app app_ms)
	[ "${app:-0}" -ge 20000 ] && break
done
if [ $rc -ne 0 ]; then
	stop_load
	fail "shim_load: spent shim failed under load: $(head -2 "$TMP/err")"
	exit 0
fi
if [ "${app:-0}" -lt 20000 ]; then
	stop_load
	fail "shim_load: the app and the observer ran at the same time for only ${app:-0} samples, ${app_ms:-0} ms of the app, in 22.5 s: too loaded a machine to judge the shares"
	exit 0
fi

# one line of facts: channel, shares among phases 1-3, the program's CPU split, accounting
facts() {
	python3 - "$TMP/out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
rows = [json.loads(l) for l in lines if l.startswith("{")]
s = [r for r in rows if r["type"] == "summary"][0]
got = {r["value"]: r["samples"] for r in rows if r["type"] == "histogram"}
cpu = {int(f[1]): int(f[3]) for f in (l.split() for l in lines) if len(f) == 6 and f[0] == "phase"}
gt = sum(got.get(p, 0) for p in (1, 2, 3)) or 1
ct = sum(cpu.get(p, 0) for p in (1, 2, 3)) or 1
shares = [100.0 * got.get(p, 0) / gt for p in (1, 2, 3)]
print("yes" if s["thread_channel"] else "no",
      " ".join("%.2f" % g for g in shares),
      " ".join("%.2f" % (100.0 * cpu.get(p, 0) / ct) for p in (1, 2, 3)),
      "yes" if all(abs(g - w) <= 3.0 for g, w in zip(shares, (40, 35, 25))) else "no",
      "%.1f" % (100.0 * s["samples_other"] / max(s["samples"], 1)),
      s.get("excluded", -1),
      "yes" if s["samples_app"] + s["samples_other"] + s.get("samples_gap", -1) == s["samples"]
              and s.get("excluded") == s["samples_other"] + s.get("samples_gap", -1) else "no",
      "yes" if sum(got.values()) == s["samples_app"] else "no",
      s.get("app_ms", -1), "yes" if 0 < s.get("app_ms", -1) <= s["seconds"] * 1000 else "no")
PY
}
read -r channel g1 g2 g3 c1 c2 c3 within3 offcpu_pct excluded accounted histsum app_ms appok < <(facts)
# Shares off by more than 3 points in one run while the program's own CPU split was right came
# once in a CI run (44.98/32.17/22.85 from 27 ms of overlap: the host, not the shim); the 13
# runs of this script right after were all within 1 point. A bias in the shim fails every run:
# a run off by more is repeated once (12 s), and the message shows both.
first=""
if [ "$channel" = yes ] && [ "$within3" != yes ]; then
	first=" (a first run gave $g1/$g2/$g3 from $app_ms ms of overlap)"
	"$SPENT" shim --tag phase=phase --histogram phase --json -o "$TMP/load.shim" \
		--app-cpu "$app_cpu" --observer-cpu "$obs_cpu" \
		-- "$PROGS/shim_phases" 12 8,7,5 >"$TMP/out" 2>"$TMP/err"
	read -r channel g1 g2 g3 c1 c2 c3 within3 offcpu_pct excluded accounted histsum app_ms appok < <(facts)
fi
stop_load
if [ "$channel" != yes ]; then
	fail "shim_load: the eBPF thread channel is unavailable ($(grep -m1 '^note' "$TMP/err" "$TMP/out")); without it samples cannot be told apart under load"
	exit 0
fi
# the load must really have taken the app off its CPU, or this test shows nothing
check "shim_load_busy the app CPU ran other tasks in $offcpu_pct% of the samples (>= 30%)" \
	awk -v p="$offcpu_pct" 'BEGIN { exit !(p >= 30) }'
if [ "$within3" = yes ]; then
	pass "shim_load_shares under load within 3 points of 40/35/25 ($g1/$g2/$g3; program's CPU split $c1/$c2/$c3)$first"
else
	fail "shim_load_shares under load $g1/$g2/$g3 not within 3 points of 40/35/25 (program's CPU split $c1/$c2/$c3)$first"
fi
check "shim_load_excluded excluded samples reported in --json and > 0 ($excluded)" \
	[ "$excluded" -gt 0 ]
check "shim_load_accounting samples = app + other + gap; excluded = other + gap" [ "$accounted" = yes ]
check "shim_load_histogram_sum the histogram holds exactly the samples with the app on its CPU" \
	[ "$histsum" = yes ]
check "shim_load_app_ms the histograms watched the app for $app_ms ms, within the run" [ "$appok" = yes ]
# the text summary, here from the sample file (which carries the counts), names the same number
"$SPENT" shim dump "$TMP/load.shim" --limit 0 >"$TMP/dump" 2>&1
check "shim_load_excluded_text the text summary reports the $excluded excluded samples" \
	grep -q "excluded from histograms: $excluded, of which" "$TMP/dump"
