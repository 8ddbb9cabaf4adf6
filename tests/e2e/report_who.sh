#!/bin/bash
# tests/e2e/report_who.sh - who and when in record profiles: `spent report --sort` by tid
# matches a 3-thread program's measured 1:2:3 CPU split (+-3 points and what the host stole),
# comms from exec and thread renames, the --comm/--pid/--tid/--image filters agree with the
# grouped sums, --time windows add up to the whole, a shell pipeline and real threaded programs
# (xz -T2, sort --parallel=2, python3 threads) show their processes and threads, and profiles
# without detail rows are refused with one line.
# test: serial (its threads' CPU split is measured by the clock)
source "$(dirname "$0")/lib.sh"

# csv_sum FILE COLUMN: the sum of a CSV column (header skipped)
csv_sum() { awk -F, -v c="$2" 'NR > 1 { s += $c } END { print s + 0 }' "$1"; }
# samples REPORT-ARGS...: total samples of a --sort comm table under these options
samples() { "$SPENT" report "$@" --sort comm --csv | awk -F, 'NR > 1 { s += $3 } END { print s + 0 }'; }

# --- the 1:2:3 split by thread
st0=$(steal_ticks)
"$SPENT" record -e cpu-clock -o "$TMP/split" -- "$PROGS/who_split" 300 >"$TMP/split.out" 2>"$TMP/split.err"
check who_record_exit_zero test $? -eq 0
stolen=$(stolen_slack_ms "$st0" "$(steal_ticks)")
"$SPENT" report -i "$TMP/split" --sort tid --csv >"$TMP/tid.csv"
check who_sort_tid_header test "$(head -1 "$TMP/tid.csv")" = "tid,event,samples,percent"
measured_total=$(awk '{ s += $8 } END { print s }' "$TMP/split.out")
# 3 points, plus what the host stole from the vCPUs during the run as a share of the threads'
# CPU time: the threads' own clocks and the cpu-clock timer disagree over stolen time (a CI
# run had one thread 105 ms of samples short of its clock, 3.9 points; quiet runs are within
# 0.1 point)
tol=$(awk -v s="$stolen" -v t="$measured_total" 'BEGIN { printf "%.2f", 3 + 100 * s / t }')
while read -r _ k _ tid _ comm _ ms; do
	want=$(awk -v m="$ms" -v t="$measured_total" 'BEGIN { printf "%.2f", 100 * m / t }')
	got=$(awk -F, -v t="$tid" '$1 == t { print $4 }' "$TMP/tid.csv")
	if [ -n "$got" ] && awk -v g="$got" -v w="$want" -v tol="$tol" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= tol) }'; then
		pass "who_sort_tid_thread_${k}_within_3_points"
	else
		fail "who_sort_tid_thread_${k}_within_3_points: tid $tid got ${got:-none}% want $want% +- $tol (measured $ms ms, host stole $stolen ms; $(tail -1 "$TMP/split.err"))"
	fi
	# the thread renamed itself (prctl): most of its samples carry the new name, and --tid
	# agrees with its row
	name=$("$SPENT" report -i "$TMP/split" --sort comm,tid --csv | awk -F, -v t="$tid" '$2 == t { print $1; exit }')
	check "who_comm_of_thread_${k}_is_its_new_name" test "$name" = "$comm"
	check "who_tid_filter_thread_${k}_equals_its_row" test "$(samples -i "$TMP/split" --tid "$tid")" = \
		"$(awk -F, -v t="$tid" '$1 == t { print $3 }' "$TMP/tid.csv")"
done <"$TMP/split.out"

# every sample has a detail row: the --sort total is the plain report's
all=$(csv_sum "$TMP/tid.csv" 3)
"$SPENT" report -i "$TMP/split" --csv >"$TMP/plain.csv"
check who_sort_total_equals_plain_report test "$all" = "$(csv_sum "$TMP/plain.csv" 4)"
pid=$("$SPENT" report -i "$TMP/split" --sort pid --csv | awk -F, 'NR == 2 { print $1 }')
check who_pid_filter_is_everything test "$(samples -i "$TMP/split" --pid "$pid")" = "$all"
check who_pid_filter_other_pid_is_nothing test "$(samples -i "$TMP/split" --pid 1)" = 0
who2=$(samples -i "$TMP/split" --comm who-2) who13=$(samples -i "$TMP/split" --comm who-1,who-3)
main=$(samples -i "$TMP/split" --comm who_split)
check who_comm_filters_add_up test $((who2 + who13 + main)) = "$all"
img=$("$SPENT" report -i "$TMP/split" --sort image --csv | awk -F, '$1 ~ /who_split$/ { print $3 }')
check who_image_filter_by_file_name_equals_image_row test "$(samples -i "$TMP/split" --image who_split)" = "$img"
check who_image_filter_by_path_equals_image_row test "$(samples -i "$TMP/split" --image "$PROGS/who_split")" = "$img"
check "who_perf_spellings_comms_and_dsos_are_comm_and_image" test \
	"$(samples -i "$TMP/split" --comms who-1,who-3 --dsos who_split)" = \
	"$(samples -i "$TMP/split" --comm who-1,who-3 --image who_split)"
