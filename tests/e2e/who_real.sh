#!/bin/bash
# tests/e2e/who_real.sh - `spent report --sort` as a new user meets it on programs nobody here
# wrote: thread names holding a comma, a tab, a slash or UTF-8 (python3 threads renamed with
# prctl) are selectable with --comm (a comma escaped as "\,") and keep the table's columns; a
# selection that matches nothing says so on stderr (with the profile's span for --time); a
# table cut by --limit says how many rows it left out; number columns line up with their
# header; a profile of two events gives a table for each.
# test: serial (its threads' CPU split is measured by the clock)
source "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null; then
	skip "who_real: python3 is not installed"
	exit 0
fi
# four threads that name themselves (prctl PR_SET_NAME = 15) and burn 0.3 s of their own CPU
cat >"$TMP/names.py" <<'EOF'
import ctypes, threading, time
libc = ctypes.CDLL(None)
def worker(name):
    libc.prctl(15, ctypes.c_char_p(name.encode()), 0, 0, 0)
    t = time.thread_time()
    while time.thread_time() - t < 0.3:
        pass
names = ["w 1:x/y", "kworker/0:1", "a,b", "\u00e9\tz%"]
ts = [threading.Thread(target=worker, args=(n,)) for n in names]
for t in ts: t.start()
for t in ts: t.join()
EOF
"$SPENT" record -e cpu-clock -o "$TMP/names" -- python3 "$TMP/names.py" >/dev/null 2>"$TMP/rec.err"
check who_real_record_exit_zero test $? -eq 0
"$SPENT" report -i "$TMP/names" --sort comm --csv >"$TMP/comm.csv"
# rows_of CSV NAME: the samples of the row whose (CSV-quoted when needed) comm is NAME
rows_of() { python3 -c 'import csv,sys; print(sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[1])) if r["comm"] == sys.argv[2]))' "$1" "$2"; }
# samples ARGS...: the total of a --sort comm table under these options
samples() { "$SPENT" report -i "$TMP/names" "$@" --sort comm --csv 2>/dev/null |
	python3 -c 'import csv,sys; print(sum(int(r["samples"]) for r in csv.DictReader(sys.stdin)))'; }

comma=$(rows_of "$TMP/comm.csv" "a,b")
check who_real_comma_comm_has_samples test "${comma:-0}" -gt 0
check who_real_comm_with_escaped_comma_selects_it test "$(samples --comm 'a\,b')" = "$comma"
slash=$(rows_of "$TMP/comm.csv" "kworker/0:1")
check who_real_escaped_comma_in_a_list test "$(samples --comm 'a\,b,kworker/0:1')" = $((comma + slash))
check who_real_comm_with_space_and_colon test "$(samples --comm 'w 1:x/y')" = \
	"$(rows_of "$TMP/comm.csv" "w 1:x/y")"
check who_real_comm_with_tab_and_utf8 test "$(samples --comm "$(printf '\303\251\tz%%')")" = \
	"$(rows_of "$TMP/comm.csv" "$(printf '\303\251\tz%%')")"

# the table: a tab in a name shows as \t, every row has as many fields as the header, and
# the right edge of each number column is its header's
"$SPENT" report -i "$TMP/names" --sort comm,pid,tid --limit 5 >"$TMP/table.txt"
check who_real_table_has_no_tab bash -c "! grep -q \$'\\t' '$TMP/table.txt'"
check who_real_table_shows_tab_escaped grep -qF 'é\tz%' "$TMP/table.txt"
aligned=$(python3 - "$TMP/table.txt" <<'EOF'
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8") if not l.startswith("#")]
head, rows = lines[0], lines[1:]
tid_end = head.index("tid") + 3
print("yes" if rows and all(len(r) == tid_end for r in rows) else "no: %r" % lines)
EOF
)
check who_real_last_number_column_under_its_header test "$aligned" = yes
total_rows=$(($(wc -l <"$TMP/comm.csv") - 1))
"$SPENT" report -i "$TMP/names" --sort comm --limit 2 >"$TMP/cut.txt"
check who_real_limit_says_rows_left_out grep -q "^# $((total_rows - 2)) more rows not shown" "$TMP/cut.txt"
"$SPENT" report -i "$TMP/names" --sort comm --limit $((total_rows + 5)) >"$TMP/uncut.txt"
check who_real_no_note_when_nothing_cut bash -c "! grep -q 'more rows' '$TMP/uncut.txt'"

# selections that match nothing: an empty table and one line saying why, exit 0
"$SPENT" report -i "$TMP/names" --sort comm --comm nosuch >"$TMP/none.out" 2>"$TMP/none.err"
check who_real_no_match_exit_zero test $? -eq 0
check who_real_no_match_says_so grep -q 'warning: no sample of the profile.* matches the selection' "$TMP/none.err"
check who_real_no_match_empty_table test "$(grep -vc '^#\|samples' "$TMP/none.out")" = 0
"$SPENT" report -i "$TMP/names" --comm nosuch >/dev/null 2>"$TMP/none2.err"
check who_real_no_match_plain_report_says_so grep -q 'matches the selection' "$TMP/none2.err"
"$SPENT" report -i "$TMP/names" --sort comm --time 1000,2000 >/dev/null 2>"$TMP/late.err"
check who_real_time_past_the_end_names_the_span grep -q "time '1000,2000': the profile spans 0-[0-9.]* s" "$TMP/late.err"
"$SPENT" report -i "$TMP/names" --sort comm --comm python3 >/dev/null 2>"$TMP/some.err"
check who_real_matching_selection_no_warning bash -c "! grep -q 'matches the selection' '$TMP/some.err'"


# two events: --sort gives a table for each selected event (it showed the first only)
"$SPENT" record -e cpu-clock,page-faults -o "$TMP/two" -- sh -c "head -c 20000000 /dev/zero | gzip -1 | wc -c" >/dev/null 2>&1
check who_real_two_events_two_tables test "$("$SPENT" report -i "$TMP/two" --sort comm | grep -c "^# [0-9]* samples of '\(cpu-clock\|page-faults\)' by comm")" = 2
"$SPENT" report -i "$TMP/two" --sort comm --csv >"$TMP/two.csv"
check who_real_two_events_csv_one_header test "$(grep -c '^comm,event,' "$TMP/two.csv")" = 1
check who_real_two_events_csv_both test "$(awk -F, 'NR > 1 { print $2 }' "$TMP/two.csv" | sort -u | tr '\n' ' ')" = "cpu-clock page-faults "
pf=$("$SPENT" report -i "$TMP/two" -e page-faults --csv | awk -F, 'NR > 1 { s += $4 } END { print s + 0 }')
check who_real_event_total_is_the_plain_reports test "$(awk -F, '$2 == "page-faults" { s += $3 } END { print s + 0 }' "$TMP/two.csv")" = "$pf"
check who_real_dash_e_one_event test "$("$SPENT" report -i "$TMP/two" --sort comm -e page-faults --json | grep -vc '"event":"page-faults"')" = 0
