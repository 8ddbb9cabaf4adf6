#!/bin/bash
# tests/e2e/report_buildid_cache.sh - the build-id cache: a profile keeps its function names
# after its binary is rebuilt with another layout (names saved at record time, keyed by
# build-id); without the cache's copy a warning says why names are missing.
source "$(dirname "$0")/lib.sh"

export SPENT_BUILDID_DIR=$TMP/cache	# lib.sh sets one too: this name is checked below
cat > "$TMP/hot.c" <<'C'
#include <stdio.h>
#ifdef PAD
unsigned long pad_function(unsigned long n) { return n * 7 + pad_function(n / 2); }
#endif
unsigned long __attribute__((noinline)) cache_hot_function(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
int main(void) { printf("%lu\n", cache_hot_function(150000000UL)); return 0; }
C
cc -O1 -o "$TMP/hot" "$TMP/hot.c"
$SPENT record -o "$TMP/p" -- "$TMP/hot" >/dev/null 2>&1
check record_fills_the_cache bash -c "ls '$TMP'/cache/b-*/symtab >/dev/null"
readelf -n "$TMP/hot" | grep 'Build ID' > "$TMP/id.old"
cc -O1 -DPAD -o "$TMP/hot" "$TMP/hot.c"
readelf -n "$TMP/hot" | grep 'Build ID' > "$TMP/id.new"
check rebuilt_binary_has_another_build_id bash -c "test -s '$TMP/id.new' && ! cmp -s '$TMP/id.old' '$TMP/id.new'"

$SPENT report -i "$TMP/p" --json > "$TMP/r.json" 2>"$TMP/r.err"; rc=$?
check report_after_rebuild_exits_0 test "$rc" = 0
check report_after_rebuild_names_from_cache \
	test "$(jfield "$(head -1 "$TMP/r.json")" symbol)" = cache_hot_function
check report_after_rebuild_no_warning test ! -s "$TMP/r.err"

rm -rf "$TMP/cache"
$SPENT report -i "$TMP/p" --json > "$TMP/r2.json" 2>"$TMP/r2.err"
check without_cache_shows_address bash -c "head -1 '$TMP/r2.json' | grep -q 'hot+0x'"
check without_cache_warning_says_why grep -q "hot: no function names.*build-id differs.*no copy" "$TMP/r2.err"
SPENT_BUILDID_DIR=off $SPENT report -i "$TMP/p" >/dev/null 2>"$TMP/r3.err"
check cache_off_warning_says_off grep -q "build-id cache is off" "$TMP/r3.err"
SPENT_BUILDID_DIR=off $SPENT record -o "$TMP/p2" -- "$TMP/hot" >/dev/null 2>&1
check cache_off_writes_nothing test ! -e "$TMP/cache"

# spent buildid: list and prune (least recently used first)
cc -O1 -o "$TMP/hot2" "$TMP/hot.c" -DPAD -g	# another build-id than hot
$SPENT record -o "$TMP/p3" -- "$TMP/hot" >/dev/null 2>&1
touch -d '2001-01-01' "$TMP"/cache/b-*/symtab	# every entry so far: old
$SPENT record -o "$TMP/p4" -- "$TMP/hot2" >/dev/null 2>&1
$SPENT buildid --list > "$TMP/list.txt"
check list_shows_the_image grep -q " $TMP/hot2\$" "$TMP/list.txt"
check list_counts_entries grep -qE '^[0-9]+ entries, [0-9]+ bytes$' "$TMP/list.txt"
check list_oldest_first bash -c "sed -n 2p '$TMP/list.txt' | grep -q '^2001-01-01'"
entries=$(sed -n 's/^\([0-9]*\) entries.*/\1/p' "$TMP/list.txt")
newest=$(tail -2 "$TMP/list.txt" | head -1 | awk '{print $4}')
newbytes=$(tail -2 "$TMP/list.txt" | head -1 | awk '{print $3}')
$SPENT buildid --prune --max-size "$newbytes" > "$TMP/prune.txt"
check prune_says_what_went grep -q "^removed $((entries - 1)) entries" "$TMP/prune.txt"
check prune_keeps_the_most_recent test -d "$TMP/cache/$newest"
check prune_left_one test "$(ls "$TMP/cache" | wc -l)" = 1
mkdir -p "$TMP/other"
$SPENT buildid --list --dir "$TMP/other" > "$TMP/other.txt"
check dir_option_used grep -q '^0 entries' "$TMP/other.txt"
# a --dir that is not there is a typo, not an empty cache
$SPENT buildid --list --dir "$TMP/no-such-dir" > "$TMP/nodir.txt" 2> "$TMP/nodir.err"; rc=$?
check dir_option_missing_refused bash -c "test $rc = 1 && grep -q \"no build-id cache at '.*no-such-dir': No such file or directory\" '$TMP/nodir.err' && test ! -s '$TMP/nodir.txt'"
$SPENT buildid 2>"$TMP/noarg.err"; rc=$?
check no_action_is_usage_error bash -c "test $rc = 2 && grep -q 'one of --list or --prune' '$TMP/noarg.err'"

# a cache that cannot be made: record still writes the profile and says why
touch "$TMP/afile"
SPENT_BUILDID_DIR=$TMP/afile/cache $SPENT record -o "$TMP/p5" -- "$TMP/hot" >/dev/null 2>"$TMP/bad.err"; rc=$?
check unusable_cache_record_exits_0 test "$rc" = 0
check unusable_cache_record_warns grep -q "cannot save symbols in the build-id cache: Not a directory" "$TMP/bad.err"

# lines: `report --by line` after a rebuild gives the lines of the build that was profiled
# (the cache keeps the line table of an image with line information: DIR/KEY/lines)
rm -rf "$TMP/cache"
cc -g -O1 -o "$TMP/hotg" "$TMP/hot.c"
$SPENT record -o "$TMP/pl" -- "$TMP/hotg" >/dev/null 2>&1
id=$(readelf -n "$TMP/hotg" | sed -n 's/.*Build ID: *//p')
check record_saves_lines test -s "$TMP/cache/b-$id/lines"
$SPENT report -i "$TMP/pl" --by line --json | grep "\"image\":\"$TMP/hotg\"" > "$TMP/lines.before"
check by_line_has_lines_of_hot_c grep -q "\"file\":\"$TMP/hot.c\",\"line\":[1-9]" "$TMP/lines.before"
cc -g -O1 -DPAD -o "$TMP/hotg" "$TMP/hot.c"
$SPENT report -i "$TMP/pl" --by line --json 2>"$TMP/l.err" | grep "\"image\":\"$TMP/hotg\"" > "$TMP/lines.after"
check by_line_after_rebuild_same_lines cmp -s "$TMP/lines.before" "$TMP/lines.after"
check by_line_after_rebuild_no_warning test ! -s "$TMP/l.err"
$SPENT buildid --list > "$TMP/list2.txt"
lbytes=$(awk -v k="b-$id" '$4 == k { print $3 }' "$TMP/list2.txt")
sbytes=$(( $(stat -c %s "$TMP/cache/b-$id/symtab") + $(stat -c %s "$TMP/cache/b-$id/lines") ))
check "list_counts_the_lines_file ($lbytes bytes listed)" test "${lbytes:-0}" -ge "$sbytes"
rm "$TMP/cache/b-$id/lines"
$SPENT report -i "$TMP/pl" --by line --json | grep "\"image\":\"$TMP/hotg\"" > "$TMP/lines.nolines"
check by_line_without_cached_lines_has_no_file bash -c "! grep -q '\"file\":\"$TMP/hot.c\"' '$TMP/lines.nolines'"

# no build-id: the profile keeps the file's content hash (h-HEX in the cache), which report
# checks like a build-id, so a rebuild at the same path is not named from the new file (here
# pad, put in front, takes the addresses heavy had). heavy runs inl's loop 3 times as often as
# caller does: which of two different loops is slower depends on the CPU's latencies.
rm -rf "$TMP/cache"
cat > "$TMP/nb.c" <<'C'
static volatile double sink;
#ifdef PAD
__attribute__((noinline)) void pad(long n) { for (long i = 0; i < n; i++) sink += 1; for (long i = 0; i < n; i++) sink *= 1.01; }
#endif
__attribute__((noinline)) void heavy(long n) { double x = 1; for (long i = 0; i < n; i++) x = x * 1.0000002 + 0.25; sink = x; }
__attribute__((noinline)) void light(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.25; sink = x; }
static inline double inl(long n) { double x = 1; for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.5; return x; }
__attribute__((noinline)) void caller(long n) { sink = inl(n); }
int main(void) { long n = 30000000; heavy(n * 3); light(n); caller(n); return 0; }
C
cc -g -O2 -Wl,--build-id=none -o "$TMP/nb" "$TMP/nb.c"
check no_build_id_binary bash -c "! readelf -n '$TMP/nb' | grep -q 'Build ID'"
$SPENT record -o "$TMP/pn" -- "$TMP/nb" >/dev/null 2>&1
check no_build_id_cached_by_hash bash -c "ls '$TMP'/cache/h-*/symtab >/dev/null"
$SPENT report -i "$TMP/pn" --json 2>/dev/null | grep "\"image\":\"$TMP/nb\"" > "$TMP/n0.json"
$SPENT annotate -i "$TMP/pn" heavy >/dev/null 2>"$TMP/an0.err"; rc=$?
check no_build_id_unchanged_annotates bash -c "test $rc = 0 && test ! -s '$TMP/an0.err'"
cc -g -O2 -Wl,--build-id=none -DPAD -o "$TMP/nb" "$TMP/nb.c"
$SPENT report -i "$TMP/pn" --json > "$TMP/n.json" 2>"$TMP/n.err"; rc=$?
check no_build_id_rebuilt_report_exits_0 test "$rc" = 0
grep "\"image\":\"$TMP/nb\"" "$TMP/n.json" > "$TMP/n1.json"
check no_build_id_rebuilt_names_from_cache bash -c "cmp -s '$TMP/n0.json' '$TMP/n1.json' && \
	head -1 '$TMP/n1.json' | grep -q '\"symbol\":\"heavy\"' && grep -q '\"symbol\":\"light\"' '$TMP/n1.json'"
check no_build_id_rebuilt_never_new_names bash -c "! grep -q '\"pad' '$TMP/n.json'"
check no_build_id_rebuilt_no_warning test ! -s "$TMP/n.err"
$SPENT report -i "$TMP/pn" --by line --json 2>/dev/null | grep "\"image\":\"$TMP/nb\"" > "$TMP/nl.json"
check no_build_id_rebuilt_by_line_from_cache bash -c \
	"head -1 '$TMP/nl.json' | grep -q '\"symbol\":\"heavy\".*\"file\":\"$TMP/nb.c\"' && ! grep -q '\"pad' '$TMP/nl.json'"
$SPENT annotate -i "$TMP/pn" heavy >/dev/null 2>"$TMP/an.err"; rc=$?
check no_build_id_rebuilt_annotate_says_changed bash -c \
	"test $rc != 0 && grep -q 'file changed since the profile was taken (content hash differs)' '$TMP/an.err'"
rm -rf "$TMP/cache"
$SPENT report -i "$TMP/pn" --json > "$TMP/n2.json" 2>"$TMP/n2.err"
check no_build_id_without_cache_shows_address bash -c "head -1 '$TMP/n2.json' | grep -q 'nb+0x'"
check no_build_id_without_cache_warning_says_why \
	grep -q "nb: no function names.*content hash differs.*no copy" "$TMP/n2.err"
