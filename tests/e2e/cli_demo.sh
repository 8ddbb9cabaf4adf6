#!/bin/bash
# tests/e2e/cli_demo.sh - what `make demo` prints (scripts/demo.sh) answers where the demo's time
# goes: the counts, the top functions with heavy first, a flame graph whose printed path is an SVG,
# and next commands that each work as printed; all of it in under 30 s.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

start=$(date +%s.%N)
"$SPENT_TOP/scripts/demo.sh" "$SPENT" "$PROGS/demo" "$TMP/demo" > "$TMP/out" 2>&1
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
check "demo.sh exits 0" test $rc -eq 0
check "demo.sh takes under 30 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s < 30) }'
check "the counts: spent stat's task-clock row" grep -qE '^ +[0-9.]+ msec task-clock' "$TMP/out"
# the report's first row is the function with 60% of the demo's time
first=$(grep -m1 -E '^ +[0-9]+ +[0-9.]+%' "$TMP/out" | awk '{ print $NF }')
check "the top functions: heavy first (got '$first')" test "$first" = heavy
n=$(grep -cE '^ +[0-9]+ +[0-9.]+% ' "$TMP/out")
check "the top functions: at most 10 rows ($n)" test "$n" -ge 3 -a "$n" -le 10
svg=$(sed -n 's/^flame graph: \([^ ]*\) .*/\1/p' "$TMP/out")
check "the flame graph's path is printed and absolute ($svg)" test "${svg#/}" != "$svg"
check "the flame graph is an SVG" grep -q '<svg' "$svg"
check "the flame graph names heavy" grep -q 'heavy' "$svg"
# every next command runs as printed (after its "# why" line)
sed -n '/^==== 4\. next commands/,$p' "$TMP/out" | grep -E '^  [^#]' > "$TMP/next"
check "next commands are printed" test "$(wc -l < "$TMP/next")" -ge 4
while read -r line; do
	if bash -c "$line" > "$TMP/next.out" 2>&1; then
		pass "next command works: $line"
	else
		fail "next command works: $line: $(tail -3 "$TMP/next.out")"
	fi
done < "$TMP/next"
