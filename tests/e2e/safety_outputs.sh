#!/bin/bash
# tests/e2e/safety_outputs.sh - nothing lost, nothing leaked, nothing hangs (docs/outputs.md):
# every output follows one policy (bad paths refused before the run, symlinks never followed,
# regular files replaced atomically, only spent's own directories replaced), a failed write
# exits non-zero and leaves the old output, user outputs are 0600/0700 whatever the umask,
# `db gc` / `db merge` never destroy or double data, SIGINT/SIGTERM stop `spent trace` within
# seconds with an incomplete-marked log and no temporary, killed runs' temporaries are removed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
trap 'stop_daemon; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

# refused NAME CMD...: non-zero exit with one "cannot write" line on stderr
refused() {
	local name=$1; shift
	"$@" >"$TMP/r.out" 2>"$TMP/r.err"
	local rc=$?
	if [ $rc -ne 0 ] && grep -q "cannot write" "$TMP/r.err"; then
		pass "$name"
	else
		fail "$name: exit $rc, stderr '$(head -3 "$TMP/r.err" | tr '\n' '|')'"
	fi
}
no_temps() {
	local t; t=$(find "${1:-$TMP}" -name '*.tmp.*' 2>/dev/null)
	[ -z "$t" ] || echo "temporaries left: $t"
	[ -z "$t" ]
}
mode_of() { stat -c %a "$1"; }
# a pid that no longer runs
dead_pid() { sh -c 'echo $$'; }

# ---- data sources the checks below need ----
"$SPENT" record -e cpu-clock -o prof -- "$PROGS/hotline" 50 >/dev/null 2>&1
"$SPENT" trace -o small.log -- "$PROGS/trace_small" 0 >/dev/null 2>&1
check "setup: a profile and a trace log" test -f prof/meta -a -f small.log
"$SPENT" citcat record -o rec -- /bin/echo hi >/dev/null 2>&1

# ---- record --force never deletes a directory spent did not write ----
mkdir -p d/sub && echo x > d/sub/f
refused record_refuses_a_non_profile_directory "$SPENT" record --force -e cpu-clock -o d -- /bin/true
check record_non_profile_directory_untouched test "$(cat d/sub/f 2>/dev/null)" = x
cp -r prof withextra && echo notes > withextra/notes.txt
refused record_refuses_a_profile_holding_other_files "$SPENT" record -e cpu-clock -o withextra -- /bin/true
check record_other_files_in_profile_untouched test -f withextra/notes.txt -a -f withextra/meta
# its own kind of directory is replaced (atomically exchanged, the old one removed)
cp -r prof again
"$SPENT" record -e cpu-clock -o again -- "$PROGS/split603010" 50 >/dev/null 2>&1
check "record_replaces_its_own_profile_directory (exit $?)" \
	bash -c "'$SPENT' report -i again --json | grep -q func_sixty && ! '$SPENT' report -i again --json | grep -q hot_function"
check record_replace_leaves_no_temporaries no_temps

# ---- outputs are checked before the program runs ----
refused record_missing_directory_refused_before_the_run \
	"$SPENT" record -e cpu-clock -o /nonexistent/x -- sh -c "touch '$TMP/ran-record'"
check record_missing_directory_program_not_run test ! -e ran-record
refused trace_missing_directory_refused_before_the_run \
	"$SPENT" trace -o /nonexistent/x.log -- sh -c "touch '$TMP/ran-trace'"
check trace_missing_directory_program_not_run test ! -e ran-trace
refused shim_missing_directory_refused_before_the_run \
	"$SPENT" shim --tag phase=phase -o /nonexistent/x.shim -- sh -c "touch '$TMP/ran-shim'"
check shim_missing_directory_program_not_run test ! -e ran-shim
for c in "cachesim small.log --svg" "hitcurve small.log --svg" "locks small.log --svg" "memmap small.log --png"; do
	# shellcheck disable=SC2086
	refused "${c%% *}_missing_directory_refused_before_reading" "$SPENT" $c /nonexistent/x.svg
	check "${c%% *}_missing_directory_no_results_printed" test ! -s "$TMP/r.out"
done

# ---- symlinks at an output path are refused, their targets untouched ----
echo keep > target
while IFS='|' read -r name c; do
	rm -f L && ln -s target L
	# shellcheck disable=SC2086
	refused "${name}_symlink_output_refused" "$SPENT" $c
	if [ "$(cat target)" = keep ] && [ -L L ]; then
		pass "${name}_symlink_target_untouched"
	else
		fail "${name}_symlink_target_untouched: target '$(head -c 40 target)', L $(stat -c %F L)"
		echo keep > target
	fi
