#!/bin/bash
# tests/e2e/trace_ring.sh - the tools' shared rings (log_format.h, LOG_PIPE_RING): a process
# tree traced through rings logs exactly what it logs through the FIFO alone; a recorder
# stopped for a while makes the tool wait on its ring's futex and nothing is lost; a recorder
# killed meanwhile (or while frames flow) leaves no traced process waiting for it, and the
# program runs to its end untraced; no ring file outlives a run.
# SPENT_TRACE_RING names the tmpfs directory the rings go to (0: none).
source "$(dirname "$0")/lib.sh"
shm=$(realpath "$(mktemp -d /dev/shm/spent-e2e.XXXXXX)")	# real: the maps name it so
trap 'rm -rf "$TMP" "$shm"' EXIT
check "/dev/shm is a tmpfs (the rings need one)" test "$(stat -f -c %T "$shm")" = tmpfs
# the same environment both ways, byte for byte (its size moves every stack address and the
# loader's instruction count): the two values swap places
E=(env -i PATH=/usr/bin:/bin TMPDIR="$TMP")
RING=(SPENT_TRACE_RING="$shm" X=0)
FIFO=(SPENT_TRACE_RING=0 X="$shm")
# gzip logs some 8 MB of small.txt, past the first MiB (which goes framed), and 40 MB of text:
# past a MiB and a whole ring, so that a stopped recorder makes it wait
seq 1 20000 > "$TMP/small.txt"
seq 1 100000 > "$TMP/text"
cd "$TMP" || exit 1

# per-process "INSTRUCTIONS DATA_REFS CMDLINE" of the exec'd programs whose counts do not
# depend on timing (not the shell: its wait loop turns as its children end); the stats JSON
# stays in LOG.json for other checks (a stopped run's log takes the sanitized pass 5 s to read)
counts() {
	"$SPENT" trace stats --json "$1" > "$1.json"
	python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    if p["start"] == "exec" and not p["cmdline"].startswith("sh "):
        print(p["instructions"], p["data_refs"], p["cmdline"])' "$1.json" | sort
}

# (sort's buffer given: by default its size, and sort's count, follow the memory available)
TREE='gzip -c small.txt > /dev/null; seq 1 500 | sort -S 1M -r | head -2'
"${E[@]}" "${RING[@]}" "$SPENT" trace -o ring.log -- sh -c "$TREE" > ring.out 2> ring.err
check "a tree traced through rings exits 0" test $? -eq 0
"${E[@]}" "${FIFO[@]}" "$SPENT" trace -o fifo.log -- sh -c "$TREE" > fifo.out 2> fifo.err
check "the same tree traced through the FIFO alone exits 0" test $? -eq 0
counts ring.log > ring.counts
counts fifo.log > fifo.counts
check "both logs hold gzip, seq, sort and head ($(wc -l < ring.counts) programs)" \
	test "$(awk '{ print $3 }' ring.counts | sort | tr '\n' ' ')" = "/usr/bin/gzip /usr/bin/head /usr/bin/seq /usr/bin/sort "
check "each program's instructions and data references are the same both ways" cmp -s ring.counts fifo.counts
check "the output is the program's both ways" cmp -s ring.out fifo.out
check "no ring file or directory is left" test -z "$(ls -A "$shm")"

# the tools' command lines name the FIFO by its real path (spent resolves TMPDIR)
rtmp=$(realpath "$TMP")
tools() { pgrep -f -- "--spent-pipe=$rtmp/" | tr '\n' ' '; }
ring_mapped() { # some tool instance of the run maps its ring
	local p
	for p in $(tools); do grep -q "$shm/spent-ring" "/proc/$p/maps" 2> /dev/null && return 0; done
	return 1
}
futex_wait() { # some tool instance of the run sleeps on its ring's futex
	local p
	for p in $(tools); do grep -q futex "/proc/$p/wchan" 2> /dev/null && return 0; done
	return 1
}
# the loop runs gzip until told to stop: the checks are per process, not per run; the count
# each gzip run must have is a FIFO run's of one
LOOP='while [ ! -e stop ]; do gzip -c text > /dev/null; done'
touch stop
"${E[@]}" "${FIFO[@]}" "$SPENT" trace -o one.log -- sh -c "gzip -c text > /dev/null; $LOOP" > /dev/null 2>&1
gz=$(counts one.log | awk '$3 == "/usr/bin/gzip" { print $1 }')

# A stopped recorder: the tool fills its ring and waits on the futex; continued, nothing lost.
rm -f stop
"${E[@]}" "${RING[@]}" "$SPENT" trace -o stopped.log -- sh -c "$LOOP" \
	> /dev/null 2> stopped.err &
rec=$!
wait_until 60 ring_mapped
check "a tool instance maps its ring once it logged a MiB" test $? -eq 0
kill -STOP $rec
wait_until 30 futex_wait
check "with the recorder stopped, the tool waits on its ring's futex" test $? -eq 0
sleep 1
kill -CONT $rec
touch stop
wait $rec
check "the recording ends with exit 0 once the recorder goes on" test $? -eq 0
counts stopped.log > stopped.counts
n=$(wc -l < stopped.counts)
check "$n gzip runs were traced" test "$n" -ge 1
check "every gzip run counts the instructions of the FIFO run ($gz)" \
	test -z "$(awk -v g="$gz" '$1 != g' stopped.counts)"
