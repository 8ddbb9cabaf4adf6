#!/bin/bash
# tests/e2e/shim_rate.sh - a software counter advanced at a known rate by the program's clock
# (20 M/s): `spent shim --rate` reports a median rate within 1% of the rate the program
# measures itself, and accounts for every rate sample as kept, dropped or off-cpu.
# test: serial (the shim's observer busy-loops on a CPU of its own)
source "$(dirname "$0")/lib.sh"

if ! "$SPENT" shim --rate ticks=ticks --period-ns 10000 --json -- "$PROGS/shim_rate" 0.8 50 \
	>"$TMP/out" 2>"$TMP/err"; then
	fail "shim_rate: spent shim failed: $(head -2 "$TMP/err")"
	exit 0
fi
truth=$(awk '$1 == "ticks" { print $6 }' "$TMP/out")
rate=$(grep '"type":"rate"' "$TMP/out")
summary=$(grep '"type":"summary"' "$TMP/out")
median=$(jfield "$rate" median)
check "shim_rate_median median $median within 1% of the program's rate $truth" within "$median" "$truth" 1
kept=$(jfield "$rate" kept); dropped=$(jfield "$rate" dropped); off=$(jfield "$rate" offcpu)
n=$(jfield "$summary" samples)
check "shim_rate_accounting kept+dropped+offcpu ($kept+$dropped+$off) = samples-1 ($n-1)" \
	[ $((kept + dropped + off)) -eq $((n - 1)) ]
check "shim_rate_kept most rate samples pass the clock-ratio filter at a 10 us period" \
	[ "$kept" -gt "$dropped" ]
check "shim_rate_summary_totals summary kept/dropped equal the counter's" \
	[ "$(jfield "$summary" kept)" = "$kept" -a "$(jfield "$summary" dropped)" = "$dropped" ]
# a filter that admits nothing keeps nothing. Not a window like [2,3]: a preempted observer
# makes one interval twice the last on a loaded machine. With 10 us pacing, a ratio of at
# most 1e-6 in either direction needs a 10 s interval inside this 0.1 s run.
"$SPENT" shim --rate ticks=ticks --period-ns 10000 --ratio 0.000000001,0.000001 --json -- "$PROGS/shim_rate" 0.1 50 \
	>"$TMP/out2" 2>/dev/null
rate2=$(grep '"type":"rate"' "$TMP/out2")
check "shim_rate_filter an impossible --ratio window keeps no sample" [ "$(jfield "$rate2" kept)" = 0 ]

# -e: a kernel software event counted on the app CPU and read by the observer. cpu-clock counts
# nanoseconds, so its rate is 1e9 per second by the kernel's own definition. Only intervals in
# which both the app and the observer ran throughout are rated: on a busy machine a short run
# may keep a handful, so it is repeated longer (1.2 s, 3 s) until 20 rates were kept.
for secs in 0.3 1.2 3; do
	"$SPENT" shim -e cpu-clock -e cycles --period-ns 20000 --json -- "$PROGS/shim_rate" "$secs" 50 \
		>"$TMP/ev.out" 2>"$TMP/ev.err"
	ev=$(grep '"type":"rate","name":"cpu-clock"' "$TMP/ev.out")
	[ -n "$ev" ] && [ "$(jfield "$ev" kept)" -ge 20 ] && break
done
if [ -z "$ev" ]; then
	fail "shim_event_cpu_clock: no cpu-clock row: $(head -2 "$TMP/ev.err")"
else
	check "shim_event_cpu_clock median cpu-clock rate $(jfield "$ev" median) within 1% of 1e9 ns/s" \
		within "$(jfield "$ev" median)" 1000000000 1
fi
if have_pmu; then
	check "shim_event_cycles a cycles row is reported where a PMU exists" \
		grep -q '"name":"cycles"' "$TMP/ev.out"
else
	check "shim_event_no_pmu -e cycles without a PMU says so in one warning line and still runs" \
		grep -qx "spent: warning: no hardware PMU on this machine: 'cycles' cannot be counted; observing software signals only" "$TMP/ev.err"
fi
