#!/bin/bash
# tests/e2e/citcat_threads.sh - threaded programs recorded one thread at a time and replayed
# with the recorded schedule in one address space: a two-thread mutex/condvar handoff with
# compute in each thread (tests/progs/citcat_threads) replays verified, with each thread's
# instruction count equal, within 0.5%, to callgrind's count for that thread (an independent
# simulator; the small difference is glibc's cpuid-dependent string functions and startup);
# the trace stream and --dump say which thread ran each instruction (spent locks sees both
# threads hold the mutex); zstd -T2 records and replays verified; 12 threads started one after
# another replay verified with a 10 us time slice (--time-slice 0.01); CPU-bound threads are
# preempted at exact points (verified, counts equal callgrind's per thread), and a thread that
# spins on a flag without a syscall no longer hangs the recording; python3 with 4 threads
# replays verified.
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
E=(env -i PATH=/usr/bin:/bin)

# --no-syscallbuf where counts are compared with callgrind's: the syscall buffer's preloaded
# library adds its own start-up instructions to the main thread, and callgrind runs without it
"${E[@]}" "$SPENT" citcat record --no-syscallbuf -o "$TMP/thr" -- "$PROGS/citcat_threads" > "$TMP/thr.real" 2> "$TMP/thr.err"
check "citcat_threads_records" [ $? = 0 ]
check "citcat_threads_record_counts_two_threads" has "$TMP/thr.err" " 2 threads ("
check "citcat_threads_output_is_the_programs" [ "$(grep -c '^worker: \|^main: ' "$TMP/thr.real")" = 2 ]
tj=$("$SPENT" citcat replay "$TMP/thr" --json --stdout "$TMP/thr.rep" 2> "$TMP/thr.rerr")
check "citcat_threads_replay_verified" [ "$(jfield "$tj" verified)" = True ]
check "citcat_threads_replayed_stdout_equals_real" cmp -s "$TMP/thr.real" "$TMP/thr.rep"
check "citcat_threads_replay_two_threads" [ "$(jfield "$tj" threads)" = 2 ]
# 200 handoffs: each one a switch at a futex wait
check "citcat_threads_replay_switches_at_each_handoff" [ "$(jfield "$tj" switches)" -ge 200 ]
python3 -c 'import json,sys; t=json.loads(sys.argv[1])["thread_instructions"]; print(" ".join(str(x["instructions"]) for x in t)); sys.exit(sum(x["instructions"] for x in t) != json.loads(sys.argv[1])["instructions"])' "$tj" > "$TMP/per_thread"
check "citcat_threads_per_thread_counts_add_up" [ $? = 0 ]

if command -v valgrind > /dev/null; then
	"${E[@]}" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg.out" \
		"$PROGS/citcat_threads" > "$TMP/cg.stdout" 2> "$TMP/cg.err"
	read -r main worker < "$TMP/per_thread"
	cg_main=$(awk '/^totals:/ { print $2 }' "$TMP/cg.out-01" 2>/dev/null)
	cg_worker=$(awk '/^totals:/ { print $2 }' "$TMP/cg.out-02" 2>/dev/null)
	check "citcat_threads_main_count_matches_callgrind ($main vs ${cg_main:-none})" within "$main" "${cg_main:-0}" 0.5
	check "citcat_threads_worker_count_matches_callgrind ($worker vs ${cg_worker:-none})" within "$worker" "${cg_worker:-0}" 0.5
else
	skip "citcat_threads_counts_match_callgrind: valgrind is not installed"
fi

# the trace stream: instructions carry their thread, switches are events
"$SPENT" citcat record -o "$TMP/small" -- "$PROGS/citcat_threads" 5 200 > /dev/null 2>&1
sj=$("$SPENT" citcat replay "$TMP/small" --json 2>/dev/null)
"$SPENT" citcat replay "$TMP/small" --dump 2>/dev/null > "$TMP/small.dump"
check "citcat_threads_dump_count_equals_fast_count" [ "$(grep -vc '^ \|^#' "$TMP/small.dump")" = "$(jfield "$sj" instructions)" ]
check "citcat_threads_dump_shows_switches" [ "$(grep -c '^# thread ' "$TMP/small.dump")" -ge 10 ]
"$SPENT" locks "$TMP/small" > "$TMP/locks.txt" 2>&1
check "citcat_threads_locks_sees_both_threads_hold_the_mutex" grep -Eq '^0x[0-9a-f]+ +([0-9]+ +)?([^ ]+ +)?lock +pthread_mutex .* [0-9]+,[0-9]+ ' "$TMP/locks.txt"

