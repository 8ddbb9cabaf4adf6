#!/bin/bash
# tests/e2e/trace_exact.sh - `spent trace` reconstructs exactly what Valgrind's own tools see:
# instruction count == cachegrind's Ir, data-address sequence == lackey --trace-mem=yes.
# Every run gets the same minimal environment and the same VALGRIND_LIB (the client's stack
# contents, hence its addresses and startup path, depend on the environment).
source "$(dirname "$0")/lib.sh"
VL=$SPENT_BUILD/valgrind/lib
P=$PROGS/trace_small
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" trace -o "$TMP/s.log" -- "$P" > "$TMP/s.out" 2> "$TMP/s.err"
check "trace_small exits 0 under spent trace" test $? -eq 0
"$P" > "$TMP/native.out"
check "traced program output equals native output" cmp -s "$TMP/s.out" "$TMP/native.out"
js=$("$SPENT" trace stats --json "$TMP/s.log")
ours=$(jfield "$js" instructions)

"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=cachegrind --cache-sim=no \
	--cachegrind-out-file="$TMP/cg.out" "$P" > "$TMP/cg.stdout" 2> "$TMP/cg.err"
ir=$(awk '/^summary:/ { print $2 }' "$TMP/cg.out")
if [ -n "$ir" ] && [ "$ours" = "$ir" ]; then
	pass "reconstructed instruction count equals cachegrind Ir ($ours)"
else
	fail "reconstructed instruction count equals cachegrind Ir: ours '$ours', cachegrind '$ir'"
fi

# --no-data: the same instructions, no data references
"${E[@]}" "$SPENT" trace --no-data -o "$TMP/n.log" -- "$P" > "$TMP/n.out" 2>&1
jn=$("$SPENT" trace stats --json "$TMP/n.log")
check "--no-data log reconstructs the same instruction count as cachegrind Ir" test "$(jfield "$jn" instructions)" = "$ir"
check "--no-data log has no data references" test "$(jfield "$jn" data_refs)" = 0
check "--no-data log is smaller than the log with data" test "$(jfield "$jn" log_bytes)" -lt "$(jfield "$js" log_bytes)"

# lackey: the full I/L/S/M sequence of a short run (argument 0: one round). A few lines are
# run-dependent: the loader's strcspn reads past a string's end into the AT_RANDOM bytes and
# looks each byte up in a table on the stack, so that load's address is random (1 of 256
# values, on paths where the string ends next to those bytes). Lackey runs three times and only
# lines where its runs disagree are excused: two runs agree on such a line 1 time in 256, often
# enough to redden CI; three 1 time in 65536.
"${E[@]}" "$SPENT" trace -o "$TMP/l.log" -- "$P" 0 > "$TMP/l.out" 2>&1
"$SPENT" trace dump "$TMP/l.log" | grep -v '^#' | sed -E 's/^[0-9]+ //; s/^(I  [0-9a-f]+,[0-9]+).*/\1/' > "$TMP/ours.trace"
for k in 1 2 3; do
	"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=lackey --trace-mem=yes --log-file="$TMP/lk$k.log" \
		"$P" 0 > "$TMP/lk$k.stdout" 2>&1
	grep -E '^(I | [LSM] )' "$TMP/lk$k.log" > "$TMP/lk$k.trace"
done
res=$(python3 - "$TMP/ours.trace" "$TMP/lk1.trace" "$TMP/lk2.trace" "$TMP/lk3.trace" <<'PY'
import sys
o, *runs = (open(p).read().splitlines() for p in sys.argv[1:])
if len({len(o)} | {len(r) for r in runs}) != 1:
    print(f"lengths differ: ours {len(o)}, lackey {' and '.join(str(len(r)) for r in runs)}"); sys.exit()
a = runs[0]
varying = sum(1 for ys in zip(*runs) if len(set(ys)) > 1)
bad = [i for i, (x, *ys) in enumerate(zip(o, *runs)) if len(set(ys)) == 1 and x != ys[0]]
refs = sum(1 for x in a if not x.startswith("I"))
if bad:
    i = bad[0]
    print(f"{len(bad)} lines differ, first at line {i + 1}: ours '{o[i]}', lackey '{a[i]}'")
elif varying > 8 or refs == 0:
    print(f"lackey runs disagree on {varying} lines, refs {refs}")
else:
    print(f"ok {len(o)} {refs} {varying}")
PY
)
case $res in
ok*) set -- $res; pass "data-address sequence equals lackey's ($2 lines, $3 refs; $4 run-dependent lines in lackey too)" ;;
*) fail "data-address sequence equals lackey's: $res" ;;
esac

# --start main: the stream begins at main's first instruction and leaves out the startup
"${E[@]}" "$SPENT" trace --start main -o "$TMP/m.log" -- "$P" > "$TMP/m.out" 2>&1
first=$("$SPENT" trace dump "$TMP/m.log" --limit 1 | awk '$2 == "I" { print $3 }')
base=$("$SPENT" trace dump "$TMP/m.log" --limit 1 | awk -v p="$P" '$3 == "image" && $4 == p { print $NF; exit }')
want=$(python3 -c 'import sys; print("%08x" % (int(sys.argv[1], 16) + int(sys.argv[2], 16)))' "$base" "$(nm "$P" | awk '$3 == "main" { print $1 }')")
check "--start main: the stream begins at main ($want)" test "${first%,*}" = "$want"
jm=$("$SPENT" trace stats --json "$TMP/m.log")
check "--start main: fewer instructions than from startup" test "$(jfield "$jm" instructions)" -lt "$ir"
