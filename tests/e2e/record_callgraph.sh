#!/bin/bash
# tests/e2e/record_callgraph.sh - call stacks: with -g (frame pointers) and -g dwarf (libdwfl
# unwinding of user stack copies) the recursion's root is inclusive of ~all samples, recursion
# is counted once per stack, and exports carry the stacks.
# test: serial (its workloads are sampled for a time, not a count)
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
	# counted once per stack: never above root with frame pointers; with DWARF one unwind in
	# a run can stop above root (one sample of ~2150 in a sanitized CI pass: rec 99.81%, root
	# 99.77%; not seen again in 6 recordings), so there only never above 100% (counted once
	# per frame, the defect this checks for, gives several hundred percent)
	limit=$r
	[ "$mode" = dwarf ] && limit=100
	check "callgraph_${mode}_recursion_counted_once_per_stack" awk -v r="$rec" -v t="$limit" 'BEGIN{exit !(r > 0 && r <= t + 0.01)}'
done
rec=$(child_pct "$TMP/dwarf" rec)
check callgraph_dwarf_unwinds_past_frameless_leaf awk -v r="$rec" 'BEGIN{exit !(r >= 95)}'
deep=$($SPENT report -i "$TMP/fp" --folded | awk -F';' '{ if (NF > m) m = NF } END { print m }')
check folded_stacks_show_recursion_depth test "$deep" -ge 10
$SPENT report -i "$TMP/fp" --pprof "$TMP/cg.pb.gz" 2>/dev/null
# the samples file carries the per-image counts (its leaf frames): no image's histogram file,
# and the flat report still counts the leaf functions
check record_g_writes_no_histogram_files bash -c "! ls '$TMP/fp/epoch-0000' | grep -v -e '^samples@' -e '^unknown@' -e '^span$' | grep -q ."
check record_g_flat_report_from_samples_file bash -c "$SPENT report -i '$TMP/fp' --csv | grep -q ',burn,'"
check pprof_with_stacks_gives_root_cumulative bash -c "go tool pprof -top -cum '$TMP/cg.pb.gz' 2>/dev/null | grep -E ' root$' | grep -qE '(9[5-9]|100)(\.[0-9]+)?%'"

# a frame whose return address is 0 ends the walk: nothing is credited to address 0 (0 - 1 was
# the last kernel symbol, ftrace_trampoline, with ~100% children)
"$SPENT" record -e task-clock -g -o "$TMP/zf" -- "$PROGS/zero_frame" 0.4 >/dev/null 2>&1
"$SPENT" report -i "$TMP/zf" --children --csv > "$TMP/zf.csv"
check zero_return_address_ends_the_walk awk -F, '$1 == "[kernel.kallsyms]" && $7 > 50 { bad = 1 } END { exit bad }' "$TMP/zf.csv"
check zero_return_address_leaf_is_the_root awk -F, '$2 == "spin_on_zero_frame" && $6 > 90 { ok = 1 } END { exit !ok }' "$TMP/zf.csv"
"$SPENT" report -i "$TMP/zf" --folded > "$TMP/zf.folded"
check zero_return_address_stack_is_the_leaf_alone awk '{ t += $NF } $1 == "spin_on_zero_frame" { s = $NF } END { exit !(t > 0 && s > 0.9 * t) }' "$TMP/zf.folded"

# a short real program with -g: the last samples are read once the command has exited (not
# yet reaped) and a frame outside its maps made them reload from /proc, whose maps file is
# empty for a zombie; that wiped every mapping and 70-95% of perl's samples were unknown
unknown=0 total=0
for i in 1 2 3; do
	$SPENT record -g -o "$TMP/short" -- perl -e 'my $x = 0; $x += $_ for 1 .. 200000' 2> "$TMP/short.err" > /dev/null
	line=$(grep ' samples (' "$TMP/short.err")
	total=$((total + $(echo "$line" | sed -E 's/^spent: ([0-9]+) samples.*/\1/')))
	unknown=$((unknown + $(echo "$line" | sed -E 's/.* ([0-9]+) unknown.*/\1/')))
done
check "record_g_short_program_samples_placed ($unknown of $total unknown)" \
	awk -v u="$unknown" -v t="$total" 'BEGIN { exit !(t > 0 && u <= 0.05 * t) }'

# report -g (perf's): under each function the call chains of its samples. Under burn, with no
# threshold, the chains are exactly the folded stacks that end in burn (folded.c, another
# path from the same stacks): same chains, same counts; every one runs from main through root
# (recurse's shape); callee order is the same chains leaf first; -g none shows none
"$SPENT" report -i "$TMP/fp" -g caller,0 --json > "$TMP/g.json"
"$SPENT" report -i "$TMP/fp" --folded > "$TMP/g.folded"
check "report_g_chains_under_burn_are_its_folded_stacks" python3 -c '
import json, sys
burn = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["symbol"] == "burn"][0]
got = {";".join(c["stack"]): c["samples"] for c in burn["call_chains"]}
want = {}
for l in open(sys.argv[2]):
    stack, n = l.rsplit(" ", 1)
    if stack.split(";")[-1] == "burn":
        want[stack] = want.get(stack, 0) + int(n)
ok = got == want and sum(got.values()) == burn["samples"] and len(got) >= 5
ok = ok and all("main" in s.split(";") and "root" in s.split(";") for s in got)
print(len(got), "chains", sum(got.values()), "of", burn["samples"], "samples; folded:", len(want), sum(want.values()))
sys.exit(0 if ok else 1)' "$TMP/g.json" "$TMP/g.folded"
"$SPENT" report -i "$TMP/fp" -g callee,0 --json > "$TMP/gc.json"
check "report_g_callee_is_the_chains_leaf_first" python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["symbol"] == "burn"][0]["call_chains"]
b = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["symbol"] == "burn"][0]["call_chains"]
sys.exit(0 if a and [c["stack"][::-1] for c in a] == [c["stack"] for c in b] and b[0]["stack"][0] == "burn" else 1)' "$TMP/g.json" "$TMP/gc.json"
"$SPENT" report -i "$TMP/fp" -g --limit 1 > "$TMP/g.txt"
check "report_g_table_lists_chains_from_main_to_burn" grep -qE '^ +[0-9.]+%  .*main -> root -> .*burn$' "$TMP/g.txt"
check "report_g_none_shows_no_chains" bash -c "! '$SPENT' report -i '$TMP/fp' -g none --json | grep -q call_chains"
"$SPENT" report -i "$TMP/fp" -g --by line > /dev/null 2> "$TMP/g_line.err"; rc=$?
check "report_g_by_line_is_refused (rc $rc)" test "$rc" -eq 2 -a "$(wc -l < "$TMP/g_line.err")" -eq 1
