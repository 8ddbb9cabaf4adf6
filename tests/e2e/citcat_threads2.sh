#!/bin/bash
# tests/e2e/citcat_threads2.sh - what the kernel does to a threaded program outside the
# running thread's own syscalls: a thread that exits holding a robust mutex has its robust
# list cleaned by the kernel (FUTEX_OWNER_DIED written into the futex word), recorded as an
# effect of its exit, so the replayed main gets EOWNERDEAD as the real one did.
source "$(dirname "$0")/lib.sh"
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" citcat record -o "$TMP/rob" -- "$PROGS/citcat_robust" > "$TMP/rob.real" 2>/dev/null
check "citcat_robust_records" [ $? = 0 ]
check "citcat_robust_real_run_sees_owner_dead" grep -q 'EOWNERDEAD' "$TMP/rob.real"
rj=$("$SPENT" citcat replay "$TMP/rob" --json --stdout "$TMP/rob.rep" 2>/dev/null)
check "citcat_robust_replay_verified" [ "$(jfield "$rj" verified)" = True ]
check "citcat_robust_replayed_stdout_equals_real" cmp -s "$TMP/rob.real" "$TMP/rob.rep"
