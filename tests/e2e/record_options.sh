#!/bin/bash
# tests/e2e/record_options.sh - record/report/annotate on the shared option parser: perf's
# spellings, repeated -e adding events, -F above the kernel's maximum, '-' for standard output.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"


# a repeated -e adds its events (it kept only the last one)
"$SPENT" record -e task-clock -e page-faults -o "$TMP/two" -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' 2>/dev/null
"$SPENT" report -i "$TMP/two" > "$TMP/two.txt"
check record_repeated_e_samples_both_events grep -q "of 'task-clock'" "$TMP/two.txt"
check record_repeated_e_keeps_the_first_too grep -q "of 'page-faults'" "$TMP/two.txt"
hdr=$(grep -v '^#' "$TMP/two.txt" | head -1)
check report_columns_labelled_with_events sh -c "echo '$hdr' | grep -q 'task-clock *%' && echo '$hdr' | grep -q 'page-faults *%'"
check report_ratio_column_names_its_events sh -c "echo '$hdr' | grep -Eq '(task-clock/page-faults|page-faults/task-clock)'"
"$SPENT" report -i "$TMP/two" -e page-faults -e task-clock --csv > "$TMP/two.csv"
check report_repeated_e_shows_both test "$(cut -d, -f3 "$TMP/two.csv" | sort -u | grep -c -e page-faults -e task-clock)" -eq 2

# -F above kernel.perf_event_max_sample_rate: clamped and said, not "Invalid argument"
"$SPENT" record -F 10000000 -e task-clock -o "$TMP/fast" -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' 2>"$TMP/fast.err"; rc=$?
check record_F_above_max_succeeds test "$rc" -eq 0
check record_F_above_max_says_the_clamp grep -q "sampling at [0-9]* Hz" "$TMP/fast.err"
got=$("$SPENT" report -i "$TMP/fast" | sed -n "s/.*frequency Hz \([0-9]*\)).*/\1/p" | head -1)
check record_F_clamped_to_kernel_max test "${got:-0}" -le "$(cat /proc/sys/kernel/perf_event_max_sample_rate)" -a "${got:-0}" -gt 0
"$SPENT" record -F 0 -o "$TMP/zero" -- true 2>/dev/null; rc=$?
check record_F_zero_refused test "$rc" -eq 2 -a ! -e "$TMP/zero"
# top and the daemon take -F as record does (they took 1 to 100000 only): K counts thousands,
# 0 is refused, a rate above the kernel's maximum is lowered to it and said
"$SPENT" top --no-daemon -F 1K -n 1 > "$TMP/topF.out" 2> "$TMP/topF.err"; rc=$?
check "top -F 1K samples at 1000 Hz (exit $rc: $(head -1 "$TMP/topF.err"))" grep -q "at 1000 Hz on" "$TMP/topF.out"
"$SPENT" top --no-daemon -F 10000000 -n 1 > /dev/null 2> "$TMP/topF.err"; rc=$?
check "top -F above the kernel's maximum is lowered and said (exit $rc)" \
	grep -q "above the kernel's maximum sample rate .*sampling at [0-9]* Hz" "$TMP/topF.err"
for c in top daemon; do
	"$SPENT" $c -F 0 --db "$TMP/dbF0" > /dev/null 2> "$TMP/F0.err"; rc=$?
	check "$c -F 0 is refused (exit $rc: $(cat "$TMP/F0.err"))" \
		bash -c "[ $rc -eq 2 ] && grep -q \"bad frequency '0'\" '$TMP/F0.err' && [ ! -e '$TMP/dbF0' ]"
done

