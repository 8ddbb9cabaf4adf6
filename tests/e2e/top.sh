#!/bin/bash
# tests/e2e/top.sh - `spent top` against a running CPU burner (tests/progs/top_burner.c): in an
# 80x24 tmux pane the hot function shows within 3 s, keys switch the view and pause it, q and
# SIGTERM leave the terminal as it was; batch and JSON output give one table per interval;
# filters keep only the process asked for; bad options are refused.
# test: serial (spent top samples the whole machine and is read within seconds)
source "$(dirname "$0")/lib.sh"
# each pane gets its own tmux server: a new session on the socket of a server that is still
# shutting down after kill-server lands in that server and dies with it (9 in 100 here)
PANES=0
SOCK=spent-top-$$-$PANES
BURNER_PID=
cleanup() {
	for n in $(seq 0 "$PANES"); do tmux -L "spent-top-$$-$n" kill-server 2>/dev/null; done
	[ -n "$BURNER_PID" ] && kill "$BURNER_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
HOT=top_burner_spin

# the burner runs through every check (killed at the end), sized by wall time
"$PROGS/top_burner" 120 > /dev/null &
BURNER_PID=$!

tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
pane() { tm capture-pane -p -t top; }
# wait_pane PATTERN SECONDS: true when the pane shows PATTERN (grep -E) within SECONDS
wait_pane() {
	local end=$(($(date +%s%N) + ${2%.*} * 1000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		pane | grep -qE "$1" && return 0
		sleep 0.05
	done
	return 1
}
# start_pane: spent top in an 80x24 pane; after it exits the shell records how, and the tty
start_pane() {
	tm kill-server 2>/dev/null
	PANES=$((PANES + 1)); SOCK=spent-top-$$-$PANES
	rm -f "$TMP/stty.after"
	tm new-session -d -s top -x 80 -y 24 \
		"stty -a > '$TMP/stty.before'; '$SPENT' top $*; echo \"top exited \$?\"; stty -a > '$TMP/stty.after'; sleep 120"
}
top_pid() { pgrep -P "$(tm display -p -t top '#{pane_pid}')" -x spent; }
# why_not_exited PID: what the pane and the process show when top did not exit as asked
why_not_exited() {
	echo "pid '$1' state '$(ps -o stat=,wchan= -p "$1" 2>/dev/null)', screen: $(pane | grep -v '^ *$' | tail -4 | tr '\n' '|')"
}
# tty_restored: after spent top, the pane's terminal has its modes back (line 1, the speed and
# size, left out: a check resizes the pane) and the main screen
tty_restored() {
	for _ in $(seq 1 50); do [ -s "$TMP/stty.after" ] && break; sleep 0.1; done
	[ -s "$TMP/stty.after" ] && cmp -s <(sed 1d "$TMP/stty.before") <(sed 1d "$TMP/stty.after") &&
		[ "$(tm display -p -t top '#{alternate_on}')" = 0 ]
}

# 1. the live view: the hot function within 3 s of the start
t0=$(date +%s%N)
start_pane
if wait_pane "$HOT" 3; then
	ms=$((($(date +%s%N) - t0) / 1000000))
	pass "top_tty_shows_hot_function_within_3s (${ms} ms)"
else
	fail "top_tty_shows_hot_function_within_3s: not on screen after 3 s: $(pane | head -8 | tr '\n' '|')"
fi
check top_tty_fits_80x24 bash -c "[ \$(tmux -L $SOCK capture-pane -p -t top | awk 'length > 80' | wc -l) = 0 ]"
check top_tty_header_rate bash -c "tmux -L $SOCK capture-pane -p -t top | head -1 | grep -qE 'functions, [0-9]+ samples/s, window 5 s'"

# keys: c is the comms view, P the processes view, f back to functions
tm send-keys -t top c
if wait_pane '^spent top: comms' 2 && pane | grep -qE '^ *[0-9.]+% +[0-9]+ top_burner *$'; then
	pass top_tty_key_c_shows_comms
else
	fail "top_tty_key_c_shows_comms: $(pane | head -8 | tr '\n' '|')"
fi
tm send-keys -t top P
if wait_pane '^spent top: processes' 2 && pane | grep -qE " $BURNER_PID +top_burner *\$"; then
	pass top_tty_key_P_shows_pid
else
	fail "top_tty_key_P_shows_pid: $(pane | head -8 | tr '\n' '|')"
fi
tm send-keys -t top f
check top_tty_key_f_back_to_functions wait_pane "^spent top: functions" 2

# pause: the screen stays as it is across refreshes, space resumes
tm send-keys -t top p
if wait_pane '\[paused\]' 2; then
	a=$(pane); sleep 2.2; b=$(pane)
	check top_tty_pause_freezes_screen [ "$a" = "$b" ]
else
	fail "top_tty_pause_shows_paused: $(pane | head -2 | tr '\n' '|')"
fi
tm send-keys -t top Space
check top_tty_space_resumes wait_until 3 bash -c "! tmux -L $SOCK capture-pane -p -t top | grep -q '\[paused\]'"

# Ctrl-Z: stopped with the terminal as it was; continued, the screen comes back
pid=$(top_pid)
tm send-keys -t top C-z
for _ in $(seq 1 30); do [ "$(ps -o stat= -p "$pid" | cut -c1)" = T ] && break; sleep 0.1; done
ptty=$(tm display -p -t top '#{pane_tty}')
if [ "$(ps -o stat= -p "$pid" | cut -c1)" = T ] && [ "$(tm display -p -t top '#{alternate_on}')" = 0 ] &&
	cmp -s <(sed 1d "$TMP/stty.before") <(stty -a -F "$ptty" | sed 1d); then
	pass top_tty_ctrl_z_restores_terminal
else
	fail "top_tty_ctrl_z_restores_terminal: state $(ps -o stat= -p "$pid"), alternate $(tm display -p -t top '#{alternate_on}')"
fi
kill -CONT "$pid"
if wait_pane "$HOT" 3 && [ "$(tm display -p -t top '#{alternate_on}')" = 1 ]; then pass top_tty_continue_redraws
else fail "top_tty_continue_redraws: $(pane | head -4 | tr '\n' '|')"; fi

# a smaller terminal: the columns are cut to the new width
tm resize-window -t top -x 60 -y 15 2>/dev/null || tm resize-pane -t top -x 60 -y 15
sleep 1.3
check top_tty_resize_cuts_columns bash -c "[ \$(tmux -L $SOCK capture-pane -p -t top | awk 'length > 60' | wc -l) = 0 ] && tmux -L $SOCK capture-pane -p -t top | grep -q $HOT"
# 40x10: image and comm make way so the function name is whole (it was cut to "top_bu..")
tm resize-window -t top -x 40 -y 10 2>/dev/null || tm resize-pane -t top -x 40 -y 10
sleep 1.3
check top_tty_40_columns_function_whole bash -c "[ \$(tmux -L $SOCK capture-pane -p -t top | awk 'length > 40' | wc -l) = 0 ] && tmux -L $SOCK capture-pane -p -t top | grep -qE ' $HOT( |\$)'"

# q: exits 0, the process is gone, the terminal restored
pid=$(top_pid)
tm send-keys -t top q
if wait_pane 'top exited 0' 3; then pass top_tty_q_exits_0; else fail "top_tty_q_exits_0: $(why_not_exited "$pid")"; fi
check top_tty_q_process_gone bash -c "[ -n '$pid' ] && ! kill -0 '$pid' 2>/dev/null"
check top_tty_q_restores_terminal tty_restored

# Ctrl-C and SIGTERM: the same clean exit
# (the hot function on screen first: the handlers are set by then)
start_pane
wait_pane "$HOT" 10 || fail "top_tty_ctrl_c_started: $(why_not_exited "$(top_pid)")"
pid=$(top_pid)
tm send-keys -t top C-c
if wait_pane 'top exited 0' 5; then pass top_tty_ctrl_c_exits_0; else fail "top_tty_ctrl_c_exits_0: $(why_not_exited "$pid")"; fi
check top_tty_ctrl_c_restores_terminal tty_restored
start_pane
wait_pane "$HOT" 10 || fail "top_tty_sigterm_started: $(why_not_exited "$(top_pid)")"
pid=$(top_pid)
kill -TERM "$pid" || fail "top_tty_sigterm_sent: no spent top under the pane ('$pid')"
if wait_pane 'top exited 0' 5; then pass top_tty_sigterm_exits_0; else fail "top_tty_sigterm_exits_0: $(why_not_exited "$pid")"; fi
check top_tty_sigterm_restores_terminal tty_restored
tm kill-server

# 2. batch: -b -n 3 prints three tables, each with the hot function (half-second intervals: the
# live view above ran with the default one)
"$SPENT" top -b -n 3 -d 0.5 > "$TMP/batch.txt" 2> "$TMP/batch.err"
rc=$?
tables=$(grep -c '^spent top: functions' "$TMP/batch.txt")
with_hot=$(awk -v hot="$HOT" '/^spent top:/ { n++ } $3 == hot { seen[n] = 1 } END { c = 0; for (k in seen) c++; print c }' "$TMP/batch.txt")
check top_batch_exit_0 [ "$rc" = 0 ]
check top_batch_stderr_empty [ ! -s "$TMP/batch.err" ]
check top_batch_three_tables [ "$tables" = 3 ]
if [ "$with_hot" = 3 ]; then pass top_batch_hot_function_in_each_table
else fail "top_batch_hot_function_in_each_table: in $with_hot of $tables: $(head -8 "$TMP/batch.txt" | tr '\n' '|')"; fi
# not a terminal: batch without -b
"$SPENT" top -n 1 -d 0.5 < /dev/null | cat > "$TMP/pipe.txt"
check top_pipe_is_batch bash -c "[ \$(grep -c '^spent top:' '$TMP/pipe.txt') = 1 ] && ! grep -q \$'\\033' '$TMP/pipe.txt'"

# batch with a program whose name (its comm) holds an escape sequence and a newline: shown
# escaped (\x1b, \n), the table's lines its rows', nothing the terminal would act on
EVIL="$TMP/e"$'\033'"[31m"$'\n'"x"
cp "$PROGS/demo" "$EVIL"
"$EVIL" 3 > /dev/null &
EVIL_PID=$!
"$SPENT" top -b -n 2 -d 0.5 -s comms > "$TMP/evil.txt" 2>&1
kill "$EVIL_PID" 2> /dev/null
wait "$EVIL_PID" 2> /dev/null
check top_batch_escapes_a_hostile_comm bash -c "grep -qF 'e\\x1b[31m\\nx' '$TMP/evil.txt' && ! grep -q \$'\\033' '$TMP/evil.txt'"

# JSON lines with --comm: the burner only, its function nearly all of it
"$SPENT" top --json -n 2 -d 0.5 --comm top_burner > "$TMP/top.jsonl"
if python3 - "$TMP/top.jsonl" "$HOT" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 2, len(lines)
last = lines[-1]
assert last["view"] == "functions" and last["samples"] > 0, last
assert all(r["comm"] == "top_burner" for r in last["rows"]), last["rows"]
hot = sum(r["samples"] for r in last["rows"] if r["function"] == sys.argv[2])
# most of it: a busy host adds the burner's kernel time (preemptions), 82% hot seen under load
assert hot >= 0.7 * last["samples"], (hot, last["samples"])
PY
then pass top_json_comm_filter; else fail "top_json_comm_filter: $(head -c 400 "$TMP/top.jsonl")"; fi
# -p and the processes view: one row, the burner's pid
"$SPENT" top --json -n 1 -d 0.5 -p "$BURNER_PID" -s processes > "$TMP/pid.jsonl"
check top_json_pid_filter python3 -c "
import json, sys
r = json.loads(open('$TMP/pid.jsonl').readline())['rows']
sys.exit(not (len(r) == 1 and r[0]['pid'] == $BURNER_PID and r[0]['comm'] == 'top_burner'))"

# symbols do not pile up: 160 programs, each at a path of its own (hard links to the burner),
# run one after the other while top runs; top reads each one's symbols, and renews them every
# 64 new images, so it holds ~64 of those files open at most, a few more when a refresh is
# late (it held all of them; at least 120 are sampled, so 100 tells the two apart). Each runs
# 20 ms: ~20 samples at top's 1000 Hz, where one is enough to be seen.
mkdir -p "$TMP/imgs"
for i in $(seq 160); do ln "$PROGS/top_burner" "$TMP/imgs/b$i" 2>/dev/null || cp "$PROGS/top_burner" "$TMP/imgs/b$i"; done
"$SPENT" top --json -s images --rows 0 -d 0.5 > "$TMP/imgs.jsonl" 2>/dev/null &
IMGS_TOP=$!
wait_until 5 test -s "$TMP/imgs.jsonl"	# its first table: it samples
for i in $(seq 160); do "$TMP/imgs/b$i" 0.02 >/dev/null; done
# until top has shown the last program (it has read its symbols; 3 s at most)
wait_until 3 grep -q "\"$TMP/imgs/b160\"" "$TMP/imgs.jsonl"
open_copies=$(ls -l "/proc/$IMGS_TOP/fd" 2>/dev/null | grep -c "$TMP/imgs/")
kill "$IMGS_TOP"; wait "$IMGS_TOP" 2>/dev/null
seen=$(grep -o "\"$TMP/imgs/b[0-9]*\"" "$TMP/imgs.jsonl" | sort -u | wc -l)
if [ "$seen" -lt 120 ]; then
	skip "top_symbols_renewed: only $seen of the 160 programs were sampled (a starved machine)"
else
	check top_symbols_renewed_not_every_image_open test "$open_copies" -le 100
	echo "# top: $seen programs sampled, $open_copies of their files open at the end"
fi

# short-lived programs are named: a shell loop starting a 30 ms program for 1.5 s; each one is
# gone before the next read of the rings, and /proc no longer has its name: the COMM record's
# name is used (before, most of their samples were in "[PID]" rows: 28% of a comms view).
# Each touches 16 MB, so its exit is sampled after its EXIT record: the name is kept through
# the exit (before, nearly every one also had a "[PID]" row of its exit's samples)
ln "$PROGS/top_burner" "$TMP/shortlived" 2>/dev/null || cp "$PROGS/top_burner" "$TMP/shortlived"
"$SPENT" top --json -s processes --rows 0 -d 2.5 -n 1 > "$TMP/short.jsonl" 2>/dev/null &
SHORT_TOP=$!
sleep 0.5
: > "$TMP/short.pids"
end=$(($(date +%s%N) + 1500000000))
while [ "$(date +%s%N)" -lt "$end" ]; do "$TMP/shortlived" 0.03 16 >/dev/null & echo $! >> "$TMP/short.pids"; wait $!; done
wait "$SHORT_TOP"
named=$(python3 -c '
import json, sys
pids = {int(l) for l in open(sys.argv[2])}
r = [x for x in json.loads(open(sys.argv[1]).readline())["rows"] if x["pid"] in pids]
named = sum(x["samples"] for x in r if x["comm"] == "shortlived")
other = sum(x["samples"] for x in r) - named
split = {x["pid"] for x in r if x["comm"] == "[%d]" % x["pid"]} & {x["pid"] for x in r if x["comm"] == "shortlived"}
print("ok" if named > 0 and named >= 9 * other else "named %d, otherwise %d" % (named, other))
print("ok" if not split else "%d of %d pids also in a [PID] row" % (len(split), len(pids)))' \
	"$TMP/short.jsonl" "$TMP/short.pids")
check top_short_lived_programs_named test "$(sed -n 1p <<< "$named")" = ok
check "top_exited_programs_keep_their_name ($(sed -n 2p <<< "$named"))" test "$(sed -n 2p <<< "$named")" = ok

# bad options: refused with one line, exit 2
for bad in "-d 0.01" "--window 0.5" "--window 0" "-s nosuch" "-e nosuch-event" "extra"; do
	# shellcheck disable=SC2086
	"$SPENT" top -b -n 1 $bad > "$TMP/bad.out" 2> "$TMP/bad.err"
	rc=$?
	check "top_refuses_${bad// /_}" bash -c "[ $rc = 2 ] && [ \$(wc -l < '$TMP/bad.err') -ge 1 ] && grep -q '^spent top: \|^spent: ' '$TMP/bad.err' && [ ! -s '$TMP/bad.out' ]"
done
# an out-of-range number is said to be one (it read "takes a number, not '100000'"); a pid that
# is not there is refused rather than shown empty forever
for c in "--window 100000|--window takes a number from 0 to 86400, not '100000'" \
	"-d 1e9|-d takes a number from 0 to 3600, not '1e9'" "-d abc|-d takes a decimal number" \
	"-p 2147483646|-p 2147483646: no such process"; do
	# shellcheck disable=SC2086
	"$SPENT" top -b -n 1 ${c%%|*} > /dev/null 2> "$TMP/bad.err"
	rc=$?
	check "top_says_why_${c%%|*} ($(cat "$TMP/bad.err"))" bash -c "[ $rc = 2 ] && grep -qF -- \"${c#*|}\" '$TMP/bad.err'"
done
