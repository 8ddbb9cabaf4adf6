#!/bin/bash
# tests/e2e/citcat_errors.sh - what citcat refuses, clearly: a binary or input file changed
# between record and replay of a --no-copy recording (error before replay starts), a corrupt or
# missing copy in a default recording (which, unlike --no-copy, replays after its files changed
# or vanished), a truncated recording (replay up to the cut, then an error), a command that
# does not exist, a directory that is not only a recording, bad
# arguments.
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
lines() { [ "$(wc -l < "$1")" = "$2" ]; }
lt() { [ "$1" -lt "$2" ]; }
gt() { [ "$1" -gt "$2" ]; }

# --no-copy: a changed input file: the replay refuses before running anything
printf 'first version of the input\n' > "$TMP/in.txt"
"$SPENT" citcat record --no-copy -o "$TMP/rec" -- "$PROGS/citcat_inputs" "$TMP/in.txt" > /dev/null 2>&1
check "citcat_no_copy_recording_has_no_copies" [ ! -e "$TMP/rec/files" ]
"$SPENT" citcat replay "$TMP/rec" --json > "$TMP/ok.json" 2>/dev/null
check "citcat_unchanged_input_replays_verified" [ "$(jfield "$(cat "$TMP/ok.json")" verified)" = True ]
printf 'second version of the input\n' > "$TMP/in.txt"
"$SPENT" citcat replay "$TMP/rec" --json > "$TMP/out.json" 2> "$TMP/err.txt"
rc=$?
check "citcat_changed_input_fails" [ "$rc" != 0 ]
check "citcat_changed_input_names_the_file" has "$TMP/err.txt" "'$TMP/in.txt' changed since it was recorded"
check "citcat_changed_input_error_is_one_line" lines "$TMP/err.txt" 1
check "citcat_changed_input_nothing_replayed" [ ! -s "$TMP/out.json" ]

# --no-copy: a changed binary
cp "$PROGS/citcat_tiny" "$TMP/tiny"
"$SPENT" citcat record --no-copy -o "$TMP/trec" -- "$TMP/tiny" > /dev/null 2>&1
printf '\0' >> "$TMP/tiny"
"$SPENT" citcat replay "$TMP/trec" > "$TMP/out2" 2> "$TMP/err2.txt"
rc=$?
check "citcat_changed_binary_fails" [ "$rc" != 0 ]
check "citcat_changed_binary_names_the_binary" has "$TMP/err2.txt" "'$TMP/tiny' changed since it was recorded"
check "citcat_changed_binary_nothing_replayed" [ ! -s "$TMP/out2" ]