# perf's spellings: --call-graph dwarf, --opt=value, -h/--man from the option table
"$SPENT" record --call-graph dwarf --output="$TMP/cg" -- "$PROGS/recurse" 20 >/dev/null 2>&1; rc=$?
check record_call_graph_mode_as_next_word test "$rc" -eq 0 -a -d "$TMP/cg"
# perf's dwarf,SIZE (bytes of stack copied per sample), as the next word too: a smaller copy
# unwinds fewer frames; lbr or a bad size is a bad call graph, not a command to run
"$SPENT" record --call-graph dwarf,64 -o "$TMP/cg64" -- "$PROGS/recurse" 20 >/dev/null 2>&1; rc=$?
check record_call_graph_dwarf_size_as_next_word test "$rc" -eq 0 -a -d "$TMP/cg64"
depth() { "$SPENT" report -i "$1" --folded | awk '{ n += split($1, a, ";") * $NF; c += $NF } END { printf "%.1f", c ? n / c : 0 }'; }
d64=$(depth "$TMP/cg64") d8k=$(depth "$TMP/cg")
check "record_call_graph_dwarf_size_bounds_the_stacks (mean depth $d64 with 64 bytes, $d8k with 8192)" \
	awk -v a="$d64" -v b="$d8k" 'BEGIN { exit !(a + 2 < b) }'
for bad in lbr dwarf,100 dwarf,0 fp,1; do
	"$SPENT" record --call-graph $bad -o "$TMP/cgbad" -- true > /dev/null 2> "$TMP/cgbad.err"; rc=$?
	check "record_call_graph_${bad}_is_a_bad_call_graph (rc $rc)" \
		test "$rc" -eq 2 -a ! -e "$TMP/cgbad" -a "$(grep -c "bad call graph '$bad'" "$TMP/cgbad.err")" -eq 1
done
for c in record report annotate; do
	"$SPENT" $c --man > "$TMP/$c.man"
	check "${c}_man_page_from_table" grep -q "^.TH SPENT-${c^^} 1" "$TMP/$c.man"
done
check record_man_lists_per_thread grep -q 'per\\-thread' "$TMP/record.man"
"$SPENT" report --by nonsense -i "$TMP/two" 2>"$TMP/err"; rc=$?
check report_bad_view_exits_2 test "$rc" -eq 2 -a "$(wc -l < "$TMP/err")" -eq 1
"$SPENT" annotate -i "$TMP/two" a b 2>"$TMP/err"; rc=$?
check annotate_two_symbols_exits_2 test "$rc" -eq 2 -a "$(grep -c 'more than one symbol' "$TMP/err")" -eq 1

# '-' writes an export to standard output
"$SPENT" report -i "$TMP/two" --pprof - > "$TMP/out.pb.gz" 2>/dev/null; rc=$?
check report_pprof_dash_is_stdout test "$rc" -eq 0 -a "$(head -c 2 "$TMP/out.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b
check report_pprof_dash_makes_no_file test ! -e ./-
"$SPENT" report -i "$TMP/two" --flamegraph - > "$TMP/out.svg" 2>/dev/null
check report_flamegraph_dash_is_stdout grep -q '</svg>' "$TMP/out.svg"
"$SPENT" report -i "$TMP/two" --flamegraph - --pprof - >/dev/null 2>&1; rc=$?
check report_two_exports_on_stdout_refused test "$rc" -eq 2

# --by line: a line inlined into several functions is one row per function (it merged them all
# under one function's name, above that function's own total)
"$SPENT" record -e task-clock -o "$TMP/demo" -- "$PROGS/demo" 0.5 >/dev/null 2>&1
# perf report's spellings: --percent-limit hides the rows under a share of the samples (demo's
# light, 10%, under 20%), -s is --sort, --stdio and -n are what the table is anyway
rows=$("$SPENT" report -i "$TMP/demo" --percent-limit 20 --csv | awk -F, 'NR > 1 { printf "%s ", $2 }')
check "report_percent_limit_hides_small_rows ($rows)" test "$rows" = "heavy medium "
"$SPENT" report -i "$TMP/demo" --sort comm > "$TMP/sort_long.txt"
"$SPENT" report -i "$TMP/demo" -s comm > "$TMP/sort_short.txt"; rc=$?
check report_s_is_sort test "$rc" -eq 0 -a -s "$TMP/sort_short.txt"
check report_s_is_sort_same_table cmp -s "$TMP/sort_long.txt" "$TMP/sort_short.txt"
"$SPENT" report -i "$TMP/demo" > "$TMP/plain.txt"
"$SPENT" report -i "$TMP/demo" --stdio -n > "$TMP/stdio.txt"; rc=$?
check "report_stdio_and_n_accepted (rc $rc)" test "$rc" -eq 0
check report_stdio_and_n_change_nothing cmp -s "$TMP/plain.txt" "$TMP/stdio.txt"
# annotate without a symbol takes the function with the most samples, as perf annotate starts
# with it (it exited 2): demo's heavy, 60% of its CPU time
"$SPENT" annotate -i "$TMP/demo" > "$TMP/ann.txt" 2>&1; rc=$?
check "annotate_without_symbol_shows_the_hottest_function (rc $rc: $(head -1 "$TMP/ann.txt"))" \
	test "$rc" -eq 0 -a "$(head -1 "$TMP/ann.txt" | cut -d' ' -f2)" = heavy
