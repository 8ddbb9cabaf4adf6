#!/bin/bash
# tests/e2e/cli_options.sh - every command's options come from its table (cli/parse_options.h):
# `spent CMD -h` exits 0 and lists every long option its docs/*.md synopsis names (a
# subcommand's in `spent CMD SUB -h`); `spent help CMD` prints the same; an unknown option is one error
# line and exit 2; `spent CMD --man` is a man page; `spent --man` / `spent help --man` is
# spent(1) naming every command. A command not on the table yet (its usage still a
# commands.def line, no --man) gets commands.def's usage line for -h.
source "$(dirname "$0")/lib.sh"

cmds=$("$SPENT" help | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p')
check "spent help lists commands" test -n "$cmds"

# the long options of CMD's synopsis in the docs, one "SUB OPTION" line each (SUB "-" when the
# line is the command's own, else its subcommand, e.g. "dump"): fenced lines starting "spent
# CMD" and their indented "[..." continuation lines, comments dropped, and inline `spent CMD ...`
doc_options() {
	awk -v cmd="$1" '
		/^```/ { fence = !fence; cont = 0; next }
		!fence { next }
		{ sub(/#.*/, "") }
		$1 == "spent" && $2 == cmd { cont = 1; sc = $3 ~ /^[a-z]+$/ ? $3 : "-"; emit(); next }
		cont && /^[ \t]+\[/ { emit(); next }
		{ cont = 0 }
		function emit(   l) {
			l = $0
			while (match(l, /--[a-z][a-z0-9-]*/)) {
				print sc, substr(l, RSTART, RLENGTH)
				l = substr(l, RSTART + RLENGTH)
			}
		}' "$SPENT_TOP"/docs/*.md
	# and inline `spent CMD ...` spans of the text
	grep -ohE "\`spent $1( [^\`]*)?\`" "$SPENT_TOP"/docs/*.md | tr -d '\`' |
		awk '{ sc = $3 ~ /^[a-z]+$/ ? $3 : "-"; l = $0
		       while (match(l, /--[a-z][a-z0-9-]*/)) {
			       print sc, substr(l, RSTART, RLENGTH); l = substr(l, RSTART + RLENGTH) } }'
}

for cmd in $cmds; do
	"$SPENT" "$cmd" --man > "$TMP/$cmd.1" 2> "$TMP/$cmd.man.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		# not on the option table (yet): -h falls back to commands.def's usage line, and
		# --man is refused as an unknown option before anything runs
		"$SPENT" "$cmd" -h > "$TMP/$cmd.h" 2>&1
		hrc=$?
		check "$cmd (no option table): -h exits 0 with commands.def's usage line" \
			test $hrc -eq 0 -a -n "$(grep "^usage: spent $cmd" "$TMP/$cmd.h")"
		check "$cmd (no option table): --man is refused with exit 2" test $rc -eq 2
		continue
	fi
	check "$cmd --man is a man page" grep -q "^\.TH SPENT-$(echo "$cmd" | tr a-z A-Z) 1" "$TMP/$cmd.1"
	"$SPENT" "$cmd" -h > "$TMP/$cmd.h" 2> "$TMP/$cmd.h.err"
	rc=$?
	check "$cmd -h exits 0" test $rc -eq 0
	check "$cmd -h starts with its usage" grep -q "^usage: spent $cmd" "$TMP/$cmd.h"
	# a command with a --man page is on the table: its commands.def usage must be NULL, or
	# spent.c answers -h with that line instead of the table's option list
	check "$cmd -h lists its options from the table (its commands.def usage is NULL)" \
		grep -qE '^    -' "$TMP/$cmd.h"
	"$SPENT" help "$cmd" > "$TMP/$cmd.help"
	check "spent help $cmd prints what $cmd -h does" cmp -s "$TMP/$cmd.h" "$TMP/$cmd.help"
	missing=""
	doc_options "$cmd" | sort -u > "$TMP/$cmd.opts"
	while read -r sc o; do
		# a subcommand's options are listed by its own -h
		help=$TMP/$cmd.h
		if [ "$sc" != - ]; then
			help=$TMP/$cmd.$sc.h
			"$SPENT" "$cmd" "$sc" -h > "$help" 2> /dev/null || help=$TMP/$cmd.h
		fi
		name=${o#--}
		# a flag with a --no- form is listed as --[no-]NAME
		grep -qE -- "(^|[ ,])--(\[no-\])?$name([=[ ]|$)" "$help" ||
			{ [ "${name#no-}" != "$name" ] && grep -qF -- "--[no-]${name#no-}" "$help"; } ||
			missing="$missing ${sc#-}$o"
	done < "$TMP/$cmd.opts"
	if [ ! -s "$TMP/$cmd.opts" ]; then
		fail "$cmd: no synopsis naming its options found in docs/*.md"
	elif [ -n "$missing" ]; then
		fail "$cmd -h lists every long option of its docs: missing$missing"
	else
		pass "$cmd -h (and its subcommands' -h) list every long option of its docs ($(wc -l < "$TMP/$cmd.opts"))"
	fi
	"$SPENT" "$cmd" --no-such-option-xyz > "$TMP/$cmd.u.out" 2> "$TMP/$cmd.u.err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l < "$TMP/$cmd.u.err")" -eq 1 ] && [ ! -s "$TMP/$cmd.u.out" ] &&
		grep -q "^spent $cmd: unknown option '--no-such-option-xyz'" "$TMP/$cmd.u.err"; then
		pass "$cmd: an unknown option is one line and exit 2"
	else
		fail "$cmd: an unknown option is one line and exit 2: rc $rc, stderr '$(cat "$TMP/$cmd.u.err")'"
	fi
done

"$SPENT" --man > "$TMP/spent.1"
check "spent --man is spent(1)" grep -q '^\.TH SPENT 1' "$TMP/spent.1"
"$SPENT" help --man | cmp -s - "$TMP/spent.1"
check "spent help --man prints the same page" test $? -eq 0
"$SPENT" --man stat | cmp -s - <("$SPENT" stat --man)
check "spent --man stat prints spent stat --man's page" test $? -eq 0
# words the top-level options do not take are refused, not ignored
for extra in "--version extra" "--man stat extra" "help stat extra" "--man nosuch"; do
	"$SPENT" $extra > "$TMP/extra.out" 2> "$TMP/extra.err"
	rc=$?
	check "spent $extra: one error line, exit 2 (rc $rc)" \
		test $rc -eq 2 -a ! -s "$TMP/extra.out" -a "$(wc -l < "$TMP/extra.err")" -eq 1
done
missing=""
for cmd in $cmds; do
	grep -qF "spent\\-$cmd (1)" "$TMP/spent.1" || missing="$missing $cmd"
done
check "spent(1) names every command's page${missing:+: missing$missing}" test -z "$missing"
# an option of another action, a sign on a count, a value on --help, an empty name: refused
mkdir -p "$TMP/db" && echo "host x" > "$TMP/db/meta"
for args in "db $TMP/db epoch --json" "db $TMP/db list --keep 3" "shim -e task-clock --limit 5 -- true" \
	"buildid --list --max-size 5" "stat --list true" "stat --per-thread --per-process -- true" \
	"top -b -n -0" "stat --help=x" "trace dump --comm= x.log" "trace --start= -- true"; do
	"$SPENT" $args > "$TMP/other.out" 2> "$TMP/other.err"
	rc=$?
	check "spent $args: one error line, exit 2 (rc $rc: $(head -c 120 "$TMP/other.err"))" \
		test $rc -eq 2 -a ! -s "$TMP/other.out" -a "$(wc -l < "$TMP/other.err")" -eq 1
done
# a count's K is a thousand (record -c's), a size's 1024
"$SPENT" trace --max-instructions 1K -o "$TMP/k.log" -- /bin/true > /dev/null 2>&1
check "trace --max-instructions 1K is 1000 instructions" \
	test "$("$SPENT" trace stats "$TMP/k.log" | awk '$1 == "instructions" { print $2 }')" = 1000
# `spent trace -h` lists the options of dump and stats too
"$SPENT" trace -h > "$TMP/trace.help"
check "spent trace -h lists trace dump's --limit and trace stats' --json" \
	bash -c "grep -q -- '--limit' '$TMP/trace.help' && grep -q -- '--json' '$TMP/trace.help'"
