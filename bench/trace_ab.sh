#!/bin/bash
# bench/trace_ab.sh BEFORE_BUILD [AFTER_BUILD] - two builds of `spent trace` side by side, their
# runs alternated ROUNDS (5) times in one session, for a before/after comparison on a noisy
# machine: CPU (user+sys of the tree) and wall seconds of `spent trace` and `--no-data`, of the
# Valgrind tool alone (records to /dev/null), and the reconstruction rate of one log (recorded
# by AFTER_BUILD, read by both). Prints every run and the medians; asserts nothing.
# BEFORE_BUILD is e.g. a copy of build/ made from main (cp -a build /tmp/before-build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: bench/trace_ab.sh BEFORE_BUILD [AFTER_BUILD]}
B=${2:-$top/build}
P=$top/build/progs/trace_bench
N=${TRACE_BENCH_N:-300}
R=${ROUNDS:-5}
tmp=$(mktemp -d /tmp/spent-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

t() { # NAME CMD...: append "NAME cpu wall"
	local name=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" > /dev/null 2>&1
	awk -v n="$name" '{ printf "%s %.2f %.2f\n", n, $1 + $2, $3 }' "$tmp/time" >> "$tmp/runs"
}
"$B/spent" trace -o "$tmp/log" -- "$P" "$N" > /dev/null 2>&1
for ((i = 0; i < R; i++)); do
	for v in before after; do
		b=$A
		[ $v = after ] && b=$B
		t "$v:trace" "$b/spent" trace -o "$tmp/x.log" -- "$P" "$N"
		t "$v:trace--no-data" "$b/spent" trace --no-data -o "$tmp/x.log" -- "$P" "$N"
		VALGRIND_LIB=$b/valgrind/lib t "$v:tool" valgrind --tool=spent -q --spent-fd=1 "$P" "$N"
		VALGRIND_LIB=$b/valgrind/lib t "$v:tool--no-data" valgrind --tool=spent -q \
			--spent-data=no --spent-fd=1 "$P" "$N"
		echo "$v:reconstruct_Minstr/s $("$b/spent" trace stats "$tmp/log" | awk '/Minstr/ { print $2 }') -" >> "$tmp/runs"
	done
done
sort "$tmp/runs" | awk '
	{ k = $1; c[k] = c[k] " " $2; w[k] = w[k] " " $3; n[k]++; cv[k, n[k]] = $2; wv[k, n[k]] = $3 }
	function med(a, k, m,   i, j, x, v) { for (i = 1; i <= m; i++) v[i] = a[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] + 0 < v[i] + 0) { x = v[i]; v[i] = v[j]; v[j] = x }
		return v[int((m + 1) / 2)] }
	END { for (k in n) printf "%-32s median %6s (wall %5s)   runs:%s\n", k, med(cv, k, n[k]), med(wv, k, n[k]), c[k] }' | sort
