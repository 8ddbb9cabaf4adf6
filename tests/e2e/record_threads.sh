#!/bin/bash
# tests/e2e/record_threads.sh - record --per-thread follows threads created after the start
# (only the main thread was sampled: 51 samples against 2861 without the flag), and from
# their first milliseconds (a 50 ms poll lost 20% of each thread's samples). The oracle is the
# program's own per-thread CPU clocks: samples per CPU-ms must match the inherited recording's.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

"$SPENT" record --per-thread -e task-clock -o "$TMP/pt" -- "$PROGS/threads2" 150 >"$TMP/pt.out" 2>"$TMP/pt.err"; rc=$?
check per_thread_record_succeeds test "$rc" -eq 0
"$SPENT" record -e task-clock -o "$TMP/inh" -- "$PROGS/threads2" 150 >"$TMP/inh.out" 2>&1
"$SPENT" report -i "$TMP/pt" --csv > "$TMP/pt.csv"
"$SPENT" report -i "$TMP/inh" --csv > "$TMP/inh.csv"
total() { awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$1"; }
pct_of() { awk -F, -v f="$2" '$2 == f { print $5; exit }' "$1"; }
cpu_ms() { awk 'NR == 2 { print $1 + $2 }' "$1"; }
pt=$(total "$TMP/pt.csv") inh=$(total "$TMP/inh.csv")
pt_ms=$(cpu_ms "$TMP/pt.out") inh_ms=$(cpu_ms "$TMP/inh.out")
echo "per-thread $pt samples in $pt_ms CPU ms, inherited $inh in $inh_ms" >&2
check per_thread_samples_like_inherit awk -v a="$pt" -v b="$inh" -v am="${pt_ms:-0}" -v bm="${inh_ms:-0}" \
	'BEGIN { exit !(am > 0 && bm > 0 && b > 0 && a / am >= 0.9 * b / bm) }'
a=$(pct_of "$TMP/pt.csv" thread_a_work) b=$(pct_of "$TMP/pt.csv" thread_b_work)
check per_thread_new_thread_a_sampled awk -v p="${a:-0}" 'BEGIN { exit !(p > 30) }'
check per_thread_new_thread_b_sampled awk -v p="${b:-0}" 'BEGIN { exit !(p > 30) }'

# threads that rename themselves at once (who_split: who-1..3) keep their names under
# --per-thread: the rename comes before the new thread's event is open, so no COMM record says
# it (every row was named who_split)
"$SPENT" record --per-thread -o "$TMP/ptn" -- "$PROGS/who_split" 50 > /dev/null 2>&1
names=$("$SPENT" report -i "$TMP/ptn" --sort comm --json | python3 -c '
import json, sys
print(" ".join(sorted(json.loads(l)["comm"] for l in sys.stdin)))')
check "per_thread_threads_keep_their_own_names ($names)" test "${names% who_split}" = "who-1 who-2 who-3"

# -p of a pool that keeps replacing its threads: a thread that ends between the listing of
# /proc/PID/task and the opening of its events is skipped (nearly every attach failed with
# "cannot open event 'cpu-clock': No such process" while the process ran). Each recording
# ends with the pool's process (1.2 s: a sanitized spent may take tenths of a second to attach).
ok=0
for i in 1 2 3; do
	"$PROGS/thread_churn" 1.2 & cpid=$!
	sleep 0.2
	"$SPENT" record -e cpu-clock -p "$cpid" -o "$TMP/churn$i" > /dev/null 2> "$TMP/churn.err" &&
		grep -q ' samples ' "$TMP/churn.err" && ok=$((ok + 1))
	wait "$cpid"
done
check "record -p attaches to a pool whose threads keep ending ($ok of 3; last: $(tail -1 "$TMP/churn.err"))" \
	test "$ok" -eq 3

# --per-thread follows what a child created before its own events were open: sh -> sh ->
# timeout -> gzip lost gzip in nearly every run (each process forked the next before its FORK
# record was read; that fork went into no ring), and g++ lost ld. gzip runs for a time, not a
# size; the oracle is gzip's share of the samples in the inherited recording of the same tree,
# and every run must reach half of it: a run of the old code that wins the race does not pass.
tree='sh -c "timeout 0.3 gzip -c /dev/zero > /dev/null; true"; true'
gzip_share() { "$SPENT" report -i "$1" --sort comm --csv | awk -F, '$1 == "gzip" { print $4; exit }'; }
"$SPENT" record -o "$TMP/tree_inh" -- sh -c "$tree" > /dev/null 2>&1
inh=$(gzip_share "$TMP/tree_inh")
shares="" ok=0
for i in 1 2 3 4; do
	"$SPENT" record --per-thread -o "$TMP/tree$i" -- sh -c "$tree" > /dev/null 2>&1
	pt=$(gzip_share "$TMP/tree$i")
	shares="$shares ${pt:-0}"
	awk -v a="${pt:-0}" -v b="${inh:-0}" 'BEGIN { exit !(b > 50 && a >= b / 2) }' && ok=$((ok + 1))
done
check "per_thread_follows_grandchildren (gzip % of samples:$shares; inherited ${inh:-none})" \
	test "$ok" -eq 4

# an orphan: `(cmd &)` forks cmd from a subshell that exits at once, before its events are open
# (its FORK record went into no ring) and before a scan lists its children, and cmd is
# reparented away from the tree: it went unsampled (6-9 samples of 0.3 s of gzip, against
# thousands inherited). The recorder is a child subreaper under --per-thread: the orphan comes
# to it and is followed. The same oracle as above: gzip's share of the inherited recording.
orphan='(timeout 0.3 gzip -c /dev/zero > /dev/null &); sleep 0.6'
"$SPENT" record -o "$TMP/orph_inh" -- sh -c "$orphan" > /dev/null 2>&1
inh=$(gzip_share "$TMP/orph_inh")
shares="" ok=0
for i in 1 2 3; do
	"$SPENT" record --per-thread -o "$TMP/orph$i" -- sh -c "$orphan" > /dev/null 2>&1
	pt=$(gzip_share "$TMP/orph$i")
	shares="$shares ${pt:-0}"
	awk -v a="${pt:-0}" -v b="${inh:-0}" 'BEGIN { exit !(b > 30 && a >= b / 2) }' && ok=$((ok + 1))
done
check "per_thread_follows_orphans (gzip % of samples:$shares; inherited ${inh:-none})" test "$ok" -eq 3

# a thread that execs takes the process's id after the old main thread's EXIT record: under
# --per-thread the new main thread was opened a second time by the scan for what a new thread
# made, and each of its samples counted twice. One sample per ms of cpu-clock: its samples
# must match its own CPU clock.
"$SPENT" record -c 1000000 --per-thread -o "$TMP/exth" -- "$PROGS/exec_from_thread" > "$TMP/exth.out" 2> /dev/null
pid_samples=$("$SPENT" report -i "$TMP/exth" --sort tid --csv | awk -F, 'NR == 2 { print $3 }')
main_ms=$(awk '/^main_cpu_s/ { printf "%d", $2 * 1000 }' "$TMP/exth.out")
check "per_thread_exec_from_a_thread_counts_once ($pid_samples samples for ${main_ms:-?} CPU ms)" \
	awk -v s="${pid_samples:-0}" -v m="${main_ms:-0}" 'BEGIN { exit !(m > 0 && s >= 0.7 * m && s <= 1.3 * m) }'
