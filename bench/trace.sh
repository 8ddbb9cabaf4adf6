#!/bin/bash
# bench/trace.sh - `spent trace` costs measured side by side in one run on tests/progs/trace_bench:
# slowdown (CPU seconds, user+sys of the whole process tree) against native and against
# `valgrind --tool=none`, with and without data addresses; log bytes per instruction; and
# reconstruction speed (CPU time of `spent trace stats`). Prints ratios, asserts nothing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
P=$top/build/progs/trace_bench
N=${TRACE_BENCH_N:-300}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cpu() { # run "$@", print user+sys CPU seconds of it and its children
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" > /dev/null 2>&1
	awk '{ printf "%.3f", $1 + $2 }' "$tmp/time"
}

native=$(cpu "$P" "$N")
none=$(VALGRIND_LIB=$top/build/valgrind/lib cpu valgrind --tool=none -q "$P" "$N")
data=$(cpu "$SPENT" trace -o "$tmp/d.log" -- "$P" "$N")
nodata=$(cpu "$SPENT" trace --no-data -o "$tmp/n.log" -- "$P" "$N")
jd=$("$SPENT" trace stats --json "$tmp/d.log")
jn=$("$SPENT" trace stats --json "$tmp/n.log")
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

echo "workload: trace_bench $N, $(field "$jd" instructions) instructions, $(field "$jd" data_refs) data refs"
printf 'cpu seconds: native %s, valgrind none %s, spent trace %s, spent trace --no-data %s\n' \
	"$native" "$none" "$data" "$nodata"
awk -v n="$native" -v z="$none" -v d="$data" -v o="$nodata" 'BEGIN {
	printf "slowdown with data:    %.1fx native (goal <= 4x), %.2fx valgrind none\n", d / n, d / z
	printf "slowdown without data: %.1fx native (goal <= 3x), %.2fx valgrind none\n", o / n, o / z
	printf "valgrind none alone:   %.1fx native\n", z / n }'
printf 'log bytes/instruction: with data %s (goal <= 1), without %s (goal <= 0.15)\n' \
	"$(field "$jd" bytes_per_instruction)" "$(field "$jn" bytes_per_instruction)"
printf 'reconstruction: %s M instr/s with data, %s M instr/s without (goal >= 100)\n' \
	"$(field "$jd" reconstruct_minstr_per_s)" "$(field "$jn" reconstruct_minstr_per_s)"
