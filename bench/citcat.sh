#!/bin/bash
# bench/citcat.sh - citcat costs, measured side by side on this machine (not a test):
#   record slowdown   recording a compute-bound program vs running it natively (CPU time of
#                     the program plus the recorder; goal <= 1.1x, rr reports 1.1-1.4x), and
#                     syscall-heavy real programs: ls -laR and find of a tree (with the syscall
#                     buffer, and without it: every syscall stopping the program twice under
#                     ptrace), sqlite3 on a file database, and a
#                     2-thread compute-bound program (one thread at a time, preempted every
#                     20 ms at an exact point; goal <= 2.2x of its native CPU time)
#   bytes/instruction recording size (the whole directory, copies of mapped files included)
#                     over the replayed instruction count (goal <= 0.01)
#   replay speed      instructions per CPU second of the fast replay, no sinks (goal >= 100 M/s)
#   sink replay speed the same with per-instruction and data-reference hooks (--dump)
#   replay 2 threads  the replay speed of the 2-thread program recorded at 1 ms slices (many
#                     preemption points in its hot loop) against its 20 ms recording's
# Recordings use citcat's cache of mapped files' copies (docs/citcat.md; SPENT_CITCAT_CACHE):
# warm after the first of the best-of-3 runs, as for any program recorded before.
# Usage: bench/citcat.sh [ROUNDS]   (default 1000: about 0.26 G instructions replayed; the
# record slowdown uses 20x more rounds so the recorder's fixed start-up cost is amortised)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SPENT=${SPENT:-$top/build/spent}
PROG=$top/build/progs/citcat_compute
rounds=${1:-1000}
tmp=$(mktemp -d /tmp/spent-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# CPU seconds (user+sys) of a command and its children, best of 3 runs, from getrusage in
# microseconds (/usr/bin/time prints hundredths: a find of 4000 files read as 0.00 s)
cpu_of() {
	python3 -c '
import resource, subprocess, sys
best = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = t if best is None or t < best else best
print("%.6f" % best)' "$@"
}

mode=${SPENT_CITCAT_CPUID:-auto}
native=$(cpu_of "$PROG" $((rounds * 20)))
recorded=$(cpu_of "$SPENT" citcat record --cpuid "$mode" -o "$tmp/big" -- "$PROG" $((rounds * 20)))
"$SPENT" citcat record --cpuid "$mode" -o "$tmp/rec" -- "$PROG" "$rounds" > /dev/null 2>&1
json=$("$SPENT" citcat replay "$tmp/rec" --json 2>/dev/null)
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$json" "$1"; }
insns=$(field instructions)
bytes=$(du -sb "$tmp/rec" | cut -f1)
cpuid_mode=$(field cpuid_mode)
cpu=$(field cpu_seconds)
wall=$(field seconds)
verified=$(field verified)
# sink replay (text dump of every instruction and reference) on a hundredth of the work
"$SPENT" citcat record --cpuid "$mode" -o "$tmp/small" -- "$PROG" $((rounds / 100 + 1)) > /dev/null 2>&1
/usr/bin/time -f "%U %S" "$SPENT" citcat replay "$tmp/small" --dump > /dev/null 2> "$tmp/sink.err"
sink_cpu=$(tail -1 "$tmp/sink.err" | awk '{print $1 + $2}')
small_insns=$("$SPENT" citcat replay "$tmp/small" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')

# syscall-heavy real programs: a directory tree listed recursively, a file database
mkdir -p "$tmp/tree"
for i in $(seq 1 100); do mkdir -p "$tmp/tree/d$i"; for j in $(seq 1 40); do : > "$tmp/tree/d$i/f$j"; done; done
sql="create table if not exists t(k integer primary key, v text);"
for i in $(seq 1 300); do sql="$sql insert into t(v) values('row $i');"; done
sql="$sql select count(*), sum(length(v)) from t;"
# five runs each (one ls of 4000 files takes a few ms)
ls_native=$(cpu_of bash -c 'for i in 1 2 3 4 5; do ls -laR "$1" > /dev/null; done' - "$tmp/tree")
ls_rec=$(cpu_of bash -c 'for i in 1 2 3 4 5; do "$1" citcat record --cpuid "$2" -o "$3" -- ls -laR "$4" > /dev/null 2>&1; done' - "$SPENT" "$mode" "$tmp/ls" "$tmp/tree")
# before the syscall buffer: every syscall stops the program twice
ls_rec_traced=$(cpu_of bash -c 'for i in 1 2 3 4 5; do "$1" citcat record --no-syscallbuf --cpuid "$2" -o "$3" -- ls -laR "$4" > /dev/null 2>&1; done' - "$SPENT" "$mode" "$tmp/ls_traced" "$tmp/tree")
find_native=$(cpu_of bash -c 'for i in 1 2 3 4 5; do find "$1" > /dev/null; done' - "$tmp/tree")
find_rec=$(cpu_of bash -c 'for i in 1 2 3 4 5; do "$1" citcat record --cpuid "$2" -o "$3" -- find "$4" > /dev/null 2>&1; done' - "$SPENT" "$mode" "$tmp/find" "$tmp/tree")
find_rec_traced=$(cpu_of bash -c 'for i in 1 2 3 4 5; do "$1" citcat record --no-syscallbuf --cpuid "$2" -o "$3" -- find "$4" > /dev/null 2>&1; done' - "$SPENT" "$mode" "$tmp/find_traced" "$tmp/tree")
ls_json=$("$SPENT" citcat replay "$tmp/ls" --json 2>/dev/null)
# the same split into a fixed cost per recording and a marginal ratio per file: a tree 10x
# larger (40000 files in 1000 directories) beside the one above
mkdir -p "$tmp/big_tree"
for i in $(seq 1 1000); do mkdir -p "$tmp/big_tree/d$i"; (cd "$tmp/big_tree/d$i" && touch f{1..40}); done
fixed_marginal() {	# NAME ARGS...: "fixed_ms marginal_ratio small_ratio big_ratio"
	local name=$1; shift
	local n1 n2 r1 r2
	n1=$(cpu_of "$@" "$tmp/tree"); n2=$(cpu_of "$@" "$tmp/big_tree")
	r1=$(cpu_of "$SPENT" citcat record --cpuid "$mode" -o "$tmp/fm_$name" -- "$@" "$tmp/tree")
	r2=$(cpu_of "$SPENT" citcat record --cpuid "$mode" -o "$tmp/fm_$name" -- "$@" "$tmp/big_tree")
	awk -v n1="$n1" -v n2="$n2" -v r1="$r1" -v r2="$r2" 'BEGIN {
		m = (n2 > n1) ? (r2 - r1) / (n2 - n1) : 0; f = r1 - m * n1
		printf "%.1f %.2f %.1f %.1f %.4f %.4f %.4f %.4f\n", f * 1000, m, r1 / n1, r2 / n2, n1, r1, n2, r2 }'
}
ls_fm=$(fixed_marginal ls ls -laR)
find_fm=$(fixed_marginal find find)
sq_native=$(cpu_of sqlite3 "$tmp/native.db" "$sql")
sq_rec=$(cpu_of "$SPENT" citcat record --cpuid "$mode" -o "$tmp/sq" -- sqlite3 "$tmp/rec.db" "$sql")
THREADS=$top/build/progs/citcat_threads
par_work=$((rounds * 100000))
par_native=$(cpu_of "$THREADS" par "$par_work")
par_rec=$(cpu_of "$SPENT" citcat record --cpuid "$mode" -o "$tmp/par" -- "$THREADS" par "$par_work")
par_json=$("$SPENT" citcat replay "$tmp/par" --json 2>/dev/null)
# the same at 1 ms slices: many preemption points in the hot loops, each hooked only while next
"$SPENT" citcat record --cpuid "$mode" --time-slice 1 -o "$tmp/par1" -- "$THREADS" par "$par_work" > /dev/null 2>&1
par1_json=$("$SPENT" citcat replay "$tmp/par1" --json 2>/dev/null)

echo "cpuid mode:         $cpuid_mode (SPENT_CITCAT_CPUID=auto|fault|patch chooses)"
echo "program:            citcat_compute $rounds ($insns instructions, replay verified: $verified); slowdown on $((rounds * 20)) rounds"
awk -v n="$native" -v r="$recorded" 'BEGIN { printf "record slowdown:    %.3fx  (native %.3f s cpu, recorded %.3f s cpu incl. recorder; goal <= 1.1x)\n", r / n, n, r }'
awk -v n="$ls_native" -v r="$ls_rec" -v t="$ls_rec_traced" 'BEGIN { printf "record ls -laR:     %.1fx with the syscall buffer, %.1fx without  (native %.3f s cpu, recorded %.3f s / %.3f s; 4000 files in 100 directories; goal <= 2x)\n", r / n, t / n, n, r, t }'
awk -v n="$find_native" -v r="$find_rec" -v t="$find_rec_traced" 'BEGIN { printf "record find:        %.1fx with the syscall buffer, %.1fx without  (native %.3f s cpu, recorded %.3f s / %.3f s; goal <= 2x)\n", r / n, t / n, n, r, t }'
for fm in "ls -laR:$ls_fm" "find:$find_fm"; do
	echo "${fm#*:}" | awk -v p="${fm%%:*}" '{ printf "  %-8s split:    %.1f ms fixed per recording + %.2fx per file  (one run: %.1fx on 4000 files, %.1fx on 40000; native %.4f/%.4f s, recorded %.4f/%.4f s)\n", p, $1, $2, $3, $4, $5, $7, $6, $8 }'
done
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("  ls -laR replay:   %d syscalls, %d of them buffered, verified %s" % (d["syscalls"], d["buffered_syscalls"], d["verified"]))' "$ls_json"
awk -v n="$sq_native" -v r="$sq_rec" 'BEGIN { printf "record sqlite3:     %.1fx  (native %.3f s cpu, recorded %.3f s; 300 inserts into a file database)\n", r / n, n, r }'
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); n,r=float(sys.argv[2]),float(sys.argv[3]); print("record 2 threads:   %.2fx  (native %.3f s cpu, recorded %.3f s incl. recorder; goal <= 2.2x; citcat_threads par %s: %d switches, %d at exact points, replay verified %s)" % (r/n, n, r, sys.argv[4], d["switches"], d["preemption_points"], d["verified"]))' "$par_json" "$par_native" "$par_rec" "$par_work"
awk -v b="$bytes" -v i="$insns" 'BEGIN { printf "bytes/instruction:  %.7f  (%d bytes; goal <= 0.01; a stored trace needs ~8-16)\n", b / i, b }'
python3 -c 'import json,sys; a,b=json.loads(sys.argv[1]),json.loads(sys.argv[2]); sa,sb=a["instructions"]/a["cpu_seconds"],b["instructions"]/b["cpu_seconds"]; print("replay 2 threads:   %.0f M instructions/cpu-s at 1 ms slices (%d points, verified %s) vs %.0f M at 20 ms (%d points): %.2fx" % (sb/1e6, b["preemption_points"], b["verified"], sa/1e6, a["preemption_points"], sb/sa))' "$par_json" "$par1_json"
awk -v i="$insns" -v c="$cpu" -v w="$wall" 'BEGIN { printf "replay speed:       %.1f M instructions/cpu-s  (%.1f M/s wall on this shared machine; goal >= 100)\n", i / c / 1e6, i / w / 1e6 }'
awk -v i="$small_insns" -v c="$sink_cpu" 'BEGIN { printf "sink replay speed:  %.1f M instructions/cpu-s with every instruction and data reference dumped\n", i / c / 1e6 }'
# a timer-ended loop without syscalls (signals at their exact point, #17): openssl speed
"$SPENT" citcat record --cpuid "$mode" -o "$tmp/ossl" -- openssl speed -seconds 1 -bytes 64 sha256 > /dev/null 2>&1
oj=$("$SPENT" citcat replay "$tmp/ossl" --json 2>/dev/null)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("openssl speed 1 s:  replay verified %s, %.1f G instructions, %.0f cpu-s, %d signal points, %d near misses" % (d["verified"], d["instructions"]/1e9, d["cpu_seconds"], d["signal_points"], d["point_near_misses"]))' "$oj"
