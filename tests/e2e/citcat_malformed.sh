#!/bin/bash
# tests/e2e/citcat_malformed.sh - recordings that are malformed but carry valid checksums
# (written by citcat_rewrite.py, from a minimal recording it builds itself) are refused with one
# clear line, within seconds, by every command that replays one: citcat replay (fast path and
# --dump), trace dump, cachesim, hitcurve, memmap, locks. None of them may run forever.
source "$(dirname "$0")/lib.sh"
rewrite() { python3 "$SPENT_TOP/tests/e2e/citcat_rewrite.py" "$@"; }
failed_in_time() { [ "$1" != 0 ] && [ "$1" != 124 ]; }	# 124: timeout killed it
cd "$TMP" || exit 1

mkdir -p good
rewrite synth good/recording
j=$("$SPENT" citcat replay good --json 2>/dev/null)
check "citcat_synthetic_recording_replays_verified" [ "$(jfield "$j" verified)" = True ]
check "citcat_synthetic_recording_exit_status_7" [ "$(jfield "$j" exit_status)" = 7 ]
"$SPENT" citcat replay good --dump > good.dump 2>/dev/null
check "citcat_synthetic_recording_dumps_3_instructions" [ "$(grep -c '^0x' good.dump)" = 3 ]

# refused CASE PATTERN: every replaying command fails on recording CASE, before the timeout,
# with one error line ("spent...": --dump prints its summary on stderr too) matching PATTERN
refused() {
	local case=$1 pattern=$2 name cmd rc
	for cmd in "citcat replay" "citcat replay --dump" "trace dump" cachesim hitcurve memmap locks; do
		name=${cmd// /_}
		name=${name//--/}
		# shellcheck disable=SC2086
		timeout 10 "$SPENT" $cmd "$case" > "$case.$name.out" 2> "$case.$name.err"
		rc=$?
		check "citcat_malformed_${case}_${name}_fails_in_time" failed_in_time "$rc"
		check "citcat_malformed_${case}_${name}_says_why" grep -q -- "$pattern" "$case.$name.err"
		check "citcat_malformed_${case}_${name}_one_error_line" [ "$(grep -c '^spent' "$case.$name.err")" = 1 ]
	done
}

# malform CASE OPS...: CASE/recording is the good one rewritten by OPS
malform() {
	local case=$1
	shift
	mkdir -p "$case"
	rewrite good/recording "$case/recording" "$@"
}

malform no_regs drop-first 6
refused no_regs "initial state has no REGS record"
malform pc_zero set-pc 0
refused pc_zero "initial pc 0 is not in an executable mapping"
malform pc_unmapped set-pc 0x1000
refused pc_unmapped "initial pc 0x1000 is not in an executable mapping"
# thread switches (version 4): to a thread no clone created, in a single-threaded replay;
# where the program executes a syscall and the recording switches instead; a reason unknown
malform switch_blocked_unknown switch-to-4242 0
refused switch_blocked_unknown "switches from thread 1 to thread 4242, which the replay did not create"
malform switch_here switch-to-4242 1
refused switch_here "the replay executed a syscall, the recording has a thread switch"
malform switch_bad_reason switch-to-4242 2
refused switch_bad_reason "malformed"
# a syscall whose last argument (r9) differs from the recorded one: the message names all six
malform r9_differs set-r9 0x99
refused r9_differs "replay syscall 231(0x7, 0, 0, 0, 0, 0), recorded 231(0x7, 0, 0, 0, 0, 0x99)"
malform no_exec_map drop-all 3
refused no_exec_map "no executable MAP record"
# code the simulator stops on: a halt (it would resume past it, batch after batch), and zero
# bytes (add [rax], al with rax 0: a write to page 0)
malform halt poke-pc f4f4
refused halt "the simulator stopped after 1 instructions at pc 0x400001"
malform zero_code poke-pc 0000000000
refused zero_code "the simulator stopped after [0-9]* instructions at pc 0x400000: Invalid memory read"
