#!/bin/bash
# tests/e2e/citcat_hostile.sh - recordings that are well-formed but hostile (found by
# fuzz_citcat_replay, committed in tests/fuzz/corpus/fuzz_citcat_replay/, self-contained so they
# need no recorder and no file of another machine) end `spent citcat replay` quickly with one
# clear error line: a brk mapping of 1 TiB in the initial state, a MADV_DONTNEED (ZERO) record
# over 64 TiB. Both used to run for hours, walking the range page by page. The committed
# seed they were made from replays to its recorded exit, verified (the oracle that the
# recording form is still read as the replayer expects).
source "$(dirname "$0")/lib.sh"
corpus=$SPENT_TOP/tests/fuzz/corpus/fuzz_citcat_replay

replay() { # NAME FILE: replay FILE as a recording directory; sets rc, secs
	mkdir -p "$TMP/$1" && cp "$2" "$TMP/$1/recording"
	local t0=$(date +%s%N)
	timeout 60 "$SPENT" citcat replay "$TMP/$1" --json >"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
	secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
}

replay seed "$corpus/tiny-inline.rec"
check "citcat_hostile_seed_replays_verified" \
	[ "$rc" = 0 -a "$(jfield "$(cat "$TMP/seed.out")" verified)" = True ]
for name in regress-brk-1tib regress-zero-64tib; do
	replay "$name" "$corpus/$name.rec"
	check "citcat_hostile_${name}_fails_within_5s (rc $rc after ${secs}s)" [ "$rc" = 1 -a "$secs" -lt 5 ]
	check "citcat_hostile_${name}_one_error_line: $(head -1 "$TMP/$name.err")" \
		[ "$(wc -l <"$TMP/$name.err")" = 1 ]
done
