#!/bin/bash
# tests/e2e/citcat_syscallbuf.sh - citcat's syscall buffer (docs/citcat.md): a program making
# many buffered calls (read, write, pread, lseek, fstat/stat/lstat, readlink, getdents64,
# lgetxattr, fcntl, close) records most of them without a ptrace stop and replays verified,
# also under a 1 ms timer whose signals often arrive inside a buffered call; without --syscallbuf (the default)
# traces every call; real programs (ls -laR, find, cat, gzip) replay verified through the
# buffer with their real output; the program sees LD_PRELOAD as it was given; a malformed
# buffer and a buffered record in an older format version are refused with one clear line.
source "$(dirname "$0")/lib.sh"
has() { grep -q -- "$2" "$1"; }
buffered() { sed -n 's/.* syscalls (\([0-9]*\) buffered.*/\1/p' "$1"; }

mkdir -p "$TMP/work"
"$SPENT" citcat record -o "$TMP/sb" -- "$PROGS/citcat_sbuf" "$TMP/work" 150 > "$TMP/sb.real" 2> "$TMP/sb.err"
check "citcat_sbuf_records" [ $? = 0 ]
j=$("$SPENT" citcat replay "$TMP/sb" --json --stdout "$TMP/sb.rep" 2>/dev/null)
check "citcat_sbuf_replay_verified" [ "$(jfield "$j" verified)" = True ]
check "citcat_sbuf_replayed_stdout_equals_real" cmp -s "$TMP/sb.real" "$TMP/sb.rep"
sc=$(jfield "$j" syscalls) bc=$(jfield "$j" buffered_syscalls)
check "citcat_sbuf_most_calls_buffered" [ "$bc" -gt 0 ] && [ $((bc * 10)) -gt $((sc * 6)) ]
check "citcat_sbuf_record_and_replay_agree_on_buffered" [ "$(buffered "$TMP/sb.err")" = "$bc" ]

"$SPENT" citcat record --no-syscallbuf -o "$TMP/nosb" -- "$PROGS/citcat_sbuf" "$TMP/work" 50 \
	> /dev/null 2> "$TMP/nosb.err"
j=$("$SPENT" citcat replay "$TMP/nosb" --json 2>/dev/null)
check "citcat_no_syscallbuf_traces_every_call" [ "$(buffered "$TMP/nosb.err")" = 0 ] && \
	[ "$(jfield "$j" buffered_syscalls)" = 0 ]
check "citcat_no_syscallbuf_replay_verified" [ "$(jfield "$j" verified)" = True ]

# the library on by default: its constructor's dead stack values once made a signal point in
# main's frame unmatchable in the replay (ld.so's xsave there leaves reserved bytes as they were
# in the simulator, zeroes them on the CPU), one stack alignment in four: three more alignments
busy_ok=0
for i in 1 2 3; do
	"$SPENT" citcat record -o "$TMP/busy$i" -- "$PROGS/citcat_busyalarm" 5 > /dev/null 2> "$TMP/busy$i.err"
	bj=$(timeout 60 "$SPENT" citcat replay "$TMP/busy$i" --json 2>/dev/null)
	[ "$(jfield "$bj" verified)" = True ] && [ "$(jfield "$bj" signal_points)" = 1 ] &&
		grep -q "([1-9][0-9]* buffered" "$TMP/busy$i.err" && busy_ok=$((busy_ok + 1))
done
check "citcat_sbuf_default_busy_loop_signal_points_replay_verified" [ "$busy_ok" = 3 ]

# signals: each one that lands inside a buffered call is held until the call's entry is
# complete, then delivered at that exact point
"$SPENT" citcat record -o "$TMP/sig" -- "$PROGS/citcat_sbuf" "$TMP/work" 150 signals \
	> "$TMP/sig.real" 2> "$TMP/sig.err"
j=$("$SPENT" citcat replay "$TMP/sig" --json --stdout "$TMP/sig.rep" 2>/dev/null)
check "citcat_sbuf_signals_replay_verified" [ "$(jfield "$j" verified)" = True ]
check "citcat_sbuf_signals_replayed_stdout_equals_real" cmp -s "$TMP/sig.real" "$TMP/sig.rep"
waits=$(sed -n 's/.* buffered, \([0-9]*\) signals waited.*/\1/p' "$TMP/sig.err")
echo "# citcat_sbuf signals: $(sed -n 's/^rounds [0-9]* signals \([0-9]*\).*/\1/p' "$TMP/sig.real") signals, ${waits:-?} arrived inside a buffered call"

# find and ls -laR make no traced call per directory: the directory's openat (fts's openat,
# opendir's __open64_nocancel, O_DIRECTORY), fdopendir's F_GETFL and fts's F_SETFD (glibc's
# local __fcntl64_nocancel) are buffered; before, find stopped 3 times per directory, ls once
traced() { sed -n 's/.* \([0-9]*\) syscalls (\([0-9]*\) buffered.*/\1 \2/p' "$1" | awk '{ print $1 - $2 }'; }
for n in 10 30; do
	for i in $(seq 1 $n); do mkdir -p "$TMP/dirs$n/d$i"; : > "$TMP/dirs$n/d$i/f"; done
	"$SPENT" citcat record -o "$TMP/find$n" -- find "$TMP/dirs$n" > /dev/null 2> "$TMP/find$n.err"
	"$SPENT" citcat record -o "$TMP/ls$n" -- ls -laR "$TMP/dirs$n" > /dev/null 2> "$TMP/ls$n.err"
