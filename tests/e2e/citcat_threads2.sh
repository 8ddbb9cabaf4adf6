#!/bin/bash
# tests/e2e/citcat_threads2.sh - what the kernel does to a threaded program outside the
# running thread's own syscalls: a thread that exits holding a robust mutex has its robust
# list cleaned by the kernel (FUTEX_OWNER_DIED written into the futex word), recorded as an
# effect of its exit, so the replayed main gets EOWNERDEAD as the real one did; signals sent
# with pthread_kill to a thread blocked in read() while main runs are held in their delivery
# stop and delivered when that thread runs again, the kernel's EINTR (no SA_RESTART) and
# restart (SA_RESTART) included, and replayed verified.
source "$(dirname "$0")/lib.sh"
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" citcat record -o "$TMP/rob" -- "$PROGS/citcat_robust" > "$TMP/rob.real" 2>/dev/null
check "citcat_robust_records" [ $? = 0 ]
check "citcat_robust_real_run_sees_owner_dead" grep -q 'EOWNERDEAD' "$TMP/rob.real"
rj=$("$SPENT" citcat replay "$TMP/rob" --json --stdout "$TMP/rob.rep" 2>/dev/null)
check "citcat_robust_replay_verified" [ "$(jfield "$rj" verified)" = True ]
check "citcat_robust_replayed_stdout_equals_real" cmp -s "$TMP/rob.real" "$TMP/rob.rep"

"${E[@]}" "$SPENT" citcat record -o "$TMP/tsig" -- "$PROGS/citcat_thread_signal" > "$TMP/tsig.real" 2>"$TMP/tsig.err"
check "citcat_signal_to_blocked_thread_records" [ $? = 0 ]
check "citcat_signal_to_blocked_thread_real_eintr_and_restart" \
	[ "$(grep -c 'EINTR, usr1 handled 1\|1 byte .x., usr2 handled 1' "$TMP/tsig.real")" = 2 ]
tj=$("$SPENT" citcat replay "$TMP/tsig" --json --stdout "$TMP/tsig.rep" 2>/dev/null)
check "citcat_signal_to_blocked_thread_replay_verified" [ "$(jfield "$tj" verified)" = True ]
check "citcat_signal_to_blocked_thread_stdout_equals_real" cmp -s "$TMP/tsig.real" "$TMP/tsig.rep"
