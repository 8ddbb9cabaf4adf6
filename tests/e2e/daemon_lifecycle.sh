#!/bin/bash
# tests/e2e/daemon_lifecycle.sh - the daemon as an operator handles it: SIGHUP reopens --log
# (rotation) and, without --log, drains and stops like SIGTERM; detached, it keeps none of its
# caller's descriptors and works from /; removing daemon.lock does not let a second daemon onto
# the database; `db list` goes past an epoch with a damaged span; `db gc` removes the other old
# epochs when one holds a foreign file; a --db too long for the control socket is refused with
# one line before anything is made in it.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; [ -n "${BG:-}" ] && kill "$BG" 2>/dev/null; rm -rf "$TMP"' EXIT

# ---- detached: descriptors, working directory, SIGHUP reopens --log ----
mkdir -p "$TMP/cwd"
cd "$TMP/cwd" || exit 1
# a caller's pipe: the reader must see its end once the daemon detached
/usr/bin/python3 - "$SPENT" <<'PY' > "$TMP/pipe.out" 2>&1
import os, select, subprocess, sys
r, w = os.pipe()
rc = subprocess.run([sys.argv[1], "daemon", "--db", "db", "--log", "d.log"], pass_fds=[w]).returncode
os.close(w)
ready = select.select([r], [], [], 5)[0]
print("rc", rc, "eof" if ready and os.read(r, 1) == b"" else "blocked")
PY
check "daemon_detached_lets_go_of_the_callers_pipe ($(cat "$TMP/pipe.out"))" grep -qx "rc 0 eof" "$TMP/pipe.out"
BG=$(cat "$TMP/cwd/db/daemon.lock" 2>/dev/null)
check "daemon_detached_works_from_root ($(readlink /proc/"$BG"/cwd))" test "$(readlink /proc/"$BG"/cwd)" = /
cd "$TMP" || exit 1
"$SPENT" db "$TMP/cwd/db" epoch > /dev/null
mv "$TMP/cwd/d.log" "$TMP/cwd/d.log.1"
kill -HUP "$BG"
# the daemon opens its log again before its next line (the epoch's): its SIGHUP handler has run
# before it reads that command (kill returned first; a handler runs before the daemon's next read)
"$SPENT" db "$TMP/cwd/db" epoch > /dev/null
check "daemon_sighup_with_log_keeps_running" kill -0 "$BG"
check "daemon_sighup_reopens_the_log (new: $(tr '\n' '|' < "$TMP/cwd/d.log" 2>/dev/null))" \
	grep -q 'epoch 2 started' "$TMP/cwd/d.log"
check "daemon_sighup_earlier_lines_stay_in_the_rotated_log" grep -q 'epoch 1 started' "$TMP/cwd/d.log.1"

# ---- the lock: daemon.lock removed while the daemon runs ----
rm -f "$TMP/cwd/db/daemon.lock"
"$SPENT" daemon --db "$TMP/cwd/db" --foreground > "$TMP/second.out" 2>&1 &
second=$!
for _ in $(seq 1 50); do kill -0 $second 2>/dev/null || break; sleep 0.1; done
if kill -0 $second 2>/dev/null; then
	kill -TERM $second
	fail "daemon_second_refused_after_lock_file_removed: a second daemon runs on the database"
else
	wait $second
	rc=$?
	check "daemon_second_refused_after_lock_file_removed (exit $rc: $(head -1 "$TMP/second.out"))" \
		bash -c "[ $rc != 0 ] && grep -q 'another daemon' '$TMP/second.out'"
fi
"$SPENT" db "$TMP/cwd/db" stop > /dev/null
for _ in $(seq 1 100); do kill -0 "$BG" 2>/dev/null || break; sleep 0.1; done
check "daemon_stops_after_the_lock_file_went" bash -c "! kill -0 $BG 2>/dev/null"
BG=

