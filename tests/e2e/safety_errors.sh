#!/bin/bash
# tests/e2e/safety_errors.sh - "nothing lost, nothing leaked, nothing hangs" on bad input and
# unusual set-ups: paths a profile names that became FIFOs (report/annotate never block), a
# detached daemon that lets go of its caller's stderr with --log, an unprivileged user under
# kernel.perf_event_paranoid=2 (stat/record count user space only, as perf), `spent db` run by
# a user the daemon refuses (a message, not SIGPIPE), corrupt profile files (exit 1 with a
# message in every command), numbers with signs or garbage. (The trace log's own cases are
# in trace_errors.sh, the -I and numbers of stat in stat_cli.sh, JSON in safety_json.sh.)
# test: serial (it sets kernel.perf_event_paranoid, a global sysctl, and puts it back)
source "$(dirname "$0")/lib.sh"
DB=$TMP/ddb
PARANOID=/proc/sys/kernel/perf_event_paranoid
OLD_PARANOID=$(cat "$PARANOID")
# stop_db_daemon: ask the daemon of $DB to stop, wait until it is gone (its socket removed)
stop_db_daemon() {
	"$SPENT" db "$DB" stop > /dev/null 2>&1 || return 0
	for _ in $(seq 1 100); do
		[ -e "$DB/control" ] || return 0
		sleep 0.1
	done
}
cleanup() {
	stop_db_daemon
	[ "$(cat "$PARANOID")" = "$OLD_PARANOID" ] || echo "$OLD_PARANOID" > "$PARANOID"
	rm -rf "$TMP"
}
trap cleanup EXIT

# everything the unprivileged user runs or writes lives in a directory it may enter
chmod 755 "$TMP"
PUB=$TMP/pub
mkdir -m 777 "$PUB"
cp "$SPENT" "$PUB/spent" && cp "$PROGS/demo" "$PUB/demo" && chmod 755 "$PUB/spent" "$PUB/demo"
AS_USER=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# ---- a profile naming FIFOs: report and annotate must not block ----------------------------
F=$TMP/fifo
mkdir "$F"
cat > "$F/hot.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void hot(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
}
int main(void) { hot(); return 0; }
EOF
gcc -g -O1 -o "$F/prog" "$F/hot.c"
"$SPENT" record -o "$F/prof" -- "$F/prog" > /dev/null 2>&1
check "FIFO set-up: the profile was recorded" test -f "$F/prof/meta"
cp -r "$F/prof" "$F/prof-k"
cp -r "$F/prof" "$F/prof-p"
cp -r "$F/prof" "$F/prof-m"

rm "$F/hot.c" && mkfifo "$F/hot.c"
timeout 20 "$SPENT" annotate -i "$F/prof" hot > "$F/ann.out" 2> "$F/ann.err"
rc=$?
check "source file now a FIFO: annotate does not hang (rc $rc)" test $rc -ne 124
check "source file now a FIFO: annotate still shows the function" grep -q '^# hot in ' "$F/ann.out"

rm "$F/prog" && mkfifo "$F/prog"
for by in function line instruction; do
	timeout 20 "$SPENT" report -i "$F/prof" --by $by > "$F/rep.out" 2> "$F/rep.err"
	rc=$?
	check "image now a FIFO: report --by $by does not hang and exits 0 (rc $rc)" test $rc -eq 0
done
# named from the build-id cache record filled (the file's own symbols are out of reach)
check "image now a FIFO: report still places the samples in the image" grep -qE '^ +[0-9]+ .* prog +hot @0x' "$F/rep.out"
SPENT_BUILDID_DIR=off timeout 20 "$SPENT" report -i "$F/prof" > "$F/rep2.out" 2> "$F/rep2.err"
check "image now a FIFO, no build-id cache: report shows the image's offsets" grep -q 'prog+0x' "$F/rep2.out"
check "image now a FIFO, no build-id cache: report warns why" grep -q "prog: no function names.*not a regular file" "$F/rep2.err"
timeout 20 "$SPENT" annotate -i "$F/prof" hot > /dev/null 2> "$F/ann2.err"
rc=$?
check "image now a FIFO: annotate does not hang, exits 1 (rc $rc)" test $rc -eq 1
check "image now a FIFO: annotate says the image is not a regular file" grep -q "not a regular file" "$F/ann2.err"