"$SPENT" annotate --stdio -i "$TMP/demo" heavy > "$TMP/ann_stdio.txt" 2>&1
check annotate_stdio_accepted_changes_nothing cmp -s "$TMP/ann.txt" "$TMP/ann_stdio.txt"
"$SPENT" report -i "$TMP/demo" --by line --csv > "$TMP/line.csv"
"$SPENT" report -i "$TMP/demo" --csv > "$TMP/fn.csv"
spin_line=$(awk -F, '$2 ~ /^heavy \(inlined spin\)$/ { print $3 ":" $4; exit }' "$TMP/line.csv")
check by_line_has_inlined_rows test -n "$spin_line"
check by_line_one_row_per_function_of_a_line test "$(awk -F, -v l="$spin_line" '$3 ":" $4 == l && $2 ~ /\(inlined spin\)$/' "$TMP/line.csv" | cut -d, -f2 | sort -u | wc -l)" -ge 2
heavy_fn=$(awk -F, '$2 == "heavy" { print $4; exit }' "$TMP/fn.csv")
heavy_lines=$(awk -F, '$2 ~ /^heavy( |$)/ { s += $6 } END { print s + 0 }' "$TMP/line.csv")
check by_line_rows_of_heavy_add_up_to_heavy awk -v a="$heavy_lines" -v b="$heavy_fn" 'BEGIN { exit !(b > 0 && a <= b + 0.01 && a >= b - 0.01) }'

# pprof: typed amounts (CPU time in nanoseconds), the period, the program as the first mapping
# (it was cpu-clock/count, no period, and often "File: [kernel.kallsyms]")
"$SPENT" report -i "$TMP/demo" --pprof "$TMP/demo.pb.gz" 2>/dev/null
go tool pprof -raw "$TMP/demo.pb.gz" > "$TMP/pprof.raw" 2>/dev/null
check pprof_period_type_is_cpu_nanoseconds grep -q '^PeriodType: cpu nanoseconds' "$TMP/pprof.raw"
check pprof_period_is_the_events grep -q '^Period: 99991$' "$TMP/pprof.raw"
check pprof_sample_types_have_units grep -q '^samples/count cpu/nanoseconds\[dflt\]' "$TMP/pprof.raw"
go tool pprof -top "$TMP/demo.pb.gz" > "$TMP/pprof.top" 2>/dev/null
check pprof_first_mapping_is_the_program grep -q '^File: demo$' "$TMP/pprof.top"
check pprof_top_shows_time grep -Eq '^Showing nodes accounting for [0-9.]+(ms|s)' "$TMP/pprof.top"

# folded: the program as root frame and _[k] on kernel frames, as stackcollapse-perf.pl gives
"$SPENT" report -i "$TMP/demo" --folded --folded-root --folded-kernel > "$TMP/demo.folded"
check folded_root_frame_on_every_line test "$(grep -vc '^demo;' "$TMP/demo.folded")" -eq 0
kern=$("$SPENT" report -i "$TMP/demo" --csv | awk -F, '$1 == "[kernel.kallsyms]" { print $2; exit }')
if [ -n "$kern" ]; then
	check folded_kernel_frames_marked grep -qF ";${kern}_[k] " "$TMP/demo.folded"
else
	check folded_kernel_frames_marked false
