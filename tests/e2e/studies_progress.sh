#!/bin/bash
# tests/e2e/studies_progress.sh - the studies and `trace stats` show the percentage of the log
# read on stderr when it is a terminal (or with --progress), clear that line at the end, and
# print nothing extra when stderr is a file (the captured output of scripts and tests).
# test: serial (a terminal's progress line is read within seconds)
source "$(dirname "$0")/lib.sh"
"$SPENT" trace -o "$TMP/s.log" -- "$PROGS/studies_small" > /dev/null 2>&1
check "studies_small runs under spent trace" test $? -eq 0
run() { # NAME ARGS...: the study on the log, stdout to $TMP/NAME.out, stderr to $TMP/NAME.err
	local name=$1
	shift
	"$SPENT" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
}
for c in cachesim hitcurve "memmap --png $TMP/m.png" locks "trace stats"; do
	n=${c%% *}
	run "$n.plain" $c "$TMP/s.log"
	check "$c: nothing on stderr when it is no terminal" test ! -s "$TMP/$n.plain.err"
	run "$n.prog" $c --progress "$TMP/s.log"
	check "$c --progress: the percentage of the log read on stderr" \
		grep -qE "spent: ${c%% --*}: [0-9]+% of '$TMP/s.log' read" "$TMP/$n.prog.err"
	check "$c --progress: the line is cleared at the end" \
		python3 -c 'import sys; sys.exit(not open(sys.argv[1], "rb").read().endswith(b"\r\033[K"))' \
		"$TMP/$n.prog.err"
	if [ "$n" = trace ]; then	# stats: its CPU-time rate differs from run to run
		check "$c --progress: stdout unchanged" \
			cmp -s <(grep -v Minstr "$TMP/$n.plain.out") <(grep -v Minstr "$TMP/$n.prog.out")
	else
		check "$c --progress: stdout unchanged" cmp -s "$TMP/$n.plain.out" "$TMP/$n.prog.out"
	fi
done
if command -v script > /dev/null; then
	# a terminal for stderr (script's pty); stdout to a file
	script -qec "'$SPENT' cachesim '$TMP/s.log' > '$TMP/tty.out'" "$TMP/tty.typescript" > /dev/null
	check "cachesim on a terminal shows the percentage read without --progress" \
		grep -qE "spent: cachesim: [0-9]+% of '$TMP/s.log' read" "$TMP/tty.typescript"
	check "cachesim on a terminal: stdout unchanged" cmp -s "$TMP/tty.out" "$TMP/cachesim.plain.out"
else
	skip "studies_progress_tty" "no script(1) to give the command a terminal"
fi