done <<EOF
stat|stat -o L -- /bin/true
trace|trace -o L -- /bin/true
record|record -e cpu-clock -o L -- /bin/true
shim|shim --tag phase=phase -o L -- $PROGS/shim_phases 0.05
report_pprof|report -i prof --pprof L
report_flamegraph|report -i prof --flamegraph L
citcat_replay_stdout|citcat replay rec --stdout L
cachesim|cachesim small.log --svg L
hitcurve|hitcurve small.log --svg L
locks|locks small.log --svg L
memmap|memmap small.log --png L
EOF
refused stat_directory_output_refused "$SPENT" stat -o d -- /bin/true

# ---- an existing regular file is replaced, the same rule everywhere ----
echo old > out.pb.gz && echo old > out.svg && echo old > out.log
"$SPENT" report -i prof --pprof out.pb.gz >/dev/null 2>&1
check "report_pprof_replaces_an_existing_file (gzip magic)" test "$(head -c 2 out.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b
"$SPENT" report -i prof --flamegraph out.svg >/dev/null 2>&1
check report_flamegraph_replaces_an_existing_file grep -q "<svg" out.svg
"$SPENT" trace -o out.log -- /bin/true >/dev/null 2>&1
check trace_replaces_an_existing_log "$SPENT" trace stats out.log

# ---- a failed write exits non-zero and leaves the old output ----
echo keep > ex
"$SPENT" stat -o ex -- /nonexistent/prog >/dev/null 2>&1
check "stat_missing_command_leaves_existing_output (exit $?)" test "$(cat ex)" = keep
"$SPENT" stat -o /dev/full -- /bin/true >/dev/null 2>"$TMP/full.err"
rc=$?
check "stat_dev_full_fails (exit $rc: $(cat full.err))" test $rc -ne 0
"$SPENT" stat -o /dev/null -- /bin/true >/dev/null 2>&1
check "stat_dev_null_is_written_in_place (exit $?)" test -c /dev/null
# a file size limit of 0 makes every write to a regular file fail (EFBIG), as a full disk would
full() { (trap '' XFSZ; ulimit -f 0; "$SPENT" "$@") >/dev/null 2>&1; }
full stat -o ex -- /bin/true
check "stat_write_error_fails (exit $?)" test $? -ne 0
check stat_write_error_keeps_old_output test "$(cat ex)" = keep
echo keep > rp.out
full citcat replay rec --stdout rp.out
check "citcat_replay_write_error_fails (exit $?)" test $? -ne 0
check citcat_replay_write_error_keeps_old_output test "$(cat rp.out)" = keep
full report -i prof --pprof ex
check "report_pprof_write_error_fails (exit $?)" test $? -ne 0
check report_write_error_keeps_old_output test "$(cat ex)" = keep
full record -e cpu-clock -o fullprof -- /bin/true
check "record_write_error_fails (exit $?)" test $? -ne 0
check record_write_error_leaves_nothing test ! -e fullprof
check write_errors_leave_no_temporaries no_temps

# ---- an output that is the input (or inside it) is refused, the input untouched ----
cp small.log victim.log
sum=$(md5sum < victim.log)
for args in "cachesim victim.log --svg victim.log" "hitcurve victim.log --svg ./victim.log" \
	    "memmap victim.log --png victim.log" "locks victim.log --svg victim.log" \
	    "citcat replay rec --stdout rec/recording" "citcat replay rec --stdout rec/new.txt"; do
	"$SPENT" $args > /dev/null 2> "$TMP/same.err"
	rc=$?
	check "output_is_input_refused: spent $args (exit $rc: $(head -c 120 "$TMP/same.err"))" \
		bash -c "[ $rc != 0 ] && grep -q 'it is the input' '$TMP/same.err'"
done
check output_is_input_log_untouched test "$(md5sum < victim.log)" = "$sum"
check output_is_input_recording_untouched "$SPENT" citcat replay rec
# report's exports into the profile read (its meta, a samples file, a new file inside it)
psum=$(cat prof/meta | md5sum)
for args in "--flamegraph prof/meta" "--html prof/page.html" "--pprof prof/x.pb.gz"; do
	"$SPENT" report -i prof $args > /dev/null 2> "$TMP/same.err"
	rc=$?
	check "output_is_input_refused: spent report -i prof $args (exit $rc)" \
		bash -c "[ $rc = 2 ] && grep -q 'it is the input' '$TMP/same.err'"
