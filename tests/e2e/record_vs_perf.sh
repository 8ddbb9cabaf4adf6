#!/bin/bash
# tests/e2e/record_vs_perf.sh - the top functions of spent report agree with perf report on the
# same workload and period (perf record -e cpu-clock is the oracle). The two runs are separate,
# and on a shared host the program's own time split moves a few points between them (perf saw
# 55.9/33.8 where spent saw 60.8/29.3 in one clean-clone run): spent's share is compared after
# moving it by the difference between the CPU-time splits the program measured in the two runs.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

prog=$PROGS/split603010
perf record -q -e cpu-clock -c 99991 -o "$TMP/perf.data" -- "$prog" 300 >/dev/null 2>"$TMP/perf.err"
perf report -i "$TMP/perf.data" --stdio --sort sym 2>/dev/null |
	awk '!/^#/ && NF >= 3 && $2 == "[.]" { gsub("%","",$1); print $3, $1 }' | head -3 > "$TMP/perf.top"
$SPENT record -e cpu-clock:99991 -o "$TMP/sp" -- "$prog" 300 >/dev/null 2>"$TMP/sp.err"
$SPENT report -i "$TMP/sp" --json | python3 -c 'import json,sys
rows=[json.loads(l) for l in sys.stdin]
rows=[r for r in rows if not r["image"].startswith("[")][:3]
for r in rows: print(r["symbol"], round(r["percent"],2))' > "$TMP/spent.top"
check perf_report_gave_three_user_functions test "$(wc -l < "$TMP/perf.top")" -eq 3
check top3_function_order_matches_perf test "$(cut -d' ' -f1 "$TMP/perf.top")" = "$(cut -d' ' -f1 "$TMP/spent.top")"
paste -d' ' "$TMP/perf.top" "$TMP/spent.top" | while read -r pn pp sn sp; do
	op=$(split_share "$TMP/perf.err" "$sn"); os=$(split_share "$TMP/sp.err" "$sn")
	if awk -v a="$pp" -v b="$sp" -v op="${op:-0}" -v os="${os:-0}" \
		'BEGIN{d=a-(b-os+op); if(d<0)d=-d; exit !(d<=3)}'; then
		pass "top_function_${sn}_percent_within_3_points_of_perf"
	else
		fail "top_function_${sn}_percent_within_3_points_of_perf: perf $pp% (program measured $op%) spent $sp% (program measured $os%)"
	fi
done
