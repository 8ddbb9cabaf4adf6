#!/bin/bash
# tests/e2e/studies_options.sh - the studies' options come from parse_options tables: both
# spellings `--opt=V` and `--opt V` give the same result, one unknown-option message, bad values
# refused with exit 2, and `--man` lists every option of each command.
source "$(dirname "$0")/lib.sh"
"$SPENT" trace -o "$TMP/s.log" -- "$PROGS/studies_small" > /dev/null 2>&1
check "studies_small runs under spent trace" test $? -eq 0

"$SPENT" cachesim "$TMP/s.log" --config=alpha21164 --chunk=100000 --json > "$TMP/a.json"
"$SPENT" cachesim --config alpha21164 --chunk 100000 --json "$TMP/s.log" > "$TMP/b.json"
check "cachesim: --opt=V and --opt V (before the trace) agree" cmp -s "$TMP/a.json" "$TMP/b.json"
check "cachesim: the config given was used (21164: one unified 96K cache)" test "$(grep -c '"cache"' "$TMP/a.json")" -eq 1
"$SPENT" hitcurve "$TMP/s.log" --min=2K --max 8K --service=4K=0,mem=50 > "$TMP/h.txt"
check "hitcurve: --min=2K --max 8K give sizes 2K..8K" test "$(awk '$1 ~ /^[0-9]+K$/ { print $1 }' "$TMP/h.txt" | tr '\n' ' ')" = "2K 4K 8K "
"$SPENT" memmap "$TMP/s.log" --png="$TMP/m.png" --width 200 --height=100 > /dev/null
check "memmap: --png=FILE --width 200 --height=100 wrote the PNG" test -s "$TMP/m.png"
"$SPENT" memmap "$TMP/s.log" --png "$TMP/m2.png" --width=200 --height 100 > /dev/null
check "memmap: the two spellings draw the same picture" cmp -s "$TMP/m.png" "$TMP/m2.png"
"$SPENT" memmap "$TMP/s.log" -o "$TMP/m4.png" --width=200 --height 100 > /dev/null
check "memmap: -o FILE is --png FILE" cmp -s "$TMP/m.png" "$TMP/m4.png"
"$SPENT" memmap "$TMP/s.log" --png "$TMP/m3.png" --width=300 --height 100 > /dev/null
check "memmap: --width changes the picture" test "$(stat -c %s "$TMP/m3.png")" != "$(stat -c %s "$TMP/m.png")"
"$SPENT" locks "$TMP/s.log" --groups=2 --json > /dev/null
check "locks: --groups=2 --json accepted" test $? -eq 0

for c in cachesim hitcurve memmap locks; do
	"$SPENT" $c "$TMP/s.log" --bogus > /dev/null 2> "$TMP/e"
	check "$c: an unknown option exits 2" test $? -eq 2
	check "$c: one line naming it" test "$(cat "$TMP/e")" = "spent $c: unknown option '--bogus': see 'spent $c -h'"
	"$SPENT" $c --man | sed 's/\\-/-/g' > "$TMP/$c.man"
	check "$c --man is a man page" grep -q "^.TH SPENT-$(echo $c | tr a-z A-Z) 1" "$TMP/$c.man"
done
for o in config clock-mhz chunk cores svg json; do
	check "cachesim --man lists --$o" grep -Eq -- "--(\\[no-\\])?$o" "$TMP/cachesim.man"
done
for o in line min max service svg json; do
	check "hitcurve --man lists --$o" grep -Eq -- "--(\\[no-\\])?$o" "$TMP/hitcurve.man"
done
"$SPENT" cachesim "$TMP/s.log" --cores 0 > /dev/null 2> "$TMP/e"
check "cachesim --cores 0 is refused (exit 2)" test $? -eq 2
"$SPENT" memmap "$TMP/s.log" --mod 0 --png "$TMP/z.png" > /dev/null 2> "$TMP/e"
check "memmap --mod 0 is refused, no PNG" test $? -eq 2 -a ! -e "$TMP/z.png"
"$SPENT" hitcurve "$TMP/s.log" --max=-1 > /dev/null 2> "$TMP/e"
check "hitcurve --max=-1 is refused (exit 2)" test $? -eq 2
# mem= ends the service list (a level after it, a second one, a negative time were taken)
for sv in mem=60,8K=2 mem=60,mem=5 8K=-1,mem=5; do
	"$SPENT" hitcurve "$TMP/s.log" --service $sv > /dev/null 2> "$TMP/e"
	check "hitcurve --service $sv is refused (exit 2)" test $? -eq 2 -a "$(wc -l < "$TMP/e")" -eq 1
done
"$SPENT" memmap "$TMP/s.log" --mod 1 --png "$TMP/z.png" > /dev/null 2> "$TMP/e"
check "memmap --mod 1 is refused (one band), no PNG" test $? -eq 2 -a ! -e "$TMP/z.png"
"$SPENT" memmap "$TMP/s.log" --png "$TMP/wh.png" --width 200 --height 100 > /dev/null
check "memmap --width 200 --height 100: the plot's pixels, 340 x 254 with the axes" \
	test "$(file -b "$TMP/wh.png" | grep -o '[0-9]* x [0-9]*')" = "340 x 254"

# a log traced with --no-data: locks (lock words are data addresses) refuses it; the cache and
# memory studies say only instruction fetches were studied (locks counted 4 acquisitions of
# the program's 180, the D1 0 misses, with nothing said)
"$SPENT" trace --no-data -o "$TMP/nd.log" -- "$PROGS/studies_mutex" > /dev/null 2>&1
"$SPENT" locks "$TMP/nd.log" > "$TMP/nd.out" 2> "$TMP/nd.err"
rc=$?
check "locks_refuses_a_no_data_log (exit $rc: $(cat "$TMP/nd.err"))" \
	bash -c "[ $rc = 1 ] && grep -q 'traced with --no-data: this study needs its data addresses' '$TMP/nd.err' && [ ! -s '$TMP/nd.out' ]"
for study in cachesim hitcurve; do
	"$SPENT" $study "$TMP/nd.log" > /dev/null 2> "$TMP/nd.err"
	rc=$?
	check "${study}_warns_on_a_no_data_log (exit $rc)" \
		bash -c "[ $rc = 0 ] && grep -q \"warning: $study: '.*nd.log' was traced with --no-data: only its instruction fetches\" '$TMP/nd.err'"
done
"$SPENT" cachesim "$TMP/s.log" > /dev/null 2> "$TMP/d.err"
check "cachesim_says_nothing_of_a_log_with_data" test ! -s "$TMP/d.err"