# a real program: zstd with a worker thread per core
# (fewer lines under the sanitized build: its replay is 4x slower; still two workers' jobs)
lines=150000
spent_sanitized && lines=60000
seq 1 $lines > "$TMP/nums.txt"
"$SPENT" citcat record -o "$TMP/zst" -- zstd -T2 -q -c "$TMP/nums.txt" > "$TMP/zst.real" 2> "$TMP/zst.err"
check "citcat_threads_zstd_records" [ $? = 0 ]
zj=$("$SPENT" citcat replay "$TMP/zst" --json --stdout "$TMP/zst.rep" 2>/dev/null)
if [ "$(jfield "$zj" verified)" = True ]; then pass citcat_threads_zstd_replay_verified
else fail "citcat_threads_zstd_replay_verified: $(jfield "$zj" error)"; fi
check "citcat_threads_zstd_several_threads" [ "$(jfield "$zj" threads)" -ge 2 ]
check "citcat_threads_zstd_stdout_equals_real" cmp -s "$TMP/zst.real" "$TMP/zst.rep"

# thread creation and exit with other threads ready, switching at every chance (a 10 us time
# slice): a thread created before its creator's clone is recorded, or run before the exited
# thread whose tid word it reads is reaped, makes the replay diverge (the first was 12 in 20
# with 8 threads); so does a switch inside a munmap, whose freed range the next thread's stack
# mmap can take before the munmap is recorded (7 in 60 with 12 threads)
# (six recordings, three under the sanitized build, whose replays are 4x slower)
spawns=6
spent_sanitized && spawns=3
bad=""
for i in $(seq 1 $spawns); do
	"$SPENT" citcat record --time-slice 0.01 -o "$TMP/spawn" -- "$PROGS/citcat_threads" spawn 12 1000 \
		> "$TMP/spawn.real" 2> "$TMP/spawn.err" || { bad="run $i: record failed: $(tail -1 "$TMP/spawn.err")"; break; }
	wj=$("$SPENT" citcat replay "$TMP/spawn" --json --stdout "$TMP/spawn.rep" 2>/dev/null)
	if [ "$(jfield "$wj" verified)" != True ] || ! cmp -s "$TMP/spawn.real" "$TMP/spawn.rep"; then
		bad="run $i: $(jfield "$wj" error)"; break
	fi
	[ "$(jfield "$wj" threads)" = 13 ] && [ "$(jfield "$wj" switches)" -ge 24 ] ||
		{ bad="run $i: $(jfield "$wj" threads) threads, $(jfield "$wj" switches) switches"; break; }
done
if [ -z "$bad" ]; then pass citcat_threads_spawn_fine_slices_replay_verified
else fail "citcat_threads_spawn_fine_slices_replay_verified: $bad"; fi
check "citcat_threads_time_slice_0_refused" bash -c "! '$SPENT' citcat record --time-slice 0 -o '$TMP/no' -- true 2> '$TMP/ts.err' && grep -q 'give 0.001 to 1000 ms' '$TMP/ts.err' && [ ! -e '$TMP/no' ]"

# CPU-bound threads: preempted when their 20 ms time slice runs out with another thread ready,
# at an exact point (POINT: pc, registers, stack hash) where the replay switches too
"${E[@]}" "$SPENT" citcat record --no-syscallbuf -o "$TMP/par" -- "$PROGS/citcat_threads" par 20000000 > "$TMP/par.real" 2> "$TMP/par.err"
check "citcat_threads_cpu_bound_records" [ $? = 0 ]
pj=$("$SPENT" citcat replay "$TMP/par" --json --stdout "$TMP/par.rep" 2>/dev/null)
check "citcat_threads_cpu_bound_replay_verified" [ "$(jfield "$pj" verified)" = True ]
check "citcat_threads_cpu_bound_stdout_equals_real" cmp -s "$TMP/par.real" "$TMP/par.rep"
check "citcat_threads_cpu_bound_preempted_at_points" [ "$(jfield "$pj" preemption_points)" -ge 1 ]
if command -v valgrind > /dev/null; then
	"${E[@]}" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/pcg.out" \
		"$PROGS/citcat_threads" par 20000000 > /dev/null 2>&1
	read -r main worker < <(python3 -c 'import json,sys; print(" ".join(str(x["instructions"]) for x in json.loads(sys.argv[1])["thread_instructions"]))' "$pj")
	cg_main=$(awk '/^totals:/ { print $2 }' "$TMP/pcg.out-01" 2>/dev/null)
	cg_worker=$(awk '/^totals:/ { print $2 }' "$TMP/pcg.out-02" 2>/dev/null)
	check "citcat_threads_cpu_bound_main_count_matches_callgrind ($main vs ${cg_main:-none})" within "$main" "${cg_main:-0}" 0.5
	check "citcat_threads_cpu_bound_worker_count_matches_callgrind ($worker vs ${cg_worker:-none})" within "$worker" "${cg_worker:-0}" 0.5
fi

