#!/bin/bash
# tests/e2e/daemon_db.sh - the database commands around the daemon: per-process detail (two
# processes of one program doing different known work, each selected by --pid shows its own
# split; --per-process IMAGE keeps detail rows for that image only), `spent db DIR merge` (merged counts are the sums of the inputs, read back by
# `spent report -i`) and `spent db DIR gc --keep N` (the newest N epochs stay, report reads).
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

BIN=$PROGS/daemon_split

within() { # A B POINTS: |A - B| <= POINTS (A may be nan)
	[ "$1" != nan ] && awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; exit !(d <= p && d >= -p) }'
}

# this worktree's binary by full path: other checkouts may run their own daemon_split meanwhile
BINPATH=$(realpath "$BIN")
image_total() { # DUMP: samples of the daemon_split image in a `spent db dump`
	awk -F'\t' -v b="$BINPATH" 'NR > 1 && $1 == b { s += $4 } END { print s + 0 }' "$1"
}
report_total() { # DB: daemon_split's samples in `spent report -i DB --by image --json`
	"$SPENT" report -i "$1" --by image --json 2> "$TMP/rep.err" | python3 -c '
import json, sys
print(sum(r["samples"] for r in map(json.loads, filter(str.strip, sys.stdin))
          if r.get("image") == sys.argv[1]))' "$BINPATH"
}

# ---- per-process detail, --per-process as a filter: two instances, 60/30/10 and 0/33/67 ----
DB1=$TMP/db1
if ! start_daemon "$DB1" "$TMP/d1.log" -F 2000 --per-process daemon_split; then
	fail "daemon_db_per_process_starts: $(tail -3 "$TMP/d1.log")"
	exit 0
fi
"$BIN" 1.0 > "$TMP/oracle-a.txt" & A=$!
"$BIN" 1.0 0 1 6 > "$TMP/oracle-b.txt" & B=$!
wait $A $B
check daemon_db_flush_succeeds eval "\"$SPENT\" db \"$DB1\" flush > /dev/null"
check daemon_db_no_pid_dirs_written bash -c "! ls -d '$DB1'/pid-* 2>/dev/null"
for who in a b; do
	pid=$A; [ $who = b ] && pid=$B
	# the process's own samples, selected from the database's detail rows by pid
	if ! "$SPENT" report -i "$DB1" --pid "$pid" --by function --json > "$TMP/pp-$who.json" \
		2> "$TMP/pp.err"; then
		fail "daemon_db_per_process_${who}_selected_by_pid: $(head -2 "$TMP/pp.err")"
		continue
	fi
	for fn in heavy medium light; do
		want=$(awk -v f=$fn '$1 == f { print $2 }' "$TMP/oracle-$who.txt")
		got=$(report_func_share "$TMP/pp-$who.json" "$fn")
		if within "$got" "$want" 4; then
			pass "daemon_db_per_process_${who}_${fn}_share (--pid $got%, process measured $want%)"
		else
			fail "daemon_db_per_process_${who}_${fn}_share: --pid $got%, process measured $want%"
		fi
	done
done
# --per-process IMAGE is a filter: the detail rows hold daemon_split's samples only, all of
# them (the histogram's count for the image), and both processes by name
"$SPENT" db "$DB1" dump > "$TMP/db1.tsv"
t1=$(image_total "$TMP/db1.tsv")
read -r dimg dother < <(awk -F'\t' -v b="$BINPATH" '$1 == "[detail]" {
	if (substr($8, 1, index($8, "+0x") - 1) == b) d += $9; else o += $9 } END { print d + 0, o + 0 }' "$TMP/db1.tsv")
check "daemon_db_per_process_filter_keeps_image_rows ($dimg of $t1)" [ "$dimg" -eq "$t1" -a "$t1" -gt 0 ]
check "daemon_db_per_process_filter_drops_other_images ($dother)" [ "$dother" -eq 0 ]
check daemon_db_detail_rows_name_the_process \
	eval "awk -F'\t' -v p=$A '\$1 == \"[detail]\" && \$5 == p && \$4 == \"daemon_split\"' '$TMP/db1.tsv' | grep -q ."
stop_daemon

# ---- merge: a second database, then both into a third ----
DB2=$TMP/db2
if ! start_daemon "$DB2" "$TMP/d2.log" -F 2000; then
	fail "daemon_db_second_db_starts: $(tail -3 "$TMP/d2.log")"
	exit 0