fi
check folded_user_frames_not_marked grep -q '^demo;heavy [0-9]' "$TMP/demo.folded"
"$SPENT" report -i "$TMP/demo" --folded > "$TMP/plain.folded"
check folded_plain_has_no_marks test "$(grep -c '_\[k\]\|^demo;' "$TMP/plain.folded")" -eq 0
# a pipeline: each stack is rooted at the process it was sampled in (all of them were rooted
# at the program with the most samples), and the counts stay those of the plain export
"$SPENT" record -o "$TMP/pipe" -- sh -c "'$PROGS/demo' | gzip -9 > /dev/null" > /dev/null 2>&1
"$SPENT" report -i "$TMP/pipe" --folded --folded-root > "$TMP/pipe.folded"
"$SPENT" report -i "$TMP/pipe" --folded > "$TMP/pipe.plain"
"$SPENT" report -i "$TMP/pipe" --sort comm --json > "$TMP/pipe.comm"
check "folded_root_is_each_samples_process ($(cut -d';' -f1 "$TMP/pipe.folded" | sort -u | tr '\n' ' '))" python3 -c '
import json, sys
roots = {}
for l in open(sys.argv[1]):
    stack, n = l.rsplit(" ", 1)
    roots[stack.split(";")[0]] = roots.get(stack.split(";")[0], 0) + int(n)
plain = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
comms = {}
for r in map(json.loads, open(sys.argv[3])):
    comms[r["comm"]] = comms.get(r["comm"], 0) + r["samples"]
assert sum(roots.values()) == plain, (roots, plain)
assert roots == comms, (roots, comms)
assert "demo" in roots and len(roots) >= 2, roots' "$TMP/pipe.folded" "$TMP/pipe.plain" "$TMP/pipe.comm"

# SIGTERM / SIGHUP to spent (timeout, a service manager): passed on to the command, whose end is
# recorded and the profile written (spent died of it before, and the recording was lost); a
# command that ignores the first one is killed by the second
timeout --preserve-status -s TERM 1 "$SPENT" record -o "$TMP/term" -- "$PROGS/hotline" 5000 \
	> /dev/null 2> "$TMP/term.err"
rc=$?
check "record_sigterm_exits_as_the_command (143: $rc)" [ "$rc" = 143 ]
check "record_sigterm_writes_the_profile" grep -q "^spent: [1-9][0-9]* samples" "$TMP/term.err"
check "record_sigterm_profile_reads" "$SPENT" report -i "$TMP/term" --by image --csv
"$SPENT" record -o "$TMP/hup" -- perl -e '$SIG{HUP} = "IGNORE"; 1 while 1' > /dev/null 2> "$TMP/hup.err" &
pid=$!
sleep 1
kill -HUP $pid
sleep 0.5
kill -HUP $pid
wait $pid
rc=$?
check "record_second_sighup_kills_a_command_ignoring_the_first (137: $rc)" [ "$rc" = 137 ]
check "record_sighup_profile_written" test -f "$TMP/hup/meta"

# one event at two periods (a daemon database sampled at two rates holds that too): the columns
# and the ratio name the periods, -e NAME selects both, -e NAME@PERIOD one (the columns read
# "cpu-clock % cpu-clock %" and -e picked the first silently)
"$SPENT" record -e cpu-clock:1000000 -e cpu-clock:250000 -o "$TMP/twop" -- "$PROGS/hotline" 100 > /dev/null 2>&1
"$SPENT" report -i "$TMP/twop" > "$TMP/twop.txt"
check report_same_event_two_periods_labelled grep -q 'cpu-clock@1000000 .*cpu-clock@250000 .*cpu-clock@250000/cpu-clock@1000000' "$TMP/twop.txt"
check report_same_event_name_selects_both test "$("$SPENT" report -i "$TMP/twop" -e cpu-clock | grep -c '^# .* samples of')" = 2
"$SPENT" report -i "$TMP/twop" -e cpu-clock@250000 > "$TMP/twop1.txt"
check report_same_event_name_at_period_selects_one bash -c "grep -c '^# .* samples of' '$TMP/twop1.txt' | grep -qx 1 && grep -q '(period 250000)' '$TMP/twop1.txt'"
"$SPENT" report -i "$TMP/twop" -e cpu-clock@7 > /dev/null 2> "$TMP/twop.err"
check "report_unknown_period_refused ($?)" grep -q "event 'cpu-clock@7' is not in this profile" "$TMP/twop.err"

