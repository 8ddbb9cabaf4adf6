#!/bin/bash
# bench/record.sh - spent record/report against perf record/report at the same frequency on
# the same workload, side by side (alternating runs, median of N): workload slowdown ratio
# spent/perf (goal <= 1.0), profile size / perf.data size (goal <= 0.1), report time ratio
# (goal <= 0.2). The same size ratio with the who-and-when detail rows on a 3-thread program,
# flat and -g. Then reports at scale: a -g profile of a g++ -O2 compile (cc1plus, a large
# stripped binary) by spent and perf, each report view timed against perf report's (goal
# <= 1.0), and a daemon-like profile of 120k distinct offsets (goal <= 2 s per view).
# Not a test: prints ratios.   usage: bench/record.sh [RUNS] [FREQ] [MITER]
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

# --- profile size with who and when: every sample is also a detail row (comm, pid, tid, 10 ms
# bucket, call chain). perf.data of the same run as the yardstick, flat and with -g, on a
# 3-thread program; the bytes of the detail rows (samples files) shown apart.
who=$top/build/progs/who_split
size_case() { # LABEL RECORD-ARGS...
	local label=$1; shift
	rm -rf "$tmp/w.perf" "$tmp/w"
	perf record -q "$@" -F "$freq" -e cpu-clock -o "$tmp/w.perf" -- "$who" 400 >/dev/null 2>&1
	"$SPENT" record "$@" -F "$freq" -e cpu-clock -o "$tmp/w" -- "$who" 400 >/dev/null 2>&1
	local p s d n
	p=$(stat -c %s "$tmp/w.perf") s=$(du -sb "$tmp/w" | cut -f1)
	d=$(find "$tmp/w" -name 'samples*' -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
	n=$("$SPENT" report -i "$tmp/w" --sort tid --csv | awk -F, 'NR > 1 { t += $3 } END { print t + 0 }')
	awk -v l="$label" -v s="$s" -v p="$p" -v d="$d" -v n="$n" 'BEGIN {
		printf "  %-14s profile %d (detail rows %d, %.2f B/sample) / perf.data %d = %.4f (goal <= 0.1)\n",
		       l, s, d, n ? d / n : 0, p, s / p }'
}
echo "profile size with comm/pid/tid/time: $who 400 (1:2:3 threads), -F $freq cpu-clock"
size_case "flat"
size_case "-g (fp)" -g

# --- reports at scale: a large real binary (cc1plus), flat, --children, --folded
cat > "$tmp/big.cpp" <<'CPP'
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
int main()
{
	std::map<std::string, std::vector<int>> m;
	std::regex r("a+b");
	std::unordered_map<int, std::string> u;
	std::ostringstream o;
	for (auto &x : m)
		o << x.first;
	std::function<int(int)> f = [](int x) { return x; };
	return f(std::regex_match("aab", r));
}
CPP
if command -v g++ >/dev/null; then
	(cd "$tmp" && perf record -q -g -F 2000 -e cpu-clock -o "$tmp/big.perf" -- g++ -O2 -c big.cpp -o /dev/null) >/dev/null 2>&1
	(cd "$tmp" && "$SPENT" record -g -F 2000 -e cpu-clock -o "$tmp/big" -- g++ -O2 -c big.cpp -o /dev/null) >/dev/null 2>&1
	echo "large binary: g++ -O2 -c (cc1plus) -g -F 2000, median of $runs"
	# the issue's real case: deep C++ call stacks, 44k distinct return addresses
	bp=$(stat -c %s "$tmp/big.perf") bs=$(du -sb "$tmp/big" | cut -f1)
	bd=$(find "$tmp/big" -name 'samples*' -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
	bk=$(find "$tmp/big" -name 'stacks*' -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
	awk -v s="$bs" -v p="$bp" -v d="$bd" -v k="$bk" 'BEGIN {
		printf "  size       profile %d (samples files %d, stacks files %d) / perf.data %d = %.4f (goal <= 0.1)\n",
		       s, d, k, p, s / p }'
	# perf's own compression (-z, zstd) of the same command, for scale: the goal stays
	# against default perf.data
	(cd "$tmp" && perf record -q -z -g -F 2000 -e cpu-clock -o "$tmp/bigz.perf" -- g++ -O2 -c big.cpp -o /dev/null) >/dev/null 2>&1
	if [ -s "$tmp/bigz.perf" ]; then
		bz=$(stat -c %s "$tmp/bigz.perf")
		awk -v s="$bs" -v z="$bz" -v k="$(cat "$tmp"/big/kallsyms* 2>/dev/null | wc -c)" 'BEGIN {
			printf "  perf -z    perf.data %d: profile / that = %.4f (kallsyms file %d of the profile)\n", z, s / z, k }'
	fi
	view() { # NAME "SPENT ARGS" "PERF ARGS"
		local sp=() pe=()
		for i in $(seq "$runs"); do
			pe+=("$(elapsed perf report -i "$tmp/big.perf" --stdio $3)")
			sp+=("$(elapsed "$SPENT" report -i "$tmp/big" $2)")
		done
		local ms mp
		ms=$(printf '%s\n' "${sp[@]}" | median) mp=$(printf '%s\n' "${pe[@]}" | median)
		awk -v n="$1" -v s="$ms" -v p="$mp" \
			'BEGIN{printf "  %-10s spent %.3fs  perf %.3fs  ratio %.3f (goal <= 1.0)\n", n, s, p, s/p}'
	}
	view flat "" "--no-children --sort sym"
	view children "--children" "--children --sort sym"
	view folded "--folded" "--no-children --sort sym -g folded"
	view by-image "--by image" "--no-children --sort dso"
else
	echo "large binary: SKIP (no g++)"
fi

# --- a daemon-like database: 120k distinct offsets over big images
cc -O2 -I"$top/include" -I"$top/src" -D_GNU_SOURCE -o "$tmp/synth" "$top/bench/synth_profile.c" \
	"$(dirname "$SPENT")/libspent.a" -lz -lpfm -ldw -lelf -lbpf -lZydis -lzstd -llz4 -lpthread -lm -ldl
imgs=()
for f in /usr/lib/gcc/x86_64-linux-gnu/*/cc1plus /lib/x86_64-linux-gnu/libc.so.6 \
	 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 "$SPENT"; do
	[ -r "$f" ] && imgs+=("$f")
done
"$tmp/synth" "$tmp/db" 120000 "${imgs[@]}"
echo "daemon-like profile: 120000 offsets over ${#imgs[@]} images, median of $runs"
for v in "--by image --limit 3" "" "--by line"; do
	for i in $(seq "$runs"); do elapsed "$SPENT" report -i "$tmp/db" $v; done > "$tmp/dbt"
	awk -v n="${v:-by function}" -v s="$(median < "$tmp/dbt")" \
		'BEGIN{printf "  %-20s %.3fs (goal <= 2 s)\n", n, s}'
done
