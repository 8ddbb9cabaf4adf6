#!/bin/bash
# tests/e2e/db_merge_crash.sh - `spent db DIR merge SRC` killed at any point counts SRC once:
# the process is killed (SIGKILL, by an LD_PRELOAD library built here) right after each rename
# it makes in turn, and the next merge of the same source leaves the database equal to one
# merge without a crash, with no staged copies left. Also: a second merge into a database that
# one already writes is refused, and a foreign entry in DIR/merge-pending stops the merge.
source "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# the crash: right after the SPENT_CRASH_AT-th rename, the process dies as in a power cut
if ! cc -shared -fPIC -O1 -o crash.so "$SPENT_TOP/tests/e2e/crash_rename.c" -ldl 2> cc.err; then
	fail "setup: cannot build the crash library: $(head -2 cc.err)"
	exit 0
fi
# a sanitized spent insists on being first in the link order
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

"$SPENT" record -e cpu-clock -o p1 -- "$PROGS/hotline" 50 > /dev/null 2>&1
"$SPENT" record -e cpu-clock -o p2 -- "$PROGS/hotline" 30 > /dev/null 2>&1
# DST: epochs 0 and 1 with counts (each is exchanged); SRC: epochs 0, 1 and 2 (2 is new in DST)
"$SPENT" db dst merge p1 > /dev/null 2>&1 && cp -a dst/epoch-0000 dst/epoch-0001
"$SPENT" db src merge p2 > /dev/null 2>&1 && cp -a src/epoch-0000 src/epoch-0001 && cp -a src/epoch-0000 src/epoch-0002
if ! [ -d dst/epoch-0001 ] || ! [ -d src/epoch-0002 ]; then
	fail "setup: two databases with epochs ($(ls dst src 2>&1 | tr '\n' ' '))"
	exit 0
fi
cp -a dst ref
"$SPENT" db ref merge src > /dev/null 2>&1
"$SPENT" db ref dump > ref.tsv 2> /dev/null
"$SPENT" db dst dump > before.tsv 2> /dev/null
check "setup: the merge adds counts" test -s ref.tsv -a "$(md5sum < ref.tsv)" != "$(md5sum < before.tsv)"

killed=0 wrong="" left="" k=1
for ((k = 1; k <= 300; k++)); do
	rm -rf d && cp -a dst d
	# waited for in a subshell that says nothing: the script's log gets no "Killed" line
	(LD_PRELOAD=$TMP/crash.so SPENT_CRASH_AT=$k "$SPENT" db d merge src > /dev/null 2>&1 & wait $!) 2> /dev/null
	rc=$?
	[ $rc -eq 0 ] && break	# no rename left to die after
	if [ $rc -ne 137 ]; then
		wrong="$wrong k=$k:exit-$rc"
		continue
	fi
	killed=$((killed + 1))
	"$SPENT" db d merge src > again.out 2>&1 || wrong="$wrong k=$k:retry-failed($(head -c 120 again.out))"
	"$SPENT" db d dump > d.tsv 2> /dev/null
	cmp -s d.tsv ref.tsv || wrong="$wrong k=$k:counts($(diff ref.tsv d.tsv | grep -c '^[<>]') lines)"
	rest=$(cd d && ls -d merge-pending* ./*.tmp.* 2> /dev/null)
	[ -n "$rest" ] && left="$left k=$k:$rest"
done
check "db_merge_killed_after_each_of_its_renames ($killed kills)" test $killed -ge 8
check "db_merge_killed_then_merged_again_counts_the_source_once:${wrong:- ok}" test -z "$wrong"
check "db_merge_killed_leaves_nothing_staged_after_the_next_merge:${left:- ok}" test -z "$left"
check "db_merge_runs_to_its_end_without_the_crash (after $((k - 1)) renames)" test "$k" -le 300

# another merge (or a daemon) writing the database: refused, nothing written
rm -rf d && cp -a dst d
flock -x d sleep 3 &
holder=$!
sleep 0.5
"$SPENT" db d merge src > busy.out 2>&1
rc=$?
wait $holder
"$SPENT" db d dump > d.tsv 2> /dev/null
check "db_merge_refused_while_another_writes (exit $rc: $(head -c 160 busy.out))" \
	test $rc = 1 -a -n "$(grep 'another merge is writing' busy.out)"
check db_merge_refused_while_another_writes_changes_nothing cmp -s d.tsv before.tsv

# a merge-pending that holds something spent did not write is not swept away
rm -rf d && cp -a dst d
mkdir d/merge-pending && echo mine > d/merge-pending/notes
"$SPENT" db d merge src > foreign.out 2>&1
rc=$?
check "db_merge_stops_at_a_foreign_merge_pending (exit $rc: $(head -c 160 foreign.out))" \
	test $rc = 1 -a -n "$(grep 'files spent did not write' foreign.out)"
check db_merge_foreign_merge_pending_kept test "$(cat d/merge-pending/notes 2> /dev/null)" = mine
