#!/bin/bash
# tests/e2e/report_symbols.sh - symbolization of reports at scale: the by-image view opens no
# image file (it needs no symbols), and its result is the same when the images are gone.
source "$(dirname "$0")/lib.sh"

cp "$PROGS/split603010" "$TMP/prog"
$SPENT record -o "$TMP/p" -- "$TMP/prog" 100 >/dev/null 2>&1
$SPENT report -i "$TMP/p" --by image > "$TMP/byimage.txt"
check by_image_lists_the_program grep -qE " prog +\$" "$TMP/byimage.txt"
if command -v strace >/dev/null; then
	strace -f -e trace=open,openat -o "$TMP/trace" $SPENT report -i "$TMP/p" --by image >/dev/null
	check by_image_opens_no_image bash -c "! grep -q '\"$TMP/prog\"' '$TMP/trace'"
	strace -f -e trace=open,openat -o "$TMP/trace2" $SPENT report -i "$TMP/p" >/dev/null
	check by_function_does_open_the_image grep -q "\"$TMP/prog\"" "$TMP/trace2"
else
	skip by_image_opens_no_image "strace not installed"
fi
rm "$TMP/prog"
$SPENT report -i "$TMP/p" --by image > "$TMP/gone.txt" 2>"$TMP/gone.err"
check by_image_same_without_the_files cmp "$TMP/byimage.txt" "$TMP/gone.txt"
check by_image_no_warning_without_the_files test ! -s "$TMP/gone.err"
