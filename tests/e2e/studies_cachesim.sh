#!/bin/bash
# tests/e2e/studies_cachesim.sh - `spent cachesim` on a `spent trace` log agrees with cachegrind
# run on the same program with the same caches (I1/D1 32K 8-way 64 B, LL 8M 16-way) within 1%
# for every miss count; the PatchWrx paper's Alpha caches and the SVG chart run on the same log;
# bad configurations are refused without output.
source "$(dirname "$0")/lib.sh"
VL=$SPENT_BUILD/valgrind/lib
P=$PROGS/studies_mix
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" trace -o "$TMP/mix.log" -- "$P" > "$TMP/t.out" 2> "$TMP/t.err"
check "studies_mix runs under spent trace" test $? -eq 0
"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=cachegrind --cache-sim=yes \
	--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 \
	--cachegrind-out-file="$TMP/cg.out" "$P" > "$TMP/cg.stdout" 2> "$TMP/cg.err"
# summary: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
read -r ir i1m ilm dr d1mr dlmr dw d1mw dlmw < <(awk '/^summary:/ { print $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$TMP/cg.out")

"$SPENT" cachesim "$TMP/mix.log" --config cachegrind --json > "$TMP/cs.json" 2> "$TMP/cs.err"
check "cachesim --json exits 0" test $? -eq 0
field() { # CACHE KEY
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("cache") == sys.argv[2]: print(o[sys.argv[3]])' "$TMP/cs.json" "$1" "$2"
}
cmp1() { # NAME OURS THEIRS
	if [ -n "$2" ] && [ -n "$3" ] && within "$2" "$3" 1; then pass "$1 within 1% of cachegrind ($2 vs $3)"
	else fail "$1 within 1% of cachegrind: ours '$2', cachegrind '$3'"; fi
}
cmp1 "I1 accesses" "$(field I1 accesses)" "$ir"
cmp1 "I1 misses" "$(field I1 misses)" "$i1m"
cmp1 "D1 accesses" "$(field D1 accesses)" "$((dr + dw))"
cmp1 "D1 misses" "$(field D1 misses)" "$((d1mr + d1mw))"
cmp1 "LL accesses" "$(field LL accesses)" "$((i1m + d1mr + d1mw))"
cmp1 "LL misses" "$(field LL misses)" "$((ilm + dlmr + dlmw))"
# a read-modify-write (x86 `add [mem], r`) is one read for cachegrind: its misses are D1mr/DLmr
cmp1 "D1 read misses" "$(field D1 read_misses)" "$d1mr"
cmp1 "D1 write misses" "$(field D1 write_misses)" "$d1mw"
cmp1 "LL data read misses" "$(field LL read_misses)" "$dlmr"
cmp1 "LL write misses" "$(field LL write_misses)" "$dlmw"
check "the program misses in LL at all (test is not trivial)" test "$((ilm + dlmr + dlmw))" -gt 1000

# cachegrind's own spelling of the caches, --I1/--D1/--LL=SIZE,ASSOC,LINE, on other caches than
# the default (a 32-byte D1 line under a 64-byte LL): the same misses as cachegrind given them
G=(--I1=16384,4,64 --D1=8192,2,32 --LL=262144,8,64)
"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=cachegrind --cache-sim=yes "${G[@]}" \
	--cachegrind-out-file="$TMP/cg2.out" "$P" > /dev/null 2>&1
read -r ir i1m ilm dr d1mr dlmr dw d1mw dlmw < <(awk '/^summary:/ { print $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$TMP/cg2.out")
"$SPENT" cachesim "$TMP/mix.log" "${G[@]}" --json > "$TMP/cs.json" 2> "$TMP/cs2.err"
check "cachesim ${G[*]} exits 0" test $? -eq 0
cmp1 "${G[*]}: I1 misses" "$(field I1 misses)" "$i1m"
cmp1 "${G[*]}: D1 misses" "$(field D1 misses)" "$((d1mr + d1mw))"
cmp1 "${G[*]}: D1 read misses" "$(field D1 read_misses)" "$d1mr"
cmp1 "${G[*]}: LL misses" "$(field LL misses)" "$((ilm + dlmr + dlmw))"
for bad in --D1=8192,2 --D1=8192,2,32,1 --D1=8192,2,33 --L2=8192,2,32; do
	"$SPENT" cachesim "$TMP/mix.log" $bad > "$TMP/bad_g.out" 2> "$TMP/bad_g.err"; rc=$?
	check "cachesim $bad is refused (rc $rc: $(head -1 "$TMP/bad_g.err"))" \
		test "$rc" -ne 0 -a ! -s "$TMP/bad_g.out" -a "$(wc -l < "$TMP/bad_g.err")" -eq 1
done
"$SPENT" cachesim "$TMP/mix.log" --config cachegrind --json > "$TMP/cs.json" 2> "$TMP/cs.err"

# the PatchWrx paper's processors: traffic splits into its kinds and sums up
for cfg in alpha21064 alpha21164; do
	"$SPENT" cachesim "$TMP/mix.log" --config $cfg --chunk 200000 --json --svg "$TMP/$cfg.svg" > "$TMP/$cfg.json"
	check "cachesim --config $cfg exits 0" test $? -eq 0
	python3 - "$TMP/$cfg.json" "$cfg" <<'PY' && pass "$cfg: traffic kinds sum to the total, imiss is one or two lines per i-miss" || fail "$cfg: traffic accounting inconsistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = {r["traffic"]: r["bytes"] for r in rows if "traffic" in r}
c = {r["cache"]: r for r in rows if "cache" in r}
line = 32 if sys.argv[2] == "alpha21064" else 64
icache = c["I1"] if "I1" in c else c["L1"]
ok = sum(v for k, v in t.items() if k != "total") == t["total"]
m = icache["ifetch_misses"] * line  # a straddling fetch misses once, may fill two lines
ok &= m <= t["imiss"] <= 2 * m
ok &= t["imiss"] > 0 and t["dmiss"] > 0
sys.exit(0 if ok else 1)
PY
	check "$cfg: the SVG chart is well-formed XML with bars" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
sys.exit(0 if len(r.findall(".//{http://www.w3.org/2000/svg}rect")) > 20 else 1)' "$TMP/$cfg.svg"
done
check "21064 reports write-buffer flushes (dwrite)" python3 -c '
import json, sys
t = {r["traffic"]: r["bytes"] for r in map(json.loads, open(sys.argv[1])) if "traffic" in r}
sys.exit(0 if t["dwrite"] > 0 and t["dvict"] == 0 else 1)' "$TMP/alpha21064.json"
check "21164 reports victim writes (dvict), no write-buffer flushes" python3 -c '
import json, sys
t = {r["traffic"]: r["bytes"] for r in map(json.loads, open(sys.argv[1])) if "traffic" in r}
sys.exit(0 if t["dvict"] > 0 and t["dwrite"] == 0 else 1)' "$TMP/alpha21164.json"

# bad input: a clear error, non-zero exit, no SVG written
printf 'L1 size=32K line=48 assoc=8\n' > "$TMP/bad.cfg"
"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/bad.cfg" --svg "$TMP/bad.svg" > /dev/null 2> "$TMP/bad.err"
rc=$?
check "a bad configuration file exits 2" test $rc -eq 2
check "the error names the cache and the rule" grep -q "cache 'L1': line size must be a power of two" "$TMP/bad.err"
check "no SVG is written for a bad configuration" test ! -e "$TMP/bad.svg"
"$SPENT" cachesim "$TMP/nonexistent.log" > /dev/null 2> "$TMP/nf.err"
check "a missing trace exits non-zero with one error line" test $? -ne 0 -a "$(wc -l < "$TMP/nf.err")" -eq 1

# a cache without level= beside one with it, at the same level for the same stream: refused
# (its misses would otherwise skip the LL); with distinct levels the file equals the preset
printf 'I1 size=32K line=64 assoc=8 kind=insn level=1\nD1 size=32K line=64 assoc=8 kind=data\nLL size=8M line=64 assoc=16 level=2\n' > "$TMP/amb.cfg"
"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/amb.cfg" --svg "$TMP/amb.svg" > "$TMP/amb.out" 2> "$TMP/amb.err"
check "an ambiguous configuration (D1 and LL both level 2) exits 2" test $? -eq 2
check "the error names both caches and the level" grep -q "caches 'D1' and 'LL' are both level 2 and both hold data" "$TMP/amb.err"
check "nothing is printed or written for it" test ! -s "$TMP/amb.out" -a ! -e "$TMP/amb.svg"
sed 's/kind=data$/kind=data level=1/' "$TMP/amb.cfg" > "$TMP/ok.cfg"
"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/ok.cfg" --json > "$TMP/ok.json" 2> "$TMP/ok.err"
check "with D1 level=1 it runs" test $? -eq 0
check "and equals the cachegrind preset" cmp -s "$TMP/ok.json" "$TMP/cs.json"
# numbers as elsewhere in spent: 032K is 32K (not octal 26K), 0x hex, G; too large is refused
printf 'I1 size=032K line=64 assoc=8 kind=insn level=1\nD1 size=0x8000 line=64 assoc=08 kind=data level=01\nLL size=8M line=64 assoc=16 level=2\n' > "$TMP/num.cfg"
"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/num.cfg" --json > "$TMP/num.json" 2> "$TMP/num.err"
check "size=032K, size=0x8000 and assoc=08 are the cachegrind preset's decimal numbers" cmp -s "$TMP/num.json" "$TMP/cs.json"
printf 'D1 size=32K line=64 assoc=4294967304\n' > "$TMP/big.cfg"
"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/big.cfg" > /dev/null 2> "$TMP/big.err"
check "a value too large for its field exits 2, naming the line, cache and key" test $? -eq 2 -a \
	"$(grep -c "line 1: cache 'D1': assoc=4294967304 is too large" "$TMP/big.err")" -eq 1
"$SPENT" cachesim "$TMP/mix.log" --sweep D1.assoc=8,4294967304 > /dev/null 2> "$TMP/big.err"
check "and so does a --sweep value" test $? -eq 2 -a \
	"$(grep -c "cache 'D1': assoc=4294967304 is too large" "$TMP/big.err")" -eq 1

# many configurations in one pass: each section equals a run of that configuration alone
"$SPENT" cachesim "$TMP/mix.log" --config cachegrind --config alpha21064 \
	--sweep D1.size=16K,32K --sweep D1.assoc=2,8 --json --svg "$TMP/sw.svg" > "$TMP/sw.json" 2> "$TMP/sw.err"
check "--config x2 --sweep 2x2 exits 0" test $? -eq 0
check "one chart per configuration (sw-1.svg .. sw-8.svg)" test -s "$TMP/sw-1.svg" -a -s "$TMP/sw-8.svg" -a ! -e "$TMP/sw-9.svg" -a ! -e "$TMP/sw.svg"
n_ok=0
for base in cachegrind alpha21064; do
	for size in 16384 32768; do
		for assoc in 2 8; do
			k=$((size / 1024))K
			# the same configuration as a file: the preset's caches with D1 changed
			if [ $base = cachegrind ]; then
				printf 'I1 size=32K line=64 assoc=8 kind=insn level=1\nD1 size=%s line=64 assoc=%s kind=data level=1\nLL size=8M line=64 assoc=16 level=2\n' $size $assoc
			else
				printf 'clock-mhz 200\nI1 size=8K line=32 assoc=1 kind=insn level=1\nD1 size=%s line=32 assoc=%s kind=data level=1 write=through alloc=no buffers=4\n' $size $assoc
			fi > "$TMP/one.cfg"
			"$SPENT" cachesim "$TMP/mix.log" --config "$TMP/one.cfg" --json > "$TMP/one.json"
			python3 - "$TMP/sw.json" "$base D1.size=$k D1.assoc=$assoc" "$TMP/one.json" <<'PY' && n_ok=$((n_ok + 1))
import json, sys
multi = [json.loads(l) for l in open(sys.argv[1])]
mine = [{k: v for k, v in o.items() if k != "config"} for o in multi if o.get("config") == sys.argv[2]]
alone = [json.loads(l) for l in open(sys.argv[3])]
sys.exit(0 if mine and mine == alone else 1)
PY
		done
	done
done
check "each of the 8 sections equals its configuration run alone ($n_ok of 8)" test $n_ok -eq 8
# the configurations beyond the first on threads (--jobs): the same sections and charts
for j in 1 3; do
	"$SPENT" cachesim "$TMP/mix.log" --sweep D1.size=8K,16K,32K --sweep D1.assoc=4,8 --json \
		--svg "$TMP/j$j.svg" --jobs $j > "$TMP/j$j.json" 2> "$TMP/j$j.err"
	check "a sweep of 6 on $j thread(s) exits 0" test $? -eq 0
done
check "--jobs 3 prints what --jobs 1 prints" cmp -s "$TMP/j1.json" "$TMP/j3.json"
n_same=0
for k in 1 2 3 4 5 6; do cmp -s "$TMP/j1-$k.svg" "$TMP/j3-$k.svg" && n_same=$((n_same + 1)); done
check "--jobs 3 draws what --jobs 1 draws ($n_same of 6 charts)" test $n_same -eq 6
check "the sweep's sections differ (the test is not trivial)" \
	test "$(grep '"cache":"D1"' "$TMP/j1.json" | sed 's/"config":"[^"]*",//' | sort -u | wc -l)" -eq 6
"$SPENT" cachesim "$TMP/mix.log" --jobs 0 > "$TMP/j0.out" 2> "$TMP/j0.err"
check "--jobs 0 exits 2 with one line" test $? -eq 2 -a ! -s "$TMP/j0.out" -a "$(wc -l < "$TMP/j0.err")" -eq 1
"$SPENT" cachesim "$TMP/mix.log" --sweep L9.size=1K > /dev/null 2> "$TMP/sw.err"
check "a sweep of a cache the configuration lacks exits 2, naming it" test $? -eq 2 -a "$(grep -c "has no cache 'L9'" "$TMP/sw.err")" -eq 1
"$SPENT" cachesim "$TMP/mix.log" --sweep D1.size=1K,1000 > /dev/null 2> "$TMP/sw.err"
check "a sweep value making a bad cache exits 2, naming the rule" test $? -eq 2 -a "$(grep -c "cache 'D1'" "$TMP/sw.err")" -eq 1
"$SPENT" cachesim "$TMP/mix.log" --sweep D1.size=8K,16K --sweep D1.size=32K > "$TMP/sw.out" 2> "$TMP/sw.err"
check "a key swept twice exits 2 with one line, nothing printed" \
	test $? -eq 2 -a ! -s "$TMP/sw.out" -a "$(grep -c "sweep D1.size is given twice" "$TMP/sw.err")" -eq 1
