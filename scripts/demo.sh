#!/bin/sh
# scripts/demo.sh - what `make demo` shows: where the bundled demo program's time goes, in the
# four views a first-time user needs: the counts (spent stat), the top functions (spent record +
# spent report), a flame graph to open in a browser, and the commands to try next. Quick by
# design: the demo runs for about half a second of CPU time, three times.
#
#   scripts/demo.sh SPENT DEMO OUTDIR      (make demo: build/spent build/progs/demo build/demo)
set -eu
spent=$1 demo=$2 out=$3
mkdir -p "$out"
out=$(cd "$out" && pwd)
prof=$out/demo.prof svg=$out/demo.svg

heading() { printf '\n==== %s\n\n' "$*"; }

heading "1. counts: spent stat -- $demo"
"$spent" stat -- "$demo"

heading "2. where the time goes: spent record -o $prof -- $demo; spent report -i $prof --limit 10"
"$spent" record -o "$prof" -- "$demo"
"$spent" report -i "$prof" --limit 10

heading "3. the flame graph: spent report -i $prof --flamegraph $svg"
"$spent" report -i "$prof" --flamegraph "$svg"
echo "flame graph: $svg (open it in a browser: click to zoom, Search highlights a regex)"

heading "4. next commands to try"
# one command per line after its comment: tests/e2e/cli_demo.sh runs every one of them
next() { printf '  # %s\n  %s\n' "$1" "$2"; }
next "the same samples by source line" "$spent report -i $prof --by line --limit 10"
next "the hottest function, instruction by instruction" "$spent annotate -i $prof heavy"
next "with call stacks (then report --children)" "$spent record -g -o $out/demo-g.prof -- $demo"
next "counts over 3 runs, with their spread" "$spent stat -r 3 -- $demo"
next "an exact instruction trace, and its cache hierarchy" \
	"$spent trace -o $out/demo.log -- $demo 0.01 && $spent cachesim $out/demo.log"
next "every command; 'spent CMD -h' for a command's options" "$spent help"
