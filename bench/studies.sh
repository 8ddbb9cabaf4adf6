#!/bin/bash
# bench/studies.sh - speed of the trace studies on one program (build/progs/studies_mix):
# simulated references (instruction fetches + data references) per second for one cache
# configuration (I1/D1 32K 8-way, LL 8M 16-way) and for the exact hit curves (direct-mapped and
# LRU, 1K..16M), sink only (trace already in memory) and end to end from the log; cachegrind's
# speed on the same program with the same caches beside. CPU seconds, so a busy machine matters
# less. Goals: cache simulation >= 100 M refs/s, hit curve >= 30 M refs/s.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
P=$B/progs/studies_mix
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O2 -I"$top/include" -I"$top/src" -D_GNU_SOURCE -o "$tmp/speed" \
	"$top/bench/studies_speed.c" "$B/libspent.a" \
	-lpfm -ldw -lelf -lbpf -lZydis -lunicorn -lzstd -lpng16 -lz -lpthread -lm -ldl || exit 1
env -i PATH=/usr/bin:/bin "$B/spent" trace -o "$tmp/mix.log" -- "$P" > /dev/null 2>&1
cpu() { # command... -> user+sys seconds
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" > /dev/null 2>&1
	awk '{ print $1 + $2 }' "$tmp/t"
}
"$tmp/speed" "$tmp/mix.log" > "$tmp/speed.txt"
refs=$(awk '/^refs/ { print $2 }' "$tmp/speed.txt")
cs=$(awk '/^cachesim_refs_per_s/ { print $2 }' "$tmp/speed.txt")
hc=$(awk '/^hitcurve_refs_per_s/ { print $2 }' "$tmp/speed.txt")
t_cs=$(cpu "$B/spent" cachesim "$tmp/mix.log" --config cachegrind)
t_hc=$(cpu "$B/spent" hitcurve "$tmp/mix.log")
t_cg=$(cpu env VALGRIND_LIB="$B/valgrind/lib" valgrind --tool=cachegrind --cache-sim=yes \
	--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null "$P")
t_nat=$(cpu "$P")
awk -v r="$refs" -v cs="$cs" -v hc="$hc" -v tcs="$t_cs" -v thc="$t_hc" -v tcg="$t_cg" -v tn="$t_nat" 'BEGIN {
	printf "program: studies_mix, %.1f M simulated references\n", r / 1e6
	printf "cachesim sink only:            %7.1f M refs/s (goal >= 100)\n", cs / 1e6
	printf "hitcurve sink only (exact):    %7.1f M refs/s (goal >= 30)\n", hc / 1e6
	printf "spent cachesim from the log:   %7.1f M refs/s (%.2f s CPU, incl. reconstruction)\n", r / tcs / 1e6, tcs
	printf "spent hitcurve from the log:   %7.1f M refs/s (%.2f s CPU, incl. reconstruction)\n", r / thc / 1e6, thc
	printf "cachegrind on the program:     %7.1f M refs/s (%.2f s CPU, program alone %.2f s)\n", r / tcg / 1e6, tcg, tn
	printf "ratio cachesim sink / cachegrind: %.1fx\n", (cs) / (r / tcg)
}'
