#!/bin/bash
# bench/daemon_db.sh - what the daemon's database and drains cost with many processes: the
# daemon runs RUN seconds at RATE Hz per CPU, drained every DRAIN ms, while one CPU burner runs
# and a loop starts short processes (sort, gzip, python3: a new pid each, the case that makes
# per-process detail rows grow); then prints the database's bytes and files, the daemon's own
# CPU time (user+sys, from /proc before it is stopped) per drain, and what its status counted.
# Run it with SPENT=<another build>/spent to compare builds (root):
#   bench/daemon_db.sh            (RUN=20 RATE=1000 DRAIN=1000 to change)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
RUN=${RUN:-20}
RATE=${RATE:-1000}
DRAIN=${DRAIN:-1000}
TMP=$(mktemp -d /tmp/spent-bench-db.XXXXXX)
BG=
trap '[ -n "$BG" ] && kill "$BG" 2>/dev/null; rm -rf "$TMP"' EXIT

DB=$TMP/db
"$SPENT" daemon --db "$DB" -F "$RATE" --drain-interval "$DRAIN" --foreground 2>"$TMP/log" & BG=$!
for _ in $(seq 50); do
	"$SPENT" db "$DB" status --json 2>/dev/null | grep -q '"daemon":true' && break
	sleep 0.1
done
head -c 400000 /dev/urandom | base64 > "$TMP/input"
"$top/build/progs/daemon_split" "$RUN" > /dev/null &
burner=$!
end=$((SECONDS + RUN))
nproc_started=0
while [ $SECONDS -lt $end ]; do
	sort "$TMP/input" > /dev/null
	gzip -c "$TMP/input" > /dev/null
	python3 -c 'sum(i * i for i in range(200000))'
	nproc_started=$((nproc_started + 3))
done
wait "$burner"
"$SPENT" db "$DB" flush > /dev/null
read -r utime stime < <(awk '{ print $14, $15 }' "/proc/$BG/stat")
tck=$(getconf CLK_TCK)
kill -TERM "$BG"; wait "$BG"; BG=
bytes=$(du -sb "$DB" | awk '{ print $1 }')
files=$(find "$DB" -type f -name '*.prof' | wc -l)
python3 - "$DB/status.json" "$utime" "$stime" "$tck" "$bytes" "$files" "$nproc_started" "$RUN" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ut, st, tck, b, f, n, run = (int(x) for x in sys.argv[2:9])
cpu = (ut + st) / tck
print("run %ds, %d short processes, %d samples, %d entries, %d drains" %
      (run, n, d["samples"], d["entries"], d["drains"]))
print("db_bytes %d  prof_files %d  bytes/entry %.1f" % (b, f, b / max(d["entries"], 1)))
print("daemon_cpu_s %.2f  (%.1f%% of one CPU)  ms_per_drain %.1f" %
      (cpu, 100 * cpu / run, 1000 * cpu / max(d["drains"], 1)))
PY
