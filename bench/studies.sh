#!/bin/bash
# bench/studies.sh - speed of the trace studies on one program (build/progs/studies_mix):
# simulated references (instruction fetches + data references) per second for one cache
# configuration (I1/D1 32K 8-way, LL 8M 16-way) and for the exact hit curves (direct-mapped and
# LRU, 1K..16M). Sinks are timed on the trace already in memory (bench/studies_speed.c: the
# batches are replayed zero-copy, so a sink's rate includes reading them; a null sink that
# only reads them gives the floor, and the simulator alone is the sink minus that floor);
# the log's source (decoding and reconstruction) is timed on its own and end to end.
# cachegrind's speed on the same program with the same caches beside. CPU seconds, best of
# REPS (default 11) alternated runs, so a busy machine matters less.
# zlib is linked first, as the Makefile does: libunicorn also exports a crc32 (slower), which
# would otherwise serve the log reader's checksums.
# Goals: cache simulation >= 100 M refs/s, hit curve >= 30 M refs/s.
# Then one log, many configurations, on a real program (gzip -9 of a 3 MB text made here): one
# configuration from the log against cachegrind on the live program (goal <= 1.0x its CPU), and
# 8 configurations (D1 4 sizes x 2 associativities) in one pass against one (goal <= 2x), in
# CPU seconds on one thread (--jobs 1), then in wall seconds with `spent cachesim`'s threads.
# A paired part follows (PAIRS rounds, per-round ratios). STUDIES_GZIP=0 skips the gzip part.
# docs/studies.md has the numbers last measured and why the
# goals are not met.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
P=$B/progs/studies_mix
REPS=${REPS:-11}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O2 -I"$top/include" -I"$top/src" -D_GNU_SOURCE -o "$tmp/speed" \
	"$top/bench/studies_speed.c" "$B/libspent.a" \
	-lz -lpfm -ldw -lelf -lbpf -lZydis -lunicorn -lzstd -llz4 -lpng16 -lpthread -lm -ldl || exit 1
env -i PATH=/usr/bin:/bin "$B/spent" trace -o "$tmp/mix.log" -- "$P" > /dev/null 2>&1
cpu() { # command... -> least user+sys seconds of 3 runs
	for _ in 1 2 3; do
		/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" > /dev/null 2>&1
		awk '{ print $1 + $2 }' "$tmp/t"
	done | sort -g | head -1
}
"$tmp/speed" "$tmp/mix.log" "$REPS" > "$tmp/speed.txt" || exit 1
v() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/speed.txt"; }
wall() { # command... -> least wall seconds of 3 runs
	for _ in 1 2 3; do
		/usr/bin/time -f '%e' -o "$tmp/t" "$@" > /dev/null 2>&1
		cat "$tmp/t"
	done | sort -g | head -1
}
# CPU figures on one thread (--jobs 1); the threads' wall time is printed beside
t_cs=$(cpu "$B/spent" cachesim "$tmp/mix.log" --config cachegrind --jobs 1)
t_hc=$(cpu "$B/spent" hitcurve "$tmp/mix.log")
t_cg=$(cpu env VALGRIND_LIB="$B/valgrind/lib" valgrind --tool=cachegrind --cache-sim=yes \
	--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null "$P")
t_nat=$(cpu "$P")
awk -v r="$(v refs)" -v rec="$(v reconstruct)" -v nul="$(v null)" -v cs="$(v cachesim)" \
    -v hc="$(v hitcurve)" -v e2e="$(v e2e_cachesim)" -v tcs="$t_cs" -v thc="$t_hc" \
    -v tcg="$t_cg" -v tn="$t_nat" -v reps="$REPS" 'BEGIN {
	m = r / 1e6
	printf "program: studies_mix, %.1f M simulated references; best of %d, CPU time\n", m, reps
	printf "cachesim sink (in-memory trace):  %7.1f M refs/s (%.3f s; goal >= 100)\n", m / cs, cs
	printf "hitcurve sink (exact):            %7.1f M refs/s (%.3f s; goal >= 30)\n", m / hc, hc
	printf "  null sink (reads the batches):  %7.1f M refs/s (%.3f s; the floor of any sink)\n", m / nul, nul
	printf "  cachesim simulator alone:       %7.1f M refs/s (%.3f s; sink minus null sink)\n", m / (cs - nul), cs - nul
	printf "log source alone (reconstruction):%7.1f M refs/s (%.3f s; null sink on the log)\n", m / rec, rec
	printf "cachesim from the log, in process:%7.1f M refs/s (%.3f s; reconstruction + simulator)\n", m / e2e, e2e
	printf "spent cachesim from the log:      %7.1f M refs/s (%.2f s CPU, whole process)\n", m / tcs, tcs
	printf "spent hitcurve from the log:      %7.1f M refs/s (%.2f s CPU, whole process)\n", m / thc, thc
	printf "cachegrind on the program:        %7.1f M refs/s (%.2f s CPU, program alone %.2f s)\n", m / tcg, tcg, tn
	printf "ratio cachesim sink / cachegrind: %.1fx\n", (r / cs) / (r / tcg)
}'

