#!/bin/bash
# tests/e2e/stat_cli.sh - spent stat's modes and formats, exit statuses and bad input.
# test: serial (its counts and timings are of a machine nothing else is using)
source "$(dirname "$0")/lib.sh"

"$SPENT" stat -e cylces -- true 2>"$TMP/err"; rc=$?
check "unknown event exits 2" test "$rc" -eq 2
check "unknown event names the closest events" grep -q "unknown event 'cylces': did you mean 'cycles'" "$TMP/err"
check "unknown event message is one line" test "$(wc -l < "$TMP/err")" -eq 1
"$SPENT" stat -- /nonexistent/spent-cmd 2>"$TMP/err"; rc=$?
check "a command that does not exist exits 127" test "$rc" -eq 127
check "a command that does not exist is reported like perf" grep -q "workload failed: cannot run '/nonexistent/spent-cmd': No such file or directory" "$TMP/err"
"$SPENT" stat -- sh -c 'exit 3' 2>/dev/null; rc=$?
check "exit status is the command's" test "$rc" -eq 3
"$SPENT" stat -e task-clock -- true 2> /dev/full; rc=$?
check "a table that cannot be written to stderr exits 2 (exit $rc)" test "$rc" -eq 2
"$SPENT" stat -e task-clock -- sh -c 'exit 5' 2> /dev/full; rc=$?
check "a table that cannot be written keeps the command's own status (exit $rc)" test "$rc" -eq 5
# a command that ran and exited 2, 126 or 127 (grep's "no such file", a shell's "not found")
# still gets its counts, as perf prints them: those statuses used to mean "never ran"
for c in 2 126 127; do
	"$SPENT" stat -e task-clock -- sh -c "exit $c" 2> "$TMP/err"; rc=$?
	check "a command that exits $c gets its table and exit $c (exit $rc)" \
		bash -c "[ $rc = $c ] && grep -q 'task-clock' '$TMP/err'"
done
"$SPENT" stat -e task-clock -r 2 -- grep x /nonexistent/spent-file 2> "$TMP/err"; rc=$?
check "grep's exit 2 under -r 2 gets the table of both runs (exit $rc)" \
	bash -c "[ $rc = 2 ] && grep -q '(2 runs)' '$TMP/err'"
# the per-thread modes follow the command's threads with ptrace: its wait status was decoded
# twice there (exit 3 came back as 131, exit 128 as 0)
for mode in --per-thread --per-process; do
	codes=
	for c in 1 3 128 200; do
		"$SPENT" stat $mode -e task-clock -- sh -c "exit $c" > /dev/null 2>&1
		codes="$codes $?"
	done
	"$SPENT" stat $mode -e task-clock -- sh -c 'kill -TERM $$' > /dev/null 2>&1
	codes="$codes $?"
	check "$mode exit statuses are the command's (1 3 128 200 143: got$codes)" test "$codes" = " 1 3 128 200 143"
done
# an event named twice is one row, the mean of its copies, raw fields included (they were
# the sums: counter_value 2x value)
"$SPENT" stat -e task-clock,page-faults,page-faults --json -- true 2> "$TMP/dup.json"
check "a repeated event's raw fields are the copies' mean" /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pf = [r for r in rows if r.get("event") == "page-faults"]
assert len(pf) == 1, pf
r = pf[0]
assert abs(r["counter_value"] - r["value"]) <= 1, r
tc = [r for r in rows if r.get("event") == "task-clock"][0]
assert r["enabled_ns"] <= 1.5 * tc["enabled_ns"], (r, tc)' "$TMP/dup.json"
"$SPENT" stat -r 0 -- true 2>/dev/null; rc=$?
check "-r 0 is refused with exit 2" test "$rc" -eq 2
"$SPENT" stat --bogus -- true 2>/dev/null; rc=$?
check "an unknown option exits 2" test "$rc" -eq 2
"$SPENT" stat -e 'task-clock,,page-faults' -- true 2>/dev/null; rc=$?
check "an empty event name exits 2" test "$rc" -eq 2
"$SPENT" stat -e 'task-clock,' -- true 2> "$TMP/err"; rc=$?
check "a trailing ',' is an empty event name (exit $rc)" grep -q "empty event name after the last ','" "$TMP/err"
ncpu=$(getconf _NPROCESSORS_CONF)
"$SPENT" stat -C $((ncpu + 3)) -- true 2> "$TMP/err"; rc=$?
check "-C of a cpu that is not there names it (exit $rc)" \
	bash -c "[ $rc = 2 ] && grep -q '^spent: cpu $((ncpu + 3)) for -C does not exist or is offline: this machine has cpus ' '$TMP/err'"
