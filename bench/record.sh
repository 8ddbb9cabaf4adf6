#!/bin/bash
# bench/record.sh - spent record/report against perf record/report at the same frequency on
# the same workload, side by side (alternating runs, median of N): workload slowdown ratio
# spent/perf (goal <= 1.0), profile size / perf.data size (goal <= 0.1), report time ratio
# (goal <= 0.2). Not a test: prints ratios.   usage: bench/record.sh [RUNS] [FREQ] [MITER]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
prog=$top/build/progs/split603010
runs=${1:-5} freq=${2:-4000} miter=${3:-600}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
elapsed() { # CMD... -> wall seconds
	local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f\n", b-a}'
}
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for i in $(seq "$runs"); do
	elapsed "$prog" "$miter" >> "$tmp/base"
	rm -rf "$tmp/perf.data" "$tmp/sp"
	elapsed perf record -q -F "$freq" -e cpu-clock -o "$tmp/perf.data" -- "$prog" "$miter" >> "$tmp/perf"
	elapsed "$SPENT" record -F "$freq" -e cpu-clock -o "$tmp/sp" -- "$prog" "$miter" >> "$tmp/spent"
	elapsed perf report -i "$tmp/perf.data" --stdio --sort sym >> "$tmp/perfrep"
	elapsed "$SPENT" report -i "$tmp/sp" >> "$tmp/spentrep"
done
base=$(median < "$tmp/base") tp=$(median < "$tmp/perf") ts=$(median < "$tmp/spent")
rp=$(median < "$tmp/perfrep") rs=$(median < "$tmp/spentrep")
psize=$(stat -c %s "$tmp/perf.data") ssize=$(du -sb "$tmp/sp" | cut -f1)
echo "workload: $prog $miter, -F $freq cpu-clock, median of $runs alternating runs"
printf 'wall: bare %.3fs  perf record %.3fs  spent record %.3fs\n' "$base" "$tp" "$ts"
awk -v s="$ts" -v p="$tp" 'BEGIN{printf "slowdown ratio spent/perf: %.3f (goal <= 1.0)\n", s/p}'
awk -v s="$ssize" -v p="$psize" 'BEGIN{printf "profile size / perf.data size: %d / %d = %.4f (goal <= 0.1)\n", s, p, s/p}'
awk -v s="$rs" -v p="$rp" 'BEGIN{printf "report time ratio spent/perf: %.3f / %.3f = %.3f (goal <= 0.2)\n", s, p, s/p}'
