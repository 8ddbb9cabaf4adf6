#!/bin/bash
# bench/citcat.sh - citcat costs, measured side by side on this machine (not a test):
#   record slowdown   recording a compute-bound program vs running it natively (CPU time of
#                     the program plus the recorder; goal <= 1.1x, rr reports 1.1-1.4x)
#   bytes/instruction recording size over the replayed instruction count (goal <= 0.01)
#   replay speed      instructions per CPU second of the fast replay, no sinks (goal >= 50 M/s)
#   sink replay speed the same with per-instruction and data-reference hooks (--dump)
# Usage: bench/citcat.sh [ROUNDS]   (default 1000: about 0.26 G instructions replayed; the
# record slowdown uses 20x more rounds so the recorder's fixed start-up cost is amortised)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
PROG=$top/build/progs/citcat_compute
rounds=${1:-1000}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# CPU seconds (user+sys) of a command and its children, best of 3 runs
cpu_of() {
	local best=
	for _ in 1 2 3; do
		local t
		t=$(/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}')
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
	done
	echo "$best"
}

native=$(cpu_of "$PROG" $((rounds * 20)))
recorded=$(cpu_of "$SPENT" citcat record -o "$tmp/big" -- "$PROG" $((rounds * 20)))
"$SPENT" citcat record -o "$tmp/rec" -- "$PROG" "$rounds" > /dev/null 2>&1
json=$("$SPENT" citcat replay "$tmp/rec" --json 2>/dev/null)
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$json" "$1"; }
insns=$(field instructions)
bytes=$(stat -c %s "$tmp/rec/recording")
cpu=$(field cpu_seconds)
wall=$(field seconds)
verified=$(field verified)
# sink replay (text dump of every instruction and reference) on a hundredth of the work
"$SPENT" citcat record -o "$tmp/small" -- "$PROG" $((rounds / 100 + 1)) > /dev/null 2>&1
/usr/bin/time -f "%U %S" "$SPENT" citcat replay "$tmp/small" --dump > /dev/null 2> "$tmp/sink.err"
sink_cpu=$(tail -1 "$tmp/sink.err" | awk '{print $1 + $2}')
small_insns=$("$SPENT" citcat replay "$tmp/small" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')

echo "program:            citcat_compute $rounds ($insns instructions, replay verified: $verified); slowdown on $((rounds * 20)) rounds"
awk -v n="$native" -v r="$recorded" 'BEGIN { printf "record slowdown:    %.3fx  (native %.3f s cpu, recorded %.3f s cpu incl. recorder; goal <= 1.1x)\n", r / n, n, r }'
awk -v b="$bytes" -v i="$insns" 'BEGIN { printf "bytes/instruction:  %.7f  (%d bytes; goal <= 0.01; a stored trace needs ~8-16)\n", b / i, b }'
awk -v i="$insns" -v c="$cpu" -v w="$wall" 'BEGIN { printf "replay speed:       %.1f M instructions/cpu-s  (%.1f M/s wall on this shared machine; goal >= 50)\n", i / c / 1e6, i / w / 1e6 }'
awk -v i="$small_insns" -v c="$sink_cpu" 'BEGIN { printf "sink replay speed:  %.1f M instructions/cpu-s with every instruction and data reference dumped\n", i / c / 1e6 }'
