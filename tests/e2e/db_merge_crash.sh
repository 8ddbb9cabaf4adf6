#!/bin/bash
# tests/e2e/db_merge_crash.sh - `spent db DIR merge SRC` killed at any point counts SRC once:
# the process is killed (SIGKILL, by an LD_PRELOAD library built here) right after each rename
# it makes in turn, and the next merge of the same source leaves the database equal to one
# merge without a crash, with no staged copies left. Also: a second merge into a database that
# one already writes is refused, and a foreign entry in DIR/merge-pending stops the merge;
# a pending merge copied elsewhere is refused, not lost; gc and epoch finish or wait for merges.
source "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# the crash: right after the SPENT_CRASH_AT-th rename, the process dies as in a power cut
if ! cc -shared -fPIC -O1 -o crash.so "$SPENT_TOP/tests/e2e/crash_rename.c" -ldl 2> cc.err; then
	fail "setup: cannot build the crash library: $(head -2 cc.err)"
	exit 0
fi
# until another process (flock(1) in the background) holds DIR's lock, as a merge would
wait_locked() {
	for _ in $(seq 1 100); do flock -n "$1" true || return 0; sleep 0.05; done
}
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
wait_locked d
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

# a merge killed after its commit, then the database copied (cp -a: new inodes): the copy
# cannot tell which staged epochs went in, so it refuses and changes nothing (the source
# was counted zero times and marked merged)
rm -rf d d2 && cp -a dst d
(LD_PRELOAD=$TMP/crash.so SPENT_CRASH_AFTER=/merge-pending "$SPENT" db d merge src > /dev/null 2>&1 & wait $!) 2> /dev/null
cp -a d d2
"$SPENT" db d2 dump > d2.before 2> /dev/null
"$SPENT" db d2 merge src > copied.out 2>&1
rc=$?
"$SPENT" db d2 dump > d2.after 2> /dev/null
check "db_merge_pending_in_a_copied_database_refused (exit $rc: $(head -c 200 copied.out))" \
	test $rc = 1 -a -n "$(grep 'copied mid-merge' copied.out)"
check db_merge_pending_in_a_copied_database_changes_nothing \
	bash -c "cmp -s d2.before d2.after && test -d d2/merge-pending && ! grep -qs . d2/merged-from.new"
"$SPENT" db d merge src > /dev/null 2>&1
"$SPENT" db d dump > d.tsv 2> /dev/null
check "db_merge_pending_finished_where_it_was_made" cmp -s d.tsv ref.tsv

# gc and a new epoch finish a pending merge first (gc removed an epoch the merge then put
# back) and wait for a running merge
rm -rf d && cp -a dst d
(LD_PRELOAD=$TMP/crash.so SPENT_CRASH_AFTER=/merge-pending "$SPENT" db d merge src > /dev/null 2>&1 & wait $!) 2> /dev/null
"$SPENT" db d gc --keep 1 > gc.out 2>&1
check "db_gc_finishes_a_pending_merge_first ($(head -c 120 gc.out); $(ls d | tr '\n' ' '))" \
	bash -c "test ! -e d/merge-pending && test \$(ls -d d/epoch-* | wc -l) = 1 && grep -q . d/merged-from"
rm -rf d && cp -a dst d
flock -x d sleep 4 &
holder=$!
wait_locked d
"$SPENT" db d gc --keep 1 > gcbusy.out 2>&1
rc1=$?
"$SPENT" db d epoch > epbusy.out 2>&1
rc2=$?
"$SPENT" daemon --db "$TMP/d" --foreground > dmbusy.out 2>&1
rc3=$?
wait $holder
check "db_gc_refused_while_a_merge_writes (exit $rc1: $(head -c 120 gcbusy.out))" \
	test $rc1 = 1 -a -n "$(grep 'a merge is writing' gcbusy.out)"
check "db_epoch_refused_while_a_merge_writes (exit $rc2: $(head -c 120 epbusy.out))" \
	test $rc2 = 1 -a -n "$(grep 'a merge is writing' epbusy.out)"
check "daemon_start_names_a_running_merge (exit $rc3: $(head -c 160 dmbusy.out))" \
	test $rc3 = 1 -a -n "$(grep 'a merge is writing' dmbusy.out)"
"$SPENT" db d dump > d.tsv 2> /dev/null
check "db_gc_and_epoch_refused_change_nothing" \
	bash -c "test '$(cd d && ls -d epoch-* | tr '\n' ' ')' = '$(cd dst && ls -d epoch-* | tr '\n' ' ')' && cmp -s d.tsv before.tsv"

# recovery never follows a link in merge-pending, and removes nothing spent did not put there
rm -rf d && cp -a dst d && mkdir -p victim && echo a > victim/a
mkdir d/merge-pending && ln -s "$TMP/victim" d/merge-pending/old-epoch-0000
"$SPENT" db d merge src > link.out 2>&1
rc=$?
check "db_merge_pending_link_refused (exit $rc: $(head -c 120 link.out))" \
	test $rc = 1 -a -n "$(grep 'did not write' link.out)"
check db_merge_pending_link_target_untouched test "$(cat victim/a 2> /dev/null)" = a
rm -rf d && cp -a dst d && mkdir -p d/merge-pending/epoch-0007@1 && echo n > d/merge-pending/epoch-0007@1/notes
"$SPENT" db d merge src > stray.out 2>&1
rc=$?
check "db_merge_pending_stray_staged_epoch_refused (exit $rc: $(head -c 120 stray.out))" \
	test $rc = 1 -a -f d/merge-pending/epoch-0007@1/notes

# committed but not put in place (the exchange fails): said so, exit 1, finished next time
rm -rf d && cp -a dst d
LD_PRELOAD=$TMP/crash.so SPENT_EXCHANGE_EIO=1 "$SPENT" db d merge src > eio.out 2>&1
rc=$?
check "db_merge_committed_not_in_place_says_so (exit $rc: $(head -c 200 eio.out))" \
	test $rc = 1 -a -n "$(grep 'putting it in place failed' eio.out)" -a -d d/merge-pending
"$SPENT" db d merge src > eio2.out 2>&1
"$SPENT" db d dump > d.tsv 2> /dev/null
check "db_merge_committed_then_finished_counts_once ($(head -c 120 eio2.out))" \
	bash -c "grep -q 'skipped 1 merged before' eio2.out && cmp -s d.tsv ref.tsv"
