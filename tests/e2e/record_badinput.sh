#!/bin/bash
# tests/e2e/record_badinput.sh - bad input gets one clear line on stderr and a non-zero exit,
# and only spent's own outputs are replaced (docs/outputs.md): missing binary, an output that
# is not a profile, truncated and corrupt profile files, a non-profile directory, a deleted
# image, an unknown symbol.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

# one_line NAME EXPECTED-SUBSTRING CMD...: non-zero exit, exactly one stderr line containing it
one_line() {
	local name=$1 want=$2; shift 2
	"$@" >/dev/null 2>"$TMP/err"
	local rc=$? n; n=$(wc -l < "$TMP/err")
	if [ $rc -ne 0 ] && [ "$n" -eq 1 ] && grep -q -- "$want" "$TMP/err"; then
		pass "$name"
	else
		fail "$name: exit $rc, $n stderr lines: $(head -3 "$TMP/err" | tr '\n' '|')"
	fi
}

one_line record_missing_binary_one_line "cannot run '/nonexistent/prog'" \
	$SPENT record -o "$TMP/none" -- /nonexistent/prog
check record_missing_binary_writes_nothing test ! -e "$TMP/none"

$SPENT record -o "$TMP/p" -- "$PROGS/split603010" 50 >/dev/null 2>&1
mkdir -p "$TMP/notprof" && echo mine > "$TMP/notprof/f"
one_line record_non_profile_output_refused "only a profile directory is replaced" \
	$SPENT record -e cpu-clock -o "$TMP/notprof" -- "$PROGS/hotline" 10
check record_non_profile_output_untouched test "$(cat "$TMP/notprof/f")" = mine
$SPENT record -e cpu-clock -o "$TMP/p" -- "$PROGS/hotline" 50 >/dev/null 2>&1
check record_replaces_its_profile_output bash -c "$SPENT report -i '$TMP/p' --json | grep -q hot_function && ! $SPENT report -i '$TMP/p' --json | grep -q func_sixty"
check record_replace_leaves_no_temporaries bash -c "! ls -d '$TMP'/p.* 2>/dev/null | grep -q ."

# a truncated and a corrupt file: each skipped with one warning line, exit non-zero. The
# profile's one file is its samples file (it carries the counts too): a second epoch, a copy
# of the first, keeps samples to report once that file is skipped
cp -r "$TMP/p" "$TMP/trunc" && cp -r "$TMP/trunc/epoch-0000" "$TMP/trunc/epoch-0001"
f=$(ls "$TMP"/trunc/epoch-0000/samples@*.prof)
truncate -s -5 "$f"
one_line report_truncated_file_one_line "skipping corrupt profile file" $SPENT report -i "$TMP/trunc"
cp -r "$TMP/p" "$TMP/corrupt" && cp -r "$TMP/corrupt/epoch-0000" "$TMP/corrupt/epoch-0001"
f=$(ls "$TMP"/corrupt/epoch-0000/samples@*.prof)
printf '\xff\xff\xff\xff' | dd of="$f" bs=1 seek=16 conv=notrunc 2>/dev/null
one_line report_corrupt_file_one_line "checksum mismatch" $SPENT report -i "$TMP/corrupt"
one_line report_bad_magic_file_one_line "bad magic" bash -c "echo junk > '$TMP/corrupt/epoch-0000/zz.prof' && rm -f '$f' && $SPENT report -i '$TMP/corrupt'"

# a pid that is gone: named, as stat -p names it (was: "cannot open event 'cpu-clock': No such
# file or directory")
true & gone=$!
wait $gone
one_line record_gone_pid_one_line "process '$gone' not found" $SPENT record -e cpu-clock -p $gone -o "$TMP/gone"
check record_gone_pid_writes_nothing test ! -e "$TMP/gone"

mkdir -p "$TMP/plain" && echo hi > "$TMP/plain/file"
one_line report_non_profile_dir_one_line "is not a spent profile directory" $SPENT report -i "$TMP/plain"
one_line report_missing_dir_one_line "not found" $SPENT report -i "$TMP/nowhere"
one_line report_file_not_dir_one_line "is not a directory" $SPENT report -i "$TMP/plain/file"

echo keep > "$TMP/keep" && ln -s "$TMP/keep" "$TMP/out.pb.gz"
one_line report_pprof_symlink_refused "is a symlink" $SPENT report -i "$TMP/p" --pprof "$TMP/out.pb.gz"
check report_pprof_symlink_target_untouched test "$(cat "$TMP/keep")" = keep
one_line annotate_unknown_symbol_one_line "function 'no_such_fn' not found" \
	$SPENT annotate -i "$TMP/p" no_such_fn

# the recorded binary is gone: annotate says so
mkdir -p "$TMP/gone" && cp "$PROGS/hotline" "$TMP/gone/hotline"
$SPENT record -o "$TMP/g" -- "$TMP/gone/hotline" 50 >/dev/null 2>&1
rm "$TMP/gone/hotline"
one_line annotate_deleted_binary_one_line "image file not found" $SPENT annotate -i "$TMP/g" hot_function
# a name no image has, beside an image that cannot be read: "not found", naming that image
# (the image's error alone read as if it were the function's)
one_line annotate_unknown_beside_unreadable_image \
	"function 'no_such_fn' not found in the images of profile '$TMP/g' that could be read ('$TMP/gone/hotline' could not: image file not found)" \
	$SPENT annotate -i "$TMP/g" no_such_fn
one_line record_bad_event_one_line "no-such-event" $SPENT record -e no-such-event -o "$TMP/e" -- true
check record_bad_event_writes_nothing test ! -e "$TMP/e"