# --symbols (perf's -S): only the samples whose leaf is in those functions: the two hottest
# functions' rows of --sort function, summed
read -r f1 n1 f2 n2 < <("$SPENT" report -i "$TMP/split" --sort function --csv |
	awk -F, 'NR == 2 || NR == 3 { printf "%s %s ", $1, $3 }')
check "who_symbols_filter_is_the_functions_rows ($f1 $n1 + $f2 $n2)" \
	test "$(samples -i "$TMP/split" --symbols "$f1,$f2")" = "$((n1 + n2))" -a "${n2:-0}" -gt 0
check "who_S_is_symbols" test "$(samples -i "$TMP/split" -S "$f1")" = "$n1"
both=$(samples -i "$TMP/split" --comm who-3 --image who_split)
check who_filters_combine test "$both" -gt 0 -a "$both" -le "$(samples -i "$TMP/split" --comm who-3)"
# the filter also narrows the other views: the function table of one thread
wsum=$("$SPENT" report -i "$TMP/split" --tid "$(awk '$2 == 2 { print $4 }' "$TMP/split.out")" --csv | awk -F, 'NR > 1 { s += $4 } END { print s + 0 }')
check who_filter_applies_to_function_view test "$wsum" = "$(awk -F, -v t="$(awk '$2 == 2 { print $4 }' "$TMP/split.out")" '$1 == t { print $3 }' "$TMP/tid.csv")"
top=$("$SPENT" report -i "$TMP/split" --sort function,comm --json | head -1)
check who_sort_function_top_is_worker test "$(jfield "$top" function)" = worker
check who_sort_json_pid_is_number python3 -c 'import json,sys; o=json.loads(sys.argv[1]); sys.exit(not (isinstance(o["samples"], int) and "comm" in o and "percent" in o))' "$top"

# --time: halves add up to the whole, in seconds and in percent
a=$(samples -i "$TMP/split" --time ,0.5) b=$(samples -i "$TMP/split" --time 0.5,)
check who_time_seconds_halves_sum_to_whole test $((a + b)) = "$all"
check who_time_first_half_second_not_empty test "$a" -gt 0 -a "$b" -gt 0
a=$(samples -i "$TMP/split" --time 0%-50%) b=$(samples -i "$TMP/split" --time 50%-100%)
check who_time_percent_halves_sum_to_whole test $((a + b)) = "$all"
a=$(samples -i "$TMP/split" --time 50%/1) b=$(samples -i "$TMP/split" --time 50%/2)
check who_time_slices_sum_to_whole test $((a + b)) = "$all"

# -g: a thread's selection carries its call chains into the stack views (folded stacks)
"$SPENT" record -g -e cpu-clock -o "$TMP/g" -- "$PROGS/who_split" 100 >"$TMP/g.out" 2>/dev/null
t3=$(awk '$2 == 3 { print $4 }' "$TMP/g.out")
folded=$("$SPENT" report -i "$TMP/g" --tid "$t3" --folded | awk '{ s += $NF } END { print s + 0 }')
check who_callgraph_tid_filter_folded_sum_is_its_row test "$folded" = \
	"$("$SPENT" report -i "$TMP/g" --sort tid --csv | awk -F, -v t="$t3" '$1 == t { print $3 }')"
check who_callgraph_tid_filter_keeps_callers \
	sh -c "'$SPENT' report -i '$TMP/g' --tid $t3 --folded | grep -q 'start_thread.*;worker'"

# -p: threads named before the attach (no COMM record will come) are named from /proc
"$PROGS/who_split" 400 >/dev/null & wpid=$!
sleep 0.3
"$SPENT" record -e cpu-clock -p "$wpid" -o "$TMP/attach" >/dev/null 2>&1
wait "$wpid"
"$SPENT" report -i "$TMP/attach" --sort comm --csv >"$TMP/attach.csv"
check who_attach_names_threads_from_proc test "$(grep -c '^who-[123],' "$TMP/attach.csv")" = 3

# --- bad options and old profiles: one line, exit 2 (usage) or 1 (profile)
"$SPENT" report -i "$TMP/split" --sort tid,cpu >/dev/null 2>"$TMP/e1"; rc=$?
check who_bad_sort_key_exit_2 test $rc = 2 -a "$(wc -l <"$TMP/e1")" = 1
check who_bad_sort_key_named grep -q "'cpu'" "$TMP/e1"
"$SPENT" report -i "$TMP/split" --time 3,1 >/dev/null 2>"$TMP/e2"; rc=$?
# a malformed window is a usage error, as a bad --sort key (it exited 1)
check who_bad_time_exit_2_one_line test $rc = 2 -a "$(wc -l <"$TMP/e2")" = 1
"$SPENT" report -i "$TMP/split" --pid 12x >/dev/null 2>"$TMP/e3"; rc=$?
check who_bad_pid_exit_2 test $rc = 2 -a "$(wc -l <"$TMP/e3")" = 1
"$SPENT" report -i "$TMP/split" --sort tid --flamegraph "$TMP/f.svg" >/dev/null 2>&1
check who_sort_with_export_refused test $? = 2 -a ! -e "$TMP/f.svg"
# a profile written before detail rows existed: the same counts without samples files. A
# recording's samples file now carries its per-image counts (samples v4), so the old layout is
# made by `db merge` (a database keeps per-image counts files) and then dropping the samples
"$SPENT" db "$TMP/old" merge "$TMP/split" >/dev/null 2>&1
find "$TMP/old" -name 'samples*' -delete
"$SPENT" report -i "$TMP/old" >/dev/null 2>&1
check who_old_profile_plain_report_still_works test $? = 0
for opt in "--sort tid" "--comm x" "--pid 1" "--tid 1" "--image x" "--time 1,"; do
	"$SPENT" report -i "$TMP/old" $opt >/dev/null 2>"$TMP/e4"; rc=$?
	check "who_old_profile_refuses_${opt%% *}" test $rc = 1 -a "$(wc -l <"$TMP/e4")" = 1
