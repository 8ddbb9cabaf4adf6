#!/bin/bash
# tests/e2e/citcat_fpu.sh - citcat replays floating-point programs as they ran: libm calls with
# float and double arguments through lazily bound PLT slots (ld.so's resolver saves and
# restores the argument registers with fxsave/fxrstor under the CITCAT CPU model), compared with
# the program's native output; and python3 importing random (which seeds itself through
# floating-point code). Before the simulator started in the x87/SSE state execve leaves, both
# diverged (exp(-0.5) replayed as 1.0).
source "$(dirname "$0")/lib.sh"

# record CMD... into $TMP/$1; SKIP every named check when this machine cannot record at all
recorded() {
	local dir=$1; shift
	"$SPENT" citcat record -o "$TMP/$dir" -- "$@" > "$TMP/$dir.real" 2> "$TMP/$dir.err"
	local rc=$?
	if [ $rc != 0 ] && grep -q "cpuid faulting" "$TMP/$dir.err"; then
		reason="this machine lacks CPUID faulting and citcat record has no other way to trap cpuid"
		return 1
	fi
	return 0
}

# 1. libm through the PLT: recorded output = native output = replayed output
"$PROGS/citcat_libm" -0.5 2.25 > "$TMP/libm.native"
if recorded libm "$PROGS/citcat_libm" -0.5 2.25; then
	check "citcat_libm_recorded_output_equals_native" cmp -s "$TMP/libm.native" "$TMP/libm.real"
	j=$("$SPENT" citcat replay "$TMP/libm" --json --stdout "$TMP/libm.replay" 2> "$TMP/libm.rerr")
	check "citcat_libm_replay_verified" [ "$(jfield "$j" verified)" = True ]
	check "citcat_libm_replayed_output_equals_native" cmp -s "$TMP/libm.native" "$TMP/libm.replay"
	check "citcat_libm_replayed_exp_of_minus_half" grep -qx 'exp(x) 0x1.368b2fc6f960ap-1' "$TMP/libm.replay"
else
	for n in recorded_output_equals_native replay_verified replayed_output_equals_native \
		 replayed_exp_of_minus_half; do
		skip "citcat_libm_$n: $reason"
	done
fi

# 2. python3 seeding random (getrandom, then floating-point arithmetic)
# Debian's python3 (the package): a python3 earlier in PATH may be another build entirely (a
# pyenv one here ran 141 M instructions for this line against Debian's 38 M)
py=/usr/bin/python3
if recorded py "$py" -c 'import random; print(random.random() < 2)'; then
	check "citcat_python_random_recorded_prints_true" grep -qx True "$TMP/py.real"
	j=$("$SPENT" citcat replay "$TMP/py" --json --stdout "$TMP/py.replay" 2> "$TMP/py.rerr")
	check "citcat_python_random_replay_verified" [ "$(jfield "$j" verified)" = True ]
	check "citcat_python_random_replayed_prints_true" grep -qx True "$TMP/py.replay"
else
	for n in recorded_prints_true replay_verified replayed_prints_true; do
		skip "citcat_python_random_$n: $reason"
	done
fi

# 3. fxsave stores what the CPU stores: the x87 slots' upper 6 bytes and the last-opcode field
# zero (Unicorn 2.0.1 leaves them as they were), both in the program's own fxsave/fxsave64
# (compared with the native run) and in what ld.so's lazy-binding trampoline left in the stack
# (compared with the recorded run). The stale bytes made a signal's point inside a lazily bound
# call's resolution unmatchable (citcat_sbuf with a 1 ms timer, one recording in about 30).
"$PROGS/citcat_fxsave" > "$TMP/fx.native"
if recorded fx "$PROGS/citcat_fxsave"; then
	check "citcat_fxsave_recorded_equals_native" \
		cmp -s <(grep -v leftovers "$TMP/fx.native") <(grep -v leftovers "$TMP/fx.real")
	j=$("$SPENT" citcat replay "$TMP/fx" --json --stdout "$TMP/fx.replay" 2> "$TMP/fx.rerr")
	check "citcat_fxsave_replay_verified" [ "$(jfield "$j" verified)" = True ]
	check "citcat_fxsave_replayed_output_equals_recorded" cmp -s "$TMP/fx.real" "$TMP/fx.replay"
else
	for n in recorded_equals_native replay_verified replayed_output_equals_recorded; do
		skip "citcat_fxsave_$n: $reason"
	done
fi