# ---- a --db path too long for the control socket (a unix socket's 108 bytes): refused before
# anything is made (it left daemon.lock, meta, epoch-0000 and a kernel copy behind) ----
LONG=$TMP/$(printf 'd%.0s' $(seq $((120 - ${#TMP}))))
"$SPENT" daemon --db "$LONG" > "$TMP/long.out" 2>&1
rc=$?
check "daemon_long_db_path_refused_in_one_line (exit $rc: $(head -2 "$TMP/long.out" | tr '\n' '|'))" \
	bash -c "[ $rc = 1 ] && [ \$(wc -l < '$TMP/long.out') = 1 ] && grep -q 'too long for the control socket' '$TMP/long.out'"
check "daemon_long_db_path_leaves_nothing ($(ls -A "$LONG" 2>&1 | tr '\n' ' '))" test ! -e "$LONG"
mkdir "$LONG"
"$SPENT" daemon --db "$LONG" --foreground > /dev/null 2>&1
check "daemon_long_db_path_leaves_an_existing_directory_empty ($(ls -A "$LONG" | tr '\n' ' '))" \
	test -z "$(ls -A "$LONG")"
rm -rf "$LONG"

# ---- SIGHUP without --log: drained and stopped ----
DB=$TMP/hup
if start_daemon "$DB" "$TMP/hup.log" -F 1000; then
	"$PROGS/daemon_split" 0.5 > /dev/null
	kill -HUP "$DAEMON_PID"
	wait "$DAEMON_PID"
	rc=$?
	DAEMON_PID=
	check "daemon_sighup_without_log_stops_cleanly (exit $rc)" test "$rc" = 0
	n=$("$SPENT" report -i "$DB" --comm daemon_split --json 2>/dev/null | python3 -c '
import json, sys
print(sum(json.loads(l).get("samples", 0) for l in sys.stdin if l.strip()))')
	check "daemon_sighup_without_log_kept_the_samples ($n)" test "${n:-0}" -gt 50
else
	fail "daemon_hup_starts: $(tail -3 "$TMP/hup.log")"
fi

# ---- SIGTERM while a program runs: every sample counted is in the database (the samples
# that landed after the last drain were counted and lost: 46 of 459 in a 5 s run) ----
DB2=$TMP/term
if start_daemon "$DB2" "$TMP/term.log" -F 1000; then
	"$PROGS/daemon_split" 3 > /dev/null & busy=$!
	sleep 1
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"
	DAEMON_PID=
	kill "$busy" 2>/dev/null
	wait "$busy" 2>/dev/null
	counted=$("$SPENT" db "$DB2" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["samples"])')
	kept=$("$SPENT" db "$DB2" list --json | python3 -c 'import json, sys; print(sum(json.loads(l)["samples"] for l in sys.stdin if l.strip()))')
	check "daemon_sigterm_keeps_every_sample_it_counted (counted $counted, in the database $kept)" \
		test "${counted:-0}" -gt 0 -a "${counted:-0}" = "${kept:-x}"
else
	fail "daemon_term_starts: $(tail -3 "$TMP/term.log")"
fi

# ---- db list past a damaged span; gc past an epoch with a foreign file ----
for _ in 1 2 3; do "$SPENT" db "$DB" epoch > /dev/null 2>&1; done
mkdir -p "$DB/epoch-0001" "$DB/epoch-0002" "$DB/epoch-0003"
echo 'spent-span 1 0 0' > "$DB/epoch-0001/span"
"$SPENT" db "$DB" list > "$TMP/list.out" 2> "$TMP/list.err"
rc=$?
check "db_list_goes_past_a_damaged_span (exit $rc; epochs listed: $(awk 'NR > 1 { printf "%s ", $1 }' "$TMP/list.out"))" \
	bash -c "[ $rc = 1 ] && grep -q '^ *3 ' '$TMP/list.out' && grep -q '^ *1 ' '$TMP/list.out'"
check "db_list_names_the_damaged_span" grep -q "epoch-0001/span" "$TMP/list.err"
echo note > "$DB/epoch-0000/notes.txt"
"$SPENT" db "$DB" gc --keep 1 > "$TMP/gc.out" 2> "$TMP/gc.err"
rc=$?
left=$(cd "$DB" && ls -d epoch-* | tr '\n' ' ')
check "db_gc_keeps_the_foreign_epoch_and_removes_the_others (exit $rc; left: $left)" \
	test "$rc" = 1 -a "$left" = "epoch-0000 epoch-0003 "
check "db_gc_names_the_kept_epoch ($(cat "$TMP/gc.err"))" grep -q "epoch 0 holds files spent did not write" "$TMP/gc.err"

# ---- a damaged status.json is said to be one, not shown as the daemon's last status ----
echo '{"running":tru' > "$DB/status.json"
"$SPENT" db "$DB" status > "$TMP/st.out" 2> "$TMP/st.err"
rc=$?
check "db_status_refuses_a_damaged_status_file (exit $rc: $(cat "$TMP/st.err"))" \
	bash -c "[ $rc = 1 ] && grep -q 'not a status the daemon wrote' '$TMP/st.err' && grep -q 'no status recorded' '$TMP/st.out'"

# ---- db merge names the source that failed ----
mkdir -m 750 "$TMP/into"
"$SPENT" db "$TMP/into" merge "$TMP/no-such-db" > /dev/null 2> "$TMP/merge.err"
rc=$?
check "db_merge_error_names_the_source (exit $rc: $(cat "$TMP/merge.err"))" \
	bash -c "[ $rc = 1 ] && grep -q \"merging '$TMP/no-such-db' into '$TMP/into' failed\" '$TMP/merge.err'"

# ---- a corrupt counts file set aside is said so in the log (it was only counted) ----
DB3=$TMP/corrupt
if start_daemon "$DB3" "$TMP/c.log" -F 1000; then
	"$PROGS/daemon_split" 0.3 > /dev/null
	"$SPENT" db "$DB3" flush > /dev/null
	f=$(cd "$DB3/epoch-0000" && ls | grep '^daemon_split-.*\.prof$' | head -1)
	if [ -n "$f" ]; then
		echo garbage > "$DB3/epoch-0000/$f"
		"$PROGS/daemon_split" 0.3 > /dev/null
		"$SPENT" db "$DB3" flush > /dev/null
		check "daemon_logs_a_corrupt_file_set_aside ($(grep -c 'set aside' "$TMP/c.log") lines)" \
			grep -q "set aside '.*$f' as '.*$f.corrupt'" "$TMP/c.log"
		check daemon_corrupt_file_is_set_aside test -e "$DB3/epoch-0000/$f.corrupt"
	else
		fail "daemon_corrupt_counts_file_written: none for daemon_split in $(ls "$DB3/epoch-0000" | tr '\n' ' ')"
	fi
	check daemon_corrupt_stops_on_sigterm stop_daemon
else
	fail "daemon_corrupt_starts: $(tail -3 "$TMP/c.log")"
fi

# ---- a slow control client does not stall the daemon; a moved database stops it ----
DB4=$TMP/db4
if start_daemon "$DB4" "$TMP/s.log" -F 1000; then
	# a client sending a byte every 0.3 s held the daemon (no drains, no merges) until its
	# line was whole; one that does not read a long reply blocked it, SIGTERM too
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
for _ in range(20):
    s.send(b"s"); time.sleep(0.3)
' "$DB4/control" 2>/dev/null &
	drip=$!
	sleep 0.5
	start=$(date +%s%N)
	"$SPENT" db "$DB4" status > /dev/null 2>&1
	ms=$((($(date +%s%N) - start) / 1000000))
	check "a dripping control client does not stall the daemon (status in $ms ms)" test "$ms" -lt 3000
	kill "$drip" 2> /dev/null
	wait "$drip" 2> /dev/null
	# a command is the whole line: "flush" followed by a NUL and more ran flush
	ctl() { /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
print(s.makefile("rb").read().decode("latin-1"), end="")
' "$DB4/control" "$1"; }
	out=$(ctl 'flush\x00junk\n')
	check "a command holding a NUL byte is refused, not run ($out)" \
		grep -q '^error malformed command' <<<"$out"
	out=$(ctl 'flush\rjunk\n')
	check "a command holding a carriage return is refused, not run ($out)" \
		grep -q '^error malformed command' <<<"$out"
	out=$(ctl 'status\r\n')
	check "a command ended by CR LF runs" grep -q '"pid"' <<<"$out"
	out=$(ctl 'bo\x1b[2Jgus\xc2\x9b31m\n')
	check "an unknown command is echoed without its control bytes ($(tr -c '[:print:]\n' '#' <<<"$out"))" \
		test "$out" = "error unknown command 'bo?[2Jgus??31m'"
	# a removed control socket is made again (the daemon could only be signalled before)
	rm -f "$DB4/control"
	for _ in $(seq 1 40); do [ -S "$DB4/control" ] && break; sleep 0.1; done
	"$SPENT" db "$DB4" flush > "$TMP/renew.out" 2>&1; rc=$?
	check "a removed control socket is made again and answers (flush exit $rc: $(head -1 "$TMP/renew.out"))" \
		bash -c "[ $rc -eq 0 ] && grep -q 'control socket .* was removed: made again' '$TMP/s.log'"
	# samples still in the kernel's maps when the directory moves (drains are a minute apart)
	"$PROGS/daemon_split" 0.5 > /dev/null
	mv "$DB4" "$DB4.moved"
	for _ in $(seq 1 50); do
		kill -0 "$DAEMON_PID" 2> /dev/null || break
		sleep 0.1
	done
	check "a daemon whose database directory was moved stops (it wrote into the old path)" \
		bash -c "! kill -0 $DAEMON_PID 2> /dev/null && grep -q 'was moved or removed' '$TMP/s.log'"
	stop_daemon
	rc=$?
	check "... and leaves nothing at the old path" test ! -e "$DB4"
	# they were lost: they now go where the directory is
	moved=$("$SPENT" db "$DB4.moved" dump 2> /dev/null |
		awk -F'\t' 'NR > 1 { n = split($1, p, "/"); if (p[n] == "daemon_split") s += $4 } END { print s + 0 }')
	check "... writes its last counts into the moved directory ($moved samples of daemon_split; exit $rc)" \
		test "$moved" -gt 0 -a "$rc" = 1
	check "... and says where they are" grep -q "the last counts are in '$DB4.moved'" "$TMP/s.log"
	check "... and leaves no control socket there" test ! -e "$DB4.moved/control"
else
	fail "daemon_slow_client_starts: $(tail -3 "$TMP/s.log")"
fi

# ---- stop waits until the daemon has gone: a restart right after it is not refused ----
DB5=$TMP/db5
"$SPENT" daemon --db "$DB5" --log "$TMP/r1.log" > /dev/null 2>&1
"$SPENT" db "$DB5" stop > /dev/null 2>&1
"$SPENT" daemon --db "$DB5" --log "$TMP/r2.log" > "$TMP/restart.out" 2>&1
rc=$?
check "stop, then daemon on the same database at once (exit $rc: $(head -1 "$TMP/restart.out"))" test $rc -eq 0
"$SPENT" db "$DB5" stop > /dev/null 2>&1
check "... and its stop returned once it had gone" bash -c "! pgrep -f '[s]pent daemon --db $DB5' > /dev/null"