done
check who_old_profile_says_why grep -q "no per-sample detail" "$TMP/e4"

# --- a shell pipeline: both comms, each its own pid
head -c 1500000 /dev/urandom | base64 >"$TMP/big"
"$SPENT" record -e cpu-clock -o "$TMP/pipe" -- sh -c "gzip -c '$TMP/big' | xz -c >/dev/null" >/dev/null 2>&1
"$SPENT" report -i "$TMP/pipe" --sort comm,pid --csv >"$TMP/pipe.csv"
check who_pipeline_shows_gzip grep -q '^gzip,' "$TMP/pipe.csv"
check who_pipeline_shows_xz grep -q '^xz,' "$TMP/pipe.csv"
gp=$(awk -F, '$1 == "gzip" { print $2 }' "$TMP/pipe.csv") xp=$(awk -F, '$1 == "xz" { print $2 }' "$TMP/pipe.csv")
check who_pipeline_two_pids test -n "$gp" -a -n "$xp" -a "$gp" != "$xp"
check who_pipeline_comm_filter_is_its_row test "$(samples -i "$TMP/pipe" --comm xz)" = \
	"$(awk -F, '$1 == "xz" { s += $4 } END { print s + 0 }' "$TMP/pipe.csv")"

# --- real threaded programs: more than one thread of each shows up
threads_of() { # DIR COMM -> number of tids of COMM with samples
	"$SPENT" report -i "$1" --comm "$2" --sort tid --csv | awk 'NR > 1' | wc -l
}
# xz -T2 splits its input into blocks (24 MiB by default): small blocks give both threads work
"$SPENT" record -e cpu-clock -o "$TMP/xz" -- xz -T2 --block-size=256KiB -c "$TMP/big" >/dev/null 2>&1
check who_xz_T2_two_threads test "$(threads_of "$TMP/xz" xz)" -ge 2
awk 'BEGIN { x = 1; for (i = 0; i < 1500000; i++) { x = (x * 1103515245 + 12345) % 2147483648; print x } }' >"$TMP/lines"
"$SPENT" record -e cpu-clock -o "$TMP/sort" -- sort -S 64M --parallel=2 "$TMP/lines" -o "$TMP/sorted" >/dev/null 2>&1
check who_sort_parallel_two_threads test "$(threads_of "$TMP/sort" sort)" -ge 2
cat >"$TMP/thr.py" <<'PY'
import threading, time
def burn(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        sum(range(1000))
ts = [threading.Thread(target=burn, args=(0.4,)) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
PY
"$SPENT" record -e cpu-clock -o "$TMP/py" -- python3 "$TMP/thr.py" >/dev/null 2>&1
check who_python_threads_two_tids test "$("$SPENT" report -i "$TMP/py" --pid "$("$SPENT" report -i "$TMP/py" --sort pid --csv | awk -F, 'NR == 2 { print $1 }')" --sort tid --csv | awk -F, 'NR > 1 && $2 >= 20' | wc -l)" -ge 2

# an empty --since/--until window inside a profile is an empty table and one warning, exit 0
# (it read as "written before spent kept them; record it again", exit 1, with --sort)
"$SPENT" record -F 1000 -e cpu-clock -o "$TMP/gap" -- sh -c "sleep 1.5; '$PROGS/hotline' 50" >/dev/null 2>&1
s=$(awk '{ printf "%.3f", $3 / 1e9 }' "$TMP/gap/epoch-0000/span")
win=(--since "@$(awk -v s="$s" 'BEGIN { printf "%.3f", s + 0.5 }')" --until "@$(awk -v s="$s" 'BEGIN { printf "%.3f", s + 1.2 }')")
for how in "--sort comm" "--by function"; do
	"$SPENT" report -i "$TMP/gap" "${win[@]}" $how > "$TMP/gap.out" 2> "$TMP/gap.err"
	rc=$?
	check "who_empty_window_${how// /_}_exit_0 ($rc: $(head -c 160 "$TMP/gap.err"))" test $rc = 0
	check "who_empty_window_${how// /_}_says_so" grep -q 'falls in the --since/--until window' "$TMP/gap.err"
	check "who_empty_window_${how// /_}_zero_samples" grep -q '^# 0 samples' "$TMP/gap.out"
done
