#!/bin/bash
# tests/fuzz/seeds.sh BUILD FUZZ_BUILD - seed inputs made from real outputs of the test
# programs, into FUZZ_BUILD/seeds/TARGET/ (run.sh adds them to the committed seeds of
# tests/fuzz/corpus/TARGET/). Made at fuzz time because these outputs name files of this
# build: a trace log names the traced program (the reconstructor decodes it from disk), a
# profile directory its images. Converted by FUZZ_BUILD/seedtool into the targets' input
# forms (tests/fuzz/fuzz_util.h). A seed that cannot be made is reported and skipped.
set -u
build=$1 fb=$2
spent=$build/spent progs=$build/progs tool=$fb/seedtool
out=$fb/seeds
rm -rf "$out" && mkdir -p "$out" "$fb/seedprogs" || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
made=0 missed=0

# put TARGET... FILE: copy FILE into each target's seed directory
put() {
	local file=${!#} t
	for t in "${@:1:$#-1}"; do
		mkdir -p "$out/$t" && cp "$file" "$out/$t/"
	done
	made=$((made + $# - 1))
}
miss() { echo "fuzz seeds: skipped $1: $2"; missed=$((missed + 1)); }

# trace logs, in raw form: the start of a dynamic program (ld.so, 20000 instructions), a
# static one (whose start is libc's), a static three-thread mutex program up to its first
# locks (for the lock finder; static so that no ld.so code swells the log), and a static
# program that forks (the child describes again what it inherited: by CODE_SAME references),
# and one whose child is killed by a signal and reaped (a REAPED record)
trace_seed() { # NAME MAX_INSNS "TARGETS" COMMAND...
	local name=$1 max=$2 targets=$3
	shift 3
	if "$spent" trace -o "$tmp/$name.log" --max-instructions "$max" -- "$@" >/dev/null 2>"$tmp/err" &&
		"$tool" log2raw "$tmp/$name.log" "$tmp/$name.raw" 2>>"$tmp/err"; then
		put $targets "$tmp/$name.raw"
	else
		miss "$name.raw" "$(tail -1 "$tmp/err")"
	fi
}
static=$fb/seedprogs/studies_mutex-static
if cc -std=gnu11 -O1 -g -static -o "$static" tests/progs/studies_mutex.c -lpthread 2>"$tmp/err"; then
	trace_seed small 20000 "fuzz_trace_log fuzz_trace_sinks" "$progs/trace_small"
	trace_seed static-start 20000 "fuzz_trace_log fuzz_trace_sinks" "$static"
	trace_seed static-locks 60000 fuzz_trace_sinks "$static"
	printf '#include <sys/wait.h>\n#include <unistd.h>\nint main(void) { if (fork() == 0) return 0; wait(0); return 0; }\n' |
		cc -O1 -static -x c -o "$fb/seedprogs/fork-static" - 2>"$tmp/err" &&
		trace_seed static-fork 4000 fuzz_trace_sinks "$fb/seedprogs/fork-static"
	# a child killed by SIGTERM and reaped: the parent's wait logs a REAPED record
	printf '#include <signal.h>\n#include <sys/wait.h>\n#include <unistd.h>\nint main(void) { int st; if (fork() == 0) { kill(getpid(), SIGTERM); pause(); } wait(&st); return 0; }\n' |
		cc -O1 -static -x c -o "$fb/seedprogs/killed-static" - 2>"$tmp/err" &&
		trace_seed static-killed 60000 "fuzz_trace_log fuzz_trace_sinks" "$fb/seedprogs/killed-static"
else
	trace_seed small 20000 "fuzz_trace_log fuzz_trace_sinks" "$progs/trace_small"
	miss "static trace seeds" "cannot build a static program: $(tail -1 "$tmp/err")"
fi

# profile directories, as bundles: a run with call stacks and saved kernel symbols, and a
# database that merged it (meta with a host, merged-from)
if "$spent" record -g -o "$tmp/prof" -- "$progs/demo" >/dev/null 2>"$tmp/err"; then
	"$tool" bundle "$tmp/prof" "$tmp/record.bundle" && put fuzz_profile_dir "$tmp/record.bundle"
	for f in "$tmp"/prof/epoch-0000/*.prof; do
		[ -f "$f" ] && put fuzz_profile_file "$f"
	done
	mkdir -m 750 "$tmp/db"
	if "$spent" db "$tmp/db" merge "$tmp/prof" >/dev/null 2>"$tmp/err"; then
		"$tool" bundle "$tmp/db" "$tmp/merged.bundle" && put fuzz_profile_dir "$tmp/merged.bundle"
	else
		miss merged.bundle "$(tail -1 "$tmp/err")"
	fi
else
	miss "profile seeds" "$(tail -1 "$tmp/err")"
fi

# detail rows and an epoch span (samples@ files, DIR/epoch-NNNN/span), made by seedtool
# through the library whatever `spent record` of this build writes. These are version 4
# (its small body stored, record's compressed: the target parses each in the other form
# too; the page-faults one carries its counts, flag bit 1); the committed corpus keeps
# version-2 and version-3 samples files for the older readers.
if "$tool" detail "$tmp/detail" 2>"$tmp/err"; then
	"$tool" bundle "$tmp/detail" "$tmp/detail.bundle" && put fuzz_profile_dir "$tmp/detail.bundle"
	for f in "$tmp"/detail/epoch-0000/samples@*.prof; do
		[ -f "$f" ] && put fuzz_profile_file "$f"
	done
else
	miss "detail seeds" "$(tail -1 "$tmp/err")"
fi

# citcat recordings, made file-free by seedtool inline (the committed tiny-inline.rec and
# sbuf-inline.rec serve where recording fails)
# citcat_seed NAME STATUS PROG [ARGS]: PROG recorded (exiting STATUS), inlined as NAME-here.rec
citcat_seed() {
	"$spent" citcat record -o "$tmp/$1" -- "${@:3}" >/dev/null 2>"$tmp/err"
	if [ $? = "$2" ] && [ -d "$tmp/$1" ]; then
		"$tool" inline "$tmp/$1" "$tmp/$1-here.rec" &&
			put fuzz_citcat_replay fuzz_citcat_recording "$tmp/$1-here.rec"
	else
		miss "citcat $1 recording seeds" "$(tail -1 "$tmp/err")"
	fi
}
# citcat_tiny exits 5 by design and record passes its status on
citcat_seed tiny 5 "$progs/citcat_tiny"
# a buffered SYSCALL record (format 6): citcat_sbuf_raw fills a syscall buffer by hand
citcat_seed sbuf 0 "$progs/citcat_sbuf_raw"
# a signal at an exact point: a POINT with its deep stack hash (format 5), SIGNAL, FPREGS
citcat_seed point 0 "$progs/citcat_busyalarm" 5
echo "fuzz seeds: $made made from the test programs, $missed skipped"
