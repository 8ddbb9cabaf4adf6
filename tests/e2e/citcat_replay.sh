#!/bin/bash
# tests/e2e/citcat_replay.sh - citcat record + replay against independent oracles: the program's
# own output and exit status (a program reading files, time, clock_gettime, getrandom, rdtsc,
# allocating), and the instruction addresses of a small static program single-stepped under
# ptrace by a separate tool (build/progs/citcat_stepper).
source "$(dirname "$0")/lib.sh"
differs() { ! cmp -s "$1" "$2"; }
in_range() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
lacks() { ! grep -aq -- "$1" "$2"; }
all_equal() { local v=$1; shift; for x in "$@"; do [ "$x" = "$v" ] || return 1; done; }

# 1. inputs, time, randomness, allocation: identical output and exit status
head -c 20000 /dev/urandom > "$TMP/input.bin"
"$SPENT" citcat record -o "$TMP/rec" -- "$PROGS/citcat_inputs" "$TMP/input.bin" /etc/hostname \
	> "$TMP/real.out" 2> "$TMP/real.err"
real_rc=$?
check "citcat_record_exits_with_program_status" in_range "$real_rc" 10 16
perm=$(stat -c %a "$TMP/rec/recording")
check "citcat_recording_is_mode_0600" [ "$perm" = 600 ]
json=$("$SPENT" citcat replay "$TMP/rec" --json --stdout "$TMP/replay.out" 2> "$TMP/replay.err")
replay_rc=$?
check "citcat_replay_json_verified_true" [ "$(jfield "$json" verified)" = True ]
check "citcat_replay_exit_status_equals_real_run" [ "$(jfield "$json" exit_status)" = "$real_rc" ]
check "citcat_replay_command_exit_0_when_verified" [ "$replay_rc" = 0 ]
check "citcat_replayed_stdout_equals_real_stdout" cmp -s "$TMP/real.out" "$TMP/replay.out"
real_bytes=$(( $(stat -c %s "$TMP/real.out") + $(grep -v '^spent:' "$TMP/real.err" | wc -c) ))
check "citcat_replay_output_bytes_equal_real_stdout_plus_stderr" [ "$(jfield "$json" output_bytes)" = "$real_bytes" ]
check "citcat_replay_counted_instructions" [ "$(jfield "$json" instructions)" -gt 100000 ]
check "citcat_replay_saw_syscalls" [ "$(jfield "$json" syscalls)" -gt 10 ]
# trace stats takes a recording as dump and the studies do (it refused one: "Is a directory")
st=$("$SPENT" trace stats --json "$TMP/rec" 2> "$TMP/st.err")
check "trace_stats_of_a_recording_counts_its_instructions ($(jfield "$st" instructions) vs $(jfield "$json" instructions): $(head -c 100 "$TMP/st.err"))" \
	[ "$(jfield "$st" instructions)" = "$(jfield "$json" instructions)" ]
# the program's output depends on its inputs: a second recorded run prints a different
# checksum, and its replay reproduces that one
"$SPENT" citcat record -o "$TMP/rec2" -- "$PROGS/citcat_inputs" "$TMP/input.bin" > "$TMP/real2.out" 2>/dev/null
"$SPENT" citcat replay "$TMP/rec2" --stdout "$TMP/replay2.out" > /dev/null 2>&1
check "citcat_second_run_has_different_output" differs "$TMP/real.out" "$TMP/real2.out"
check "citcat_second_replay_equals_second_run" cmp -s "$TMP/real2.out" "$TMP/replay2.out"

