#!/bin/bash
# tests/e2e/stat_vs_perf.sh - spent stat's software counts against perf stat on the same
# programs, runs alternated so both see the same machine: page faults within 1%, context
# switches of a sleeping program equal (minimum of 3 runs, +-1), task-clock within 5%.
source "$(dirname "$0")/lib.sh"

# spent_val JSONFILE EVENT / perf_val CSVFILE EVENT
spent_val() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if o.get("event")==sys.argv[2] and "thread" not in o: print(o["counter_value"] if sys.argv[2]!="task-clock" else o["value"]); break' "$1" "$2"; }
perf_val() { awk -F, -v e="$2" '$3==e || $3==e":u" {print $1; exit}' "$1"; }

min() { printf '%s\n' "$@" | sort -g | head -1; }
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

cs_s=() cs_p=() pf_s=() pf_p=()
for i in 1 2 3; do
	"$SPENT" stat --json -o "$TMP/s.json" -e context-switches,page-faults -- "$PROGS/sleeper" || fail "spent stat ran sleeper"
	perf stat -x, -o "$TMP/p.csv" -e context-switches,page-faults -- "$PROGS/sleeper"
	cs_s+=("$(spent_val "$TMP/s.json" context-switches)"); cs_p+=("$(perf_val "$TMP/p.csv" context-switches)")
	pf_s+=("$(spent_val "$TMP/s.json" page-faults)"); pf_p+=("$(perf_val "$TMP/p.csv" page-faults)")
done
a=$(min "${cs_s[@]}") b=$(min "${cs_p[@]}")
if [ -n "$a" ] && [ -n "$b" ] && [ $((a > b ? a - b : b - a)) -le 1 ]; then
	pass "context switches equal perf's (spent $a, perf $b)"
else
	fail "context switches differ from perf's: spent ${cs_s[*]}, perf ${cs_p[*]}"
fi
a=$(min "${pf_s[@]}") b=$(min "${pf_p[@]}")
if [ -n "$a" ] && within "$a" "$b" 1; then pass "page faults within 1% of perf's (spent $a, perf $b)"
else fail "page faults differ from perf's by more than 1%: spent ${pf_s[*]}, perf ${pf_p[*]}"; fi

tc_s=() tc_p=()
for i in 1 2 3; do
	"$SPENT" stat --json -o "$TMP/s.json" -e task-clock -- "$PROGS/demo" 0.3 >/dev/null
	perf stat -x, -o "$TMP/p.csv" -e task-clock -- "$PROGS/demo" 0.3 >/dev/null
	tc_s+=("$(spent_val "$TMP/s.json" task-clock)"); tc_p+=("$(perf_val "$TMP/p.csv" task-clock)")
done
a=$(median "${tc_s[@]}") b=$(median "${tc_p[@]}")
if [ -n "$a" ] && within "$a" "$b" 5; then pass "task-clock within 5% of perf's (spent $a ms, perf $b ms)"
else fail "task-clock differs from perf's by more than 5%: spent ${tc_s[*]}, perf ${tc_p[*]}"; fi

# children folded in: both runs of sh -c 'prog; prog' are counted, as perf counts them
"$SPENT" stat --json -o "$TMP/s.json" -e page-faults -- "$PROGS/sleeper"
one=$(spent_val "$TMP/s.json" page-faults)
"$SPENT" stat --json -o "$TMP/s.json" -e page-faults -- sh -c "$PROGS/sleeper; $PROGS/sleeper"
two=$(spent_val "$TMP/s.json" page-faults)
perf stat -x, -o "$TMP/p.csv" -e page-faults -- sh -c "$PROGS/sleeper; $PROGS/sleeper"
ptwo=$(perf_val "$TMP/p.csv" page-faults)
check "sh -c 'prog; prog' counts both children ($two >= 2 x $one)" test "$two" -ge $((2 * one))
if within "$two" "$ptwo" 1; then pass "sh -c 'prog; prog' page faults within 1% of perf's ($two vs $ptwo)"
else fail "sh -c 'prog; prog' page faults $two vs perf $ptwo"; fi
