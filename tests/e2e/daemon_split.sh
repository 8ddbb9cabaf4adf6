#!/bin/bash
# tests/e2e/daemon_split.sh - a 60/30/10 workload under the running daemon (BPF aggregator,
# then the perf-ring + DCPI-table fallback): after `spent db DB flush` the database gives each
# function the share of its image that the program measured itself, within 3 points; status
# counts the kernel's samples in both modes.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

BIN=$PROGS/daemon_split

# check_kernel_samples MODE DB: a copy loop that runs mostly in the kernel shows in status's
# kernel_samples (the fallback said 0 while reports gave the kernel a third of the samples)
check_kernel_samples() {
	dd if=/dev/zero of=/dev/null bs=4k count=200000 2>/dev/null
	"$SPENT" db "$2" flush > /dev/null 2>&1
	local k
	k=$(status_field "$2" kernel_samples)
	check "daemon_$1_status_counts_kernel_samples ($k)" test "${k:-0}" -gt 0
}

check_split() { # MODE DB
	local mode=$1 db=$2 dump=$TMP/dump-$1.tsv oracle=$TMP/oracle-$1.txt
	"$BIN" 1.2 > "$oracle"
	if ! "$SPENT" db "$db" flush > "$TMP/flush.out" 2>&1; then
		fail "daemon_${mode}_flush: $(cat "$TMP/flush.out")"
		return
	fi
	pass "daemon_${mode}_flush_succeeds"
	if ! "$SPENT" db "$db" dump > "$dump" 2> "$TMP/dump.err"; then
		fail "daemon_${mode}_dump_reads_every_file: $(head -3 "$TMP/dump.err")"
		return
	fi
	# spent report symbolizes every image of the machine: once (BPF mode) is enough
	if [ "$mode" = bpf ]; then
		"$SPENT" report -i "$db" --by function --json > "$TMP/report-$mode.json" 2> "$TMP/report.err"
		# only the warnings for images rebuilt or removed since (other builds on this
		# machine) are allowed: the daemon fills the build-id cache only for what it merged
		# while the file still had its identity
		check "daemon_${mode}_report_reads_db" \
			bash -c "! grep -v 'no function names (addresses shown)' '$TMP/report.err' | grep -q ."
	fi
	for fn in heavy medium light; do
		local want got rep
		want=$(awk -v f=$fn '$1 == f { print $2 }' "$oracle")
		got=$(func_share "$dump" "$BIN" $fn)
		if [ "$got" != nan ] && awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d <= 3 && d >= -3) }'; then
			pass "daemon_${mode}_${fn}_share_within_3_points (db $got%, program $want%)"
		else
			fail "daemon_${mode}_${fn}_share_within_3_points: db says $got%, program measured $want%"
		fi
		# the same through `spent report -i DB`: the function's share of its image
		[ "$mode" = bpf ] || continue
		rep=$(report_func_share "$TMP/report-$mode.json" "$fn")
		if [ "$rep" != nan ] && awk -v a="$rep" -v b="$want" 'BEGIN { d = a - b; exit !(d <= 3 && d >= -3) }'; then
			pass "daemon_${mode}_report_${fn}_share_within_3_points (report $rep%, program $want%)"
		else
			fail "daemon_${mode}_report_${fn}_share_within_3_points: spent report says $rep%, program measured $want%"
		fi
	done
}

# 1. the BPF aggregator
DB=$TMP/db-bpf
if start_daemon "$DB" "$TMP/bpf.log" -F 4000; then
	pass daemon_bpf_starts
	check_split bpf "$DB"
	check_kernel_samples bpf "$DB"
	agg=$(status_field "$DB" aggregator)
	check daemon_bpf_uses_bpf_aggregator [ "$agg" = bpf ]
	check daemon_bpf_stops_on_sigterm stop_daemon
else
	fail "daemon_bpf_starts: $(tail -3 "$TMP/bpf.log")"
fi

# 2. the fallback: perf rings into per-CPU DCPI tables
DB=$TMP/db-ring
if start_daemon "$DB" "$TMP/ring.log" -F 4000 --no-bpf; then
	pass daemon_ring_starts
	check_split ring "$DB"
	check_kernel_samples ring "$DB"
	agg=$(status_field "$DB" aggregator)
	check daemon_ring_uses_dcpi_tables [ "$agg" = perf-ring+dcpi-table ]
	check daemon_ring_stops_on_sigterm stop_daemon
else
	fail "daemon_ring_starts: $(tail -3 "$TMP/ring.log")"
fi