done
check output_is_input_profile_untouched test "$(cat prof/meta | md5sum)" = "$psum" -a ! -e prof/page.html
# the page replaced the plot it embeds; two exports named alike, the first was lost
echo '<svg xmlns="http://www.w3.org/2000/svg"/>' > plot.svg
psum=$(md5sum < plot.svg)
"$SPENT" report -i prof --html plot.svg --html-plot plot.svg > /dev/null 2> "$TMP/same.err"
rc=$?
check "output_is_input_refused: --html of its own --html-plot (exit $rc)" \
	bash -c "[ $rc = 2 ] && grep -q 'it is the input' '$TMP/same.err'"
check output_is_input_plot_untouched test "$(md5sum < plot.svg)" = "$psum"
for args in "--pprof two.out --flamegraph two.out" "--pprof ./two.out --html $TMP/two.out"; do
	"$SPENT" report -i prof $args > /dev/null 2> "$TMP/two.err"
	rc=$?
	check "two_outputs_one_file_refused: spent report -i prof $args (exit $rc)" \
		bash -c "[ $rc = 2 ] && grep -q 'name the same file' '$TMP/two.err' && [ ! -e two.out ]"
done
"$SPENT" report -i prof --pprof /dev/null --flamegraph /dev/null > /dev/null 2>&1
check "two_outputs_to_a_device_are_fine: --pprof /dev/null --flamegraph /dev/null (exit $?)" test $? = 0