# without a PMU, cycles falls back to cpu-clock with one line; a period given for it is then
# nanoseconds, and the line says so (100003 cycles became 100003 ns without a word); with a
# PMU cycles is counted and there is nothing to fall back from
if ! have_pmu; then
	"$SPENT" record -e cycles:100003 -o "$TMP/cyc" -- "$PROGS/hotline" 20 > /dev/null 2> "$TMP/cyc.err"
	check "record_cycles_falls_back_to_cpu_clock_in_one_line" \
		test "$(grep -c "sampling 'cpu-clock' instead of 'cycles' (its period is taken as nanoseconds)" "$TMP/cyc.err")" = 1
	check "record_cycles_fallback_keeps_the_period" \
		grep -q "^# [0-9]* samples of 'cpu-clock' (period 100003)" <("$SPENT" report -i "$TMP/cyc" 2>/dev/null)
	"$SPENT" record -e cycles -o "$TMP/cyc2" -- "$PROGS/hotline" 5 > /dev/null 2> "$TMP/cyc2.err"
	check "record_cycles_fallback_without_a_period_says_nothing_of_one" \
		bash -c "grep -q \"instead of 'cycles'\$\" '$TMP/cyc2.err'"
fi

# -a: every task on every CPU (perf record -a), while a command runs or until Ctrl-C. A burner
# outside the recorded command (demo, 1.5 s of its own CPU time) must take its CPU's share of
# the samples (a process sampled from one tree could not show it at all); without a command,
# SIGINT ends the recording and the profile is written.
"$PROGS/demo" 1.5 > /dev/null & burner=$!
sleep 0.2
"$SPENT" record -a -e cpu-clock -o "$TMP/sysw" -- sleep 0.5 > /dev/null 2> "$TMP/sysw.err"; rc=$?
share=$("$SPENT" report -i "$TMP/sysw" --sort comm --csv | awk -F, '$1 == "demo" { print $4; exit }')
want=$(awk -v n="$(nproc)" 'BEGIN { printf "%.0f", 60 / n }')
check "record_all_cpus_sees_a_process_outside_the_command (rc $rc, demo ${share:-0}% of the samples, want >= $want%)" \
	awk -v r="$rc" -v s="${share:-0}" -v w="$want" 'BEGIN { exit !(r == 0 && s >= w) }'
"$SPENT" record -a -e cpu-clock -o "$TMP/sysw2" > /dev/null 2> "$TMP/sysw2.err" & rec=$!
sleep 0.5
kill -INT "$rec"
wait "$rec"; rc=$?
kill "$burner" 2> /dev/null
wait "$burner" 2> /dev/null
n=$("$SPENT" report -i "$TMP/sysw2" --sort comm --csv | awk -F, 'NR > 1 { s += $3 } END { print s + 0 }')
check "record_all_cpus_without_a_command_ends_at_ctrl_c (rc $rc, $n samples)" test "$rc" -eq 0 -a "$n" -gt 0
for bad in "-a -p 1" "-a --per-thread -- true" "-i -a -- true" "-i --per-thread -- true"; do
	"$SPENT" record $bad -o "$TMP/bad_a" > /dev/null 2> "$TMP/bad_a.err"; rc=$?
	check "record ${bad% -- true} is refused (rc $rc)" test "$rc" -eq 2 -a ! -e "$TMP/bad_a" -a "$(wc -l < "$TMP/bad_a.err")" -eq 1
done

# -q (perf's --quiet): a run that goes well prints nothing (no summary, no warnings such as
# the cpu-clock fallback without a PMU) and still writes the profile; an error still prints
"$SPENT" record -q -o "$TMP/quiet" -- "$PROGS/demo" 0.2 > /dev/null 2> "$TMP/quiet.err"; rc=$?
check "record_q_prints_nothing (rc $rc: $(head -c 100 "$TMP/quiet.err"))" test "$rc" -eq 0 -a ! -s "$TMP/quiet.err"
check record_q_writes_the_profile bash -c "'$SPENT' report -i '$TMP/quiet' --json | grep -q '\"samples\"'"
"$SPENT" record -q -o "$TMP/quiet2" -- /no/such/program > /dev/null 2> "$TMP/quiet2.err"; rc=$?
check "record_q_still_says_why_the_command_cannot_run (rc $rc)" test "$rc" -eq 127 -a "$(wc -l < "$TMP/quiet2.err")" -eq 1

