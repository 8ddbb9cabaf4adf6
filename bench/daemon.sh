#!/bin/bash
# bench/daemon.sh - what continuous profiling costs on this machine. For each rate (per CPU)
# it runs a fixed CPU-bound workload (one copy per CPU) alternately with nothing, with the bare
# sampling events (spent daemon --bare: the same perf events, nothing attached: the interrupt
# cost, our floor) and with the daemon (BPF aggregator), and prints the slowdowns (best of
# ROUNDS wall times: the least disturbed run on a shared machine), the daemon's cost above the
# floor, and the kernel->user reduction factor (samples / aggregated entries).
#   bench/daemon.sh [ROUNDS]   (root; RATES="5000 1000 100" WORK=150 RED_SECONDS=30
#                               RED_RATES=5000 to change)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
WORKLOAD="$top/build/progs/daemon_split fixed ${WORK:-150}"
ROUNDS=${1:-5}
RATES=${RATES:-"5000 1000 100"}
NCPU=$(nproc)
TMP=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'kill $BG 2>/dev/null; rm -rf "$TMP"' EXIT
BG=

run_work() { # "wall cpu" seconds of NCPU copies of the workload
	local TIMEFORMAT='%R %U %S' out
	out=$( { time { for _ in $(seq "$NCPU"); do $WORKLOAD & done; wait; } ; } 2>&1 )
	echo "$out" | awk '{ printf "%s %.3f\n", $1, $2 + $3 }'
}

start_mode() { # MODE RATE DB
	case $1 in
	none) BG= ;;
	bare) "$SPENT" daemon --bare -F "$2" & BG=$!; sleep 0.3 ;;
	daemon)
		"$SPENT" daemon --db "$3" -F "$2" --foreground 2>>"$TMP/daemon.log" & BG=$!
		for _ in $(seq 50); do
			"$SPENT" db "$3" status --json 2>/dev/null | grep -q '"daemon":true' && break
			sleep 0.1
		done ;;
	esac
}

stop_mode() {
	[ -n "$BG" ] && kill -TERM "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	BG=
}

best() { awk -v c="$1" '{ print $c }' | sort -g | head -1; }

printf '%-6s %8s %8s %8s %9s %9s %9s %9s %9s %9s %9s\n' rate none_s bare_s daemon_s \
	bare_wall daemon_wall above_wall bare_cpu daemon_cpu above_cpu reduction
for rate in $RATES; do
	: > "$TMP/none"; : > "$TMP/bare"; : > "$TMP/daemon"
	db=$TMP/db-$rate
	for r in $(seq "$ROUNDS"); do
		for mode in none bare daemon; do
			start_mode $mode "$rate" "$db"
			run_work >> "$TMP/$mode"
			stop_mode
		done
	done
	n=$(best 1 < "$TMP/none"); b=$(best 1 < "$TMP/bare"); d=$(best 1 < "$TMP/daemon")
	nc=$(best 2 < "$TMP/none"); bc=$(best 2 < "$TMP/bare"); dc=$(best 2 < "$TMP/daemon")
	red=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.1f" % d["reduction"])' "$db/status.json" 2>/dev/null || echo nan)
	awk -v rate="$rate" -v n="$n" -v b="$b" -v d="$d" -v nc="$nc" -v bc="$bc" -v dc="$dc" -v red="$red" 'BEGIN {
		bp = 100 * (b - n) / n; dp = 100 * (d - n) / n
		bcp = 100 * (bc - nc) / nc; dcp = 100 * (dc - nc) / nc
		printf "%-6s %8.3f %8.3f %8.3f %8.2f%% %8.2f%% %7.2fpt %8.2f%% %8.2f%% %7.2fpt %8sx\n",
			rate, n, b, d, bp, dp, dp - bp, bcp, dcp, dcp - bcp, red }'
done
echo "(best of $ROUNDS alternated runs of $NCPU x '$WORKLOAD'; *_wall: elapsed time, *_cpu: the"
echo " workload's user+sys time; above: daemon minus bare events; reduction = samples / entries"
echo " drained over each daemon run, all processes of the machine included)"

# The reduction factor over a longer run, as the daemon runs for real: one long-lived copy of
# the workload per CPU for RED_SECONDS of CPU each, under three drain policies run one after
# the other in this run: main's before this change (16384-key maps, drained every 10 s), big maps
# drained every 10 s, and the defaults (maps sized from the CPU count, drained every 60 s or
# when 3/4 full); then the fallback (--no-bpf: perf rings into DCPI tables) drained every 10 s
# (main's default; its tables were 4096 buckets there, 16384 now) and every 60 s. "all" divides every sample of the machine (other users' compilers included)
# by every entry; "workload" is the workload image's own samples / entries, from the daemon's
# reduction_by_image (DCPI keys by process: new processes make new keys, which no drain policy
# can aggregate).
RED_SECONDS=${RED_SECONDS:-30}
RED_RATES=${RED_RATES-5000}	# RED_RATES= (empty): no reduction runs
printf '\n%-6s %-28s %7s %10s %9s %8s %11s %10s\n' rate policy drains samples entries all \
	workload map_keys
for rate in $RED_RATES; do
	for policy in "main:16K,10s" "bigmap,10s" "default,60s" "no-bpf,10s" "no-bpf,60s"; do
		case $policy in
		main*) args="--map-entries 16384 --drain-interval 10000" ;;
		bigmap*) args="--drain-interval 10000" ;;
		no-bpf,10s) args="--no-bpf --drain-interval 10000" ;;
		no-bpf*) args="--no-bpf" ;;
		*) args= ;;
		esac
		db=$TMP/red-$rate-$(echo "$policy" | tr -c 'a-z0-9\n' _)
		"$SPENT" daemon --db "$db" -F "$rate" --foreground $args 2>>"$TMP/daemon.log" & BG=$!
		for _ in $(seq 50); do
			"$SPENT" db "$db" status --json 2>/dev/null | grep -q '"daemon":true' && break
			sleep 0.1
		done
		for _ in $(seq "$NCPU"); do "$top/build/progs/daemon_split" "$RED_SECONDS" > /dev/null & done
		wait $(jobs -p | grep -v "^$BG$")
		stop_mode
		python3 - "$db/status.json" "$rate" "$policy" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
w = "n/a"
for part in d.get("reduction_by_image", "").split("; "):
    m = re.match(r"(\S+) ([0-9.]+)x \((\d+)/(\d+)\)", part)
    if m and m.group(1).endswith("/daemon_split"):
        w = "%.1fx" % float(m.group(2))
print("%-6s %-28s %7d %10d %9d %7.1fx %11s %10d" % (sys.argv[2], sys.argv[3], d["drains"],
      d["samples"], d["entries"], d["reduction"], w, d.get("map_entries", 0)))
PY
	done
done
echo "(drains include the final one at exit; $NCPU x daemon_split $RED_SECONDS s of CPU each, the"
echo " machine's other processes sampled too)"
