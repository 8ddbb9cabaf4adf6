# bench/trace_workloads.sh - sourced by bench/trace_programs.sh and trace_programs_ab.sh: the
# real programs they trace, in the same sizes, so their figures compare. Needs $top and $tmp;
# writes $tmp/text (2 MiB of words) and sets PY, PYPROG (exported), cmd[NAME] (a command line
# to eval: prog=(${cmd[$p]})) and PROGRAMS (TRACE_PROGRAMS="gzip python3" picks some).

# the interpreter itself: a shim (pyenv) would be a shell script tracing a tree of processes
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(python3 -c 'import sys; print(sys.executable)')
python3 "$top/bench/words_text.py" "$tmp/text" 2
PYPROG='import json
d = [{"k": i, "v": str(i) * 3, "l": [i, i + 1]} for i in range(60000)]
s = json.dumps(d)
assert len(json.loads(s)) == len(d)'
export PYPROG
declare -A cmd=(
	[gzip]="gzip -c -6 $tmp/text"
	[bzip2]="bzip2 -c $tmp/text"
	[python3]="$PY -c \"\$PYPROG\""
	[trace_bench]="$top/build/progs/trace_bench ${TRACE_BENCH_N:-300}"
)
PROGRAMS=${TRACE_PROGRAMS:-gzip bzip2 python3 trace_bench}
