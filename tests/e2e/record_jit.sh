#!/bin/bash
# tests/e2e/record_jit.sh - code a JIT names in /tmp/perf-PID.map (perf's convention) is
# symbolized by record and every view; generated code no map covers stays unknown.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

"$SPENT" record -e task-clock -g -o "$TMP/jit" -- "$PROGS/jit_map" 0.6 > "$TMP/out.txt" 2>/dev/null; rc=$?
map=$(sed -n 's/^jit_map: done (\(.*\))$/\1/p' "$TMP/out.txt")
check jit_program_ran test "$rc" -eq 0 -a -n "$map"
"$SPENT" report -i "$TMP/jit" --csv > "$TMP/jit.csv"
pct=$(awk -F, '$2 == "jit_spin_loop" { print $5; exit }' "$TMP/jit.csv")
check jit_function_named_from_map awk -v p="${pct:-0}" 'BEGIN { exit !(p > 35) }'
check jit_image_is_the_map grep -q "^$map,jit_spin_loop," "$TMP/jit.csv"
check jit_unmapped_code_stays_unknown awk -F, '$1 == "[unknown]" && $2 == "[jit]" && $5 > 15 { ok = 1 } END { exit !ok }' "$TMP/jit.csv"
"$SPENT" report -i "$TMP/jit" --folded > "$TMP/jit.folded"
check jit_folded_named grep -q 'jit_spin_loop [0-9]' "$TMP/jit.folded"
"$SPENT" report -i "$TMP/jit" --pprof "$TMP/jit.pb.gz" 2>/dev/null
check jit_pprof_named sh -c "zcat '$TMP/jit.pb.gz' | grep -aq jit_spin_loop"
rm -f "$map"
