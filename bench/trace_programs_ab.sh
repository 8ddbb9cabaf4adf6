#!/bin/bash
# bench/trace_programs_ab.sh BEFORE_BUILD [AFTER_BUILD] - two builds of `spent trace` on the real
# programs of bench/trace_programs.sh (gzip and bzip2 compressing a 2 MiB text, python3 building
# and parsing JSON, trace_bench), with and without data addresses, each build's run in turn,
# ROUNDS (5) times: the medians of CPU seconds (user+sys of the whole tree) and the log sizes,
# before and after. For a change to the recorder or the log format on a noisy machine, where
# only runs side by side compare. BEFORE_BUILD is e.g. a build/ of main made in a worktree.
# Prints figures, asserts nothing. TRACE_PROGRAMS="gzip python3" picks programs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: bench/trace_programs_ab.sh BEFORE_BUILD [AFTER_BUILD]}
B=${2:-$top/build}
R=${ROUNDS:-5}
tmp=$(mktemp -d /tmp/spent-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source "$top/bench/trace_workloads.sh"
for p in $PROGRAMS; do
	[ -n "${cmd[$p]:-}" ] || { echo "unknown program $p" >&2; exit 2; }
	eval "prog=(${cmd[$p]})"
	for ((i = 0; i < R; i++)); do
		for v in before after; do
			b=$A
			[ $v = after ] && b=$B
			for m in data nodata; do
				opt=()
				[ $m = nodata ] && opt=(--no-data)
				/usr/bin/time -f '%U %S' -o "$tmp/time" "$b/spent" trace "${opt[@]}" -o "$tmp/x.log" -- \
					"${prog[@]}" > /dev/null 2>&1 || { echo "$v: spent trace failed on $p" >&2; exit 1; }
				echo "$p $m $v $(awk '{ printf "%.2f", $1 + $2 }' "$tmp/time") $(stat -c %s "$tmp/x.log")"
			done
		done
	done
done > "$tmp/runs"
echo "CPU s of the tree, median of $R runs each build in turn; log MB"
printf '%-12s %-7s %8s %8s %7s %9s %9s\n' program mode before after change "log before" "log after"
awk '{ k = $1 " " $2; c[k, $3] = c[k, $3] " " $4; s[k, $3] = $5; keys[k] = 1 }
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	for (k in keys) {
		split(k, pm, " ")
		b = median(c[k, "before"]); a = median(c[k, "after"])
		printf "%-12s %-7s %8.2f %8.2f %+6.0f%% %9.1f %9.1f\n", pm[1], pm[2], b, a, (b > 0 ? 100 * (a - b) / b : 0),
			s[k, "before"] / 1e6, s[k, "after"] / 1e6
	}
}' "$tmp/runs" | sort