[ "${STUDIES_GZIP:-1}" = 0 ] && exit 0
python3 "$top/bench/words_text.py" "$tmp/gz.in"
GZ=$(command -v gzip)
env -i PATH=/usr/bin:/bin "$B/spent" trace -o "$tmp/gz.log" -- "$GZ" -9 -c "$tmp/gz.in" > /dev/null 2>&1 || exit 1
g_insns=$("$B/spent" trace stats "$tmp/gz.log" | awk '$1 == "instructions" { print $2 }')
g_rec=$(cpu "$B/spent" trace stats "$tmp/gz.log")
g_one=$(cpu "$B/spent" cachesim "$tmp/gz.log" --config cachegrind --jobs 1)
g_eight=$(cpu "$B/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8 --jobs 1)
w_one=$(wall "$B/spent" cachesim "$tmp/gz.log" --config cachegrind)
w_eight=$(wall "$B/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8)
g_cg=$(cpu env VALGRIND_LIB="$B/valgrind/lib" valgrind --tool=cachegrind --cache-sim=yes \
	--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null \
	"$GZ" -9 -c "$tmp/gz.in")
awk -v n="$g_insns" -v rec="$g_rec" -v one="$g_one" -v eight="$g_eight" -v cg="$g_cg" \
    -v wone="$w_one" -v weight="$w_eight" -v cpus="$(nproc)" 'BEGIN {
	printf "\none log, many configurations: gzip -9 of 3 MB, %.1f M instructions; CPU s, best of 3\n", n / 1e6
	printf "log read alone (trace stats):      %6.2f s\n", rec
	printf "cachegrind on the live program:    %6.2f s\n", cg
	printf "1 configuration from the log:      %6.2f s  = %.2fx cachegrind (goal <= 1.0)\n", one, one / cg
	printf "8 configurations in one pass:      %6.2f s  = %.2fx one configuration (goal <= 2)\n", eight, eight / one
	printf "wall s on %d CPUs (--jobs default): 1 configuration %.2f s = %.2fx cachegrind CPU; 8 configurations %.2f s = %.2fx one\n",
		cpus, wone, wone / cg, weight, weight / wone
}'

# The same ratios paired: each round times cachegrind, one configuration and eight back to
# back (their order turned round every other round) and takes the round's own ratios, so a
# host whose speed drifts between minutes (cachegrind alone took 2.0 to 3.1 s in three
# consecutive runs, session 30) moves both sides of a ratio together; the median and the
# range of PAIRS (5) rounds. Best-of figures above take each side's best moment apart.
one_cpu() { # command... -> user+sys seconds of one run
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" > /dev/null 2>&1
	awk '{ print $1 + $2 }' "$tmp/t"
}
for ((r = 0; r < ${PAIRS:-5}; r++)); do
	cg=$(one_cpu env VALGRIND_LIB="$B/valgrind/lib" valgrind --tool=cachegrind --cache-sim=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null \
		"$GZ" -9 -c "$tmp/gz.in")
	if ((r % 2)); then
		eight=$(one_cpu "$B/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8 --jobs 1)
		one=$(one_cpu "$B/spent" cachesim "$tmp/gz.log" --config cachegrind --jobs 1)
	else
		one=$(one_cpu "$B/spent" cachesim "$tmp/gz.log" --config cachegrind --jobs 1)
		eight=$(one_cpu "$B/spent" cachesim "$tmp/gz.log" --sweep D1.size=8K,16K,32K,64K --sweep D1.assoc=4,8 --jobs 1)
	fi
	echo "$cg $one $eight"
done > "$tmp/pairs"
awk 'function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ n++; r1[n] = $2 / $1; r8[n] = $3 / $2; c[n] = $1; o[n] = $2; e[n] = $3 }
END {
	lo1 = hi1 = r1[1]; lo8 = hi8 = r8[1]
	for (i = 2; i <= n; i++) { if (r1[i] < lo1) lo1 = r1[i]; if (r1[i] > hi1) hi1 = r1[i]; if (r8[i] < lo8) lo8 = r8[i]; if (r8[i] > hi8) hi8 = r8[i] }
	printf "\npaired, %d rounds (CPU s per round: cachegrind / 1 / 8 configurations):", n
	for (i = 1; i <= n; i++) printf " %.2f/%.2f/%.2f", c[i], o[i], e[i]
	printf "\n1 configuration / cachegrind:      median %.2fx (rounds %.2f-%.2f; goal <= 1.0)\n", med(r1, n), lo1, hi1
	printf "8 configurations / 1:              median %.2fx (rounds %.2f-%.2f; goal <= 2)\n", med(r8, n), lo8, hi8
}' "$tmp/pairs"
