#!/bin/bash
# tests/e2e/daemon_buildid.sh - the daemon fills the build-id cache as `spent record` does: a
# program sampled by the daemon, then rebuilt with another layout, still has its function
# names in `spent report -i DB`; without the cache's copy the report shows addresses; the
# daemon's status counts the entries it saved and their bytes.
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

cat > "$TMP/hot.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef PAD
unsigned long pad_function(unsigned long n) { return n * 7 + pad_function(n / 2); }
#endif
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
unsigned long __attribute__((noinline)) daemon_cached_hot(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
int main(int argc, char **argv)
{
	double end = now() + atof(argv[1]);
	unsigned long x = 0;
	while (now() < end)	/* sized by time, not by a count tuned to one CPU */
		x += daemon_cached_hot(1000000);
	printf("%lu\n", x);
	return 0;
}
C
cc -O1 -o "$TMP/hot" "$TMP/hot.c"
id=$(readelf -n "$TMP/hot" | sed -n 's/.*Build ID: *//p')
DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_buildid_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi
"$TMP/hot" 1 > /dev/null
"$SPENT" db "$DB" flush > /dev/null
# the daemon saves one image's symbols per tick after the merge that wrote its counts: every
# image of the machine that was sampled is queued, so allow it time
t0=$(date +%s.%N)
for _ in $(seq 1 600); do
	[ -s "$SPENT_BUILDID_DIR/b-$id/symtab" ] && break
	sleep 0.1
done
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check "daemon_buildid_fills_the_cache (b-$id, ${secs} s after the flush)" test -s "$SPENT_BUILDID_DIR/b-$id/symtab"
check daemon_buildid_stops_on_sigterm stop_daemon
# the status it wrote last counts what is in the cache: every entry it saved, their bytes
st=$("$SPENT" db "$DB" status --json)
n_saved=$(jfield "$st" buildid_saved); n_bytes=$(jfield "$st" buildid_bytes)
c_saved=$(ls "$SPENT_BUILDID_DIR"/*/symtab 2>/dev/null | wc -l)
c_bytes=$(cat "$SPENT_BUILDID_DIR"/*/symtab "$SPENT_BUILDID_DIR"/*/lines 2>/dev/null | wc -c)
check "daemon_buildid_status_counts_the_cache (status: $n_saved saved, $n_bytes bytes, $(jfield "$st" buildid_errors) errors; cache: $c_saved, $c_bytes)" \
	test "${n_saved:-0}" -ge 1 -a "$n_saved" = "$c_saved" -a "$n_bytes" = "$c_bytes"
check daemon_buildid_status_text_shows_it bash -c "'$SPENT' db '$DB' status | grep -q '^  buildid_saved  *$n_saved\$'"

cc -O1 -DPAD -o "$TMP/hot" "$TMP/hot.c"
id2=$(readelf -n "$TMP/hot" | sed -n 's/.*Build ID: *//p')
check daemon_buildid_rebuilt_binary_has_another_build_id test -n "$id2" -a "$id" != "$id2"

# the top function of the program's image: its name, or its address when names are missing
top_of_hot() {
	python3 - "$1" "$TMP/hot" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
img = [r for r in rows if r.get("image") == sys.argv[2]]
img.sort(key=lambda r: -r["samples"])
print(img[0].get("symbol", "") if img else "none")
PY
}
"$SPENT" report -i "$DB" --by function --json > "$TMP/r.json" 2> "$TMP/r.err"
got=$(top_of_hot "$TMP/r.json")
check "daemon_buildid_report_after_rebuild_names_from_cache ($got)" test "$got" = daemon_cached_hot
check daemon_buildid_report_no_warning_for_the_program bash -c "! grep -q '$TMP/hot' '$TMP/r.err'"

rm -rf "$SPENT_BUILDID_DIR"
"$SPENT" report -i "$DB" --by function --json > "$TMP/r2.json" 2> "$TMP/r2.err"
got=$(top_of_hot "$TMP/r2.json")
check "daemon_buildid_without_cache_shows_address ($got)" bash -c "[[ '$got' == hot+0x* ]]"
check daemon_buildid_without_cache_warns grep -q "hot: no function names.*no copy" "$TMP/r2.err"
