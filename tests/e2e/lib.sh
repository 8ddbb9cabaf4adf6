# tests/e2e/lib.sh - helpers for end-to-end scripts: sourced, never run.
# A script prints one line per check: PASS name / FAIL name: why / SKIP name: reason.
# Only missing hardware is a reason to SKIP: a PMU (need_pmu) or CPUID faulting (citcat's
# --cpuid fault; its portable patch mode runs everywhere).
set -u
SPENT=${SPENT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/spent}
SPENT_BUILD=${SPENT_BUILD:-$(dirname "$SPENT")}
SPENT_TOP=${SPENT_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# test programs are never sanitized: they are the programs being measured
PROGS=$SPENT_TOP/build/progs
TMP=$(mktemp -d /tmp/spent-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# every record saves symbols in the build-id cache: a test's own, not the user's ~/.cache
export SPENT_BUILDID_DIR=$TMP/buildid
# and citcat record keeps its copies of mapped files in a cache of the test's own
export SPENT_CITCAT_CACHE=$TMP/citcat-cache
# python3 is Debian's when installed, for the checks' own helpers (JSON fields, oracles) and the
# programs run: a python3 earlier in PATH can be a version manager's shim (pyenv's costs 80 ms a
# call against 13 ms, in a suite that calls it thousands of times) or another build. A link
# first in PATH, not a function: `cmd &` then still gives the program's own pid.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$TMP/bin" && ln -s /usr/bin/python3 "$TMP/bin/python3" && PATH=$TMP/bin:$PATH
fi

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
skip() { echo "SKIP $*"; }

# check NAME CONDITION-COMMAND... : PASS when the command succeeds
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name: '$*' was false"; fi
}

# true when the machine has a hardware PMU that counts instructions
have_pmu() {
	[ -d /sys/bus/event_source/devices/cpu ] || [ -d /sys/bus/event_source/devices/cpu_core ]
}

# need_pmu NAME: print SKIP and return 1 when there is no hardware PMU
need_pmu() {
	if have_pmu; then return 0; fi
	skip "$1: no hardware PMU on this machine (no /sys/bus/event_source/devices/cpu)"
	return 1
}

# within A B PCT: |A-B| <= PCT% of B
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= m * p / 100.0) }'
}

# jfield JSONLINE KEY: extract a scalar field from one JSON object line (python3 -S: json is
# in the standard library, and skipping site's start-up halves each call)
jfield() {
	python3 -S -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"
}
# jfields JSONLINE KEY...: several scalar fields in one call, a line each in the order asked
# ("" for an absent one); prints nothing when the line is not JSON. Read them with
# { read -r A; read -r B; } < <(jfields ...)
jfields() {
	python3 -S -c 'import json,sys; o=json.loads(sys.argv[1]); print("\n".join("" if o.get(k) is None else str(o.get(k)) for k in sys.argv[2:]))' "$@" 2>/dev/null
}

# wait_until SECONDS CMD...: true as soon as CMD succeeds, polled every 50 ms; false after SECONDS
wait_until() {
	local end=$(($(date +%s%N) + ${1%.*} * 1000000000)); shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# steal_ticks: time the host has stolen from this VM's vCPUs so far, summed over CPUs, in
# USER_HZ ticks of 10 ms (/proc/stat). task-clock counts stolen time while a task is on its
# CPU; the CPU clocks a program reads itself (CLOCK_*_CPUTIME_ID, rusage) leave it out, so a
# check between the two allows what was stolen during the run.
steal_ticks() { awk '/^cpu /{print $9; exit}' /proc/stat; }
# stolen_slack_ms BEFORE AFTER: the stolen time between two steal_ticks readings in ms, plus one
# tick per CPU for the counter's resolution when anything was stolen at all
stolen_slack_ms() {
	local d=$(($2 - $1))
	if [ "$d" -gt 0 ]; then echo $(((d + $(nproc)) * 10)); else echo 0; fi
}

# spent_sanitized: true when $SPENT is the ASan/UBSan build (scripts size slow work down there)
spent_sanitized() { readelf -d "$SPENT" | grep -q 'NEEDED.*libasan'; }
# split_share ERRFILE FUNCTION: FUNCTION's share of CPU time that tests/progs/split603010
# measured itself and printed on stderr (captured in ERRFILE); empty when it printed none
split_share() { sed -n "s/^split603010 cpu share:.* $2 \([0-9.]*\).*/\1/p" "$1"; }

# cc_libspent OUT SRC: build the C program SRC against the build's libspent.so, as a user
# program links it (a sanitized library needs the sanitizer runtimes in the program; the program
# asks for the soname, which the build tree has beside libspent.so, $TMP/lib links to it).
# Run it with LD_LIBRARY_PATH=$TMP/lib. Compiler errors go to OUT.err.
cc_libspent() {
	local san=""
	nm -D --undefined-only "$SPENT_BUILD/libspent.so" | grep -q __asan_ && san="-fsanitize=address,undefined"
	mkdir -p "$TMP/lib" && ln -sf "$SPENT_BUILD/libspent.so.0" "$TMP/lib/libspent.so.0"
	cc $san -I"$SPENT_TOP/include" -o "$1" "$2" -L"$SPENT_BUILD" -lspent 2> "$1.err"
}
# cc_example NAME: build docs/examples/NAME.c into $TMP/NAME with cc_libspent, say PASS/FAIL,
# and set LD_LIBRARY_PATH for it; returns 1 when it does not build
cc_example() {
	if ! cc_libspent "$TMP/$1" "$SPENT_TOP/docs/examples/$1.c"; then
		fail "$1 builds against libspent.so: $(head -3 "$TMP/$1.err")"
		return 1
	fi
	pass "$1 builds against libspent.so"
	export LD_LIBRARY_PATH=$TMP/lib
}
