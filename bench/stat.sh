#!/bin/bash
# bench/stat.sh - wall time of `spent stat` against `perf stat` on the same commands, runs
# alternated in one session so both see the same machine. Prints the ratio (goal <= 1.0).
#   bench/stat.sh [RUNS_TRUE] [RUNS_1S]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
spent=${SPENT:-$top/build/spent}
demo=$top/build/progs/demo
n_true=${1:-40}
n_long=${2:-3}
[ -x "$spent" ] && [ -x "$demo" ] || { echo "bench/stat.sh: build first (make)" >&2; exit 1; }

now() { date +%s.%N; }
# time_cmd: seconds for one run of "$@", output discarded
time_cmd() { local a b; a=$(now); "$@" >/dev/null 2>&1; b=$(now); echo "$b - $a" | bc -l; }

measure() { # label runs command...
	local label=$1 runs=$2; shift 2
	local ts=0 tp=0
	for ((i = 0; i < runs; i++)); do
		ts=$(echo "$ts + $(time_cmd "$spent" stat -- "$@")" | bc -l)
		tp=$(echo "$tp + $(time_cmd perf stat -- "$@")" | bc -l)
	done
	printf '%-28s spent %8.4f s  perf %8.4f s  ratio spent/perf %.3f (goal <= 1.0)\n' \
		"$label ($runs runs)" "$(echo "$ts / $runs" | bc -l)" "$(echo "$tp / $runs" | bc -l)" \
		"$(echo "$ts / $tp" | bc -l)"
}

command -v bc >/dev/null || { echo "bench/stat.sh: needs bc (apt-get install bc)" >&2; exit 1; }
measure "stat true" "$n_true" true
measure "stat 1 s workload" "$n_long" "$demo" 1
