#!/bin/bash
# tests/e2e/record_threads.sh - record --per-thread follows threads created after the start
# (only the main thread was sampled: 51 samples against 2861 without the flag).
source "$(dirname "$0")/lib.sh"

"$SPENT" record --per-thread -e task-clock -o "$TMP/pt" -- "$PROGS/threads2" 150 >/dev/null 2>"$TMP/pt.err"; rc=$?
check per_thread_record_succeeds test "$rc" -eq 0
"$SPENT" record -e task-clock -o "$TMP/inh" -- "$PROGS/threads2" 150 >/dev/null 2>&1
"$SPENT" report -i "$TMP/pt" --csv > "$TMP/pt.csv"
"$SPENT" report -i "$TMP/inh" --csv > "$TMP/inh.csv"
total() { awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$1"; }
pct_of() { awk -F, -v f="$2" '$2 == f { print $5; exit }' "$1"; }
pt=$(total "$TMP/pt.csv") inh=$(total "$TMP/inh.csv")
check per_thread_samples_like_inherit awk -v a="$pt" -v b="$inh" 'BEGIN { exit !(b > 0 && a >= 0.6 * b) }'
a=$(pct_of "$TMP/pt.csv" thread_a_work) b=$(pct_of "$TMP/pt.csv" thread_b_work)
check per_thread_new_thread_a_sampled awk -v p="${a:-0}" 'BEGIN { exit !(p > 30) }'
check per_thread_new_thread_b_sampled awk -v p="${b:-0}" 'BEGIN { exit !(p > 30) }'
