#!/bin/bash
# tests/e2e/studies_tree.sh - the study sinks on a trace of a process tree: --comm and --pid pick
# processes (their I1 accesses equal the instructions `trace stats --json` counts for those
# processes), cachesim on the whole tree sees every process's instructions, and keeps their
# address spaces apart (the whole tree's misses are at least the sum of the processes' alone).
source "$(dirname "$0")/lib.sh"
"$SPENT" trace -o "$TMP/t.log" -- sh -c 'seq 1 400 | sort -r > /dev/null' > /dev/null 2>&1
stats=$("$SPENT" trace stats "$TMP/t.log" --json)
pyq() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); $1" "$stats"; }
sort_insns=$(pyq 'print(sum(p["instructions"] for p in d["processes"] if p["exe"].endswith("/sort")))')
sort_pid=$(pyq 'print([p["pid"] for p in d["processes"] if p["exe"].endswith("/sort")][0])')
pid_insns=$(pyq "print(sum(p['instructions'] for p in d['processes'] if p['pid'] == $sort_pid))")
all_insns=$(pyq 'print(d["instructions"])')
i1() { "$SPENT" cachesim "$TMP/t.log" --json "$@" | python3 -c 'import json,sys
for l in sys.stdin:
    o = json.loads(l)
    if o.get("cache") == "I1": print(o["accesses"], o["misses"])'; }
read -r c_acc c_miss <<< "$(i1 --comm sort)"
check "studies_tree_cachesim_comm_counts_that_program" [ "$c_acc" = "$sort_insns" ]
read -r p_acc p_miss <<< "$(i1 --pid "$sort_pid")"
check "studies_tree_cachesim_pid_counts_that_process" [ "$p_acc" = "$pid_insns" ]
read -r a_acc a_miss <<< "$(i1)"
check "studies_tree_cachesim_whole_tree" [ "$a_acc" = "$all_insns" ]
read -r s_acc s_miss <<< "$(i1 --comm seq)"
check "studies_tree_address_spaces_apart ($a_miss >= $c_miss + $s_miss)" [ "$a_miss" -ge $((c_miss + s_miss)) ]
"$SPENT" hitcurve "$TMP/t.log" --comm nosuchprogram > "$TMP/h.out" 2> "$TMP/h.err"
check "studies_tree_comm_matching_nothing_is_empty_not_an_error" [ $? = 0 ]
check "studies_tree_no_instructions_no_cpi_estimate" grep -q "^CPI estimate: none (no instructions)$" "$TMP/h.out"
check "studies_tree_comm_matching_nothing_says_so" \
	grep -q "warning: hitcurve: no process of '.*t.log' matches --comm nosuchprogram" "$TMP/h.err"
"$SPENT" cachesim "$TMP/t.log" --pid 1 > /dev/null 2> "$TMP/c.err"
check "studies_tree_pid_matching_nothing_says_so ($?)" grep -q "matches --pid 1 " "$TMP/c.err"
"$SPENT" trace dump --comm nosuchprogram "$TMP/t.log" > "$TMP/d.out" 2> "$TMP/d.err"
check "studies_tree_dump_comm_matching_nothing_says_so ($?)" \
	bash -c "grep -q 'no process matches --comm nosuchprogram' '$TMP/d.err' && [ ! -s '$TMP/d.out' ]"
"$SPENT" hitcurve "$TMP/t.log" --comm sort > /dev/null 2> "$TMP/h2.err"
check "studies_tree_comm_matching_says_nothing" test ! -s "$TMP/h2.err"
"$SPENT" memmap "$TMP/t.log" --pid -3 --png "$TMP/m.png" > /dev/null 2> "$TMP/m.err"
check "studies_tree_bad_pid_exit_2" [ $? = 2 ]