fi
"$BIN" 0.5 > /dev/null
stop_daemon
"$SPENT" db "$DB1" dump > "$TMP/db1.tsv"
"$SPENT" db "$DB2" dump > "$TMP/db2.tsv"
M=$TMP/merged
if "$SPENT" db "$M" merge "$DB1" "$DB2" > "$TMP/merge.out" 2>&1; then
	pass daemon_db_merge_succeeds
else
	fail "daemon_db_merge_succeeds: $(cat "$TMP/merge.out")"
fi
"$SPENT" db "$M" dump > "$TMP/m.tsv" 2> "$TMP/m.err"
# every (image, event, offset) count of the merge is the sum of the two inputs, nothing else
diffs=$(python3 - "$TMP/db1.tsv" "$TMP/db2.tsv" "$TMP/m.tsv" <<'PY'
import sys
def load(p):
    d = {}
    for line in open(p).read().splitlines()[1:]:
        f = line.split("\t")
        if len(f) == 4:
            d[(f[0], f[1], f[2])] = d.get((f[0], f[1], f[2]), 0) + int(f[3])
    return d
a, b, m = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
want = dict(a)
for k, v in b.items():
    want[k] = want.get(k, 0) + v
bad = [k for k in set(want) | set(m) if want.get(k, 0) != m.get(k, 0)]
print(len(bad) if want else -1)
PY
)
check "daemon_db_merge_counts_are_sums_of_inputs ($diffs cells differ)" [ "$diffs" = 0 ]
ta=$(image_total "$TMP/db1.tsv"); tb=$(image_total "$TMP/db2.tsv")
rep=$(report_total "$M")
check "daemon_db_merge_report_reads_sum (report $rep, inputs $ta + $tb)" [ "$rep" = $((ta + tb)) ]
if "$SPENT" db "$M" merge "$DB2" > "$TMP/merge2.out" 2>&1 && grep -q "skipped 1" "$TMP/merge2.out"; then
	pass daemon_db_merge_same_source_twice_skipped
else
	fail "daemon_db_merge_same_source_twice_skipped: $(cat "$TMP/merge2.out")"
fi
"$SPENT" db "$M" dump > "$TMP/m2.tsv"
check daemon_db_merge_twice_changes_nothing cmp -s "$TMP/m.tsv" "$TMP/m2.tsv"

# ---- gc --keep 2 on three epochs with data ----
DB3=$TMP/db3
if ! start_daemon "$DB3" "$TMP/d3.log" -F 2000; then
	fail "daemon_db_gc_db_starts: $(tail -3 "$TMP/d3.log")"
	exit 0
fi
totals=()
for i in 1 2 3; do
	"$BIN" 0.3 > /dev/null
	"$SPENT" db "$DB3" flush > /dev/null
	"$SPENT" db "$DB3" dump > "$TMP/g.tsv"
	totals+=("$(image_total "$TMP/g.tsv")")
	[ $i -lt 3 ] && "$SPENT" db "$DB3" epoch > /dev/null
done
stop_daemon
"$SPENT" db "$DB3" dump > "$TMP/g.tsv"
all=$(image_total "$TMP/g.tsv")
epochs=$(cd "$DB3" && ls -d epoch-* | sort)
newest2=$(echo "$epochs" | tail -2)
check "daemon_db_gc_three_epochs ($(echo $epochs))" [ "$(echo "$epochs" | wc -l)" -eq 3 ]
if "$SPENT" db "$DB3" gc --keep 2 > "$TMP/gc.out" 2>&1; then
	pass "daemon_db_gc_succeeds ($(cat "$TMP/gc.out"))"
else
	fail "daemon_db_gc_succeeds: $(cat "$TMP/gc.out")"
fi
left=$(cd "$DB3" && ls -d epoch-* | sort)
check "daemon_db_gc_keeps_newest_2 ($(echo $left))" [ "$left" = "$newest2" ]
# what remains is the samples of epochs 2 and 3: the final total minus epoch 1's
"$SPENT" db "$DB3" dump > "$TMP/g2.tsv" 2> "$TMP/g2.err"
after=$(image_total "$TMP/g2.tsv")
check "daemon_db_gc_dump_is_newest_epochs ($after = $all - ${totals[0]})" \
	test "$after" -eq $((all - totals[0])) -a "$after" -gt 0
rep=$(report_total "$DB3")
check "daemon_db_gc_report_still_reads (report $rep, dump $after)" [ "$rep" = "$after" ]
