#!/bin/bash
# bench/trace_programs.sh - `spent trace`'s cost on real programs beside Valgrind's own: gzip and
# bzip2 compressing a 2 MiB text, python3 building and parsing JSON, and tests/progs/trace_bench
# (bench/trace.sh's workload). For each: native, `valgrind --tool=none`, `spent trace` with and
# without data addresses, and the spent tool alone (records to /dev/null: the rest is the
# `spent` process). Every configuration runs once per round, rounds alternate them, each figure
# is the best of TRACE_BENCH_ROUNDS (3) rounds, and the spread (worst/best) of the two ratios
# the issue's goals are about is printed beside them. CPU seconds are user+sys of the whole
# process tree (the compressing `spent` process counts); wall seconds are what a user waits.
# Prints ratios, asserts nothing. TRACE_PROGRAMS="gzip python3" picks programs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
ROUNDS=${TRACE_BENCH_ROUNDS:-3}
VGLIB=${VGLIB:-$top/build/valgrind/lib}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

source "$top/bench/trace_workloads.sh"

declare -A cpu_all wall_all
run() { # KEY CMD...: run it, keep every CPU (user+sys incl. children) and wall figure
	local key=$1 c w
	shift
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" > /dev/null 2>&1
	# the last line: a failing command's first says so (the figure would read 0)
	read -r c w < <(tail -1 "$tmp/time" | awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }')
	cpu_all[$key]="${cpu_all[$key]:-} $c"
	wall_all[$key]="${wall_all[$key]:-} $w"
}
configs() { # PROGRAM: every configuration of it, once
	local p=$1 prog
	eval "prog=(${cmd[$p]})"
	run "$p native" "${prog[@]}"
	VALGRIND_LIB=$VGLIB run "$p none" valgrind --tool=none -q "${prog[@]}"
	run "$p data" "$SPENT" trace -o "$tmp/d.log" -- "${prog[@]}"
	run "$p nodata" "$SPENT" trace --no-data -o "$tmp/n.log" -- "${prog[@]}"
	VALGRIND_LIB=$VGLIB run "$p tool_data" valgrind --tool=spent -q --spent-fd=3 "${prog[@]}"
	VALGRIND_LIB=$VGLIB run "$p tool_nodata" valgrind --tool=spent -q --spent-fd=3 --spent-data=no "${prog[@]}"
}
# the tool alone writes to fd 3 (the tool moves its fd out of the program's way: fd 1 would
# leave the program without a stdout)
exec 3> /dev/null
for ((i = 0; i < ROUNDS; i++)); do
	for p in $PROGRAMS; do
		configs "$p"
	done
done

# "best worst" of a list of numbers
span() { echo "$1" | tr ' ' '\n' | awk 'NF { if (!n++ || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { print lo, hi }'; }
echo "best of $ROUNDS alternated rounds; ratios to valgrind --tool=none (goal: <= 2x with data, <= 1.3x without)"
for k in cpu wall; do
	declare -n all=${k}_all
	printf '%-4s %-12s %7s %7s %7s %7s | %-17s %-17s %s\n' "$k" program native none data nodata \
		"data/none (worst)" "nodata/none (w.)" "tool alone data, nodata"
	for p in $PROGRAMS; do
		read -r n _ < <(span "${all[$p native]}")
		read -r z zw < <(span "${all[$p none]}")
		read -r d dw < <(span "${all[$p data]}")
		read -r o ow < <(span "${all[$p nodata]}")
		read -r td _ < <(span "${all[$p tool_data]}")
		read -r tn _ < <(span "${all[$p tool_nodata]}")
		# worst: the slowest run of ours against the fastest of none's, a bound on the spread
		awk -v k="$k" -v p="$p" -v n="$n" -v z="$z" -v d="$d" -v o="$o" -v dw="$dw" -v ow="$ow" \
			-v td="$td" -v tn="$tn" 'BEGIN {
			printf "%-4s %-12s %7.2f %7.2f %7.2f %7.2f | %5.2fx (%5.2fx)   %5.2fx (%5.2fx)   %5.2fx, %5.2fx\n",
				k, p, n, z, d, o, d / z, dw / z, o / z, ow / z, td / z, tn / z }'
	done
done