rm "$F/prof-k/kallsyms.zst" && mkfifo "$F/prof-k/kallsyms.zst"
timeout 20 "$SPENT" report -i "$F/prof-k" > /dev/null 2>&1
rc=$?
check "saved kallsyms now a FIFO: report does not hang (rc $rc)" test $rc -ne 124
mkfifo "$F/prof-p/epoch-0000/fifo@cpu-clock-99991.prof"
timeout 20 "$SPENT" report -i "$F/prof-p" > /dev/null 2> "$F/p.err"
rc=$?
check "a profile file that is a FIFO: report does not hang, exits 1 (rc $rc)" test $rc -eq 1
check "a profile file that is a FIFO: named as skipped" grep -q "skipping corrupt profile file '.*fifo@cpu-clock-99991.prof'" "$F/p.err"
timeout 20 "$SPENT" db "$F/prof-p" dump > /dev/null 2>&1
rc=$?
check "a profile file that is a FIFO: db dump does not hang, exits 1 (rc $rc)" test $rc -eq 1
# an epoch entry that is no directory (a dangling link, a file): skipped and named, the other
# epochs reported (the whole report failed with "No such file or directory", naming nothing)
cp -a "$F/prof-p" "$F/prof-e" && rm -f "$F/prof-e/epoch-0000/fifo@cpu-clock-99991.prof"
ln -s /nonexistent "$F/prof-e/epoch-0007" && echo x > "$F/prof-e/epoch-0008"
"$SPENT" report -i "$F/prof-e" > "$F/e.out" 2> "$F/e.err"
rc=$?
check "epochs that are no directory: the rest is reported, exit 1 (rc $rc)" test $rc -eq 1 -a -s "$F/e.out"
check "epochs that are no directory: each named as skipped" \
	test "$(grep -c "skipping corrupt profile file '.*epoch-000[78]'" "$F/e.err")" -eq 2
rm "$F/prof-m/meta" && mkfifo "$F/prof-m/meta"
timeout 20 "$SPENT" report -i "$F/prof-m" > /dev/null 2> "$F/m.err"
rc=$?
check "meta now a FIFO: report does not hang, exits 1 (rc $rc)" test $rc -eq 1
check "meta now a FIFO: not a spent profile directory" grep -q "not a spent profile directory" "$F/m.err"

# ---- corrupt profile files: exit 1 with a message everywhere --------------------------------
"$SPENT" record -o "$TMP/good" -- "$PROGS/demo" 0.2 > /dev/null 2>&1
cp -r "$TMP/good" "$TMP/bad"
# its one profile file: the samples file carries demo's counts too
f=$(ls "$TMP"/bad/epoch-0000/samples@*.prof | head -1)
printf 'X' | dd of="$f" bs=1 seek=20 conv=notrunc 2> /dev/null
corrupt_case() { # NAME CMD...: exit 1 and one warning naming the corrupt file
	local name=$1; shift
	"$@" > /dev/null 2> "$TMP/c.err"
	local rc=$?
	if [ $rc -eq 1 ] && grep -q "skipping corrupt profile file '.*samples@.*\.prof'" "$TMP/c.err"; then
		pass "corrupt input: $name exits 1 naming the file"
	else
		fail "corrupt input: $name exits 1 naming the file: rc $rc, '$(head -c 300 "$TMP/c.err")'"
	fi
}
corrupt_case "report" "$SPENT" report -i "$TMP/bad"
corrupt_case "report --diff (this side corrupt)" "$SPENT" report -i "$TMP/bad" --diff "$TMP/good"
corrupt_case "report --diff (other side corrupt)" "$SPENT" report -i "$TMP/good" --diff "$TMP/bad"
corrupt_case "report --json" "$SPENT" report -i "$TMP/bad" --json
corrupt_case "report --folded" "$SPENT" report -i "$TMP/bad" --folded
corrupt_case "annotate" "$SPENT" annotate -i "$TMP/bad" main
corrupt_case "db dump" "$SPENT" db "$TMP/bad" dump
corrupt_case "db dump --json" "$SPENT" db "$TMP/bad" dump --json
mkdir -m 750 "$TMP/merged"
corrupt_case "db merge" "$SPENT" db "$TMP/merged" merge "$TMP/bad"
"$SPENT" report -i "$TMP/good" --diff "$TMP/good" > /dev/null 2>&1
check "report --diff of two good profiles exits 0" test $? -eq 0