# 2. a small static program: replayed addresses == single-stepped addresses of the real program
"$PROGS/citcat_stepper" "$PROGS/citcat_tiny" > "$TMP/step.txt" 2> "$TMP/step.err"
"$SPENT" citcat record -o "$TMP/tiny" -- "$PROGS/citcat_tiny" > /dev/null 2>&1
tiny_rc=$?
"$SPENT" citcat replay "$TMP/tiny" --dump > "$TMP/dump.txt" 2> /dev/null
grep '^0x' "$TMP/dump.txt" | awk '{print $1}' > "$TMP/replay_pcs.txt"
nstep=$(wc -l < "$TMP/step.txt")
check "citcat_stepper_saw_instructions" [ "$nstep" -gt 1000 ]
check "citcat_replayed_pc_sequence_equals_single_step_sequence" cmp -s "$TMP/step.txt" "$TMP/replay_pcs.txt"
step_exit=$(sed -n 's/^exit \([0-9-]*\).*/\1/p' "$TMP/step.err")
dump_exit=$(sed -n 's/^# exit \([0-9-]*\)/\1/p' "$TMP/dump.txt")
check "citcat_tiny_exit_status_equal_stepped_recorded_replayed" all_equal 5 "$step_exit" "$tiny_rc" "$dump_exit"
# the dump carries the data references: the write syscall's buffer was stored on the stack
check "citcat_dump_has_data_references" grep -q '^  [RWM] 0x' "$TMP/dump.txt"
check "citcat_dump_has_syscall_events" [ "$(grep -c '^# syscall' "$TMP/dump.txt")" = 3 ]
# image-load event: a non-PIE static binary's load bias is 0 and its entry point (readelf, an
# independent reader) is inside the executable range the event gives
entry=$(readelf -h "$PROGS/citcat_tiny" | awk '/Entry point/ {print $4}')
img=$(grep "^# image $PROGS/citcat_tiny " "$TMP/dump.txt")
inside() { python3 -c 'import sys; s,e,x=(int(v,16) for v in sys.argv[1:]); sys.exit(not s <= x < e)' "$@"; }
range=$(sed -n 's/.*\[\(0x[0-9a-f]*\), \(0x[0-9a-f]*\)).*/\1 \2/p' <<<"$img")
check "citcat_dump_image_event_static_binary_base_0" grep -q ' base 0$' <<<"$img"
check "citcat_dump_image_event_range_holds_entry_point" inside $range "$entry"

# 3. the trace-stream source and the fast path count the same instructions
fast=$("$SPENT" citcat replay "$TMP/tiny" --json 2>/dev/null)
check "citcat_fast_path_count_equals_single_step_count" [ "$(jfield "$fast" instructions)" = "$nstep" ]

# 4. signals that do nothing (default-ignored SIGWINCH/SIGURG) interrupting a blocking sleep:
# the kernel restarts the call; the recording keeps one syscall, and the replay verifies
"$SPENT" citcat record -o "$TMP/sleep" -- /bin/sleep 0.4 > /dev/null 2>&1 &
spid=$!
sleep 0.2
child=$(pgrep -P "$spid" | head -1)
[ -n "$child" ] && kill -WINCH "$child" && kill -URG "$child"
wait "$spid"
check "citcat_sleep_with_ignored_signals_records" [ $? = 0 ]
sj=$("$SPENT" citcat replay "$TMP/sleep" --json 2>/dev/null)
check "citcat_sleep_with_ignored_signals_replays_verified" [ "$(jfield "$sj" verified)" = True ]

# 5. caught signals (kill/raise to itself): delivered at the syscall boundary, the handler's
# entry and frame recorded; the replay runs the handlers and prints what the real run printed
"$PROGS/citcat_signal" > "$TMP/sig_native.out"
"$SPENT" citcat record -o "$TMP/sig" -- "$PROGS/citcat_signal" > "$TMP/sig_real.out" 2>/dev/null
check "citcat_signal_program_recorded_output_equals_native" cmp -s "$TMP/sig_native.out" "$TMP/sig_real.out"
sgj=$("$SPENT" citcat replay "$TMP/sig" --json --stdout "$TMP/sig_replay.out" 2>/dev/null)
check "citcat_signal_replay_verified" [ "$(jfield "$sgj" verified)" = True ]
check "citcat_signal_replayed_stdout_equals_real" cmp -s "$TMP/sig_real.out" "$TMP/sig_replay.out"
check "citcat_signal_handlers_ran_in_replay" [ "$(grep -c '^handler$' "$TMP/sig_replay.out")" = 5 ]
"$SPENT" citcat replay "$TMP/sig" --dump > "$TMP/sig_dump.txt" 2>/dev/null
check "citcat_signal_dump_instruction_count_equals_fast_path" [ "$(grep -c '^0x' "$TMP/sig_dump.txt")" = "$(jfield "$sgj" instructions)" ]

