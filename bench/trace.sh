#!/bin/bash
# bench/trace.sh - `spent trace` costs measured side by side in one run on tests/progs/trace_bench:
# slowdown against native and against `valgrind --tool=none`, with and without data addresses,
# both in CPU seconds (user+sys of the whole process tree, so the compressing `spent` process
# counts: the honest total cost) and in wall-clock seconds (what a user waits; the compressor
# runs on the other core). Every configuration runs once per round, rounds alternate the
# configurations, and each figure is the best of TRACE_BENCH_ROUNDS (3) rounds. Also: the tool
# alone (its pipe to /dev/null) to split the cost between the Valgrind tool and the `spent`
# side, log bytes per instruction, and reconstruction speed (CPU time of `spent trace stats`,
# best of the rounds). Prints ratios, asserts nothing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
P=$top/build/progs/trace_bench
N=${TRACE_BENCH_N:-300}
ROUNDS=${TRACE_BENCH_ROUNDS:-3}
VGLIB=$top/build/valgrind/lib
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

declare -A cpu wall
run() { # NAME CMD...: run it, keep the smallest CPU (user+sys incl. children) and wall seconds
	local name=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" > /dev/null 2>&1
	read -r c w < <(awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/time")
	if [ -z "${cpu[$name]:-}" ] || awk -v a="$c" -v b="${cpu[$name]}" 'BEGIN { exit !(a < b) }'; then
		cpu[$name]=$c
	fi
	if [ -z "${wall[$name]:-}" ] || awk -v a="$w" -v b="${wall[$name]}" 'BEGIN { exit !(a < b) }'; then
		wall[$name]=$w
	fi
}
best_rate() { # NAME LOG: keep the highest reconstruction rate of `spent trace stats`
	local j r
	j=$("$SPENT" trace stats --json "$2")
	echo "$j" > "$tmp/$1.json"
	r=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["reconstruct_minstr_per_s"])' "$j")
	if [ -z "${cpu[$1]:-}" ] || awk -v a="$r" -v b="${cpu[$1]}" 'BEGIN { exit !(a > b) }'; then
		cpu[$1]=$r
	fi
}

for ((i = 0; i < ROUNDS; i++)); do
	run native "$P" "$N"
	VALGRIND_LIB=$VGLIB run none valgrind --tool=none -q "$P" "$N"
	run data "$SPENT" trace -o "$tmp/d.log" -- "$P" "$N"
	run nodata "$SPENT" trace --no-data -o "$tmp/n.log" -- "$P" "$N"
	# the tool alone, its records thrown away: the rest of `spent trace` is the spent process
	VALGRIND_LIB=$VGLIB run tool_data valgrind --tool=spent -q --spent-fd=1 "$P" "$N"
	VALGRIND_LIB=$VGLIB run tool_nodata valgrind --tool=spent -q --spent-fd=1 --spent-data=no "$P" "$N"
	best_rate rec_data "$tmp/d.log"
	best_rate rec_nodata "$tmp/n.log"
done
# deterministic: bytes of host code Valgrind generates per guest byte translated (--stats=yes),
# the instrumentation's size above --tool=none's (noise-free, unlike the timings)
ratio() { VALGRIND_LIB=$VGLIB valgrind --stats=yes "$@" "$P" 2 2>&1 > /dev/null |
	sed -n 's/.*transtab: new.*(\([0-9,]*\) -> \([0-9,]*\);.*/\1 \2/p' | tr -d , |
	awk 'NR == 1 { printf "%.1f", $2 / $1 }'; }
code_none=$(ratio --tool=none)
code_data=$(ratio --tool=spent --spent-fd=1)
code_nodata=$(ratio --tool=spent --spent-fd=1 --spent-data=no)
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$tmp/$1.json" "$2"; }

echo "workload: trace_bench $N, $(field rec_data instructions) instructions, $(field rec_data data_refs) data refs; best of $ROUNDS alternated rounds"
for k in cpu wall; do
	declare -n t=$k
	printf '%-4s seconds: native %s, valgrind none %s, spent trace %s, --no-data %s; tool alone %s, --no-data %s\n' \
		"$k" "${t[native]}" "${t[none]}" "${t[data]}" "${t[nodata]}" "${t[tool_data]}" "${t[tool_nodata]}"
done
for k in cpu wall; do
	declare -n t=$k
	awk -v k="$k" -v n="${t[native]}" -v z="${t[none]}" -v d="${t[data]}" -v o="${t[nodata]}" \
		-v td="${t[tool_data]}" -v tn="${t[tool_nodata]}" 'BEGIN {
		printf "%-4s slowdown with data:    %5.1fx native (goal <= 4x), %.2fx valgrind none (tool alone %.2fx)\n", k, d / n, d / z, td / z
		printf "%-4s slowdown without data: %5.1fx native (goal <= 3x), %.2fx valgrind none (tool alone %.2fx)\n", k, o / n, o / z, tn / z
		printf "%-4s valgrind none alone:   %5.1fx native\n", k, z / n }'
done
printf 'generated code bytes per guest byte: valgrind none %s, spent trace %s, --no-data %s\n' \
	"$code_none" "$code_data" "$code_nodata"
printf 'log bytes/instruction: with data %s (goal <= 1), without %s (goal <= 0.15)\n' \
	"$(field rec_data bytes_per_instruction)" "$(field rec_nodata bytes_per_instruction)"
printf 'reconstruction: %s M instr/s with data, %s M instr/s without (goal >= 100)\n' \
	"${cpu[rec_data]}" "${cpu[rec_nodata]}"
