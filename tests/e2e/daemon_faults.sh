#!/bin/bash
# tests/e2e/daemon_faults.sh - the database survives the daemon: kill -9 in the middle of a
# flush leaves every file readable and loses nothing already merged; a full disk is logged,
# sampling goes on, nothing is corrupted, and the counts land once there is room again.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
MNT=$TMP/mnt
trap 'stop_daemon; umount "$MNT" 2>/dev/null; rm -rf "$TMP"' EXIT

BIN=$PROGS/daemon_split
image_count() { # DB: samples of the daemon_split image
	"$SPENT" db "$1" dump 2>"$TMP/dump.err" |
		awk -F'\t' 'NR > 1 { n = split($1, p, "/"); if (p[n] == "daemon_split") s += $4 } END { print s + 0 }'
	return "${PIPESTATUS[0]}"
}

# ---- kill -9 during a merge ----
DB=$TMP/db
if ! start_daemon "$DB" "$TMP/k.log" -F 1000; then
	fail "daemon_faults_starts: $(tail -3 "$TMP/k.log")"
	exit 0
fi
"$BIN" 0.5 > /dev/null
"$SPENT" db "$DB" flush > /dev/null
c1=$(image_count "$DB")
ok=1
for delay in 0.002 0.02; do
	"$BIN" 0.3 > /dev/null
	"$SPENT" db "$DB" flush > /dev/null 2>&1 &
	flusher=$!
	sleep $delay
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	wait "$flusher" 2>/dev/null
	DAEMON_PID=
	c=$(image_count "$DB")
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$TMP/dump.err" ]; then
		fail "daemon_kill9_after_${delay}s_db_readable: dump exit $rc: $(head -2 "$TMP/dump.err")"
		ok=0
	elif [ "$c" -lt "$c1" ]; then
		fail "daemon_kill9_after_${delay}s_keeps_merged_samples: $c < $c1 before the kill"
		ok=0
	fi
	c1=$c
	if ! start_daemon "$DB" "$TMP/k.log" -F 1000; then
		fail "daemon_kill9_restarts_on_same_db: $(tail -3 "$TMP/k.log")"
		ok=0
		break
	fi
done
[ $ok = 1 ] && pass "daemon_kill9_during_flush_db_readable_and_merged_samples_kept (2 kills)"
check daemon_kill9_leaves_no_corrupt_files [ -z "$(find "$DB" -name '*.corrupt')" ]
stop_daemon

# ---- disk full ----
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=2m,mode=0755 tmpfs "$MNT"; then
	fail "daemon_diskfull_mounts_tmpfs: mount failed"
	exit 0
fi
DB=$MNT/db
if ! start_daemon "$DB" "$TMP/f.log" -F 1000; then
	fail "daemon_diskfull_starts: $(tail -3 "$TMP/f.log")"
	exit 0
fi
"$SPENT" db "$DB" flush > /dev/null
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
"$BIN" 0.6 > "$TMP/oracle.txt"
if "$SPENT" db "$DB" flush > "$TMP/flush.out" 2>&1; then
	fail "daemon_diskfull_flush_reports_error: flush said ok on a full disk"
else
	check daemon_diskfull_flush_reports_no_space grep -q "No space left" "$TMP/flush.out"
fi
sleep 1.2	# the loop retries and logs
check daemon_diskfull_logged grep -q "No space left on device: still sampling" "$TMP/f.log"
s1=$(status_field "$DB" samples)
sleep 0.5
s2=$(status_field "$DB" samples)
check "daemon_diskfull_keeps_sampling ($s1 -> $s2)" [ "$s2" -gt "$s1" ]
c=$(image_count "$DB")
check "daemon_diskfull_db_stays_readable" [ ! -s "$TMP/dump.err" ]
rm -f "$MNT/fill"
check daemon_diskfull_flush_ok_once_room eval "\"$SPENT\" db \"$DB\" flush > /dev/null"
c=$(image_count "$DB")
# the workload ran 0.6 s of CPU at 1 kHz while the disk was full: its samples were kept
check "daemon_diskfull_samples_kept_in_memory_land_later ($c samples)" [ "$c" -ge 480 ]
dump=$TMP/dump-full.tsv
"$SPENT" db "$DB" dump > "$dump"
h=$(func_share "$dump" "$BIN" heavy)
want=$(awk '$1 == "heavy" { print $2 }' "$TMP/oracle.txt")
check "daemon_diskfull_split_still_right (heavy $h%, program $want%)" \
	awk -v a="$h" -v b="$want" 'BEGIN { d = a - b; exit !(d <= 5 && d >= -5) }'
check daemon_diskfull_stops_on_sigterm stop_daemon

# ---- a full disk at the last merge: the daemon exits 1 and says what it lost ----
if start_daemon "$DB" "$TMP/g.log" -F 1000; then
	"$SPENT" db "$DB" flush > /dev/null
	dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
	"$BIN" 0.3 > /dev/null
	stop_daemon
	rc=$?
	check "daemon_diskfull_final_merge_failure_exits_1 (exit $rc)" test $rc = 1
	check daemon_diskfull_final_merge_failure_says_what_is_lost \
		grep -q "cells of counts not written are lost" "$TMP/g.log"
	rm -f "$MNT/fill"
fi

