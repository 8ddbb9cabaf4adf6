#!/bin/bash
# tests/e2e/safety_json.sh - every --json output of every command is valid JSON (one object
# per line, read with python3's json) when the paths and names in it hold a quote, a backslash
# and a newline, and the decoded strings are the real paths: stat, record/report (every view,
# --children, --diff), annotate, daemon + db status (live and from the status file) and dump,
# trace stats, cachesim, hitcurve, locks, citcat replay, shim and shim dump. Before, the
# daemon wrote the --db path raw and turned quotes in image names into '?'.
source "$(dirname "$0")/lib.sh"
NL=$'\n'
N="$TMP/d\"q\\b${NL}n"		# the directory: d"q\b<newline>n
PROG="$N/p\"\\${NL}x"		# the program: p"\<newline>x (also its comm)
DB="$N/db"
trap '"$SPENT" db "$DB" stop > /dev/null 2>&1; sleep 0.5; rm -rf "$TMP"' EXIT
mkdir "$N"
cp "$SPENT_TOP/tests/progs/demo.c" "$N/demo.c"
gcc -g -O1 -fno-inline -o "$PROG" "$N/demo.c"
cp "$PROGS/studies_mutex" "$N/mutex"

# jsonl NAME FILE [NEEDLE...]: every non-empty line of FILE is one JSON object, and each NEEDLE
# is (part of) some string value or key once decoded
jsonl() {
	local name=$1 file=$2; shift 2
	local why
	why=$(python3 - "$file" "$@" <<'PY'
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
lines = [l for l in text.split("\n") if l.strip()]
if not lines:
    print("no output"); sys.exit()
strings = []
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            strings.append(k); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
    elif isinstance(v, str):
        strings.append(v)
for i, l in enumerate(lines):
    try:
        o = json.loads(l)
    except ValueError as e:
        print("line %d is not JSON (%s): %r" % (i + 1, e, l[:200])); sys.exit()
    if not isinstance(o, dict):
        print("line %d is not an object" % (i + 1)); sys.exit()
    walk(o)
for n in sys.argv[2:]:
    if not any(n in s for s in strings):
        print("%r is in no string (%r...)" % (n, sorted(set(strings))[:6])); sys.exit()
print("ok")
PY
)
	if [ "$why" = ok ]; then pass "json: $name"; else fail "json: $name: $why"; fi
}

# ---- stat ----
"$SPENT" stat --json --per-process -e task-clock,page-faults -o "$N/stat.json" -- "$PROG" 0.05 > /dev/null
jsonl "stat --per-process (comm with a quote, backslash, newline)" "$N/stat.json" "p\"\\${NL}x"
"$SPENT" stat --json -I 50 -e task-clock -- "$PROG" 0.1 > /dev/null 2> "$N/stat-i.json"
jsonl "stat -I" "$N/stat-i.json"

# ---- record, report, annotate ----
"$SPENT" record -g -o "$N/prof" -- "$PROG" 0.3 > /dev/null 2>&1
for by in image function line instruction; do
	"$SPENT" report -i "$N/prof" --by $by --json > "$N/r-$by.json" 2> /dev/null
	jsonl "report --by $by" "$N/r-$by.json" "$PROG"
done
"$SPENT" report -i "$N/prof" --by line --json > "$N/r-line.json" 2> /dev/null
jsonl "report --by line names the source file" "$N/r-line.json" "$N/demo.c"
"$SPENT" report -i "$N/prof" --children --json > "$N/r-ch.json" 2> /dev/null
jsonl "report --children" "$N/r-ch.json" "$PROG"
"$SPENT" report -i "$N/prof" --diff "$N/prof" --json > "$N/r-diff.json" 2> /dev/null
jsonl "report --diff" "$N/r-diff.json" "$PROG"
"$SPENT" annotate -i "$N/prof" --json heavy > "$N/ann.json" 2> /dev/null
jsonl "annotate" "$N/ann.json" "$PROG" "$N/demo.c"

# ---- daemon: status (live, then from its file) and dump, with the database in that directory
if "$SPENT" daemon --db "$DB" -F 1000 2> "$N/daemon.err"; then
	"$PROG" 0.5 > /dev/null
	"$SPENT" db "$DB" flush > /dev/null
	"$SPENT" db "$DB" status --json > "$N/st.json" 2> /dev/null
	jsonl "db status (live) has the --db path" "$N/st.json" "$DB"
	check "db status (live): daemon true, db exactly the path" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["daemon"] is True and o["running"] is True and o["db"] == sys.argv[2], o' "$N/st.json" "$DB"
	"$SPENT" db "$DB" dump --json > "$N/dump.json" 2> /dev/null
	jsonl "db dump" "$N/dump.json" "$PROG"
	"$SPENT" db "$DB" stop > /dev/null
	for _ in $(seq 1 100); do [ -e "$DB/control" ] || break; sleep 0.1; done
	"$SPENT" db "$DB" status --json > "$N/st2.json" 2> /dev/null
	jsonl "db status (from the status file)" "$N/st2.json" "$DB"
	check "db status (from the file): daemon and running false" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["daemon"] is False and o["running"] is False and o["db"] == sys.argv[2], o' "$N/st2.json" "$DB"
	check "db status (text) prints the status members" grep -q '^  reduction_by_image' <("$SPENT" db "$DB" status)
else
	fail "json: the daemon did not start: $(cat "$N/daemon.err")"
fi

# ---- trace and the studies on it ----
"$SPENT" trace -o "$N/t.log" -- "$PROG" 0.005 > /dev/null 2>&1
"$SPENT" trace stats --json "$N/t.log" > "$N/ts.json"
jsonl "trace stats" "$N/ts.json"
"$SPENT" cachesim "$N/t.log" --json > "$N/cs.json" 2> /dev/null
jsonl "cachesim" "$N/cs.json"
"$SPENT" hitcurve "$N/t.log" --json > "$N/hc.json" 2> /dev/null
jsonl "hitcurve" "$N/hc.json"
"$SPENT" trace -o "$N/m.log" -- "$N/mutex" > /dev/null 2>&1
"$SPENT" locks "$N/m.log" --json > "$N/lk.json" 2> /dev/null
jsonl "locks" "$N/lk.json" "mtx"

# ---- citcat ----
# (record exits with the program's status: citcat_tiny exits 5)
"$SPENT" citcat record -o "$N/rec" -- "$PROGS/citcat_tiny" > /dev/null 2> "$N/cc.err"
if [ -d "$N/rec" ]; then
	"$SPENT" citcat replay "$N/rec" --json > "$N/cc.json" 2> /dev/null
	jsonl "citcat replay" "$N/cc.json"
elif grep -q "cpuid faulting" "$N/cc.err"; then
	skip "json: citcat replay: citcat record needs CPUID faulting, which this machine lacks"
else
	fail "json: citcat record failed: $(cat "$N/cc.err")"
fi

# ---- shim: a signal name with a quote, a backslash and a newline ----
TAG="t\"\\${NL}g"
# (the program's own lines share stdout: the objects are the lines that start with '{')
"$SPENT" shim --tag "$TAG=phase" --buffer 1000 -o "$N/run.shim" --json -- "$PROGS/shim_phases" 0.1 \
	> "$N/shim.out" 2> /dev/null
grep '^{' "$N/shim.out" > "$N/shim.json"
jsonl "shim" "$N/shim.json" "$TAG"
"$SPENT" shim dump "$N/run.shim" --json --limit 50 > "$N/shimd.json" 2> /dev/null
jsonl "shim dump (signal names are keys of the samples)" "$N/shimd.json" "$TAG"
