#!/bin/bash
# bench/studies_ab.sh BEFORE_BUILD [AFTER_BUILD] - one log, many configurations, for two builds
# side by side on a real program's log (gzip -9 of a 3 MB text made here, recorded once by
# AFTER_BUILD): CPU seconds (user+sys) of `trace stats` (the log read alone), `cachesim` with one
# configuration and with 8 (D1 4 sizes x 2 associativities) in one pass, and cachegrind on the
# live program, all alternated ROUNDS (3) times in one session so a busy machine hits both
# builds alike; prints each build's best and its ratios against the issue's goals (one
# configuration <= 1.0x cachegrind, 8 <= 2x one). Checks that both builds print the same
# simulation results. BEFORE_BUILD is e.g. a copy of build/ made from main. The CPU figures are
# of one thread (AFTER_BUILD runs with --jobs 1 when it has the option); with --jobs, the 8
# configurations are also timed in wall seconds on every CPU usable (`--jobs` default), beside
# one configuration's wall time.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: bench/studies_ab.sh BEFORE_BUILD [AFTER_BUILD]}
B=${2:-$top/build}
R=${ROUNDS:-3}
tmp=$(mktemp -d /tmp/spent-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 "$top/bench/words_text.py" "$tmp/gz.in"
GZ=$(command -v gzip)
env -i PATH=/usr/bin:/bin "$B/spent" trace -o "$tmp/gz.log" -- "$GZ" -9 -c "$tmp/gz.in" > /dev/null 2>&1 || exit 1
declare -A best
jobs1() { # BUILD: the option keeping BUILD's cachesim on one thread, if it has threads
	"$1/spent" cachesim --help 2>/dev/null | grep -q -- '--jobs' && echo "--jobs=1"
}
t() { # NAME CMD...: keep the least user+sys seconds of NAME; stdout to $tmp/NAME.out
	local name=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" > "$tmp/$name.out" 2> /dev/null
	local c
	case $name in
	*:wall*) c=$(awk '{ printf "%.2f", $3 }' "$tmp/time") ;;
	*) c=$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/time") ;;
	esac
	if [ -z "${best[$name]:-}" ] || awk -v a="$c" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
		best[$name]=$c
	fi
}
for ((i = 0; i < R; i++)); do
	t cachegrind env VALGRIND_LIB="$B/valgrind/lib" valgrind --tool=cachegrind --cache-sim=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null \
		"$GZ" -9 -c "$tmp/gz.in"
	for v in before after; do
		b=$A
		[ $v = after ] && b=$B
		t "$v:read" "$b/spent" trace stats "$tmp/gz.log"
		t "$v:one" "$b/spent" cachesim "$tmp/gz.log" --config cachegrind $(jobs1 "$b")
		t "$v:eight" "$b/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8 $(jobs1 "$b")
	done
	if [ -n "$(jobs1 "$B")" ]; then
		t "after:wall-one" "$B/spent" cachesim "$tmp/gz.log" --config cachegrind
		t "after:wall-eight" "$B/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8
	fi
done
[ -z "${best[after:wall-eight]:-}" ] || cmp -s "$tmp/after:eight.out" "$tmp/after:wall-eight.out" || { echo "threads changed the results" >&2; exit 1; }
same=yes
cmp -s "$tmp/before:one.out" "$tmp/after:one.out" && cmp -s "$tmp/before:eight.out" "$tmp/after:eight.out" || same=NO
n=$("$B/spent" trace stats "$tmp/gz.log" | awk '$1 == "instructions" { print $2 }')
echo "gzip -9 of 3 MB: $((n / 1000000)) M instructions; CPU seconds, best of $R alternated rounds; cachegrind ${best[cachegrind]} s"
echo "results of the two builds identical: $same"
for v in before after; do
	awk -v v="$v" -v rd="${best[$v:read]}" -v one="${best[$v:one]}" -v eight="${best[$v:eight]}" \
	    -v cg="${best[cachegrind]}" 'BEGIN {
		printf "%-6s log read %5.2f s; 1 config %5.2f s = %.2fx cachegrind (goal <= 1.0); 8 configs %6.2f s = %.2fx one (goal <= 2)\n",
			v, rd, one, one / cg, eight, eight / one }'
done
if [ -n "${best[after:wall-eight]:-}" ]; then
	awk -v one="${best[after:wall-one]}" -v eight="${best[after:wall-eight]}" -v cpus="$(nproc)" 'BEGIN {
		printf "after, wall seconds on %d CPUs (--jobs default): 1 config %5.2f s; 8 configs %6.2f s = %.2fx one\n",
			cpus, one, eight, eight / one }'
fi
