#!/bin/bash
# tests/e2e/record_callgraph.sh - call stacks: with -g (frame pointers) and -g dwarf (libdwfl
# unwinding of user stack copies) the recursion's root is inclusive of ~all samples, recursion
# is counted once per stack, and exports carry the stacks.
source "$(dirname "$0")/lib.sh"

child_pct() { # DIR SYMBOL -> children percent
	$SPENT report -i "$1" --children --json | python3 -c 'import json,sys
for l in sys.stdin:
    o=json.loads(l)
    if o["symbol"]==sys.argv[1]: print(o["children_percent"]); break
else: print(-1)' "$2"
}
for mode in fp dwarf; do
	$SPENT record -g $mode -o "$TMP/$mode" -- "$PROGS/recurse" 150 >/dev/null 2>&1
	r=$(child_pct "$TMP/$mode" root)
	check "callgraph_${mode}_root_inclusive_near_100_percent" awk -v r="$r" 'BEGIN{exit !(r >= 95 && r <= 100)}'
	rec=$(child_pct "$TMP/$mode" rec)
	check "callgraph_${mode}_recursion_counted_once_per_stack" awk -v r="$rec" -v t="$r" 'BEGIN{exit !(r > 0 && r <= t + 0.01)}'
done
rec=$(child_pct "$TMP/dwarf" rec)
check callgraph_dwarf_unwinds_past_frameless_leaf awk -v r="$rec" 'BEGIN{exit !(r >= 95)}'
deep=$($SPENT report -i "$TMP/fp" --folded | awk -F';' '{ if (NF > m) m = NF } END { print m }')
check folded_stacks_show_recursion_depth test "$deep" -ge 10
$SPENT report -i "$TMP/fp" --pprof "$TMP/cg.pb.gz" 2>/dev/null
check pprof_with_stacks_gives_root_cumulative bash -c "go tool pprof -top -cum '$TMP/cg.pb.gz' 2>/dev/null | grep -E ' root$' | grep -qE '(9[5-9]|100)(\.[0-9]+)?%'"
