#!/bin/bash
# tests/fuzz/run.sh BUILD SECONDS - run every libFuzzer target briefly from its seeds: the
# committed ones (tests/fuzz/corpus/NAME: hand-made inputs and regression inputs of fixed
# bugs) and those seeds.sh made from the test programs (BUILD/seeds/NAME), copied into a
# scratch corpus BUILD/corpus/NAME that the run grows. Prints per target the executions, the
# speed and the corpus size before and after (a corpus that does not grow says so).
set -u
build=$1 secs=$2 failed=0 n=0
# undefined behaviour ends the run as a crash does: recoverable by default, it was printed and
# the target still passed (a memcpy to a NULL buffer in the log writer went unnoticed so)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
for f in "$build"/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	corpus="$build/corpus/$name"
	mkdir -p "$corpus"
	for seeds in "tests/fuzz/corpus/$name" "$build/seeds/$name"; do
		[ -d "$seeds" ] && cp -r "$seeds/." "$corpus/"
	done
	before=$(find "$corpus" -type f | wc -l)
	if "$f" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 "$corpus" >"$build/$name.log" 2>&1; then
		after=$(find "$corpus" -type f | wc -l)
		runs=$(grep -oE '^#[0-9]+' "$build/$name.log" | tail -1 | tr -d '#')
		speed=$(grep -oE 'exec/s: [0-9]+' "$build/$name.log" | tail -1 | grep -oE '[0-9]+')
		grew=""
		[ "$after" -gt "$before" ] || grew=" (no new inputs)"
		echo "fuzz $name: ok (${runs:-0} runs in ${secs}s, ${speed:-0} exec/s, corpus $before -> $after$grew)"
	else
		echo "fuzz $name: FAILED (see $build/$name.log)"
		tail -30 "$build/$name.log"
		failed=$((failed + 1))
	fi
	n=$((n + 1))
done
echo "fuzz: $n targets, $failed failed"
[ $failed -eq 0 ]
