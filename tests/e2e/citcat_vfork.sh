#!/bin/bash
# tests/e2e/citcat_vfork.sh - a vfork child runs in its parent's memory until it execs or exits,
# and the parent then reads what it wrote (docs/citcat.md, "vfork children"): citcat records
# those bytes as effects of the call and skips the child's buffered calls, so the parent's
# replay is verified with its real output. Oracles: the native output of a test program printing
# what its vfork and posix_spawn children wrote (recorded by default, without the syscall buffer
# and with --cpuid patch), and real programs that vfork or posix_spawn: the g++ driver, python3's
# subprocess, make, and python3 threads each running a subprocess at 1 ms time slices.
source "$(dirname "$0")/lib.sh"

one() { # NAME OWN RECORD-OPTIONS... -- CMD...: record, replay, compare the stdouts (the
	# replayed one only when OWN is 1: children writing to the same stdout are not replayed)
	local name=$1 own=$2 opts=()
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	(cd "$TMP/work" && "$@") > "$TMP/$name.native" 2> /dev/null
	(cd "$TMP/work" && "$SPENT" citcat record "${opts[@]}" -o "$TMP/$name" -- "$@") \
		> "$TMP/$name.real" 2> "$TMP/$name.err"
	local rrc=$?
	local j
	j=$(cd "$TMP/work" && timeout 300 "$SPENT" citcat replay "$TMP/$name" --json \
		--stdout "$TMP/$name.rep" 2> "$TMP/$name.rerr")
	if [ $rrc = 0 ] && [ "$(jfield "$j" verified)" = True ]; then
		pass "citcat_vfork_${name}_replay_verified"
	else
		fail "citcat_vfork_${name}_replay_verified: record exit $rrc: $(tail -1 "$TMP/$name.err" | cut -c1-200) / replay: $(head -c 300 "$TMP/$name.rerr")"
	fi
	check "citcat_vfork_${name}_recorded_output_equals_native" cmp -s "$TMP/$name.native" "$TMP/$name.real"
	[ "$own" = 1 ] && check "citcat_vfork_${name}_replayed_output_equals_recorded" \
		cmp -s "$TMP/$name.real" "$TMP/$name.rep"
}

mkdir -p "$TMP/work"
one prog 1 -- "$PROGS/citcat_vfork"
check "citcat_vfork_prog_output_shows_the_children_writes" \
	grep -q "^vfork exec: global 42 local 43 pipe 'from child' status 0$" "$TMP/prog.native"
check "citcat_vfork_prog_heap_and_exit_status" \
	grep -q "^vfork _exit: heap 'written by the child' global 7 status 3$" "$TMP/prog.native"
one prog_nosb 1 --no-syscallbuf -- "$PROGS/citcat_vfork"
one prog_patch 1 --cpuid patch -- "$PROGS/citcat_vfork"

printf '#include <vector>\nint main() { std::vector<int> v(3); return (int)v.size() - 3; }\n' > "$TMP/work/t.cc"
one gxx 1 -- g++ -c t.cc -o t.o
check "citcat_vfork_gxx_compiled" [ -s "$TMP/work/t.o" ]
# the sanitized build replays ~5x slower: python3's subprocess and make run in the plain build
# only (the threaded python3 below, which found a defect of its own, runs in both)
san=0
spent_sanitized && san=1
[ $san = 0 ] && one python3_subprocess 1 -- python3 -c 'import subprocess; r = subprocess.run(["sort", "-r"], input=b"a\nc\nb\n", capture_output=True); print(r.returncode, r.stdout.decode().split())'
# make's recipes write to the shared stdout from its children: the recorded output is checked
if [ $san = 0 ]; then
	one make 0 -- make -s -f /dev/null -E 'all:; @echo $$((6 * 7)); ls t.cc'
	check "citcat_vfork_make_ran_the_recipe" grep -qx 42 "$TMP/make.real"
fi

# threads that each run a subprocess, at 1 ms slices: the recorder never switches threads inside
# a vfork, so the pages that change until it returns are the child's (another thread running
# meanwhile made the recorded pages wrong: 3 replays in 3 stopped on a garbage pointer)
cat > "$TMP/work/thsub.py" <<'PY'
import subprocess, sys, threading
n = int(sys.argv[1])
out = []
def work(i):
    r = subprocess.run(["echo", "t%d" % i], capture_output=True)
    out.append(r.stdout.decode().strip())
    s = 0
    for k in range(n):
        s += k
ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sorted(out))
PY
# (200 M instructions with 100000 steps a thread, 3 preemptions; the sanitized build's replay
# takes 40000: 120 M, 0-1 preemptions, still ~45 switches)
steps=100000
[ $san = 1 ] && steps=40000
one threads_subprocess 1 --time-slice 1 -- python3 thsub.py $steps
check "citcat_vfork_threads_subprocess_ran" grep -q "^\['t0', 't1', 't2'\]$" "$TMP/threads_subprocess.real"
