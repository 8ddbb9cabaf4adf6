#!/bin/bash
# tests/e2e/citcat_filecache.sh - citcat record's cache of mapped files across recordings
# (src/citcat/filecache.c): a second recording of a program links the cached copies of its
# libraries instead of compressing them again, and still replays verified; a library changed
# between record and replay is named in a one-line error (--no-copy) or does not matter (a
# copy); a copy damaged in place is not reused; SPENT_CITCAT_CACHE=off writes copies as before;
# the recorder does not fault in the pages of a mapped library the program never touched.
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
lines() { [ "$(wc -l < "$1")" = "$2" ]; }
cache=$SPENT_CITCAT_CACHE
LIBC=$(ldd "$PROGS/citcat_libm" | awk '/libc.so/ {print $3}')
# the copy in recording $1 that decompresses to file $2
copy_of() {
	for z in "$1"/files/*.zst; do
		zstd -q -d -c "$z" | cmp -s - "$2" && { echo "$z"; return; }
	done
}
same_inode() { [ -n "$1" ] && [ -n "$2" ] && [ "$(stat -c %i "$1")" = "$(stat -c %i "$2")" ]; }
other_inode() { [ -n "$1" ] && [ -n "$2" ] && ! same_inode "$1" "$2"; }
verified() { [ "$(jfield "$("$SPENT" citcat replay "$1" --json 2>/dev/null)" verified)" = True ]; }

# a private libm (LD_LIBRARY_PATH), to change between record and replay
mkdir "$TMP/lib"
cp "$(ldd "$PROGS/citcat_libm" | awk '/libm.so/ {print $3}')" "$TMP/lib/libm.so.6"
export LD_LIBRARY_PATH=$TMP/lib
"$SPENT" citcat record -o "$TMP/r1" -- "$PROGS/citcat_libm" > "$TMP/real.out" 2>/dev/null
"$SPENT" citcat record -o "$TMP/r2" -- "$PROGS/citcat_libm" > /dev/null 2>&1
c1=$(copy_of "$TMP/r1" "$LIBC"); c2=$(copy_of "$TMP/r2" "$LIBC")
check "citcat_cache_holds_libc" test -f "$cache/files/$(basename "${c1:-none}")"
# the same inode: linked, not compressed again (a new store would rename a new file in)
check "citcat_second_recording_links_cached_libc" same_inode "$c1" "$c2"
check "citcat_cached_libc_is_the_cache_file" same_inode "$c2" "$cache/files/$(basename "${c1:-none}")"
check "citcat_second_recording_replays_verified" verified "$TMP/r2"
check "citcat_cached_copies_mode_0600" [ "$(stat -c %a "$c2")" = 600 ]

# --no-copy: the library changed after recording: one line naming it, nothing replayed
"$SPENT" citcat record --no-copy -o "$TMP/nc" -- "$PROGS/citcat_libm" > /dev/null 2>&1
check "citcat_no_copy_unchanged_library_replays" verified "$TMP/nc"
printf '\0' >> "$TMP/lib/libm.so.6"
"$SPENT" citcat replay "$TMP/nc" > "$TMP/nc.out" 2> "$TMP/nc.err"
rc=$?
check "citcat_changed_library_fails" [ "$rc" != 0 ]
check "citcat_changed_library_names_it" has "$TMP/nc.err" "'$TMP/lib/libm.so.6' changed since it was recorded"
check "citcat_changed_library_error_is_one_line" lines "$TMP/nc.err" 1
check "citcat_changed_library_nothing_replayed" [ ! -s "$TMP/nc.out" ]
# with copies the change does not matter; a recording made now copies the changed library
check "citcat_copy_replays_after_library_changed" verified "$TMP/r2"
"$SPENT" citcat record -o "$TMP/r3" -- "$PROGS/citcat_libm" > /dev/null 2>&1
check "citcat_recording_after_change_copies_new_library" [ -n "$(copy_of "$TMP/r3" "$TMP/lib/libm.so.6")" ]
check "citcat_recording_after_change_replays_verified" verified "$TMP/r3"

# libc's copy damaged in place through a recording (the cache's file too: one inode): the
# next recording does not reuse it, and replays
size=$(stat -c %s "$c2")
printf '\x55\xaa' | dd of="$c2" bs=1 seek=$((size / 2)) conv=notrunc status=none
"$SPENT" citcat record -o "$TMP/r4" -- "$PROGS/citcat_libm" > /dev/null 2>&1
c4=$(copy_of "$TMP/r4" "$LIBC")
check "citcat_damaged_copy_recording_has_libc" [ -n "$c4" ]
check "citcat_damaged_cached_copy_not_reused" other_inode "$c4" "$c2"
check "citcat_recording_after_damage_replays_verified" verified "$TMP/r4"

# off: nothing cached, every copy the recording's own
SPENT_CITCAT_CACHE=off "$SPENT" citcat record -o "$TMP/r5" -- "$PROGS/citcat_libm" > /dev/null 2>&1
links=$(stat -c %h "$TMP"/r5/files/*.zst | sort -u)
check "citcat_cache_off_copies_unlinked" [ "$links" = 1 ]
check "citcat_cache_off_replays_verified" verified "$TMP/r5"

# a mapped library's pages the program never touched are not faulted in by the recorder (it
# compares only the pages the process has its own copy of): a big library preloaded into awk
# and never called keeps most of its code non-resident (recorded by reading every page, all)
# (libunicorn, as libspent.so links it: the spent binary has Unicorn linked in statically;
# spent gets the preload too, harmlessly; ASan need not come first there)
big=$(ldd "$SPENT_BUILD/libspent.so" | awk '/libunicorn/ {print $3}')
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$big "$SPENT" citcat record -o "$TMP/r6" -- awk -v lib="$(basename "$big")" \
	'index($0, lib) && / r-xp / {p = 1} p && /^(Size|Rss):/ {print $2} p && /^Rss/ {exit}' \
	/proc/self/smaps > "$TMP/rss.txt" 2> /dev/null
size=$(sed -n 1p "$TMP/rss.txt"); rss=$(sed -n 2p "$TMP/rss.txt")
check "citcat_big_library_mapped" [ "${size:-0}" -gt 2048 ]
check "citcat_untouched_library_pages_stay_unfaulted" [ "${rss:-999999}" -lt $((${size:-0} / 2)) ]

# a recording on another file system than the cache (a tmpfs): the cached copies cannot be
# linked there, so they are copied; this failed ("cannot capture the initial memory image")
# once the cache held the program's libraries
mkdir "$TMP/fs"
if mount -t tmpfs -o size=64m tmpfs "$TMP/fs"; then
	"$SPENT" citcat record -o "$TMP/fs/x1" -- "$PROGS/citcat_libm" > /dev/null 2> "$TMP/x1.err"
	"$SPENT" citcat record -o "$TMP/fs/x2" -- "$PROGS/citcat_libm" > /dev/null 2> "$TMP/x2.err"
	check "citcat_cached_copies_cross_file_systems ($(tail -1 "$TMP/x2.err"))" verified "$TMP/fs/x2"
	c3=$(copy_of "$TMP/fs/x2" "$LIBC")
	check "citcat_cross_file_system_copy_is_libc" test -n "$c3"
	umount "$TMP/fs"
else
	fail "citcat_cross_file_system_mounts_tmpfs: mount failed"
fi