# ---- numbers: signs, blanks, garbage and overflow never reach the kernel --------------------
for bad in ' -1' '-1' '1x' '99999999999999999999' '9223372036854775808'; do
	"$SPENT" record -c "$bad" -o "$TMP/n" -- true > /dev/null 2> "$TMP/n.err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q "bad period '$bad'" "$TMP/n.err"; then
		pass "record -c '$bad' is refused as a bad number"
	else
		fail "record -c '$bad' is refused as a bad number: rc $rc, '$(cat "$TMP/n.err")'"
	fi
	"$SPENT" daemon --db "$TMP/never" -c "$bad" > /dev/null 2> "$TMP/n.err"
	rc=$?
	check "daemon -c '$bad' is refused with exit 2" test $rc -eq 2
	check "daemon -c '$bad': the message names the bad period" grep -q "bad period '$bad' for -c" "$TMP/n.err"
done
"$SPENT" report -i "$TMP/good" --limit ' 3' > /dev/null 2>&1
check "report --limit ' 3' is refused with exit 2" test $? -eq 2
"$SPENT" report -i "$TMP/good" --json --csv > /dev/null 2> "$TMP/jc.err"
rc=$?
check "report --json --csv is refused with exit 2" test $rc -eq 2
check "report --json --csv: the message says choose one" grep -q -- "--json and --csv cannot be combined" "$TMP/jc.err"

# ---- a detached daemon with --log lets go of the caller's stderr ----------------------------
# out=$(spent daemon --log F 2>&1) waited for the daemon to stop: the daemon kept stderr open
( out=$("$SPENT" daemon --db "$DB" --log "$TMP/daemon.log" 2>&1); echo "$out" > "$TMP/daemon.out" ) &
sub=$!
for _ in $(seq 1 200); do
	kill -0 $sub 2>/dev/null || break
	sleep 0.1
done
if kill -0 $sub 2>/dev/null; then
	fail "daemon --log: \$(spent daemon ...) returns once the daemon is up (still waiting after 20 s)"
	stop_db_daemon
else
	pass "daemon --log: \$(spent daemon ...) returns once the daemon is up"
fi
wait $sub
check "daemon --log: the daemon is running" "$SPENT" db "$DB" flush
check "daemon --log: its log file has its start line" grep -q "spent daemon: .*sampling" "$TMP/daemon.log"

# ---- spent db by a user the daemon refuses: a message, never SIGPIPE -------------------------
# an administrator opened the database up: the daemon itself still refuses anyone but root
chmod 755 "$DB" && chmod 666 "$DB/control"
for act in flush epoch stop; do
	"${AS_USER[@]}" "$PUB/spent" db "$DB" $act > /dev/null 2> "$TMP/u.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "permission denied" "$TMP/u.err"; then
		pass "db $act as a non-root user: exit 1 with 'permission denied' (not SIGPIPE)"
	else
		fail "db $act as a non-root user: exit 1 with 'permission denied' (not SIGPIPE): rc $rc, '$(cat "$TMP/u.err")'"
	fi