# numbers are digits only: strtol took ' 2' and '-r ' -1' became huge elsewhere
for bad in ' 2' '2 ' '+2' '-1' '2x' '99999999999999999999'; do
	"$SPENT" stat -r "$bad" -- true 2>"$TMP/err"; rc=$?
	check "-r '$bad' is refused with exit 2" test "$rc" -eq 2
done
check "a refused number names the option and the range" grep -q -- "-r takes a whole number from 1 to 100000, not '99999999999999999999'" "$TMP/err"
"$SPENT" stat --json --csv -- true 2>"$TMP/err"; rc=$?
check "--json --csv together are refused with exit 2" test "$rc" -eq 2
check "--json --csv together: the message says choose one" grep -q -- "--json and --csv cannot be combined" "$TMP/err"

# output formats
"$SPENT" stat --json -e task-clock,page-faults -- true 2>"$TMP/j"
check "--json rows carry event, value, unit, running_pct" python3 -c '
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if "event" in l]
assert len(rows)==2 and all({"event","value","unit","running_pct"} <= r.keys() for r in rows)' "$TMP/j"
"$SPENT" stat --csv -e task-clock,page-faults -- true 2>"$TMP/c"
check "--csv has a header and one row per event" python3 -c '
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
assert len(rows)==2 and rows[1]["event"]=="page-faults" and float(rows[0]["running_pct"])==100.0' "$TMP/c"
out=$("$SPENT" stat -e page-faults -- echo hello 2>/dev/null)
check "counts go to stderr: the command's stdout stays its own" test "$out" = hello
"$SPENT" stat -o "$TMP/o.txt" -e page-faults -- true 2>"$TMP/e"
check "-o writes the counts to the file" grep -q page-faults "$TMP/o.txt"
check "every table row shows the running percentage" grep -qE 'page-faults.*\(100\.00%\)' "$TMP/o.txt"
check "-o starts with perf's '# started on' line" grep -q '^# started on ' "$TMP/o.txt"
check "one run of a command: user and sys seconds after the elapsed time, as perf prints them" \
	grep -qE '^ +[0-9]+\.[0-9]{9} seconds user$' "$TMP/o.txt"
cp "$TMP/o.txt" "$TMP/o.first"
"$SPENT" stat -o "$TMP/o.txt" --append -e task-clock -- true 2>/dev/null
check "--append keeps the file's counts first, byte for byte" \
	cmp -s "$TMP/o.first" <(head -c "$(stat -c %s "$TMP/o.first")" "$TMP/o.txt")
check "--append adds the new run after them (two runs, two headers)" \
	test "$(grep -c '^# started on ' "$TMP/o.txt")" = 2 -a "$(grep -c 'task-clock' "$TMP/o.txt")" = 1
"$SPENT" stat --append -e task-clock -- true > /dev/null 2> "$TMP/e"
rc=$?
check "--append without -o is refused ($(head -1 "$TMP/e"))" test $rc = 2
"$SPENT" stat -r 2 -o "$TMP/r.txt" -e page-faults -- true 2>/dev/null
"$SPENT" stat -a -o "$TMP/a.txt" -e cpu-clock -- sleep 0.1 2>/dev/null
"$SPENT" stat -x, -o "$TMP/x.txt" -e page-faults -- true 2>/dev/null
check "no user/sys lines for -r (perf's neither), and none in CSV" \
	bash -c "! grep -q 'seconds user' '$TMP/r.txt' '$TMP/x.txt'"