done
for p in find ls; do
	t10=$(traced "$TMP/${p}10.err"); t30=$(traced "$TMP/${p}30.err")
	echo "# $p: $t10 calls stopped for 10 directories, $t30 for 30"
	check "citcat_sbuf_${p}_directories_make_no_traced_calls" [ -n "$t10" ] && [ -n "$t30" ] && \
		[ $((t30 - t10)) -ge -10 ] && [ $((t30 - t10)) -le 10 ]
done
j=$("$SPENT" citcat replay "$TMP/find30" --json 2>/dev/null)
check "citcat_sbuf_find_buffered_directories_replay_verified" [ "$(jfield "$j" verified)" = True ]

# real programs through the buffer, each replayed with its real output
mkdir -p "$TMP/tree/a/b" "$TMP/tree/c"
for i in 1 2 3 4 5 6 7 8; do echo "file $i" > "$TMP/tree/a/f$i"; echo "$i" > "$TMP/tree/a/b/g$i"; done
ln -s f1 "$TMP/tree/a/link"
seq 1 20000 > "$TMP/tree/c/numbers"
# (stdout a pipe: into a file, cat hands the copy to the kernel with copy_file_range)
real_program() {	# NAME CMD...: recorded, buffered calls, replay verified with the real output
	local name=$1; shift
	"$SPENT" citcat record -o "$TMP/$name" -- "$@" 2> "$TMP/$name.err" | cat > "$TMP/$name.real"
	local jj
	jj=$("$SPENT" citcat replay "$TMP/$name" --json --stdout "$TMP/$name.rep" 2>/dev/null)
	check "citcat_syscallbuf_${name}_buffers_calls" [ "$(jfield "$jj" buffered_syscalls)" -gt 0 ]
	check "citcat_syscallbuf_${name}_replay_verified" [ "$(jfield "$jj" verified)" = True ]
	check "citcat_syscallbuf_${name}_stdout_equals_real" cmp -s "$TMP/$name.real" "$TMP/$name.rep"
}
real_program ls ls -laR "$TMP/tree"
real_program find find "$TMP/tree"
real_program cat cat "$TMP/tree/c/numbers"
real_program gzip gzip -c "$TMP/tree/c/numbers"

# the library takes itself out of LD_PRELOAD: the program sees the value it was given
"$SPENT" citcat record -o "$TMP/env" -- env > "$TMP/env.out" 2>/dev/null
check "citcat_syscallbuf_hidden_from_environment" bash -c "! grep -q LD_PRELOAD '$TMP/env.out'"
# (the variable reaches spent too: a sanitized spent is told not to mind libm coming first)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 LD_PRELOAD=libm.so.6 \
	"$SPENT" citcat record -o "$TMP/env2" -- env > "$TMP/env2.out" 2>/dev/null
check "citcat_syscallbuf_keeps_the_users_preload" grep -qx "LD_PRELOAD=libm.so.6" "$TMP/env2.out"

# a buffer filled by hand: a well-formed entry replays; malformed ones are refused with one
# line, nothing left behind
"$SPENT" citcat record -o "$TMP/raw" -- "$PROGS/citcat_sbuf_raw" > "$TMP/raw.real" 2>/dev/null
j=$("$SPENT" citcat replay "$TMP/raw" --json 2>/dev/null)
check "citcat_syscallbuf_raw_entry_replays" [ "$(jfield "$j" verified)" = True ] && \
	[ "$(jfield "$j" buffered_syscalls)" = 1 ] && grep -qx buffered "$TMP/raw.real"
for mode in unknown cut; do
	"$SPENT" citcat record -o "$TMP/hostile$mode" -- "$PROGS/citcat_sbuf_raw" $mode \
		> /dev/null 2> "$TMP/hostile$mode.err"
	rc=$?
	check "citcat_syscallbuf_hostile_${mode}_refused" [ "$rc" = 1 ]
	check "citcat_syscallbuf_hostile_${mode}_nothing_left" \
		bash -c "! ls -d '$TMP/hostile$mode' '$TMP/hostile$mode'.tmp.* 2>/dev/null"
done
check "citcat_syscallbuf_hostile_names_the_call" has "$TMP/hostileunknown.err" \
	"holds a malformed entry at offset 32: syscall 9 is not one the buffer takes"
check "citcat_syscallbuf_hostile_cut_says_cut_short" has "$TMP/hostilecut.err" "cut short inside its data"

# a buffered record claimed by a version 5 recording (cat's has no POINT, whose form is the same)
cp -r "$TMP/cat" "$TMP/v5"
printf '\005' | dd of="$TMP/v5/recording" bs=1 seek=8 conv=notrunc status=none
"$SPENT" citcat replay "$TMP/v5" > /dev/null 2> "$TMP/v5.err"
check "citcat_buffered_record_in_v5_refused" has "$TMP/v5.err" \
	"a buffered SYSCALL in a recording older than version 6"