# -i/--no-inherit (perf's): the command's first thread alone, not the threads and children it
# creates. threads2's work is on two threads it starts: inherited, each has its share of the
# samples; with -i none of them is sampled (the main thread waits in join), and a shell's
# child program is not sampled either
"$SPENT" record -q -e cpu-clock -o "$TMP/inh" -- "$PROGS/threads2" 50 > /dev/null
"$SPENT" record -q -i -e cpu-clock -o "$TMP/noinh" -- "$PROGS/threads2" 50 > /dev/null; rc=$?
check "record_i_runs (rc $rc)" test "$rc" -eq 0
"$SPENT" report -i "$TMP/inh" --sort pid,tid --csv > "$TMP/inh.csv"
"$SPENT" report -i "$TMP/noinh" --sort pid,tid --csv > "$TMP/noinh.csv"
workers=$(awk -F, 'NR > 1 && $1 != $2 && $4 >= 20' "$TMP/inh.csv" | wc -l)
check "record_inherited_samples_both_worker_threads ($workers)" test "$workers" -eq 2
others=$(awk -F, 'NR > 1 && $1 != $2' "$TMP/noinh.csv" | wc -l)
n_inh=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$TMP/inh.csv")
n_no=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$TMP/noinh.csv")
check "record_i_samples_the_main_thread_alone ($others other threads; $n_no samples against $n_inh inherited)" \
	test "$others" -eq 0 -a $((n_no * 10)) -lt "$n_inh"
"$SPENT" record -q -i -e cpu-clock -o "$TMP/noinh_sh" -- sh -c "'$PROGS/hotline' 50; true" > /dev/null
"$SPENT" report -i "$TMP/noinh_sh" --sort comm --csv > "$TMP/noinh_sh.csv"
check "record_i_leaves_a_shells_child_out ($(tr '\n' ' ' < "$TMP/noinh_sh.csv"))" \
	test "$(awk -F, '$1 == "hotline"' "$TMP/noinh_sh.csv" | wc -l)" -eq 0

# -D/--delay MS (perf's): the command runs unsampled for MS ms. top_burner burns 0.5 s of CPU
# in top_burner_spin: with -D 200 about 3/5 of the samples, every one placed, though the
# program was mapped before sampling began (its images are read from /proc, as for -p); a
# shell's child started within the delay too
"$SPENT" record -q -e cpu-clock -o "$TMP/d0" -- "$PROGS/top_burner" 0.5 > /dev/null
"$SPENT" record -D 200 -e cpu-clock -o "$TMP/d200" -- "$PROGS/top_burner" 0.5 > /dev/null 2> "$TMP/d200.err"; rc=$?
"$SPENT" record -q -D 200 -e cpu-clock -o "$TMP/dsh" -- sh -c "'$PROGS/top_burner' 0.5; true" > /dev/null
n0=$("$SPENT" report -i "$TMP/d0" --csv | awk -F, 'NR > 1 { s += $4 } END { print s + 0 }')
for p in d200 dsh; do
	n=$("$SPENT" report -i "$TMP/$p" --csv | awk -F, 'NR > 1 { s += $4 } END { print s + 0 }')
	spin=$("$SPENT" report -i "$TMP/$p" --csv | awk -F, '$2 == "top_burner_spin" { print $4 }')
	check "record_D_$p: about 3/5 of the samples ($n of $n0 without -D)" \
		awk -v a="$n" -v b="$n0" 'BEGIN { exit !(b > 0 && a > 0.4 * b && a < 0.8 * b) }'
	check "record_D_$p: top_burner_spin named ($spin of $n)" awk -v a="${spin:-0}" -v b="$n" 'BEGIN { exit !(a > 0.9 * b) }'
done
check "record_D_runs_and_places_every_sample (rc $rc: $(cat "$TMP/d200.err"))" \
	bash -c "test $rc -eq 0 && grep -q ' 0 unknown' '$TMP/d200.err'"