# 6. asynchronous signals (interval timer) held back to the next syscall boundary: the loop
# count depends on when they came; the replay reproduces it
"$SPENT" citcat record -o "$TMP/alarm" -- "$PROGS/citcat_alarm" > "$TMP/alarm_real.out" 2>/dev/null
alarm_rc=$?
# exit 0 when the handler ran at least 3 times (later boundaries may deliver more)
check "citcat_alarm_program_saw_at_least_3_signals" [ "$alarm_rc" = 0 ]
aj=$("$SPENT" citcat replay "$TMP/alarm" --json --stdout "$TMP/alarm_replay.out" 2>/dev/null)
check "citcat_alarm_replay_verified" [ "$(jfield "$aj" verified)" = True ]
check "citcat_alarm_replayed_stdout_equals_real" cmp -s "$TMP/alarm_real.out" "$TMP/alarm_replay.out"

# 7. /proc pseudo-files (size 0, content made at each read): their bytes are recorded as read
# and their paths never checked (a replay could not find /proc/PID/ of a finished run), with
# copies or without
for mode in copy no-copy; do
	opt=(); [ "$mode" = no-copy ] && opt=(--no-copy)
	"$SPENT" citcat record "${opt[@]}" -o "$TMP/maps_$mode" -- grep -c . /proc/self/maps \
		> "$TMP/maps_real_$mode.out" 2>/dev/null
	mj=$("$SPENT" citcat replay "$TMP/maps_$mode" --json --stdout "$TMP/maps_replay_$mode.out" 2>/dev/null)
	check "citcat_proc_self_maps_${mode}_replay_verified" [ "$(jfield "$mj" verified)" = True ]
	check "citcat_proc_self_maps_${mode}_replayed_count_equals_real" cmp -s "$TMP/maps_real_$mode.out" "$TMP/maps_replay_$mode.out"
	check "citcat_proc_self_maps_${mode}_real_count_nonzero" [ "$(cat "$TMP/maps_real_$mode.out")" -gt 5 ]
	check "citcat_proc_self_maps_${mode}_path_not_named" lacks "/proc/[0-9][0-9]*/maps" "$TMP/maps_$mode/recording"
	"$SPENT" citcat record "${opt[@]}" -o "$TMP/status_$mode" -- grep . /proc/self/status \
		> "$TMP/status_real_$mode.out" 2>/dev/null
	sj=$("$SPENT" citcat replay "$TMP/status_$mode" --json --stdout "$TMP/status_replay_$mode.out" 2>/dev/null)
	check "citcat_proc_self_status_${mode}_replay_verified" [ "$(jfield "$sj" verified)" = True ]
	check "citcat_proc_self_status_${mode}_replayed_output_equals_real" cmp -s "$TMP/status_real_$mode.out" "$TMP/status_replay_$mode.out"
done

# --stdout -: the replayed program's output on standard output, the summary on stderr (a file
# named '-' was made); with --dump (stdout holds the trace) it is refused
"$SPENT" citcat record -o "$TMP/echo" -- echo "hello from the replay" > /dev/null 2>&1
(cd "$TMP" && "$SPENT" citcat replay "$TMP/echo" --stdout - --json > "$TMP/echo.out" 2> "$TMP/echo.err")
check "citcat_replay_stdout_dash_is_the_programs_output" test "$(cat "$TMP/echo.out")" = "hello from the replay"
check "citcat_replay_stdout_dash_summary_on_stderr" grep -q '"verified":true' "$TMP/echo.err"
check "citcat_replay_stdout_dash_makes_no_file" test ! -e "$TMP/-"
"$SPENT" citcat replay "$TMP/echo" --stdout - --dump > /dev/null 2> "$TMP/echo.err"
check "citcat_replay_stdout_dash_with_dump_refused" test $? -eq 2
