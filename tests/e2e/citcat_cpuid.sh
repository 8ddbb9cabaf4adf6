#!/bin/bash
# tests/e2e/citcat_cpuid.sh - how citcat makes cpuid trap: software patching (--cpuid patch)
# on every machine, the CPU's CPUID faulting (--cpuid fault) where the CPU has it (SKIP with
# the reason elsewhere), auto choosing between them; cpuid compiled into the program, in a
# forked child, and generated at run time (which only faulting can trap: the replay must stop
# with a clear message, never replay a wrong answer).
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
verified() { [ "$(jfield "$(cat "$1")" verified)" = True ]; }
P=$PROGS/citcat_cpuid

fault_ok=0
grep -qw cpuid_fault /proc/cpuinfo && fault_ok=1

for mode in patch fault; do
	if [ $mode = fault ] && [ $fault_ok = 0 ]; then
		skip "citcat_cpuid_fault_mode: this CPU or hypervisor has no CPUID faulting (no cpuid_fault flag in /proc/cpuinfo)"
		"$SPENT" citcat record --cpuid fault -o "$TMP/nf" -- "$P" static > /dev/null 2> "$TMP/nf.err"
		rc=$?
		check "citcat_cpuid_fault_refused_without_support" [ "$rc" != 0 ]
		check "citcat_cpuid_fault_refusal_suggests_patch" has "$TMP/nf.err" "use --cpuid patch"
		check "citcat_cpuid_fault_refusal_leaves_nothing" [ ! -e "$TMP/nf" ]
		continue
	fi
	"$P" static > "$TMP/$mode.native"
	"$SPENT" citcat record --cpuid $mode -o "$TMP/$mode.rec" -- "$P" static > "$TMP/$mode.real" 2> "$TMP/$mode.err"
	check "citcat_cpuid_${mode}_records" [ $? = 0 ]
	check "citcat_cpuid_${mode}_program_output_shape" [ "$(grep -c '^compiled cpuid' "$TMP/$mode.real")" = 3 ]
	"$SPENT" citcat replay "$TMP/$mode.rec" --json --stdout "$TMP/$mode.replay" > "$TMP/$mode.json" 2>/dev/null
	check "citcat_cpuid_${mode}_replay_verified" verified "$TMP/$mode.json"
	check "citcat_cpuid_${mode}_replayed_stdout_equals_real" cmp -s "$TMP/$mode.real" "$TMP/$mode.replay"
	check "citcat_cpuid_${mode}_recording_says_mode" [ "$(jfield "$(cat "$TMP/$mode.json")" cpuid_mode)" = $mode ]
	if [ $mode = patch ]; then
		check "citcat_cpuid_patch_reports_sites" has "$TMP/$mode.err" "cpuid sites patched"
	fi

	# a forked child runs the inherited patched code
	"$SPENT" citcat record --cpuid $mode -o "$TMP/$mode.frec" -- "$P" fork > "$TMP/$mode.freal" 2>/dev/null
	check "citcat_cpuid_${mode}_forked_child_ran_cpuid" has "$TMP/$mode.freal" "child exit 7"
	"$SPENT" citcat replay "$TMP/$mode.frec" --json > "$TMP/$mode.fjson" 2>/dev/null
	check "citcat_cpuid_${mode}_fork_replay_verified" verified "$TMP/$mode.fjson"

	# cpuid generated at run time
	"$SPENT" citcat record --cpuid $mode -o "$TMP/$mode.jrec" -- "$P" jit > "$TMP/$mode.jreal" 2>/dev/null
	check "citcat_cpuid_${mode}_jit_program_ran" has "$TMP/$mode.jreal" "generated cpuid: "
	"$SPENT" citcat replay "$TMP/$mode.jrec" --json > "$TMP/$mode.jjson" 2> "$TMP/$mode.jerr"
	rc=$?
	if [ $mode = patch ]; then
		check "citcat_cpuid_patch_jit_replay_refused" [ "$rc" = 1 ]
		check "citcat_cpuid_patch_jit_replay_not_verified" [ "$(jfield "$(cat "$TMP/$mode.jjson")" verified)" = False ]
		check "citcat_cpuid_patch_jit_message_names_untrapped_cpuid" has "$TMP/$mode.jerr" "did not trap"
	else
		check "citcat_cpuid_fault_jit_replay_verified" verified "$TMP/$mode.jjson"
	fi
done

# auto: faulting where the CPU has it, patching elsewhere
"$SPENT" citcat record -o "$TMP/auto.rec" -- "$P" static > /dev/null 2>&1
"$SPENT" citcat replay "$TMP/auto.rec" --json > "$TMP/auto.json" 2>/dev/null
want=patch; [ $fault_ok = 1 ] && want=fault
check "citcat_cpuid_auto_picks_$want" [ "$(jfield "$(cat "$TMP/auto.json")" cpuid_mode)" = $want ]
check "citcat_cpuid_auto_replay_verified" verified "$TMP/auto.json"

"$SPENT" citcat record --cpuid sometimes -o "$TMP/bad" -- "$P" static > /dev/null 2> "$TMP/bad.err"
check "citcat_cpuid_bad_mode_exit_2" [ $? = 2 ]
check "citcat_cpuid_bad_mode_message" has "$TMP/bad.err" "--cpuid takes one of auto,fault,patch"
