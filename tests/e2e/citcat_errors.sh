#!/bin/bash
# tests/e2e/citcat_errors.sh - what citcat refuses, clearly: a binary or input file changed
# between record and replay (error before replay starts), a truncated recording (replay up to
# the cut, then an error), a threaded program, a command that does not exist, bad arguments.
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
lines() { [ "$(wc -l < "$1")" = "$2" ]; }
lt() { [ "$1" -lt "$2" ]; }
gt() { [ "$1" -gt "$2" ]; }

# a changed input file: the replay refuses before running anything
printf 'first version of the input\n' > "$TMP/in.txt"
"$SPENT" citcat record -o "$TMP/rec" -- "$PROGS/citcat_inputs" "$TMP/in.txt" > /dev/null 2>&1
"$SPENT" citcat replay "$TMP/rec" --json > "$TMP/ok.json" 2>/dev/null
check "citcat_unchanged_input_replays_verified" [ "$(jfield "$(cat "$TMP/ok.json")" verified)" = True ]
printf 'second version of the input\n' > "$TMP/in.txt"
"$SPENT" citcat replay "$TMP/rec" --json > "$TMP/out.json" 2> "$TMP/err.txt"
rc=$?
check "citcat_changed_input_fails" [ "$rc" != 0 ]
check "citcat_changed_input_names_the_file" has "$TMP/err.txt" "'$TMP/in.txt' changed since it was recorded"
check "citcat_changed_input_error_is_one_line" lines "$TMP/err.txt" 1
check "citcat_changed_input_nothing_replayed" [ ! -s "$TMP/out.json" ]

# a changed binary
cp "$PROGS/citcat_tiny" "$TMP/tiny"
"$SPENT" citcat record -o "$TMP/trec" -- "$TMP/tiny" > /dev/null 2>&1
printf '\0' >> "$TMP/tiny"
"$SPENT" citcat replay "$TMP/trec" > "$TMP/out2" 2> "$TMP/err2.txt"
rc=$?
check "citcat_changed_binary_fails" [ "$rc" != 0 ]
check "citcat_changed_binary_names_the_binary" has "$TMP/err2.txt" "'$TMP/tiny' changed since it was recorded"
check "citcat_changed_binary_nothing_replayed" [ ! -s "$TMP/out2" ]

# a truncated recording: the replay runs up to the cut, then says so
printf 'input\n' > "$TMP/in2.txt"
"$SPENT" citcat record -o "$TMP/full" -- "$PROGS/citcat_inputs" "$TMP/in2.txt" > /dev/null 2>&1
full=$("$SPENT" citcat replay "$TMP/full" --json 2>/dev/null)
mkdir -p "$TMP/cut"
size=$(stat -c %s "$TMP/full/recording")
head -c $((size - 300)) "$TMP/full/recording" > "$TMP/cut/recording"
cut=$("$SPENT" citcat replay "$TMP/cut" --json 2> "$TMP/err3.txt")
rc=$?
check "citcat_truncated_replay_fails" [ "$rc" != 0 ]
check "citcat_truncated_replay_ran_instructions" gt "$(jfield "$cut" instructions)" 100000
check "citcat_truncated_replay_stopped_before_the_end" lt "$(jfield "$cut" syscalls)" "$(jfield "$full" syscalls)"
check "citcat_truncated_replay_error_says_cut" has "$TMP/err3.txt" "replayed up to the cut"
check "citcat_truncated_replay_not_verified" [ "$(jfield "$cut" verified)" = False ]
# cut inside the initial image: refused before running
head -c 2000 "$TMP/full/recording" > "$TMP/cut/recording"
"$SPENT" citcat replay "$TMP/cut" > /dev/null 2> "$TMP/err4.txt"
check "citcat_cut_in_initial_image_refused" has "$TMP/err4.txt" "ends before its initial state is complete"
# a flipped byte in the middle is detected by the record checksums (never a crash)
cp "$TMP/full/recording" "$TMP/cut/recording"
printf '\x55' | dd of="$TMP/cut/recording" bs=1 seek=$((size / 2)) conv=notrunc status=none
"$SPENT" citcat replay "$TMP/cut" > /dev/null 2> "$TMP/err5.txt"
rc=$?
check "citcat_corrupt_recording_fails_cleanly" [ "$rc" = 1 ]

# threads are refused with a pointer to spent trace; nothing is left behind
"$SPENT" citcat record -o "$TMP/thr" -- "$PROGS/citcat_thread" > /dev/null 2> "$TMP/err6.txt"
rc=$?
check "citcat_thread_refused" [ "$rc" != 0 ]
check "citcat_thread_message_points_to_spent_trace" has "$TMP/err6.txt" "use 'spent trace'"
check "citcat_thread_leaves_no_recording" [ ! -e "$TMP/thr" ]
check "citcat_thread_leaves_no_temporary" [ -z "$(ls -d "$TMP"/thr.tmp.* 2>/dev/null)" ]

# a missing command, a non-recording directory, bad arguments
"$SPENT" citcat record -o "$TMP/none" -- "$TMP/does-not-exist" 2> "$TMP/err7.txt"
check "citcat_missing_command_message" has "$TMP/err7.txt" "cannot run '$TMP/does-not-exist'"
mkdir -p "$TMP/notrec" && echo hi > "$TMP/notrec/file"
"$SPENT" citcat record -o "$TMP/notrec" -- "$PROGS/citcat_tiny" > /dev/null 2> "$TMP/err8.txt"
check "citcat_record_refuses_to_overwrite_other_directory" has "$TMP/err8.txt" "not a citcat recording"
check "citcat_other_directory_untouched" [ -f "$TMP/notrec/file" ]
"$SPENT" citcat replay "$TMP/notrec" 2> "$TMP/err9.txt"
check "citcat_replay_of_non_recording_fails" [ $? != 0 ]
"$SPENT" citcat bogus 2> "$TMP/err10.txt"
check "citcat_unknown_subcommand_exit_2" [ $? = 2 ]