# ---- stdout that cannot be written: one line and a non-zero exit, for every command ----
# (only report --folded checked its writes: the tables, annotate, trace stats, the studies'
# tables and --version exited 0 on a full disk or a closed stdout)
fn=$("$SPENT" report -i prof 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $NF != "" { print $NF; exit }')
stdout_failed() { [ "$1" -ne 0 ] && [ "$(wc -l < "$TMP/so.err")" = 1 ] && grep -q "^spent: cannot write to stdout" "$TMP/so.err"; }
for args in "report -i prof" "report -i prof --by line --json" "annotate -i prof $fn" \
	    "trace stats small.log" "cachesim small.log" "locks small.log" "--version"; do
	"$SPENT" $args > /dev/full 2> "$TMP/so.err"
	rc=$?
	check "stdout_full_fails: spent $args (exit $rc: $(head -c 160 "$TMP/so.err"))" stdout_failed $rc
done
# the exports to stdout say so once, with the write's own reason (they said "cannot write pprof
# file '-': Input/output error", or the folded stacks, and then "cannot write to stdout" again)
for args in "--pprof -" "--flamegraph -" "--folded"; do
	"$SPENT" report -i prof $args > /dev/full 2> "$TMP/so.err"
	rc=$?
	check "stdout_full_fails_once_with_the_reason: spent report $args (exit $rc: $(tr '\n' '|' < "$TMP/so.err" | head -c 200))" \
		bash -c "[ $rc = 1 ] && [ \"\$(cat '$TMP/so.err')\" = 'spent: cannot write to stdout: No space left on device' ]"
done
"$SPENT" report -i prof >&- 2> "$TMP/so.err"
rc=$?
check "stdout_closed_fails: report (exit $rc: $(head -c 160 "$TMP/so.err"))" stdout_failed $rc
"$SPENT" report -i prof | head -1 > /dev/null
check "stdout_reader_gone_is_not_an_error: report | head -1 (${PIPESTATUS[0]})" [ "${PIPESTATUS[0]}" = 0 ]

# ---- user outputs are 0600 / 0700 whatever the umask ----
(
	umask 0
	# the kernel's symbols are saved only when a sample fell in the kernel: hotline alone
	# left 2-5 of its ~290 there, none in about 1 run of 30 (CI at 73af491); reading
	# /dev/zero gives ~50
	"$SPENT" record -e cpu-clock -o mprof -- sh -c "'$PROGS/hotline' 20; head -c 100000000 /dev/zero > /dev/null"
	"$SPENT" trace -o m.log -- /bin/true
	"$SPENT" stat -o m.stat -- /bin/true
	"$SPENT" shim --tag phase=phase -o m.shim -- "$PROGS/shim_phases" 0.05
	"$SPENT" report -i mprof --pprof m.pb.gz
	"$SPENT" memmap small.log --png m.png
) >/dev/null 2>&1
check "profile_directory_is_0700 ($(mode_of mprof))" test "$(mode_of mprof)" = 700
bad=$(find mprof -mindepth 1 \( -type d ! -perm 700 -o -type f ! -perm 600 \) | head -3)
check "profile_contents_are_0700_0600 (kallsyms.zst $(mode_of mprof/kallsyms.zst)) $bad" test -z "$bad" -a -f mprof/kallsyms.zst
for f in m.log m.stat m.shim m.pb.gz m.png; do
	check "${f}_is_0600 ($(mode_of $f 2>/dev/null))" test "$(mode_of $f 2>/dev/null)" = 600
done

# ---- db gc never follows a symlinked epoch; db merge never doubles ----
"$SPENT" db g merge prof >/dev/null 2>&1
"$SPENT" db g epoch >/dev/null 2>&1
"$SPENT" db g epoch >/dev/null 2>&1
mkdir victim && echo precious > victim/data.prof && echo precious > victim/other
rm -rf g/epoch-0000 && ln -s "$TMP/victim" g/epoch-0000
"$SPENT" db g gc --keep 1 >/dev/null 2>&1
check "db_gc_symlinked_epoch_target_untouched (exit $?)" test -f victim/data.prof -a -f victim/other
check db_gc_symlinked_epoch_link_removed test ! -e g/epoch-0000 -a ! -L g/epoch-0000
# a file named like the newest epoch is no epoch: it was counted as the kept one and the only
# real epoch was removed (the whole profile gone)
"$SPENT" db g epoch >/dev/null 2>&1
newest=$(ls -d g/epoch-* | tail -1)
"$SPENT" db g epoch >/dev/null 2>&1
junk=$(ls -d g/epoch-* | tail -1)
rm -rf "$junk" && echo junk > "$junk"
"$SPENT" db g gc --keep 1 >/dev/null 2>"$TMP/gcjunk.err"
rc=$?
check "db_gc_file_named_like_an_epoch_is_not_kept_for_one (exit $rc)" test $rc = 1 -a -d "$newest" -a -f "$junk"
check db_gc_file_named_like_an_epoch_named_in_the_error grep -q "$(basename "$junk") is not a directory" "$TMP/gcjunk.err"
rm -f "$junk"
"$SPENT" db m merge prof >/dev/null 2>&1
"$SPENT" db m dump > m1.tsv
refused_db() { "$SPENT" db "$@" >/dev/null 2>"$TMP/db.err"; [ $? -ne 0 ]; }
check db_merge_into_itself_refused refused_db m merge m
check db_merge_of_a_copy_of_itself_refused bash -c "cp -a m mcopy && ! '$SPENT' db m merge mcopy >/dev/null 2>&1"
"$SPENT" db m dump > m2.tsv
check db_merge_into_itself_counts_unchanged cmp -s m1.tsv m2.tsv
cp -r prof bad
f=$(ls bad/epoch-0000/samples@*.prof)	# it carries hotline's counts too
printf '\xff\xff\xff\xff' | dd of="$f" bs=1 seek=16 conv=notrunc 2>/dev/null
check db_merge_corrupt_source_fails refused_db n merge bad
check db_merge_corrupt_source_not_marked_merged bash -c "! grep -qs . n/merged-from"
mv "$f" "$TMP/"
"$SPENT" db n merge bad > n.out 2>&1
check "db_merge_corrupt_source_can_be_retried ($(cat n.out))" grep -q "merged 1 database" n.out

# two profiles made in the same second on one host are two sources, not one merged twice
"$SPENT" record -e cpu-clock -o same1 -- /bin/true >/dev/null 2>&1
"$SPENT" record -e cpu-clock -o same2 -- "$PROGS/hotline" 20 >/dev/null 2>&1
sed -i 's/^created .*/created 1700000000/' same1/meta same2/meta
"$SPENT" db o merge same1 same2 > o.out 2>&1
check "db_merge_sources_created_in_one_second_both_merged ($(cat o.out))" grep -q "merged 2 database" o.out

# ---- killed runs' temporaries are removed at the next start, live ones kept ----
dp=$(dead_pid)
: > "again.log.tmp.$dp.AbCd12" && : > "again.log.tmp.$$.AbCd12"
"$SPENT" trace -o again.log -- /bin/true >/dev/null 2>&1
check trace_removes_a_dead_runs_temporary test ! -e "again.log.tmp.$dp.AbCd12"
check trace_keeps_a_live_runs_temporary test -e "again.log.tmp.$$.AbCd12"
mkdir "prof.tmp.$dp.Zz9Zz9" && : > "prof.tmp.$dp.Zz9Zz9/meta"
mkdir "prof.tmp.$dp.Yy8Yy8" && : > "prof.tmp.$dp.Yy8Yy8/mine.txt"
"$SPENT" record -e cpu-clock -o prof -- /bin/true >/dev/null 2>&1
check record_removes_a_dead_runs_temporary_profile test ! -e "prof.tmp.$dp.Zz9Zz9"
check record_keeps_a_temporary_name_holding_other_files test -e "prof.tmp.$dp.Yy8Yy8/mine.txt"
rm -rf "again.log.tmp.$$.AbCd12" "prof.tmp.$dp.Yy8Yy8"

# ---- the daemon: stale *.prof.tmp.* removed at start, detail and span files 0640 ----
DB=$TMP/db
mkdir -p "$DB" && chmod 750 "$DB"
"$SPENT" db "$DB" merge prof >/dev/null 2>&1
: > "$DB/epoch-0000/x.prof.tmp.$dp.AbCd12" && : > "$DB/epoch-0000/y.prof.tmp.$$.AbCd12"
if start_daemon "$DB" "$TMP/d.log" -F 1000 --per-process daemon_split; then
	check daemon_removes_a_dead_writers_temporary test ! -e "$DB/epoch-0000/x.prof.tmp.$dp.AbCd12"
	check daemon_keeps_a_live_writers_temporary test -e "$DB/epoch-0000/y.prof.tmp.$$.AbCd12"
	"$PROGS/daemon_split" 0.3 >/dev/null & sp=$!
	wait $sp
	"$SPENT" db "$DB" flush >/dev/null 2>&1
	stop_daemon
	rm -f "$DB/epoch-0000/y.prof.tmp.$$.AbCd12"
	# the daemon's detail rows and epoch span are database files like the others: 0640
	dfiles=$(ls "$DB"/epoch-0000/samples@*.prof "$DB/epoch-0000/span" 2>/dev/null)
	modes=$(for f in $dfiles; do mode_of "$f"; done | sort -u | tr '\n' ' ')
	check "daemon_detail_and_span_files_are_0640 ($(echo $dfiles | wc -w) files: $modes)" \
		test "$(echo $dfiles | wc -w)" -ge 2 -a "$modes" = "640 "
else
	fail "daemon_starts_on_a_db_with_temporaries: $(tail -3 "$TMP/d.log")"
fi

# ---- SIGINT / SIGTERM stop `spent trace` (started from a script: SIGINT ignored) ----
# interrupt SIG NAME CMD...: start spent trace on CMD, send SIG after 0.6 s (Valgrind has
# started; the log, read back below, stays small); it must end within 5 s (the program may
# ignore the signal: 3 s grace, then killed), exit 128+SIG, leave no temporary, and the log
# (if any) must say complete: false.
interrupt() {
	local sig=$1 name=$2; shift 2
	rm -f int.log
	"$SPENT" trace -o int.log -- "$@" >/dev/null 2>"$TMP/int.err" &
	local pid=$! t0 t1 rc
	sleep 0.6
	kill -"$sig" $pid
	t0=$(date +%s%N)
	for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	t1=$(date +%s%N)
	if kill -0 $pid 2>/dev/null; then
		fail "${name}_stops_within_10s: still running"
		kill -9 $pid
		wait $pid 2>/dev/null
		return
	fi
	wait $pid
	rc=$?
	local ms=$(((t1 - t0) / 1000000)) want=$((128 + $(kill -l "$sig")))
	check "${name}_stops_within_5s (${ms} ms)" test $ms -lt 5000
	check "${name}_exit_status_$want (got $rc)" test $rc -eq $want
	check "${name}_leaves_no_temporary" no_temps
	if [ -e int.log ]; then
		local js; js=$("$SPENT" trace stats --json int.log 2>/dev/null)
		check "${name}_log_marked_incomplete" test "$(jfield "$js" complete)" = False
	else
		pass "${name}_leaves_no_log"
	fi
}
interrupt INT trace_sigint "$PROGS/trace_bench" 1000000000
interrupt TERM trace_sigterm "$PROGS/trace_bench" 1000000000
interrupt TERM trace_sigterm_program_ignoring_it "$PROGS/stop_ignorer"

# a program killed by a signal is not a complete run
"$SPENT" trace -o killed.log -- sh -c 'kill -TERM $$' >/dev/null 2>&1
js=$("$SPENT" trace stats --json killed.log 2>/dev/null)
check "trace_killed_program_log_incomplete ($js)" test "$(jfield "$js" complete)" = False
"$SPENT" trace -o whole.log -- /bin/true >/dev/null 2>&1
js=$("$SPENT" trace stats --json whole.log 2>/dev/null)
check "trace_whole_run_log_complete ($js)" test "$(jfield "$js" complete)" = True
