#!/bin/bash
# tests/fuzz/run.sh BUILD SECONDS - run every libFuzzer target briefly from its seed corpus.
# Corpora live in tests/fuzz/corpus/NAME (seeds, committed) and a scratch copy in BUILD.
set -u
build=$1 secs=$2 failed=0 n=0
for f in "$build"/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	corpus="$build/corpus/$name"
	mkdir -p "$corpus"
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$corpus/"
	if "$f" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 "$corpus" >"$build/$name.log" 2>&1; then
		echo "fuzz $name: ok ($(grep -oE '#[0-9]+' "$build/$name.log" | tail -1 | tr -d '#') runs in ${secs}s)"
	else
		echo "fuzz $name: FAILED (see $build/$name.log)"
		tail -30 "$build/$name.log"
		failed=$((failed + 1))
	fi
	n=$((n + 1))
done
echo "fuzz: $n targets, $failed failed"
[ $failed -eq 0 ]
