#!/bin/bash
# tests/run.sh - run every test: cmocka unit tests and end-to-end scripts, on the plain build
# and again on the ASan/UBSan build; print one closing line "N passed, N failed, N skipped".
#
#   tests/run.sh                 everything (what `make test` runs)
#   tests/run.sh e2e/stat_*.sh   only the named e2e scripts, plain build unless SPENT_PASSES
#   SPENT_PASSES="build" ...     choose builds (default "build build-san")
#
# Each e2e script sources tests/e2e/lib.sh and prints PASS/FAIL/SKIP lines; a script that exits
# non-zero without printing FAIL counts as one failure. Only hardware the machine lacks (a PMU, CPUID
# faulting) may SKIP, and only the check that needs it: the portable path always runs.
#
# Scripts run SPENT_TEST_JOBS at a time (default: the number of CPUs), both builds' in one pool,
# so the two passes cost about the longer one; a script whose checks depend on the machine's
# time or CPUs being its own (sampling sized by time, the shim's observer CPU, the daemon's
# system-wide view, a terminal read within seconds) says `# test: serial (why)` and runs alone
# afterwards. Each script's lines are printed together when it ends.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
passes=${SPENT_PASSES:-"build build-san"}
per_script_timeout=${SPENT_TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0
failed_names=()
mkdir -p build/test-logs && log=$(mktemp -d "$top/build/test-logs/run.XXXXXX")

count_unit() { # $1 build dir
	for t in "$1"/tests/test_*; do
		[ -x "$t" ] || continue
		local name out t0=$SECONDS
		name=$(basename "$t")
		out=$(timeout "$per_script_timeout" "$t" 2>&1)
		local rc=$?
		echo "$out" > "$log/$1-$name.log"
		local ok nok nskip
		ok=$(grep -c '^\[       OK \]' <<<"$out")
		nok=$(grep -cE '^\[  FAILED  \] [A-Za-z_]' <<<"$out" | head -1)
		# the summary repeats failed names after "listed below"; count RUN lines minus OK/SKIP
		local runs; runs=$(grep -c '^\[ RUN      \]' <<<"$out")
		nskip=$(grep -cE '^\[  SKIPPED \] [A-Za-z_]' <<<"$out")
		nok=$((runs - ok - nskip))
		[ $rc -ne 0 ] && [ $nok -eq 0 ] && nok=1
		pass=$((pass + ok)); fail=$((fail + nok)); skip=$((skip + nskip))
		if [ $nok -gt 0 ]; then
			failed_names+=("$1 unit $name")
			echo "$out" | grep -E 'FAILED|error|Error|ERROR' | head -20
		fi
		printf '%-40s %s (%d s)\n' "unit $name ($1)" "$ok ok, $nok failed, $nskip skipped" $((SECONDS - t0))
	done
}

jobs_max=${SPENT_TEST_JOBS:-$(nproc 2> /dev/null || echo 1)}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || jobs_max=1

run_e2e() { # $1 build dir, $2 script: runs it, prints its FAIL/SKIP lines and its summary in
	# one write (scripts end concurrently; bash's printf writes line by line, so through cat
	# from a file), leaves "passed failed skipped" in its .res file
	local s=$2 name out rc t0=$SECONDS report
	name=$(basename "$s" .sh)
	out=$(SPENT_BUILD="$top/$1" SPENT="$top/$1/spent" SPENT_TOP="$top" \
		timeout "$per_script_timeout" bash "$s" 2>&1)
	rc=$?
	echo "$out" > "$log/$1-$name.log"
	local p f k
	p=$(grep -c '^PASS ' <<<"$out")
	f=$(grep -c '^FAIL ' <<<"$out")
	k=$(grep -c '^SKIP ' <<<"$out")
	report=$(grep -E '^(FAIL|SKIP) ' <<<"$out")
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		report+="${report:+$'\n'}FAIL $name: script exited $rc (log: $log/$1-$name.log)"
		report+=$'\n'$(tail -5 <<<"$out")
	fi
	echo "$p $f $k" > "$log/$1-$name.res"
	printf '%s%-40s %s (%d s)\n' "${report:+$report$'\n'}" "e2e $name ($1)" \
		"$p passed, $f failed, $k skipped" $((SECONDS - t0)) > "$log/$1-$name.out"
	cat "$log/$1-$name.out"
}

add_result() { # $1 build dir, $2 script: its counts into the totals (no .res: it failed)
	local name p=0 f=1 k=0
	name=$(basename "$2" .sh)
	[ -f "$log/$1-$name.res" ] && read -r p f k < "$log/$1-$name.res"
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
	[ "$f" -gt 0 ] && failed_names+=("$1 e2e $name")
}

run_jobs() { # build:script...: JOBS_MAX at a time, then the totals in the given order
	local j running=0
	for j in "$@"; do
		if [ "$running" -ge "$jobs_max" ]; then
			wait -n
			running=$((running - 1))
		fi
		if [ "$jobs_max" -eq 1 ]; then	# alone: in the foreground, as a user would run it
			run_e2e "${j%%:*}" "${j#*:}"
			continue
		fi
		run_e2e "${j%%:*}" "${j#*:}" &
		running=$((running + 1))
	done
	wait
	for j in "$@"; do add_result "${j%%:*}" "${j#*:}"; done
}

start=$(date +%s)
if [ $# -gt 0 ]; then
	for b in ${SPENT_PASSES:-build}; do
		for s in "$@"; do
			run_e2e "$b" "tests/$s"
			add_result "$b" "tests/$s"
		done
	done
else
	pooled=() serial=()
	for b in $passes; do
		if [ ! -x "$b/spent" ]; then
			echo "FAIL: $b/spent is not built (run make / make SAN=1)"
			fail=$((fail + 1))
			continue
		fi
		count_unit "$b"
		for s in tests/e2e/*.sh; do
			[ "$(basename "$s")" = lib.sh ] && continue
			# sanitizer pass: scripts may opt out of the slow sanitized rerun with a SAN_SKIP
			# marker when they only time things; correctness scripts always run twice
			if [ "$b" = build-san ] && grep -q '^# san: plain-only' "$s"; then continue; fi
			if grep -q '^# test: serial' "$s"; then
				serial+=("$b:$s")
			else
				pooled+=("$b:$s")
			fi
		done
	done
	run_jobs "${pooled[@]}"
	jobs_max=1 run_jobs "${serial[@]}"
fi
end=$(date +%s)
echo
[ ${#failed_names[@]} -gt 0 ] && printf 'failed: %s\n' "${failed_names[@]}"
echo "logs in $log, $((end - start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