check "... and its log is complete" test "$(jfield "$(cat stopped.log.json)" complete)" = True

# A recorder killed while the tool waits for room: nothing of the run waits for it forever,
# and the program runs to its end untraced.
rm -f stop killed.fin
"${E[@]}" "${RING[@]}" "$SPENT" trace -o killed.log -- sh -c "$LOOP; echo end > killed.fin" \
	> /dev/null 2> killed.err &
rec=$!
wait_until 60 ring_mapped && kill -STOP $rec && wait_until 30 futex_wait
check "(the killed run's tool waits on its futex first)" test $? -eq 0
kill -KILL $rec
wait $rec 2> /dev/null
touch stop
none_left() { test -z "$(tools)"; }
wait_until 30 none_left
check "every process of the run ends after its recorder was killed" test $? -eq 0
check "... and the traced shell ran to its end" test "$(cat killed.fin 2> /dev/null)" = end
for p in $(tools); do kill -KILL "$p"; done

# The same through the FIFO alone, the recorder killed while gzip runs: the shell's next
# write meets a FIFO no one reads, which raises SIGPIPE; the tool takes it (untaken, Valgrind
# delivers it to the shell, which dies before its last command: this check caught that).
rm -f stop fifokilled.fin
"${E[@]}" "${FIFO[@]}" "$SPENT" trace -o fifokilled.log -- sh -c "$LOOP; echo end > fifokilled.fin" \
	> /dev/null 2> fifokilled.err &
rec=$!
# the traced shell's children: its gzips (the shell's own command line names gzip too)
shell_tool() { pgrep -f -- "--spent-pipe=$rtmp/.* sh -c" | head -1; }
gzips() { local sh; sh=$(shell_tool); [ -n "$sh" ] && pgrep -P "$sh" | tr '\n' ' '; }
gzip_traced() { pgrep -f -- "--spent-pipe=$rtmp/[^ ]* --trace-children=yes /usr/bin/gzip" > /dev/null; }
wait_until 60 gzip_traced
check "(a gzip of the FIFO run is traced first)" test $? -eq 0
before=$(gzips)
kill -KILL $rec
wait $rec 2> /dev/null
# the shell's next fork writes to the FIFO: let one happen (its gzip, untraced, still runs
# under the tool: with --spent-pipe when the shell forked before it noticed, without after)
# before the loop may stop. By pid, not by command line: a gzip forked after the shell noticed
# has no --spent-pipe to match, and the wait for one ran out its 30 s.
new_gzip() {
	local p
	for p in $(gzips); do case " $before " in *" $p "*) ;; *) return 0 ;; esac; done
	return 1
}
wait_until 30 new_gzip
touch stop
wait_until 30 none_left
check "with frames only too, every process ends after its recorder was killed" test $? -eq 0
check "... and the traced shell ran to its end" test "$(cat fifokilled.fin 2> /dev/null)" = end
for p in $(tools); do kill -KILL "$p"; done

# A recorder killed by SIGKILL cannot clean up: its FIFO's directory stays in TMPDIR, its ring
# directory in the ring directory's parent. The next recording removes them (named with the
# pid of their recorder, which no longer runs), then its own: the FIFO-only run above already
# removed the first killed recorder's FIFO directory (not its ring directory: it used none).
nfifo=$(ls -d "$TMP"/spent-trace.tmp.* 2> /dev/null | wc -l)
nring=$(ls -d "$shm"/spent-ring.tmp.* 2> /dev/null | wc -l)
check "the killed recorders left the last one's FIFO directory and the first one's ring directory" \
	test "$nfifo" -eq 1 -a "$nring" -eq 1
"${E[@]}" "${RING[@]}" "$SPENT" trace -o after.log -- /bin/true > /dev/null 2>&1
check "the next recording exits 0" test $? -eq 0
check "... and removes them: no FIFO or ring directory is left" \
	test -z "$(ls -d "$TMP"/spent-trace.* "$shm"/* 2> /dev/null)"

# A program that logged past its first MiB (the shell's loop) has a ring; the program it execs
# logs less (sleep) and makes none: the recorder unmaps the shell's ring as soon as the sleep's
# stream begins, not when the sleep exits (before: 16 MiB of tmpfs for the sleep's lifetime).
rm -f go
"${E[@]}" "${RING[@]}" "$SPENT" trace -o exec.log -- sh -c 'while [ ! -e go ]; do :; done; exec sleep 60' \
	> /dev/null 2> exec.err &
rec=$!
rec_maps_ring() { grep -q "$shm/spent-ring" "/proc/$rec/maps" 2> /dev/null; }
wait_until 60 rec_maps_ring
check "(the recorder maps the looping shell's ring)" test $? -eq 0
touch go
sleep_traced() { pgrep -f -- "--spent-pipe=$rtmp/.*sleep 60" > /dev/null; }
wait_until 30 sleep_traced
check "(the exec'd sleep runs under the tool)" test $? -eq 0
rec_unmapped() { ! rec_maps_ring; }
wait_until 30 rec_unmapped
check "once the exec'd sleep's stream begins, the recorder no longer maps the shell's ring" test $? -eq 0
for p in $(tools); do kill -TERM "$p"; done
wait $rec
check "... and the recording ends with the sleep, its 2 streams logged ($(tail -1 exec.err))" \
	grep -q ', 2 processes)$' exec.err