# a thread that spins on memory another thread sets, without a syscall: only a preemption lets
# the other thread run (before, the recording never ended)
timeout 120 "$SPENT" citcat record -o "$TMP/spin" -- "$PROGS/citcat_threads" spin 5000000 > "$TMP/spin.real" 2> /dev/null
check "citcat_threads_spin_wait_records_and_ends" [ $? = 0 ]
wj=$("$SPENT" citcat replay "$TMP/spin" --json --stdout "$TMP/spin.rep" 2>/dev/null)
check "citcat_threads_spin_wait_replay_verified" [ "$(jfield "$wj" verified)" = True ]
check "citcat_threads_spin_wait_stdout_equals_real" cmp -s "$TMP/spin.real" "$TMP/spin.rep"

# python3 with 4 threads (the GIL hands over with futex waits and 5 ms timeouts; preemptions
# land in the interpreter loop, where MXCSR's inexact flag is set: a point compares MXCSR's
# control bits only, since the simulator never sets its exception flags)
# (a twentieth of the steps under the sanitized build, whose replay of python runs at 11 M
# instructions/s: Unicorn 2.0.1 allocates a tree at every guest store (its notdirty path), and
# ASan's malloc records a stack for each; python's start-up is then 45 M of the 63 M
# instructions, and the futex waits and the 10 switches the check is about still happen;
# 30000 steps otherwise: 140 M instructions, the same 10 switches as 100000 steps' 408 M)
steps=30000
spent_sanitized && steps=5000
"${E[@]}" "$SPENT" citcat record -o "$TMP/py4" -- python3 "$SPENT_TOP/tests/e2e/citcat_threads_py4.py" $steps > "$TMP/py4.real" 2> /dev/null
check "citcat_threads_python_4_threads_records" [ $? = 0 ]
yj=$("$SPENT" citcat replay "$TMP/py4" --json --stdout "$TMP/py4.rep" 2>/dev/null)
check "citcat_threads_python_4_threads_replay_verified ($(jfield "$yj" error))" [ "$(jfield "$yj" verified)" = True ]
check "citcat_threads_python_4_threads_five_threads" [ "$(jfield "$yj" threads)" = 5 ]
check "citcat_threads_python_stdout_equals_real" cmp -s "$TMP/py4.real" "$TMP/py4.rep"

# record_replay_runs NAME SLICE_MS PROG [ARG...]: record PROG at that time slice $runs times
# (one run when sanitized), each replay bounded; $bad says the first run that failed, $pp the
# last replay's preemption points
runs=2
spent_sanitized && runs=1
record_replay_runs() {
	local name=$1 slice=$2 prog=$3 j rc
	shift 3
	bad="" pp=0
	for i in $(seq 1 $runs); do
		"$SPENT" citcat record --time-slice "$slice" -o "$TMP/$name$i" -- "$prog" "$@" \
			> "$TMP/$name$i.real" 2> /dev/null || { bad="run $i: record failed"; return; }
		j=$(timeout 120 "$SPENT" citcat replay "$TMP/$name$i" --json --stdout "$TMP/$name$i.rep" 2>/dev/null)
		rc=$?
		if [ $rc -ne 0 ] || [ "$(jfield "$j" verified)" != True ] || ! cmp -s "$TMP/$name$i.real" "$TMP/$name$i.rep"; then
			bad="run $i: rc $rc ($([ $rc = 124 ] && echo 'did not end in 120 s'; jfield "$j" error))"
			return
		fi
		pp=$(jfield "$j" preemption_points)
	done
}

# a switch right after a signal handler's rt_sigreturn, at 0.5 ms slices (citcat_thread_alarm:
# two threads spin on a flag while main takes 15 SIGALRMs): the replay loaded the restored
# registers inside the syscall hook, which made Unicorn run on instead of stopping for the
# switch, and the spinning thread never saw the flag (6 of 6 recordings hung; the --dump
# path switched up to 64 K instructions late). Two recordings (one sanitized), each bounded.
record_replay_runs ta 0.5 "$PROGS/citcat_thread_alarm"
check "citcat_threads_switch_after_sigreturn_replays_verified${bad:+: $bad}" test -z "$bad"

# Preemptions inside libm's sin (stmxcsr copies of MXCSR in rbx and the stack, with the CPU's
# sticky inexact flag, never the simulator's): every recording diverged at its first such
# point. Two recordings (one sanitized) at a 1 ms time slice, each with preemption points.
# (A quarter of the terms sanitized, whose replay runs a fifth as fast: still some 50 slices.)
record_replay_runs lm 1 "$PROGS/citcat_threads_libm" $(spent_sanitized && echo 200000)
check "citcat_threads_preempted_inside_libm_replays_verified${bad:+: $bad}" test -z "$bad"
check "citcat_threads_libm_has_preemption_points (${pp:-0})" test "${pp:-0}" -ge 1