# ---- db merge on a full disk changes nothing, and its retry counts the source once ----
cp -a "$DB" "$TMP/src"
sed -i -e 's/^created .*/created 1700000001/' -e 's/^id .*/id 0123456789abcdef/' "$TMP/src/meta"
cp -a "$DB" "$TMP/ref"
"$SPENT" db "$TMP/ref" merge "$TMP/src" > /dev/null 2>&1
"$SPENT" db "$TMP/ref" dump > "$TMP/ref.tsv"
"$SPENT" db "$DB" dump > "$TMP/before.tsv"
avail=$(df -k --output=avail "$MNT" | tail -1)
dd if=/dev/zero of="$MNT/fill" bs=1k count=$((avail - 8)) 2>/dev/null
"$SPENT" db "$DB" merge "$TMP/src" > "$TMP/merge.out" 2>&1
rc=$?
"$SPENT" db "$DB" dump > "$TMP/failed.tsv"
check "db_merge_diskfull_fails (exit $rc: $(head -1 "$TMP/merge.out"))" \
	test $rc = 1 -a -n "$(grep 'No space left' "$TMP/merge.out")"
check db_merge_diskfull_changes_nothing cmp -s "$TMP/before.tsv" "$TMP/failed.tsv"
check db_merge_diskfull_leaves_no_temporaries test -z "$(ls -d "$DB"/*.tmp.* 2>/dev/null)"
rm -f "$MNT/fill"
"$SPENT" db "$DB" merge "$TMP/src" > /dev/null 2>&1
"$SPENT" db "$DB" dump > "$TMP/retried.tsv"
check db_merge_diskfull_retry_counts_the_source_once cmp -s "$TMP/ref.tsv" "$TMP/retried.tsv"

# ---- a merge killed after its commit point: the daemon's start puts it in place first ----
if cc -shared -fPIC -O1 -o "$TMP/crash.so" "$SPENT_TOP/tests/e2e/crash_rename.c" -ldl 2> "$TMP/cc.err"; then
	cp -a "$TMP/src" "$TMP/src2"
	sed -i -e 's/^created .*/created 1700000002/' "$TMP/src2/meta"
	cp -a "$DB" "$TMP/dk"
	cp -a "$DB" "$TMP/dkref"
	"$SPENT" db "$TMP/dkref" merge "$TMP/src2" > /dev/null 2>&1
	(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD=$TMP/crash.so \
		SPENT_CRASH_AFTER=/merge-pending "$SPENT" db "$TMP/dk" merge "$TMP/src2" > /dev/null 2>&1 & wait $!) 2> /dev/null
	rc=$?
	check "setup: a merge killed right after its commit (exit $rc)" test $rc = 137 -a -d "$TMP/dk/merge-pending"
	if start_daemon "$TMP/dk" "$TMP/dk.log" -F 1000; then
		stop_daemon
		check daemon_start_finishes_a_killed_merge test ! -e "$TMP/dk/merge-pending"
		check daemon_start_lists_the_killed_merges_source grep -q ' 1700000002' "$TMP/dk/merged-from"
		check "daemon_start_counts_the_killed_merges_source_once ($(image_count "$TMP/dk") vs $(image_count "$TMP/dkref"))" \
			test "$(image_count "$TMP/dk")" = "$(image_count "$TMP/dkref")"
	else
		fail "daemon_start_finishes_a_killed_merge: the daemon did not start: $(tail -2 "$TMP/dk.log")"
	fi
else
	fail "setup: cannot build the crash library: $(head -2 "$TMP/cc.err")"
fi

# ---- the kernel's symbols that a full disk kept from being saved at start are saved later ----
rm -rf "$MNT/db2"
avail=$(df -k --output=avail "$MNT" | tail -1)
dd if=/dev/zero of="$MNT/fill" bs=1k count=$((avail - 200)) 2>/dev/null
if start_daemon "$MNT/db2" "$TMP/k.log" -F 1000; then
	rm -f "$MNT/fill"
	# one flush that writes saves them (the daemon's own retry waits up to 10 s)
	"$SPENT" db "$MNT/db2" flush > "$TMP/k.flush" 2>&1
	check "daemon_kallsyms_saved_by_the_first_flush_with_room ($(cat "$TMP/k.flush"); $(grep -c 'kernel' "$TMP/k.log") log lines)" \
		bash -c "ls '$MNT'/db2/kallsyms-* > /dev/null 2>&1 && grep -q 'saved the kernel' '$TMP/k.log'"
	stop_daemon
fi

# ---- a full kernel map: samples go to the overflow ring, none is lost. wide_code lands nearly
# every sample on a new pc: at 20000 Hz about 2000 new keys come between two of the daemon's
# 100 ms ticks, so a map of 1024 fills before the daemon flips it (35% overflowed here;
# 12% at 10000 Hz) ----
if start_daemon "$TMP/full" "$TMP/full.log" -F 20000 --map-entries 1024; then
	"$PROGS/wide_code" 1 > /dev/null
	stop_daemon
	read -r counted overflowed dropped ondemand < <("$SPENT" db "$TMP/full" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["samples"], d["overflowed"], d["dropped"], d["map_on_demand"])')
	kept=$("$SPENT" db "$TMP/full" list --json | python3 -c '
import json, sys
print(sum(json.loads(l)["samples"] for l in sys.stdin if l.strip()))')
	check "daemon_full_map_overflows_to_the_ring ($overflowed of $counted samples; maps on demand: $ondemand)" \
		test "${overflowed:-0}" -gt 0
	check "daemon_full_map_loses_no_sample (counted $counted, dropped $dropped, in the database $kept)" \
		test "${dropped:-1}" = 0 -a "${kept:-0}" = "${counted:--1}"
else
	fail "daemon_full_map_starts: $(tail -3 "$TMP/full.log")"
fi