if command -v perf > /dev/null; then
	perf record -q -D 200 -e cpu-clock -c 99991 -o "$TMP/pd.data" -- "$PROGS/top_burner" 0.5 > /dev/null 2>&1
	np=$(perf script -i "$TMP/pd.data" 2> /dev/null | wc -l)
	n=$("$SPENT" report -i "$TMP/d200" --csv | awk -F, 'NR > 1 { s += $4 } END { print s + 0 }')
	check "record_D_samples_as_perf_record_D ($n, perf $np)" \
		awk -v a="$n" -v b="$np" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d < 0.2 * b) }'
fi
for bad in "-D 100 -p 1" "-D 100 -a -- true" "-D 100 --per-thread -- true"; do
	"$SPENT" record $bad -o "$TMP/bad_D" > /dev/null 2> "$TMP/bad_D.err"; rc=$?
	check "record ${bad% -- true} is refused (rc $rc)" test "$rc" -eq 2 -a ! -e "$TMP/bad_D" -a "$(wc -l < "$TMP/bad_D.err")" -eq 1
done

# -C CPUS (perf's): every task on those CPUs only. Two burners pinned one per CPU while the
# command runs: -C 0 samples the one on CPU 0 and not the other; -a samples both. The shell
# runs on CPU 1 from the start and hotline inherits that: a `taskset -c 1 hotline` child was
# forked on the shell's CPU and ran there until taskset moved it, and a CI run once counted
# 3 samples on CPU 0 for pid that became hotline
two="taskset -c 0 '$PROGS/top_burner' 0.4 & '$PROGS/hotline' 100 & wait"
two="taskset -c 1 sh -c \"$two\""
"$SPENT" record -q -C 0 -e cpu-clock -o "$TMP/c0" -- sh -c "$two" > /dev/null; rc=$?
"$SPENT" report -i "$TMP/c0" --sort comm --csv > "$TMP/c0.csv"
"$SPENT" record -q -C 0-1 -e cpu-clock -o "$TMP/c01" -- sh -c "$two" > /dev/null
"$SPENT" report -i "$TMP/c01" --sort comm --csv > "$TMP/c01.csv"
cnt() { awk -F, -v c="$2" '$1 == c { s += $3 } END { print s + 0 }' "$1"; }
check "record_C_0_samples_cpu0s_burner_alone (rc $rc; top_burner $(cnt "$TMP/c0.csv" top_burner), hotline $(cnt "$TMP/c0.csv" hotline))" \
	test "$rc" -eq 0 -a "$(cnt "$TMP/c0.csv" top_burner)" -gt 100 -a "$(cnt "$TMP/c0.csv" hotline)" -eq 0
check "record_C_0-1_samples_both (top_burner $(cnt "$TMP/c01.csv" top_burner), hotline $(cnt "$TMP/c01.csv" hotline))" \
	test "$(cnt "$TMP/c01.csv" top_burner)" -gt 100 -a "$(cnt "$TMP/c01.csv" hotline)" -gt 100
if command -v perf > /dev/null; then
	perf record -q -C 0 -e cpu-clock -o "$TMP/pc0.data" -- sh -c "$two" > /dev/null 2>&1
	perf script -i "$TMP/pc0.data" -F comm > "$TMP/pc0.txt" 2> /dev/null
	ph=$(awk '$1 == "hotline"' "$TMP/pc0.txt" | wc -l)
	pt=$(awk '$1 == "top_burner"' "$TMP/pc0.txt" | wc -l)
	check "record_C_0_as_perf_record_C_0 (perf: top_burner $pt, hotline $ph)" test "$pt" -gt 100 -a "$ph" -eq 0
fi
for bad in "-C 0 -p 1" "-C 0 --per-thread -- true" "-C 0-x -- true" "-C 999 -- true"; do
	"$SPENT" record $bad -o "$TMP/bad_C" > /dev/null 2> "$TMP/bad_C.err"; rc=$?
	check "record ${bad% -- true} is refused (rc $rc)" test "$rc" -eq 2 -a ! -e "$TMP/bad_C" -a "$(wc -l < "$TMP/bad_C.err")" -eq 1
done
