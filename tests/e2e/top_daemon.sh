#!/bin/bash
# tests/e2e/top_daemon.sh - `spent top --db DB` shows a running daemon's counts (its `recent`
# control command): a CPU burner's hot function and process within a few intervals, and the
# daemon still puts every sample in its database (what top saw is a part of what the database
# holds after a flush); no daemon, or options only its own sampling takes, are refused.
# test: serial (spent top samples the whole machine and is read within seconds)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
BURNER_PID=
trap 'stop_daemon; [ -n "$BURNER_PID" ] && kill "$BURNER_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
HOT=top_burner_spin
DB=$TMP/db

if ! start_daemon "$DB" "$TMP/daemon.log"; then
	fail "top_daemon_starts: $(tail -3 "$TMP/daemon.log")"
	exit 0
fi
"$PROGS/top_burner" 60 > /dev/null &
BURNER_PID=$!

# three intervals of JSON, the burner only
"$SPENT" top --db "$DB" --json -n 3 --comm top_burner > "$TMP/top.jsonl" 2> "$TMP/top.err"
rc=$?
check top_daemon_exit_0 [ "$rc" = 0 ]
check top_daemon_stderr_empty [ ! -s "$TMP/top.err" ]
seen=$(python3 - "$TMP/top.jsonl" "$HOT" "$DB" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 3, len(lines)
assert all(("of the daemon of " + sys.argv[3]) in l["source"] for l in lines), lines[0]["source"]
last = lines[-1]
hot = sum(r["samples"] for r in last["rows"] if r.get("function") == sys.argv[2])
assert all(r["comm"] == "top_burner" for r in last["rows"]), last["rows"]
assert hot > 0 and hot >= 0.9 * last["samples"], (hot, last["samples"])
print(hot)
PY
)
if [ -n "$seen" ]; then pass "top_daemon_shows_hot_function ($seen samples in the window)"
else fail "top_daemon_shows_hot_function: $(head -c 600 "$TMP/top.jsonl")"; fi

# the processes view: the burner's pid
"$SPENT" top --db "$DB" -b -n 1 -s processes --rows 0 > "$TMP/procs.txt"
check top_daemon_processes_view grep -qE "^ *[0-9.]+% +[0-9]+ $BURNER_PID +top_burner *\$" "$TMP/procs.txt"

# nothing taken from the database: after a flush it holds at least what top counted
"$SPENT" db "$DB" flush > /dev/null && "$SPENT" db "$DB" dump > "$TMP/dump.tsv"
indb=$(func_share "$TMP/dump.tsv" "$PROGS/top_burner" "$HOT" count)
if [ -n "$seen" ] && [ "${indb:-0}" -ge "$seen" ] 2>/dev/null; then
	pass "top_daemon_counts_still_reach_db (db $indb >= top $seen)"
else
	fail "top_daemon_counts_still_reach_db: db has ${indb:-none}, top counted ${seen:-none}"
fi

# the daemon stops while top watches: the header says it does not answer
"$SPENT" top --db "$DB" -b -n 6 -d 0.5 > "$TMP/gone.txt" 2>&1 &
top_bg=$!
for _ in $(seq 1 50); do grep -q '^spent top:' "$TMP/gone.txt" && break; sleep 0.1; done
stop_daemon
wait "$top_bg"
check top_daemon_gone_noted bash -c "grep '^spent top:' '$TMP/gone.txt' | tail -1 | grep -q 'the daemon does not answer'"

# refused: no daemon on a database; --db with options of its own sampling
mkdir -p "$TMP/nodaemon"
"$SPENT" top --db "$TMP/nodaemon" -b -n 1 > "$TMP/no.out" 2> "$TMP/no.err"
rc=$?
check top_daemon_none_refused bash -c "[ $rc = 1 ] && grep -q \"^spent top: cannot show '$TMP/nodaemon': no daemon serves it\" '$TMP/no.err' && [ ! -s '$TMP/no.out' ]"
for bad in "-e cpu-clock" "-F 99" "--no-daemon"; do
	# shellcheck disable=SC2086
	"$SPENT" top --db "$DB" -b -n 1 $bad > "$TMP/bad.out" 2> "$TMP/bad.err"
	rc=$?
	check "top_daemon_refuses_${bad// /_}" bash -c "[ $rc = 2 ] && grep -q '^spent top: --db' '$TMP/bad.err' && [ ! -s '$TMP/bad.out' ]"
done