# default (copies): the binary rebuilt into another program and the input rewritten after the
# recording, then both removed: the replay reads the copy of the binary and the recorded reads
printf 'first version of the input\n' > "$TMP/cin.txt"
cp "$PROGS/citcat_inputs" "$TMP/prog"
"$SPENT" citcat record -o "$TMP/crec" -- "$TMP/prog" "$TMP/cin.txt" > "$TMP/creal.out" 2> /dev/null
real_rc=$?
check "citcat_copy_recording_has_copies_dir_0700" [ "$(stat -c %a "$TMP/crec/files")" = 700 ]
modes=$(stat -c %a "$TMP"/crec/files/*.zst | sort -u)
check "citcat_copies_are_mode_0600" [ "$modes" = 600 ]
# the copy of the binary is its bytes, zstd-compressed (an independent decompressor agrees)
found=0
for z in "$TMP"/crec/files/*.zst; do
	zstd -q -d -c "$z" | cmp -s - "$PROGS/citcat_inputs" && found=1
done
check "citcat_copy_of_binary_decompresses_to_it" [ "$found" = 1 ]
cp "$PROGS/citcat_tiny" "$TMP/prog"
printf 'second version of the input, longer\n' > "$TMP/cin.txt"
cj=$("$SPENT" citcat replay "$TMP/crec" --json --stdout "$TMP/creplay.out" 2> "$TMP/cerr.txt")
check "citcat_copy_replays_verified_after_binary_and_input_changed" [ "$(jfield "$cj" verified)" = True ]
check "citcat_copy_replay_after_change_exit_status_equals_real" [ "$(jfield "$cj" exit_status)" = "$real_rc" ]
check "citcat_copy_replay_after_change_stdout_equals_real" cmp -s "$TMP/creal.out" "$TMP/creplay.out"
check "citcat_copy_replay_counts_copy_bytes" [ "$(jfield "$cj" copy_bytes)" -gt 1000 ]
rm -f "$TMP/prog" "$TMP/cin.txt"
cj=$("$SPENT" citcat replay "$TMP/crec" --json 2>/dev/null)
check "citcat_copy_replays_verified_after_binary_and_input_removed" [ "$(jfield "$cj" verified)" = True ]
# the recording file's path works too: the copies are found next to it
cj=$("$SPENT" citcat replay "$TMP/crec/recording" --json 2>/dev/null)
check "citcat_copy_replays_verified_given_the_recording_file" [ "$(jfield "$cj" verified)" = True ]
# a moved recording replays (nothing refers to its old place)
mv "$TMP/crec" "$TMP/crec_moved"
cj=$("$SPENT" citcat replay "$TMP/crec_moved" --json 2>/dev/null)
check "citcat_copy_replays_verified_after_moving_it" [ "$(jfield "$cj" verified)" = True ]

# a corrupt copy, then a missing one: refused before anything runs, naming the file
big=$(ls -S "$TMP"/crec_moved/files/*.zst | head -1)
cp "$big" "$TMP/big.zst"
size=$(stat -c %s "$big")
printf '\x55\xaa' | dd of="$big" bs=1 seek=$((size / 2)) conv=notrunc status=none
"$SPENT" citcat replay "$TMP/crec_moved" > "$TMP/cout" 2> "$TMP/cerr2.txt"
rc=$?
check "citcat_corrupt_copy_fails" [ "$rc" != 0 ]
check "citcat_corrupt_copy_says_corrupt" grep -q "in the recording (files/[0-9a-f]*\.zst) is corrupt" "$TMP/cerr2.txt"
check "citcat_corrupt_copy_error_is_one_line" lines "$TMP/cerr2.txt" 1
check "citcat_corrupt_copy_nothing_replayed" [ ! -s "$TMP/cout" ]
rm "$big"
"$SPENT" citcat replay "$TMP/crec_moved" > /dev/null 2> "$TMP/cerr3.txt"
check "citcat_missing_copy_says_missing" grep -q "is missing from the recording (files/" "$TMP/cerr3.txt"
cp "$TMP/big.zst" "$big"
cj=$("$SPENT" citcat replay "$TMP/crec_moved" --json 2>/dev/null)
check "citcat_restored_copy_replays_verified" [ "$(jfield "$cj" verified)" = True ]

# recording over an old recording replaces it whole; over one holding anything else: refused
printf 'input\n' > "$TMP/in3.txt"
"$SPENT" citcat record -o "$TMP/crec_moved" -- "$PROGS/citcat_tiny" > /dev/null 2>&1
check "citcat_rerecord_replaces_old_recording" [ "$(ls "$TMP/crec_moved/files" | wc -l)" = 1 ]
check "citcat_rerecord_leaves_no_temporary" [ -z "$(ls -d "$TMP"/crec_moved.tmp.* 2>/dev/null)" ]
echo mine > "$TMP/crec_moved/files/notes.txt"
before=$(cd "$TMP/crec_moved" && find . -type f | sort | xargs md5sum)
"$SPENT" citcat record -o "$TMP/crec_moved" -- "$PROGS/citcat_inputs" "$TMP/in3.txt" > /dev/null 2> "$TMP/err11.txt"
rc=$?
after=$(cd "$TMP/crec_moved" && find . -type f | sort | xargs md5sum)
check "citcat_record_refuses_recording_with_other_files" [ "$rc" != 0 ]
check "citcat_record_refusal_says_other_files" has "$TMP/err11.txt" "holds other files too"
check "citcat_recording_with_other_files_untouched" [ "$before" = "$after" ]
check "citcat_refused_record_leaves_no_temporary" [ -z "$(ls -d "$TMP"/crec_moved.tmp.* 2>/dev/null)" ]

# a truncated recording: the replay runs up to the cut, then says so
printf 'input\n' > "$TMP/in2.txt"
"$SPENT" citcat record -o "$TMP/full" -- "$PROGS/citcat_inputs" "$TMP/in2.txt" > /dev/null 2>&1
full=$("$SPENT" citcat replay "$TMP/full" --json 2>/dev/null)
mkdir -p "$TMP/cut"
cp -r "$TMP/full/files" "$TMP/cut/"
size=$(stat -c %s "$TMP/full/recording")
head -c $((size - 300)) "$TMP/full/recording" > "$TMP/cut/recording"
cut=$("$SPENT" citcat replay "$TMP/cut" --json 2> "$TMP/err3.txt")
rc=$?
check "citcat_truncated_replay_fails" [ "$rc" != 0 ]
check "citcat_truncated_replay_ran_instructions" gt "$(jfield "$cut" instructions)" 100000
check "citcat_truncated_replay_stopped_before_the_end" lt "$(jfield "$cut" syscalls)" "$(jfield "$full" syscalls)"
check "citcat_truncated_replay_error_says_cut" has "$TMP/err3.txt" "replayed up to the cut"
check "citcat_truncated_replay_not_verified" [ "$(jfield "$cut" verified)" = False ]
# cut inside the EXIT record itself: the replay reaches the exit, then says the recording was
# cut (it said the output differed, and the studies read it as a whole run, exit 0)
bad=""
for n in 1 6 12; do
	head -c $((size - n)) "$TMP/full/recording" > "$TMP/cut/recording"
	"$SPENT" citcat replay "$TMP/cut" > /dev/null 2> "$TMP/err5.txt"
	rc=$?
	grep -q "replayed up to the cut: the recording is cut short" "$TMP/err5.txt" && [ $rc = 1 ] ||
		{ bad="$n bytes: rc $rc, $(head -c 160 "$TMP/err5.txt")"; break; }
	[ $n = 1 ] || continue	# a study once: it reads the recording through the same replay
	"$SPENT" cachesim "$TMP/cut" > /dev/null 2> "$TMP/err5.txt"
	rc=$?
	grep -q "cut short" "$TMP/err5.txt" && [ $rc = 1 ] || { bad="$n bytes: cachesim rc $rc"; break; }
done
check "citcat_cut_in_the_exit_record_says_cut${bad:+: $bad}" [ -z "$bad" ]
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

# a thread that only starts and is joined (no longer refused: citcat_threads.sh has more)
"$SPENT" citcat record -o "$TMP/thr" -- "$PROGS/citcat_thread" > "$TMP/thr.out" 2> "$TMP/err6.txt"
check "citcat_thread_records" [ $? = 0 ]
check "citcat_thread_replays_verified" "$SPENT" citcat replay "$TMP/thr" --stdout "$TMP/thr.rep"
check "citcat_thread_replayed_output" grep -qx joined "$TMP/thr.rep"

# a missing command, a non-recording directory, bad arguments
"$SPENT" citcat record -o "$TMP/none" -- "$TMP/does-not-exist" 2> "$TMP/err7.txt"
check "citcat_missing_command_message" has "$TMP/err7.txt" "cannot run '$TMP/does-not-exist'"
mkdir -p "$TMP/notrec" && echo hi > "$TMP/notrec/file"
"$SPENT" citcat record -o "$TMP/notrec" -- "$PROGS/citcat_tiny" > /dev/null 2> "$TMP/err8.txt"
check "citcat_record_refuses_to_overwrite_other_directory" has "$TMP/err8.txt" "not a citcat recording"
check "citcat_other_directory_untouched" [ -f "$TMP/notrec/file" ]
# refused before the program runs (it ran to the end and the recording was thrown away), and
# a symlink or a file at -o named as such
for out in notrec crec_moved link devnull; do
	rm -f "$TMP/ran"
	case $out in
	link) ln -sfn "$TMP/crec_moved" "$TMP/link"; o=$TMP/link; want="it is a symlink" ;;
	devnull) o=/dev/null; want="exists and is not a directory" ;;
	*) o=$TMP/$out; want="citcat recording" ;;
	esac
	"$SPENT" citcat record -o "$o" -- sh -c "touch '$TMP/ran'" 2> "$TMP/err12.txt"
	rc=$?
	check "citcat_record_refuses_-o_${out}_before_the_run (exit $rc: $(head -c 150 "$TMP/err12.txt"))" \
		bash -c "[ $rc = 1 ] && [ ! -e '$TMP/ran' ] && grep -q '$want' '$TMP/err12.txt'"
done
"$SPENT" citcat replay "$TMP/notrec" 2> "$TMP/err9.txt"
check "citcat_replay_of_non_recording_fails" [ $? != 0 ]
"$SPENT" citcat bogus 2> "$TMP/err10.txt"
check "citcat_unknown_subcommand_exit_2" [ $? = 2 ]

# options come from parse_options tables (one per subcommand): both spellings of a value,
# --no-copy as the negation of --copy, one unknown-option message, the man page
"$SPENT" citcat record --output="$TMP/po1" --cpuid=patch --no-copy -- "$PROGS/citcat_tiny" > /dev/null 2>&1
check "citcat_record_output_equals_form" [ -f "$TMP/po1/recording" ]
check "citcat_record_no_copy_negates_copy" [ ! -e "$TMP/po1/files" ]
"$SPENT" citcat record --output "$TMP/po2" --cpuid patch -- "$PROGS/citcat_tiny" > /dev/null 2>&1
check "citcat_record_output_space_form_keeps_copies" [ -d "$TMP/po2/files" ]
"$SPENT" citcat replay "$TMP/po2" --stdout="$TMP/po2.out" > /dev/null 2>&1
check "citcat_replay_stdout_equals_form" [ -f "$TMP/po2.out" ]
"$SPENT" citcat record --frobnicate -- "$PROGS/citcat_tiny" > /dev/null 2> "$TMP/po3.err"
rc=$?
check "citcat_record_unknown_option_exit_2" [ "$rc" = 2 ]
check "citcat_record_unknown_option_one_line" lines "$TMP/po3.err" 1
check "citcat_record_unknown_option_message" has "$TMP/po3.err" "spent citcat record: unknown option '--frobnicate'"
"$SPENT" citcat replay "$TMP/po2" --frobnicate > /dev/null 2> "$TMP/po4.err"
check "citcat_replay_unknown_option_exit_2" [ $? = 2 ]
check "citcat_replay_unknown_option_message" has "$TMP/po4.err" "spent citcat replay: unknown option '--frobnicate'"
"$SPENT" citcat record --cpuid=sometimes -- "$PROGS/citcat_tiny" > /dev/null 2> "$TMP/po5.err"
check "citcat_record_bad_cpuid_lists_choices" has "$TMP/po5.err" "auto,fault,patch"
"$SPENT" citcat replay "$TMP/po2" "$TMP/po1" > /dev/null 2> "$TMP/po6.err"
check "citcat_replay_two_directories_refused" [ $? = 2 ]
"$SPENT" citcat --man > "$TMP/man.roff"
check "citcat_man_page_lists_record_and_replay_options" \
	bash -c "grep -q '^.TH SPENT-CITCAT 1' '$TMP/man.roff' && grep -q 'cpuid=auto|fault|patch' '$TMP/man.roff' && grep -q 'stdout=FILE' '$TMP/man.roff' && grep -q 'default: citcat.rec' '$TMP/man.roff'"
"$SPENT" citcat record --man | grep -q '^.TH SPENT-CITCAT-RECORD 1'
check "citcat_record_man_page" [ $? = 0 ]

# a command that cannot run exits as the shell, stat and record do: 127 not found, 126 not
# runnable; one line, nothing left behind
"$SPENT" citcat record -o "$TMP/nf" -- spent-no-such-command-here > /dev/null 2> "$TMP/nf.err"
rc=$?
check "citcat_record_missing_command_exits_127 (rc $rc)" [ $rc = 127 ]
check "citcat_record_missing_command_one_line" lines "$TMP/nf.err" 1
printf 'not a program\n' > "$TMP/data.txt"
chmod 644 "$TMP/data.txt"
"$SPENT" citcat record -o "$TMP/nx" -- "$TMP/data.txt" > /dev/null 2> "$TMP/nx.err"
rc=$?
check "citcat_record_unrunnable_command_exits_126 (rc $rc)" [ $rc = 126 ]
check "citcat_record_unrunnable_leaves_nothing" [ -z "$(ls -d "$TMP"/nf* "$TMP"/nx* 2>/dev/null | grep -v '\.err$')" ]

# signals: a ^C to the terminal's process group, or SIGTERM to spent alone (passed on to the
# program), ends the program, whose end is recorded: a complete recording of a run killed by
# the signal, exit 128+SIG, no DIR.tmp.PID (spent died of the ^C and left its temporary)
python3 - "$SPENT" "$TMP" <<'PY'
import os, signal, subprocess, sys, time
spent, tmp = sys.argv[1], sys.argv[2]
for how, sig, want in (("group_sigint", signal.SIGINT, 130), ("sigterm_to_spent", signal.SIGTERM, 143)):
    d = os.path.join(tmp, "sig_" + how)
    p = subprocess.Popen([spent, "citcat", "record", "-o", d, "--", "sleep", "5"], start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # once the program runs under the recorder (a sleep in spent's session), not after a fixed
    # wait that a loaded machine can outlast before the program starts
    def program_runs():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                st = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
            if comm == "sleep" and int(rest[3]) == p.pid:	# field 6: the session
                return True
        return False
    for _ in range(200):
        if program_runs():
            break
        time.sleep(0.05)
    time.sleep(0.2)
    t0 = time.time()
    if how == "group_sigint":
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    try:
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill(); rc = None
    left = [x for x in os.listdir(tmp) if x.startswith("sig_" + how + ".tmp.")]
    ok = rc == want and os.path.isdir(d) and not left
    print(("PASS " if ok else "FAIL ") + f"citcat_record_{how}_ends_recorded_exit_{want} (rc {rc}, {time.time() - t0:.1f} s, temporaries {left})")
    r = subprocess.run([spent, "citcat", "replay", d, "--json"], capture_output=True, text=True)
    ok = r.returncode == 0 and '"verified":true' in r.stdout
    print(("PASS " if ok else "FAIL ") + f"citcat_record_{how}_recording_replays_verified (rc {r.returncode})")
PY
# a replay stopped by a signal says where, exits 128+SIG and leaves no --stdout temporary
# (python's start-up: 50 ms natively, seconds of replay)
"$SPENT" citcat record -o "$TMP/long" -- python3 -c 'print(1)' > /dev/null 2>&1
"$SPENT" citcat replay "$TMP/long" --stdout "$TMP/long.out" > /dev/null 2> "$TMP/long.err" &
rp=$!
# once the replay has run 0.3 s of CPU (utime + stime, in ticks), however loaded the machine
for _ in $(seq 1 200); do
	t=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$rp/stat 2> /dev/null || echo 0)
	[ "${t:-0}" -ge $(($(getconf CLK_TCK) * 3 / 10)) ] && break
	sleep 0.05
done
kill -TERM $rp
wait $rp
rc=$?
check "citcat_replay_stopped_by_sigterm_exits_143 (rc $rc)" [ $rc = 143 ]
check "citcat_replay_stopped_says_where" grep -q "stopped: interrupted after [0-9]* instructions at pc 0x" "$TMP/long.err"
check "citcat_replay_stopped_leaves_no_stdout_file" [ -z "$(ls "$TMP" | grep '^long\.out')" ]

# calls that write no user memory draw no "syscalls whose memory outputs citcat does not
# know" warning (msync did: python's mmap.flush, a program saving a shared file mapping)
printf 'abcdef\n' > "$TMP/mapped.txt"
"$SPENT" citcat record -o "$TMP/msync" -- "$PROGS/citcat_msync" "$TMP/mapped.txt" > /dev/null 2> "$TMP/msync.err"
check "citcat_msync_records_without_unknown_syscall_warning ($(grep -o 'first: [0-9]*' "$TMP/msync.err"))" \
	sh -c "! grep -q 'memory outputs citcat does not know' '$TMP/msync.err'"
check "citcat_msync_recording_replays_verified" "$SPENT" citcat replay "$TMP/msync"

# POSIX timers and timerfd write ids and old values into the program (timer_create's id was
# not recorded: the replay's fourth timer was 0, and timer_settime diverged)
"$SPENT" citcat record -o "$TMP/ptimers" -- "$PROGS/citcat_posix_timers" > "$TMP/ptimers.out" 2> "$TMP/ptimers.err"
check "citcat_posix_timers_prints_their_ids" grep -q '^ids 0 1 2 3, old >= 99 s 1, current >= 99 s 1, timerfd old >= 99 s 1, fired 1$' "$TMP/ptimers.out"
check "citcat_posix_timers_record_without_unknown_syscall_warning ($(grep -o 'first: [0-9]*' "$TMP/ptimers.err"))" \
	sh -c "! grep -q 'memory outputs citcat does not know' '$TMP/ptimers.err'"
check "citcat_posix_timers_replay_verified" "$SPENT" citcat replay "$TMP/ptimers" --stdout "$TMP/ptimers.rep"
check "citcat_posix_timers_replayed_output_equals_recorded" cmp -s "$TMP/ptimers.out" "$TMP/ptimers.rep"
