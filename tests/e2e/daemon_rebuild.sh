#!/bin/bash
# tests/e2e/daemon_rebuild.sh - a program rebuilt in place while the daemon runs: copied over
# the same inode (cp keeps it), then replaced by a new file at the same path. Each run's
# samples are filed under the build-id of the file that ran, and `spent report -i DB` names
# the function that ran in each epoch, never one of another build (the daemon used to key an
# image by path, device and inode only, so a later build's samples were named by the first).
# test: serial (the daemon samples the whole machine, and its checks wait by the clock)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT

cat > "$TMP/v.c" <<'C'
#include <stdlib.h>
#include <time.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
volatile unsigned long sink;
__attribute__((noinline)) void FN(double secs)
{
	double end = now() + secs;
	unsigned long x = 0;
	while (now() < end)	/* sized by time, not by a count tuned to one CPU */
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i * i + OP;
	sink = x;
}
int main(int argc, char **argv)
{
	FN(atof(argv[1]));
	return 0;
}
C
# three builds, each with its own function (and so its own build-id and layout)
cc -O2 -DFN=rebuild_alpha -DOP=1 -o "$TMP/v1" "$TMP/v.c"
cc -O2 -DFN=rebuild_beta -DOP=3 -DPAD -o "$TMP/v2" "$TMP/v.c"
cc -O2 -DFN=rebuild_gamma -DOP=5 -o "$TMP/v3" "$TMP/v.c"
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: *//p'; }

DB=$TMP/db
if ! start_daemon "$DB" "$TMP/d.log" -F 1000; then
	fail "daemon_rebuild_starts: $(tail -3 "$TMP/d.log")"
	exit 0
fi
APP=$TMP/app
# run_epoch BUILD: install it as $APP, run it, end the epoch, and wait until the daemon saved
# its symbols to the build-id cache (before the next build replaces the file)
run_epoch() {
	local id
	id=$(build_id "$1")
	"$APP" 0.8
	"$SPENT" db "$DB" epoch > /dev/null
	for _ in $(seq 1 300); do
		[ -s "$SPENT_BUILDID_DIR/b-$id/symtab" ] && break
		sleep 0.1
	done
	check "daemon_rebuild_cached_$(basename "$1")" test -s "$SPENT_BUILDID_DIR/b-$id/symtab"
}
cp "$TMP/v1" "$APP"
ino1=$(stat -c %i "$APP")
run_epoch "$TMP/v1"
cp "$TMP/v2" "$APP"	# over the same inode
check "daemon_rebuild_cp_keeps_the_inode" test "$(stat -c %i "$APP")" = "$ino1"
run_epoch "$TMP/v2"
rm "$APP"
cp "$TMP/v3" "$APP"	# a new file at the path (its inode may be the old one again)
run_epoch "$TMP/v3"
check daemon_rebuild_stops_on_sigterm stop_daemon

# epoch E's samples in $APP by function, "name samples" per line, most first
funcs_of_epoch() {
	"$SPENT" report -i "$DB" --epoch "$1" --by function --json 2> "$TMP/r$1.err" |
		python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
for r in sorted((r for r in rows if r.get("image") == sys.argv[1]), key=lambda r: -r["samples"]):
    print(r.get("symbol", "?"), r["samples"])' "$APP"
}
e=0
for fn in rebuild_alpha rebuild_beta rebuild_gamma; do
	funcs_of_epoch $e > "$TMP/f$e.txt"
	top=$(awk 'NR == 1 { print $1 }' "$TMP/f$e.txt")
	others=$(grep -v "^$fn " "$TMP/f$e.txt" | grep '^rebuild_' | tr '\n' ' ')
	check "daemon_rebuild_epoch${e}_names_$fn (top: ${top:-none}; other builds: ${others:-none})" \
		test "$top" = "$fn" -a -z "$others"
	e=$((e + 1))
done
# the counts of each epoch are filed under the build-id of the file that ran then
for e in 0 1 2; do
	v=$((e + 1))
	id=$(build_id "$TMP/v$v")
	check "daemon_rebuild_epoch${e}_filed_under_build_v$v" \
		bash -c "ls '$DB'/epoch-000$e/ | grep -q '^app-${id:0:16}'"
done
