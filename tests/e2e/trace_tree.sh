#!/bin/bash
# tests/e2e/trace_tree.sh - `spent trace` follows whole process trees: every process (fork,
# exec) gets its own stream in the one log, `stats` lists them, and each exec'd program's
# reconstructed instruction count equals cachegrind's Ir for it under --trace-children=yes
# (same minimal environment, same VALGRIND_LIB, output to a file both times: stdio sizes its
# buffers from what stdout is). The pipeline's programs each do one write
# and one read (seq 1 500 fits one pipe write), so their counts do not depend on timing.
# sort's buffer is given (-S): by default it sizes it from the memory available now
# (sysinfo), and its count moved with it (512,752 instructions, 512,757 beside a 12 GB
# process: a CI run failed by 5 while another job ran).
source "$(dirname "$0")/lib.sh"
VL=$SPENT_BUILD/valgrind/lib
E=(env -i PATH=/usr/bin:/bin)
PIPE='seq 1 500 | sort -S 1M -r | head -3'

# per-process instruction counts: "COUNT CMDLINE" lines of the exec'd programs, sorted
ours_exec() {
	"$SPENT" trace stats --json "$1" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["start"] == "exec":
        print(p["instructions"], p["cmdline"])' | sort
}

"${E[@]}" "$SPENT" trace -o "$TMP/p.log" -- /bin/sh -c "$PIPE" > "$TMP/p.out" 2> "$TMP/p.err"
check "a shell pipeline exits 0 under spent trace" test $? -eq 0
/bin/sh -c "$PIPE" > "$TMP/native.out"
check "the traced pipeline's output equals the native output" cmp -s "$TMP/p.out" "$TMP/native.out"
js=$("$SPENT" trace stats --json "$TMP/p.log")
check "the pipeline's log is complete" test "$(jfield "$js" complete)" = True
n=$(echo "$js" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')
check "shell + 3 forked children + 3 exec'd programs = 7 process streams ($n)" test "$n" = 7

mkdir -p "$TMP/cg"
"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
	--cachegrind-out-file="$TMP/cg/cg.%p" /bin/sh -c "$PIPE" > "$TMP/cg.out" 2> "$TMP/cg.err"
for f in "$TMP"/cg/cg.*; do
	echo "$(awk '/^summary:/ { print $2 }' "$f") $(sed -n 's/^cmd: //p' "$f")"
done | sort > "$TMP/cg.counts"
ours_exec "$TMP/p.log" > "$TMP/ours.counts"
# the programs exactly; the shell within 64 instructions of 192 K: how often its wait loop
# turns (about 11 instructions a turn) depends on when its children exit. Measured: cachegrind
# 191942-191944 over 15 runs; the shell under the sanitized recorder 191911-191922 over 8 (its
# children end later); a CI run 19 above cachegrind's, which the old bound of 16 failed
res=$(python3 - "$TMP/ours.counts" "$TMP/cg.counts" <<'PY'
import sys
def load(p):
    return {l.split(" ", 1)[1]: int(l.split(" ", 1)[0]) for l in open(p).read().splitlines()}
o, c = load(sys.argv[1]), load(sys.argv[2])
bad = [k for k in c if k not in o or abs(o[k] - c[k]) > (64 if k.startswith("/bin/sh") else 0)]
print("ok" if len(c) == 4 and set(o) == set(c) and not bad else "bad " + ";".join(bad))
PY
)
if [ "$res" = ok ]; then
	pass "each program's instruction count equals cachegrind's Ir ($(tr '\n' ';' < "$TMP/ours.counts"))"
else
	fail "each program's instruction count equals cachegrind's Ir ($res): ours '$(tr '\n' ';' < "$TMP/ours.counts")', cachegrind '$(tr '\n' ';' < "$TMP/cg.counts")'"
fi
"$SPENT" trace dump "$TMP/p.log" > "$TMP/p.dump"
check "dump names each process (pid, parent, exec'd path and argv)" \
	grep -q "process [0-9]* pid [0-9]* ppid [0-9]* parent [0-9]* exec /usr/bin/sort: /usr/bin/sort -S 1M -r" "$TMP/p.dump"
check "dump's instruction count is stats' total" \
	test "$(grep -c ' I  ' "$TMP/p.dump")" = "$(jfield "$js" instructions)"

# dump --comm / --pid: one program, one pid (its forked shell and the program it exec'd)
sort_n=$(awk '$2 == "/usr/bin/sort" { print $1 }' "$TMP/ours.counts")
got=$("$SPENT" trace dump --comm sort "$TMP/p.log" | grep -c ' I  ')
check "dump --comm sort: sort's instructions only ($got)" test -n "$sort_n" -a "$got" = "$sort_n"
read -r spid both < <(echo "$js" | python3 -c '
import json, sys
ps = json.load(sys.stdin)["processes"]
pid = [p["pid"] for p in ps if p["cmdline"] == "/usr/bin/sort -S 1M -r"][0]
print(pid, sum(p["instructions"] for p in ps if p["pid"] == pid))')
"$SPENT" trace dump --pid "$spid" "$TMP/p.log" > "$TMP/pid.dump"
got=$(grep -c ' I  ' "$TMP/pid.dump")
check "dump --pid: the pid's forked shell and exec'd sort ($got)" test "$got" = "$both" -a "$got" -gt "$sort_n"
check "dump --pid: only that pid's lines" test "$(grep '^# pid' "$TMP/pid.dump" | sort -u)" = "# pid $spid"

# a subshell: fork without exec; the child's stream is its own (no duplicated startup)
"${E[@]}" "$SPENT" trace -o "$TMP/s.log" -- /bin/sh -c '(echo a); echo b' > "$TMP/s.out" 2>&1
check "a forking shell exits 0" test $? -eq 0
js=$("$SPENT" trace stats --json "$TMP/s.log")
kinds=$(echo "$js" | python3 -c 'import json,sys; print(" ".join(p["start"] for p in json.load(sys.stdin)["processes"]))')
check "a subshell is a forked process of its own ($kinds)" test "$kinds" = "exec fork"
check "each process's events are in time order" test "$(jfield "$js" time_ordered)" = True
child=$(echo "$js" | python3 -c 'import json,sys; p=json.load(sys.stdin)["processes"]; print(p[1]["instructions"], p[1]["exit_status"], p[1]["parent_stream"])')
set -- $child
check "the forked child ran its own instructions ($1), exited 0, child of stream 1" \
	test "$1" -gt 1000 -a "$1" -lt 100000 -a "$2" = 0 -a "$3" = 1

# the command's path is the absolute path of the program run, as an exec'd child's is (it was
# "../t.out" or "true" as typed; ".." stays, as a symbolic link before it may lead elsewhere);
# its argv stays as typed
cp /usr/bin/true "$TMP/t.out"
mkdir -p "$TMP/sub"
(cd "$TMP/sub" && "${E[@]}" "$SPENT" trace -o "$TMP/r1.log" -- ../t.out arg > /dev/null 2>&1)
"${E[@]}" "$SPENT" trace -o "$TMP/r2.log" -- true > /dev/null 2>&1
got=$(for l in r1 r2; do "$SPENT" trace stats --json "$TMP/$l.log" | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
print(p["exe"] + "|" + p["cmdline"])'; done | tr '\n' ' ')
check "the command's exe is its absolute path, argv as typed ($got)" \
	test "$got" = "$TMP/sub/../t.out|../t.out arg /usr/bin/true|true "

# python os.fork: the child's stream reconstructs, its exit status is kept
"${E[@]}" "$SPENT" trace -o "$TMP/f.log" -- /usr/bin/python3 -c \
	'import os; pid = os.fork(); os._exit(3) if pid == 0 else os.waitpid(pid, 0)' > /dev/null 2>&1
check "python os.fork exits 0 under spent trace" test $? -eq 0
"$SPENT" trace stats --json "$TMP/f.log" > "$TMP/f.json" 2> "$TMP/f.err"
check "python os.fork: the log reconstructs" test $? -eq 0
st=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"]; print(len(p), p[1]["start"], p[1]["exit_status"], p[1]["instructions"] > 0)' "$TMP/f.json")
check "python os.fork: two processes, the child forked, exit 3, instructions ($st)" test "$st" = "2 fork 3 True"

# env exec's gzip: gzip is traced, its count equals cachegrind's
seq 1 3000 > "$TMP/F"
"${E[@]}" "$SPENT" trace -o "$TMP/g.log" -- /usr/bin/env gzip -9 -c "$TMP/F" > "$TMP/F.gz" 2> "$TMP/g.err"
check "env gzip exits 0 under spent trace" test $? -eq 0
check "env gzip's output decompresses to the input" cmp -s <(gzip -dc "$TMP/F.gz") "$TMP/F"
"${E[@]}" VALGRIND_LIB="$VL" valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
	--cachegrind-out-file="$TMP/cg/gz.%p" /usr/bin/env gzip -9 -c "$TMP/F" > /dev/null 2>&1
cgz=$(grep -l "^cmd: /usr/bin/gzip" "$TMP"/cg/gz.* | head -1)
want=$(awk '/^summary:/ { print $2 }' "$cgz")
got=$(ours_exec "$TMP/g.log" | awk '$2 == "/usr/bin/gzip" { print $1 }')
check "gzip exec'd by env: instructions equal cachegrind's Ir ($got)" test -n "$want" -a "$got" = "$want"

# --no-children: the command only (with its own TMPDIR, so another trace running on the machine
# cannot leave a FIFO directory where this check looks)
mkdir -p "$TMP/fifo"
"${E[@]}" TMPDIR="$TMP/fifo" "$SPENT" trace --no-children -o "$TMP/n.log" -- /bin/sh -c "$PIPE" > /dev/null 2>&1
check "--no-children: exits 0" test $? -eq 0
n=$("$SPENT" trace stats --json "$TMP/n.log" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')
check "--no-children: one process stream ($n)" test "$n" = 1
check "--no-children: no FIFO directory is left behind" test -z "$(ls "$TMP/fifo" | grep '^spent-trace\.' | head -1)"

# stop_and_time SIG: send SIG to the spent trace at $tp and wait for it; sets rc and secs
stop_and_time() {
	local t0=$SECONDS
	kill -"$1" "$tp"
	wait "$tp"
	rc=$?
	secs=$((SECONDS - t0))
}

# SIGTERM to spent trace: children the command left running (the signal goes to the command
# only) do not hold the recording open past the grace period
"$SPENT" trace -o "$TMP/t.log" -- /bin/sh -c 'sleep 60 & sleep 60' > /dev/null 2> "$TMP/t.err" &
tp=$!
for _ in $(seq 1 100); do	# until both sleeps run under the tool
	[ "$(pgrep -c -P "$(pgrep -P $tp | head -1)" 2> /dev/null)" -ge 2 ] 2> /dev/null && break
	sleep 0.1
done
sleep 1
stop_and_time TERM
check "SIGTERM with children left running: exits 143 within the grace period ($secs s)" \
	test $rc -eq 143 -a $secs -lt 15
jt=$("$SPENT" trace stats --json "$TMP/t.log" 2> /dev/null)
check "... the log is written and marked incomplete" test "$(jfield "$jt" complete)" = False
# the sleeps the test started (by the pids the log names) go now
for p in $(echo "$jt" | python3 -c 'import json,sys; print(" ".join(str(p["pid"]) for p in json.load(sys.stdin)["processes"] if "sleep" in p["cmdline"]))' 2> /dev/null); do
	kill -KILL "$p" 2> /dev/null
done

# ... nor does a child that keeps computing (and sending): the grace period counted only quiet
# spells, so a busy orphan held the recording open until it ended
cat > "$TMP/busy.c" <<'C'
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
volatile unsigned long s;
int main(void)
{
	if (fork() == 0) {	/* computes for 60 s unless stopped */
		for (time_t end = time(NULL) + 60; time(NULL) < end;)
			for (int i = 0; i < 1000000; i++)
				s += (unsigned long)i;
		return 0;
	}
	wait(NULL);
	return 0;
}
C
cc -O1 -o "$TMP/busy" "$TMP/busy.c"
"$SPENT" trace -o "$TMP/b.log" -- "$TMP/busy" > /dev/null 2> "$TMP/b.err" &
tp=$!
sleep 1
stop_and_time INT
check "SIGINT with a busy child left running: exits 130 within the grace period ($secs s)" \
	test $rc -eq 130 -a $secs -lt 10
# (its log is written; not read here: the busy child logged a few G instructions, minutes of
# reconstruction in the sanitized pass)
check "... its log is written" grep -q "wrote trace log '$TMP/b.log'" "$TMP/b.err"
pkill -KILL -f "$TMP/busy" 2> /dev/null

# a process a signal killed (no exit_group: Valgrind's fini says 0) is "killed", not "exit 0":
# the stats table (by the signal its parent's wait saw), --json (exit_status null, killed true)
# and the dump
"$SPENT" trace -o "$TMP/k.log" -- sh -c '/bin/sh -c "kill -KILL \$\$"; exit 4' > /dev/null 2>&1
jk=$("$SPENT" trace stats --json "$TMP/k.log" 2> /dev/null)
st=$(echo "$jk" | python3 -c 'import json,sys; p=json.load(sys.stdin)["processes"]; print(" ".join("%s:%s:%s" % (q["start"], q["exit_status"], q["killed"]) for q in p))')
check "a killed child is killed, its parent exits 4 ($st)" \
	test "$st" = "exec:4:False fork:None:False exec:None:True"
check "... the stats table says SIGKILL" bash -c "'$SPENT' trace stats '$TMP/k.log' | grep -q ' SIGKILL .*kill -KILL'"
check "... the dump says so" bash -c "'$SPENT' trace dump '$TMP/k.log' | grep -q '^# .* exit killed by a signal$'"

# a process left running by the command that execs after the command exited: the FIFO had no
# writer between the old tool instance and the new one, the recorder took that EOF for the
# end, and the exec'd program ran untraced
"${E[@]}" "$SPENT" trace -o "$TMP/o.log" -- sh -c "(sleep 1; exec /bin/echo late) > '$TMP/late.txt' 2>&1 & exit 0" \
	> /dev/null 2> "$TMP/o.err"
check "an orphan that execs after the command ended is traced ($(tail -1 "$TMP/o.err"))" \
	bash -c "'$SPENT' trace dump '$TMP/o.log' | grep -q '^# .* process 5 .* exec /bin/echo: /bin/echo late$'"
check "... and its output is right" grep -qx late "$TMP/late.txt"

# ... and one that execs after the recorder ended (SIGTERM, then the grace) finds no FIFO: its
# program runs untraced, with nothing on its stderr (it printed "Bad option: --spent-pipe,
# cannot open the recorder's FIFO" there)
"${E[@]}" "$SPENT" trace -o "$TMP/gone.log" -- \
	sh -c "(sleep 6; exec /bin/echo after) > '$TMP/gone.txt' 2> '$TMP/gone.err' & sleep 60" > /dev/null 2>&1 &
tp=$!
sleep 1
kill -TERM $tp
wait $tp
wait_until 30 grep -sqx after "$TMP/gone.txt"
check "an orphan exec'd after the recorder ended runs, untraced and silent ('$(head -c 200 "$TMP/gone.err")')" \
	test "$(cat "$TMP/gone.txt")" = after -a ! -s "$TMP/gone.err"

# a relative TMPDIR: the FIFO's path is made absolute, so the tool of a program exec'd after a
# cd finds it (it did not, and the program ran untraced); and no process of the tree makes
# Valgrind's gdbserver FIFOs there (three each, left behind when it is killed)
mkdir -p "$TMP/rel"
(cd "$TMP/rel" && "${E[@]}" TMPDIR=. "$SPENT" trace -o "$TMP/rel.log" -- \
	sh -c 'ls | grep -c vgdb-pipe; cd /; exec /bin/echo moved') > "$TMP/rel.out" 2> "$TMP/rel.err"
check "a relative TMPDIR: a program exec'd after a cd is traced" \
	bash -c "'$SPENT' trace dump '$TMP/rel.log' | grep -q '^# .* exec /bin/echo: /bin/echo moved$'"
check "... no gdbserver FIFO in TMPDIR while the tree runs, nothing else on stderr" \
	test "$(head -1 "$TMP/rel.out")" = 0 -a "$(grep -vc "^spent: wrote trace log" "$TMP/rel.err")" = 0

# a child killed by SIGKILL sends no exit record and loses what its tool had buffered: the
# log is marked incomplete with a warning naming it (it said complete, or broke off at random)
"${E[@]}" "$SPENT" trace --no-data -o "$TMP/k9.log" -- sh -c 'yes > /dev/null & sleep 1; kill -9 $!; wait $!' \
	> /dev/null 2> "$TMP/k9.err"
rc=$?
check "a SIGKILLed child: the recording still ends (exit $rc, the shell's 137)" test $rc -eq 137
check "... a warning names it" grep -q 'ended without its exit record' "$TMP/k9.err"
check "... the log is marked incomplete" \
	test "$(jfield "$("$SPENT" trace stats --json "$TMP/k9.log" 2>/dev/null)" complete)" = False

# --max-instructions is each process's: a child forked after its parent reached the limit
# records its own (it recorded nothing, then its translations had no description)
"${E[@]}" "$SPENT" trace --no-data --max-instructions 150000 -o "$TMP/mx.log" -- \
	sh -c '(i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; exit 5); exit 3' > /dev/null 2>&1
mx=$("$SPENT" trace stats --json "$TMP/mx.log" | python3 -c 'import json,sys; print(" ".join("%s:%s" % (q["instructions"], q["exit_status"]) for q in json.load(sys.stdin)["processes"]))')
check "--max-instructions: a child forked past its parent's limit records its own ($mx)" \
	test "$mx" = "150000:3 150000:5"

# a process whose last thread ends with the exit syscall (not exit_group) exits, not killed
cat > "$TMP/sysexit.c" <<'C'
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { syscall(SYS_exit, 3); return 0; }
C
cc -O1 -o "$TMP/sysexit" "$TMP/sysexit.c"
"$SPENT" trace -o "$TMP/se.log" -- "$TMP/sysexit" > /dev/null 2>&1
rc=$?
se=$("$SPENT" trace stats --json "$TMP/se.log" | python3 -c 'import json,sys; q=json.load(sys.stdin)["processes"][0]; print("%s:%s" % (q["exit_status"], q["killed"]))')
check "exit(2) of the last thread: status 3, not killed (exit $rc, log $se)" test $rc -eq 3 -a "$se" = "3:False"

# --no-children: an exec into the untraced program ends the stream; no warning, complete
"$SPENT" trace --no-children -o "$TMP/nc.log" -- env /bin/true > /dev/null 2> "$TMP/nc.err"
check "--no-children: an exec is no lost process ($(tail -1 "$TMP/nc.err"))" \
	bash -c "! grep -q 'without its exit record' '$TMP/nc.err' && [ \"\$('$SPENT' trace stats --json '$TMP/nc.log' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"complete\"])')\" = True ]"
# a tree in its own pid namespace: its pids are not ours, and the processes its init leaves
# are killed; the recording ends with the tree (it waited on another process of that pid)
if unshare -pf true 2> /dev/null; then
	start=$(date +%s)
	timeout 60 "$SPENT" trace -o "$TMP/ns.log" -- unshare -pf sh -c 'sleep 100 & sleep 1' > /dev/null 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	check "a tree in its own pid namespace ends with it (exit $rc, $secs s)" test $rc -ne 124 -a $secs -lt 30
else
	skip "a tree in its own pid namespace: unshare -pf is not permitted here"
fi

# Each process describes again every superblock it runs; the recorder writes a description
# the log already holds as a reference to it (CODE_SAME, version 5): ten /bin/true log little
# more than the loader's and libc's start-up once (without the references: 6.3x one's log)
"${E[@]}" "$SPENT" trace -o "$TMP/one.log" -- sh -c '/bin/true' > /dev/null 2>&1
"${E[@]}" "$SPENT" trace -o "$TMP/ten.log" -- sh -c \
	'/bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true' \
	> /dev/null 2>&1
one=$(stat -c %s "$TMP/one.log") ten=$(stat -c %s "$TMP/ten.log")
check "ten /bin/true log under 4.5x one /bin/true ($ten vs $one bytes)" test $((ten * 2)) -lt $((one * 9))
true_counts() { # LOG: the instructions of each /bin/true process in it
	"$SPENT" trace stats --json "$1" | python3 -c 'import json, sys
print(" ".join(str(p["instructions"]) for p in json.load(sys.stdin)["processes"] if p["cmdline"] == "/bin/true"))'
}
trues=$(true_counts "$TMP/ten.log")
ones=$(true_counts "$TMP/one.log")
check "... and each of the ten counts the instructions of the one ($ones: $trues)" \
	test -n "$ones" -a "$(echo $trues | tr ' ' '\n' | sort -u | tr '\n' ' ')" = "$ones "
