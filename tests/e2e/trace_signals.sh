#!/bin/bash
# tests/e2e/trace_signals.sh - signals as PatchWrx interrupts: each delivery is an event naming
# the handler and the first instruction not executed, the handler's instructions are in the
# stream, and the total still equals cachegrind's Ir.
source "$(dirname "$0")/lib.sh"
P=$PROGS/trace_signal
E=(env -i PATH=/usr/bin:/bin)

"${E[@]}" "$SPENT" trace -o "$TMP/s.log" -- "$P" > "$TMP/s.out" 2> "$TMP/s.err"
check "trace_signal exits 0 under spent trace" test $? -eq 0
handled=$(awk '/^handled/ { print $2 }' "$TMP/s.out")
js=$("$SPENT" trace stats --json "$TMP/s.log")
check "one signal event per delivery the program counted ($handled)" test "$(jfield "$js" signals)" = "$handled"

"${E[@]}" VALGRIND_LIB="$SPENT_BUILD/valgrind/lib" valgrind --tool=cachegrind --cache-sim=no \
	--cachegrind-out-file="$TMP/cg.out" "$P" > "$TMP/cg.stdout" 2> "$TMP/cg.err"
ir=$(awk '/^summary:/ { print $2 }' "$TMP/cg.out")
check "instruction count with signals equals cachegrind Ir ($ir)" test "$(jfield "$js" instructions)" = "$ir"

"$SPENT" trace dump "$TMP/s.log" > "$TMP/s.dump"
res=$(python3 - "$TMP/s.dump" "$P" "$(nm "$P" | awk '$3 == "on_usr1" { print $1 }')" <<'PY'
import sys
dump, prog, sym = sys.argv[1:4]
base, handler, events, entries, bad = None, None, 0, 0, 0
for line in open(dump):
    f = line.split()
    if line.startswith("#") and f[2] == "image" and f[3] == prog and base is None:
        base = int(f[-1], 16); handler = base + int(sym, 16)
    elif line.startswith("#") and len(f) > 3 and f[3] == "signal":
        events += 1
        bad += int(f[6], 16) != handler
    elif handler is not None and " I  %08x," % handler in line:
        entries += 1
print(f"{events} {entries} {bad}")
PY
)
set -- $res
check "every signal event names the handler on_usr1" test "${3:-1}" = 0
check "the handler's first instruction runs once per signal event" test "${2:-0}" = "${1:-x}"

# synchronous faults whose handler siglongjmps away (post-delivery never happens)
F=$PROGS/trace_fault
"${E[@]}" "$SPENT" trace -o "$TMP/f.log" -- "$F" > "$TMP/f.out" 2>&1
jf=$("$SPENT" trace stats --json "$TMP/f.log")
check "ten caught SIGSEGVs give ten signal events" test "$(jfield "$jf" signals)" = 10
"${E[@]}" VALGRIND_LIB="$SPENT_BUILD/valgrind/lib" valgrind --tool=cachegrind --cache-sim=no \
	--cachegrind-out-file="$TMP/cgf.out" "$F" > "$TMP/cgf.stdout" 2> "$TMP/cgf.err"
irf=$(awk '/^summary:/ { print $2 }' "$TMP/cgf.out")
check "instruction count with faults equals cachegrind Ir ($irf)" test "$(jfield "$jf" instructions)" = "$irf"

# how each process of a tree died: the wait that reaped it (wait4 in sh, waitid in python)
# says which signal killed it, as the shell's $? does (143 = SIGTERM, 137 = SIGKILL); the
# command's own death is spent trace's wait's. Before, all read "killed".
cat > "$TMP/waitid.py" <<'PY'
import os, signal
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGUSR1)
    os._exit(0)
r = os.waitid(os.P_PID, pid, os.WEXITED)
print("waitid", r.si_pid, r.si_code, r.si_status)
PY
"${E[@]}" "$SPENT" trace -o "$TMP/kill.log" -- sh -c "sh -c 'kill -TERM \$\$'; echo t=\$?; sh -c 'kill -KILL \$\$'; echo k=\$?; /usr/bin/python3 '$TMP/waitid.py'" \
	> "$TMP/kill.out" 2> "$TMP/kill.err"
check "the shell saw its children killed ($(tr '\n' ' ' < "$TMP/kill.out"))" \
	bash -c "grep -qx t=143 '$TMP/kill.out' && grep -qx k=137 '$TMP/kill.out' && grep -q '^waitid [0-9]* 2 10$' '$TMP/kill.out'"
"$SPENT" trace stats --json "$TMP/kill.log" > "$TMP/kill.json"
upid=$(awk '/^waitid/ { print $2 }' "$TMP/kill.out")
check "stats names each child's signal from its reaper's wait" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((p.get("signal_name"), p["cmdline"].split()[-1] if p["exe"].endswith("sh") else p["pid"])
             for p in d["processes"] if p.get("signal"))
want = sorted([("SIGKILL", "$$"), ("SIGTERM", "$$"), ("SIGUSR1", int(sys.argv[2]))])
print(got)
sys.exit(0 if got == want and all(p["killed"] for p in d["processes"] if p.get("signal")) else 1)' \
	"$TMP/kill.json" "${upid:-0}"
"$SPENT" trace stats "$TMP/kill.log" > "$TMP/kill.txt"
check "the table's exit column says SIGTERM, SIGKILL and SIGUSR1" \
	bash -c "grep -q ' SIGTERM /usr/bin/sh' '$TMP/kill.txt' && grep -q ' SIGKILL /usr/bin/sh' '$TMP/kill.txt' && grep -q ' SIGUSR1 ' '$TMP/kill.txt'"
check "dump shows the reaping" bash -c "'$SPENT' trace dump '$TMP/kill.log' | grep -q 'reaped pid [0-9]* killed by signal 15 (Terminated)'"
"${E[@]}" "$SPENT" trace -o "$TMP/self.log" -- sh -c 'kill -TERM $$' > /dev/null 2>&1; rc=$?
check "the command killed by SIGTERM: spent trace exits 143 ($rc) and stats says SIGTERM" \
	bash -c "[ $rc = 143 ] && '$SPENT' trace stats '$TMP/self.log' | grep -qE '^exit +SIGTERM$'"
