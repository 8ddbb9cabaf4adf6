#!/bin/bash
# tests/e2e/daemon_jit.sh - the daemon names generated code from perf's JIT map as record does:
# samples in anonymous executable memory that /tmp/perf-PID.map covers are filed under the map
# and report names them; code no map covers stays [unknown] [jit]; a map the daemon may
# not trust (a symlink, or owned by someone else than the process's owner) is not read.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
maps=()
trap 'stop_daemon; rm -f "${maps[@]}"; rm -rf "$TMP"' EXIT

DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_jit_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi

# samples of image MAP named SYM, and of [unknown] [jit], in a report --json
count_rows() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = sum(r["samples"] for r in rows if r.get("image") == sys.argv[2] and r.get("symbol") == sys.argv[3])
print(n)
PY
}

# 1. a map the process wrote itself: its function is named; the loop left out of the map
# (run as often as each named call) stays anonymous
"$PROGS/jit_map" 1 > "$TMP/out1.txt"
map=$(sed -n 's/^jit_map: done (\(.*\))$/\1/p' "$TMP/out1.txt")
maps+=("$map")
"$SPENT" db "$DB" flush > /dev/null
"$SPENT" report -i "$DB" --by function --json > "$TMP/r1.json" 2>/dev/null
named=$(count_rows "$TMP/r1.json" "$map" jit_spin_loop)
anon=$(count_rows "$TMP/r1.json" "[unknown]" "[jit]")
check "daemon_jit_named_from_map ($named samples of jit_spin_loop under $map, $anon anonymous)" \
	awk -v n="${named:-0}" 'BEGIN { exit !(n >= 300) }'
check "daemon_jit_unmapped_code_stays_anonymous ($anon vs $named named, 1:2 run)" \
	awk -v n="${named:-0}" -v a="${anon:-0}" 'BEGIN { exit !(a >= 0.25 * n && a <= n) }'

# 2. the map changes owner while the process (root's) runs: not trusted, nothing named
"$SPENT" db "$DB" epoch > /dev/null
"$PROGS/jit_map" 3 > "$TMP/out2.txt" &
jp=$!
maps+=("/tmp/perf-$jp.map")
for _ in $(seq 1 50); do [ -s "/tmp/perf-$jp.map" ] && break; sleep 0.05; done
chown nobody "/tmp/perf-$jp.map"
sleep 1
"$SPENT" db "$DB" flush > /dev/null
# read now: what the process runs after the flush is drained once it is gone (then its map
# can no longer be checked against its owner)
"$SPENT" report -i "$DB" --by function --json > "$TMP/r2.json" 2>/dev/null
wait "$jp"
named=$(count_rows "$TMP/r2.json" "/tmp/perf-$jp.map" jit_spin_loop)
check "daemon_jit_map_of_another_owner_ignored ($named samples named)" test "${named:-0}" = 0

# 3. the map replaced by a symlink before the drain: not followed
"$PROGS/jit_map" 1 > "$TMP/out3.txt"
map=$(sed -n 's/^jit_map: done (\(.*\))$/\1/p' "$TMP/out3.txt")
maps+=("$map")
cp "$map" "$TMP/copy.map" && ln -sf "$TMP/copy.map" "$map"
"$SPENT" db "$DB" flush > /dev/null
"$SPENT" report -i "$DB" --by function --json > "$TMP/r3.json" 2>/dev/null
named=$(count_rows "$TMP/r3.json" "$map" jit_spin_loop)
check "daemon_jit_symlinked_map_ignored ($named samples named)" test "${named:-0}" = 0
check daemon_jit_stops_on_sigterm stop_daemon