done
check "db stop refused for the non-root user: the daemon still runs" "$SPENT" db "$DB" flush
chmod 755 "$DB"	# root's db flush put the mode back to 0750
for cmd in "db $DB status" "db $DB dump" "report -i $DB"; do
	# shellcheck disable=SC2086
	"${AS_USER[@]}" "$PUB/spent" $cmd > /dev/null 2> "$TMP/u.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qi "permission denied" "$TMP/u.err" && ! grep -q "no meta file\|not owned by root\|no valid 'meta'" "$TMP/u.err"; then
		pass "spent ${cmd%% *} ${cmd##* } as a non-root user says permission denied"
	else
		fail "spent $cmd as a non-root user says permission denied: rc $rc, '$(cat "$TMP/u.err")'"
	fi
done
stop_db_daemon

# ---- a database whose meta file is there but not valid: said so, in report's words (db said
# "no meta file" of a file that exists) ----
mkdir -m 750 "$TMP/badmeta" && echo junk > "$TMP/badmeta/meta"
"$SPENT" db "$TMP/badmeta" list > /dev/null 2> "$TMP/bm.err"
rc=$?
check "db list of a junk meta: no valid 'meta' file (exit $rc: $(cat "$TMP/bm.err"))" \
	bash -c "[ $rc = 1 ] && grep -q \"(no valid 'meta' file)\" '$TMP/bm.err' && ! grep -q 'no meta file' '$TMP/bm.err'"

# ---- kernel.perf_event_paranoid=2: an unprivileged user counts user space only --------------
if [ "$OLD_PARANOID" != 2 ] && ! echo 2 > "$PARANOID" 2>/dev/null; then
	fail "paranoid: cannot set $PARANOID to 2 for the test (it is $OLD_PARANOID)"
else
	"${AS_USER[@]}" "$PUB/spent" stat -e task-clock,page-faults -- "$PUB/demo" 0.1 > /dev/null 2> "$TMP/p.err"
	rc=$?
	check "paranoid 2: unprivileged stat exits 0 (rc $rc)" test $rc -eq 0
	check "paranoid 2: unprivileged stat counts task-clock:u" grep -qE '[0-9.]+ msec task-clock:u' "$TMP/p.err"
	check "paranoid 2: unprivileged stat counts page-faults:u" grep -qE '[0-9]+ +page-faults:u' "$TMP/p.err"
	check "paranoid 2: one line says user space only" test "$(grep -c 'perf_event_paranoid is 2: .*user space only' "$TMP/p.err")" -eq 1
	"${AS_USER[@]}" "$PUB/spent" record -o "$PUB/prof" -- "$PUB/demo" 0.3 > /dev/null 2> "$TMP/r.err"
	rc=$?
	check "paranoid 2: unprivileged record exits 0 (rc $rc)" test $rc -eq 0
	check "paranoid 2: unprivileged record says user space only" grep -q 'perf_event_paranoid is 2: .*user space only' "$TMP/r.err"
	share=$("$SPENT" report -i "$PUB/prof" --json 2>/dev/null | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
tot = sum(r["samples"] for r in rows)
print(round(100.0 * sum(r["samples"] for r in rows if r["symbol"] == "heavy") / tot) if tot else 0)')
	check "paranoid 2: the user-space profile has demo's heavy at ~60% ($share%)" test "${share:-0}" -ge 45 -a "${share:-0}" -le 75
	check "paranoid 2: no kernel samples in a user-space profile" test -z "$("$SPENT" report -i "$PUB/prof" --by image 2>/dev/null | grep 'kernel.kallsyms')"
	"${AS_USER[@]}" "$PUB/spent" stat -e task-clock:k -- true > /dev/null 2> "$TMP/k.err"
	check "paranoid 2: an explicit :k stays refused (exit 2)" test $? -eq 2
fi
