#!/bin/bash
# tests/e2e/studies_partial.sh - a cut or corrupt log: every study sink (cachesim, hitcurve,
# memmap, locks) reports on the complete part (the instructions `spent trace stats` counts),
# then prints one error line and exits 1, as `trace stats` does.
source "$(dirname "$0")/lib.sh"
"$SPENT" trace -o "$TMP/mix.log" -- "$PROGS/studies_mix" > /dev/null 2>&1
check "studies_mix runs under spent trace" test $? -eq 0
sz=$(stat -c %s "$TMP/mix.log")
head -c $((sz * 6 / 10)) "$TMP/mix.log" > "$TMP/cut.log"
# corrupt: one byte flipped at 80% (inside a later block: the earlier blocks stay readable)
cp "$TMP/mix.log" "$TMP/bad.log"
python3 -c 'import sys
p, at = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[at] ^= 0xff; open(p, "wb").write(b)' "$TMP/bad.log" $((sz * 8 / 10))
full=$("$SPENT" trace stats "$TMP/mix.log" | awk '$1 == "instructions" { print $2 }')
for kind in cut bad; do
	n=$("$SPENT" trace stats "$TMP/$kind.log" 2> /dev/null | awk '$1 == "instructions" { print $2 }')
	check "$kind: trace stats reads a part (0 < $n < $full)" test "${n:-0}" -gt 0 -a "${n:-0}" -lt "$full"
	for c in cachesim hitcurve locks memmap; do
		extra=()
		[ $c = memmap ] && extra=(--png "$TMP/$kind.png")
		"$SPENT" $c "$TMP/$kind.log" "${extra[@]}" > "$TMP/$c.out" 2> "$TMP/$c.err"
		check "$kind: $c exits 1" test $? -eq 1
		check "$kind: $c reports the complete part ($n instructions)" grep -q "[ (]$n instructions" "$TMP/$c.out"
		check "$kind: $c prints one error line, naming where it stopped" \
			test "$(wc -l < "$TMP/$c.err")" -eq 1 -a "$(grep -c "failed after $n instructions" "$TMP/$c.err")" -eq 1
	done
	check "$kind: memmap still wrote its PNG" test -s "$TMP/$kind.png"
done
