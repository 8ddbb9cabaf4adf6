#!/bin/bash
# tests/e2e/shim_errors.sh - bad input to `spent shim` gets one clear error line, a non-zero
# exit and no output file: an unknown symbol, a CPU that does not exist, a static program (the
# message names the static-link alternative), a corrupt sample file for dump.
# test: serial (the shim's observer busy-loops on a CPU of its own)
source "$(dirname "$0")/lib.sh"

# expect NAME PATTERN ARGS...: non-zero exit, exactly one stderr line matching PATTERN, no -o file
expect() {
	local name=$1 pat=$2; shift 2
	rm -f "$TMP/out.shim"
	"$SPENT" "$@" >"$TMP/stdout" 2>"$TMP/stderr"
	local rc=$? lines
	lines=$(wc -l <"$TMP/stderr")
	if [ $rc -eq 0 ]; then
		fail "$name: exit status 0"
	elif [ "$lines" -ne 1 ]; then
		fail "$name: $lines stderr lines, want 1: $(cat "$TMP/stderr")"
	elif ! grep -qE "$pat" "$TMP/stderr"; then
		fail "$name: message '$(cat "$TMP/stderr")' does not match '$pat'"
	elif [ -e "$TMP/out.shim" ]; then
		fail "$name: wrote $TMP/out.shim despite the error"
	else
		pass "$name: $(cat "$TMP/stderr")"
	fi
}

ncpu=$(getconf _NPROCESSORS_CONF)
expect shim_error_unknown_symbol "^spent: symbol 'no_such_signal' not found in '.*shim_phases' or its libraries: define it with SPENT_SHIM_SIGNAL" \
	shim --tag p=no_such_signal -o "$TMP/out.shim" -- "$PROGS/shim_phases" 0.1
expect shim_error_no_cpu "^spent: cpu $((ncpu + 5)) for --observer-cpu does not exist or is offline: this machine has cpus " \
	shim --tag phase=phase --observer-cpu $((ncpu + 5)) -o "$TMP/out.shim" -- "$PROGS/shim_phases" 0.1
expect shim_error_same_cpu "^spent: --observer-cpu and --app-cpu are both 0" \
	shim --tag phase=phase --observer-cpu 0 --app-cpu 0 -- "$PROGS/shim_phases" 0.1
expect shim_error_static "^spent: '.*shim_demo-static' is statically linked, so libspent-shim.so cannot be preloaded: link it with libspent-shim.a and -Wl,-u,spent_shim_start" \
	shim --tag phase=phase -o "$TMP/out.shim" -- "$PROGS/shim_demo-static" 0.1
expect shim_error_no_command "^spent: command 'no-such-command-xyz' not found" \
	shim --tag phase=phase -- no-such-command-xyz
# exit statuses as the shell's, stat's and record's (it was 2 for both)
"$SPENT" shim --tag phase=phase -- no-such-command-xyz 2> /dev/null
check "shim_missing_command_exits_127 ($?)" [ $? = 127 ]
printf 'data\n' > "$TMP/notexec"
expect shim_error_not_runnable "^spent: cannot run '.*notexec': Permission denied" \
	shim --tag phase=phase -- "$TMP/notexec"
"$SPENT" shim --tag phase=phase -- "$TMP/notexec" 2> /dev/null
check "shim_not_runnable_exits_126 ($?)" [ $? = 126 ]
"$SPENT" record -e cpu-clock -o "$TMP/nr" -- "$TMP/notexec" 2> /dev/null
check "record_not_runnable_exits_126 ($?)" [ $? = 126 ]
expect shim_error_bad_signal_spec "^spent: invalid signal '=phase': expected NAME=SYMBOL" \
	shim --tag =phase -- "$PROGS/shim_phases" 0.1
expect shim_error_nothing "^spent: nothing to observe" shim -- "$PROGS/shim_phases" 0.1

# a good file truncated, and one with a flipped byte, are refused by dump
"$SPENT" shim --tag phase=phase --buffer 1000 -o "$TMP/good.shim" -- "$PROGS/shim_phases" 0.1 >/dev/null 2>&1
head -c $(( $(stat -c %s "$TMP/good.shim") - 9 )) "$TMP/good.shim" >"$TMP/trunc.shim"
expect shim_error_dump_truncated "^spent: cannot read Shim sample file '.*trunc.shim': corrupt or truncated" \
	shim dump "$TMP/trunc.shim"
cp "$TMP/good.shim" "$TMP/flip.shim"
printf '\xff' | dd of="$TMP/flip.shim" bs=1 seek=40 conv=notrunc 2>/dev/null
expect shim_error_dump_corrupt "^spent: cannot read Shim sample file '.*flip.shim': corrupt" \
	shim dump "$TMP/flip.shim"
# a failed run leaves an existing -o file untouched
cp "$TMP/good.shim" "$TMP/keep.shim"
"$SPENT" shim --tag p=no_such_signal -o "$TMP/keep.shim" -- "$PROGS/shim_phases" 0.1 2>/dev/null
check "shim_error_keeps_output an existing -o file is untouched by a failed run" cmp -s "$TMP/good.shim" "$TMP/keep.shim"
expect shim_error_output_dir "^spent: cannot write '.*/no-such-dir/x.shim': its directory does not exist" \
	shim --tag phase=phase -o "$TMP/no-such-dir/x.shim" -- "$PROGS/shim_phases" 0.1
expect shim_error_histogram_tag "^spent: --histogram 'nope' names no tag: add --tag nope=SYMBOL" \
	shim --tag phase=phase --histogram nope -- "$PROGS/shim_phases" 0.1