check "-a with a command still shows the command's user/sys" grep -q 'seconds sys' "$TMP/a.txt"

# modes
"$SPENT" stat -a --per-cpu --json -e cpu-clock -- sleep 0.3 2>"$TMP/a"
ncpu=$(nproc)
check "-a --per-cpu has a row per CPU" test "$(grep -c '"cpu":' "$TMP/a")" -eq "$ncpu"
tot=$(python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
print([r for r in rows if "event" in r and "cpu" not in r][0]["value"])' "$TMP/a")
check "-a cpu-clock covers every CPU for the run ($tot ms on $ncpu CPUs)" python3 -c "import sys; sys.exit(not ($tot >= 0.9*300*$ncpu and $tot <= 1.5*300*$ncpu))"
# demo's argument is seconds of CPU time, measured by its own clock: 0.5 s is at least 0.5 s of
# wall time on any machine (it was an iteration count that ran 0.17 s on a faster CPU)
"$SPENT" stat -I 100 --csv -e task-clock,page-faults -- "$PROGS/demo" 0.5 >/dev/null 2>"$TMP/i"
n=$(grep -cE '^[0-9]+\.[0-9]+,task-clock' "$TMP/i")
check "-I 100 prints interval rows during a 0.5 s run ($n)" test "$n" -ge 5
# the last, partial interval is printed too (perf does): the rows add up to the totals
check "-I rows add up to the totals: the final partial interval is printed" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for ev, tol in (("task-clock", 0.01), ("page-faults", 0)):
    iv = sum(float(r["value"]) for r in rows if r["interval"] and r["event"] == ev)
    tot = [float(r["value"]) for r in rows if not r["interval"] and r["event"] == ev][0]
    assert abs(iv - tot) <= tol, (ev, iv, tot)' "$TMP/i"
"$SPENT" stat -r 3 -e page-faults -- "$PROGS/sleeper" 2>"$TMP/r"
check "-r 3 reports mean +- stddev" grep -qE 'page-faults.*\( \+- +[0-9.]+% \)' "$TMP/r"
check "-r 3 says how many runs" grep -q '(3 runs)' "$TMP/r"
"$SPENT" stat --all-events --json -- true 2>"$TMP/all"
for ev in page-faults minor-faults major-faults context-switches cpu-migrations alignment-faults emulation-faults; do
	check "--all-events counts $ev" grep -q "\"event\":\"$ev\"" "$TMP/all"
done
"$SPENT" stat --list > "$TMP/list"
check "--list groups software events" grep -q '^software events:' "$TMP/list"
check "--list shows task-clock" grep -qE '^  task-clock ' "$TMP/list"

# Ctrl-C stops the command and the counts still print, with the command's status
"$SPENT" stat -e task-clock -- sleep 5 2>"$TMP/int" & sp=$!
sleep 0.5; kill -INT $sp; wait $sp; rc=$?
check "SIGINT stops the command with status 130" test "$rc" -eq 130
check "SIGINT still prints the counts" grep -q task-clock "$TMP/int"
# other stop signals are passed on as they came (SIGTERM gave the command SIGINT: 130), the
# counts still land in -o's file, and no temporary or running command is left (SIGHUP's default
# action left both)
for sig in TERM HUP QUIT; do
	"$SPENT" stat -e task-clock -o "$TMP/sig$sig" -- sleep 30 2>/dev/null & sp=$!
	sleep 0.5; kill -$sig $sp; wait $sp; rc=$?
	check "SIG$sig is passed on: status $((128 + $(kill -l $sig)))" test "$rc" -eq $((128 + $(kill -l $sig)))
	check "SIG$sig: the counts are in -o's file" grep -q task-clock "$TMP/sig$sig"
	check "SIG$sig: no temporary is left" test -z "$(ls "$TMP" | grep "sig$sig.tmp")"
	check "SIG$sig: the command is not left running" test -z "$(pgrep -P $$ -x sleep; pgrep -f '^sleep 30$' -P 1)"
done

# hardware events: fall back or count, depending on the machine
if have_pmu; then
	"$SPENT" stat -e cycles,instructions -- "$PROGS/demo" 0.1 2>"$TMP/hw" >/dev/null
	check "with a PMU, instructions get an IPC" grep -q 'insn per cycle' "$TMP/hw"
	"$SPENT" stat --costs -e cycles,branch-misses -- "$PROGS/demo" 0.1 2>"$TMP/cost" >/dev/null
	check "--costs prints estimates with sources" grep -q 'Sources:' "$TMP/cost"
else
	"$SPENT" stat -e cycles -- true 2>"$TMP/fb"
	check "without a PMU cycles falls back to task-clock in one line" grep -q "no hardware PMU on this machine: counting 'task-clock' instead of 'cycles'" "$TMP/fb"
	"$SPENT" stat -e instructions,page-faults -- true 2>"$TMP/fb2"
	check "without a PMU instructions is reported not supported" grep -q '<not supported>.*instructions' "$TMP/fb2"
	# a fallback onto a clock already counted is one row, said once, in either order and
	# format (it was a second '<not supported> task-clock' row)
	for evs in "-e cycles,task-clock" "-e task-clock,cycles" "-e cycles -e cycles"; do
		"$SPENT" stat $evs -- true 2>"$TMP/fb3"
		check "without a PMU, $evs: one task-clock row, no unsupported one" \
			test "$(grep -c 'task-clock' "$TMP/fb3")" = 2 -a -z "$(grep 'not supported' "$TMP/fb3")"
		check "without a PMU, $evs: the fallback said once" \
			test "$(grep -c 'instead of' "$TMP/fb3")" = 1
	done
	"$SPENT" stat -e task-clock,cycles --json -- true 2>"$TMP/fb4"
	check "without a PMU, --json: one task-clock row, none unsupported" \
		test "$(grep -c '"event":"task-clock"' "$TMP/fb4")" = 1 -a -z "$(grep '"supported":false' "$TMP/fb4")"
	"$SPENT" stat --costs -e page-faults -- true 2>"$TMP/c2"
	check "without a PMU --costs says estimates are unavailable" grep -q 'time estimates are unavailable' "$TMP/c2"
	need_pmu "IPC and --costs estimates from hardware counts" || true
fi

# -r N: a rate is the mean count over the mean elapsed time, and --json's raw fields are means
# too. Runs of alternating length (one long, one short) made the mean task-clock over the last
# run's time read 2 CPUs for a single-threaded command. The lower bounds only say it ran: on a
# loaded machine the command gets well under a CPU (0.39 once, with other work running).
rm -f "$TMP/toggle"
alt="if [ -e '$TMP/toggle' ]; then rm '$TMP/toggle'; '$PROGS/hotline' 20; else : > '$TMP/toggle'; '$PROGS/hotline' 200; fi"
"$SPENT" stat -r 4 -e task-clock --json -- sh -c "$alt" > /dev/null 2> "$TMP/rj"
cpus=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; print(r[0]["metric_value"])' "$TMP/rj")
check "stat_repeat_cpus_utilized_over_mean_elapsed (single-threaded, alternating runs: $cpus)" \
	awk -v c="$cpus" 'BEGIN { exit !(c > 0.1 && c < 1.1) }'
mix=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; e=r[0]; f=r[-1]; print("%.3f %.3f" % (e["counter_value"] / 1e6 / e["value"], e["value"] / 1e3 / f["elapsed_s"]))' "$TMP/rj")
check "stat_repeat_json_raw_value_and_elapsed_are_means (ratios: $mix)" \
	python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (abs(a - 1) < 0.01 and 0.1 < b < 1.1))' $mix
