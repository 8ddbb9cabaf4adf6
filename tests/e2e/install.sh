#!/bin/bash
# tests/e2e/install.sh - `make install DESTDIR=... PREFIX=/usr` from (a copy of) the build under
# test, then every command run from the staged tree does a real job with the helper files it
# installed (the Valgrind tool, the Shim library), a program builds against the installed
# library through pkg-config, the man pages render, the daemon runs inside its systemd unit's
# sandbox, and `make uninstall` leaves nothing. Also: an install without DESTDIR finds its
# helpers through the path compiled in, spent.pc follows PREFIX, and `make CFLAGS=-O0` still
# builds the shared library (the sanitized pass checks that build's commands, make -n).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.inc"
unset SPENT_LIB_DIR SPENT_VALGRIND_LIB SPENT_SHIM_LIB

# The build is copied (timestamps kept) so installing with other paths relinks the copy, never
# the binary under test; SAN matches it, so nothing is rebuilt with other flags.
san=0
spent_sanitized && san=1
B=$TMP/build R=$TMP/root
mkdir -p "$B"
# pax format keeps sub-second mtimes: an object written in the same second as its source
# must not look older than it in the copy
tar -C "$SPENT_BUILD" --exclude=./test-logs --format=posix -cf - . | tar -C "$B" -xf -
# UNIT_BINS= : a new PREFIX relinks libspent-cli.a, and `install: all` would relink every unit test
# with it (seconds each under the sanitizers); they are not installed and the copy's go unused
mk() { make -C "$SPENT_TOP" --no-print-directory SAN=$san BUILD="$B" UNIT_BINS= "$@"; }
quiet() { "$@" > /dev/null 2>&1; }

if ! mk DESTDIR="$R" PREFIX=/usr install > "$TMP/install.log" 2>&1; then
	fail "make install DESTDIR PREFIX=/usr: $(tail -3 "$TMP/install.log")"
	exit 1
fi
pass "make install DESTDIR=\$TMP/root PREFIX=/usr (SAN=$san)"
recompiled=$(grep -E ' -c -o ' "$TMP/install.log" | grep -v 'src/cli/helper_path\.c' | wc -l)
check "install recompiles only helper_path.c (the paths compiled in), got $recompiled others" \
	test "$recompiled" -eq 0

# --- what is where
S=$R/usr/bin/spent
version=$("$S" --version | awk '{ print $2 }')
check "spent installed in /usr/bin, version $version" test -x "$S" -a -n "$version"
check "libspent.so -> libspent.so.0 -> libspent.so.$version" \
	test "$(readlink "$R/usr/lib/libspent.so")" = libspent.so.0 -a \
	"$(readlink "$R/usr/lib/libspent.so.0")" = "libspent.so.$version" -a -f "$R/usr/lib/libspent.a"
check "libspent.so.$version has soname libspent.so.0" \
	grep -q 'SONAME.*\[libspent\.so\.0\]' <(readelf -d "$R/usr/lib/libspent.so.$version")
missing=""
for h in "$SPENT_TOP"/include/spent/*.h; do
	cmp -s "$h" "$R/usr/include/spent/${h##*/}" || missing+=" ${h##*/}"
done
check "every public header installed (missing:${missing:-none})" test -z "$missing"
check "spent.pc says prefix=/usr" grep -qx 'prefix=/usr' "$R/usr/lib/pkgconfig/spent.pc"
L=$R/usr/lib/spent
check "helpers in /usr/lib/spent" test -x "$L/valgrind/spent-amd64-linux" -a -f "$L/libspent-shim.so" \
	-a -f "$L/libspent-shim.a" -a -f "$L/libspent-shim-hooks.a"
check "Valgrind's own files linked beside the tool" test -e "$L/valgrind/vgpreload_core-amd64-linux.so"
U=$R/usr/lib/systemd/system/spent-daemon.service
check "unit runs /usr/bin/spent" grep -q '^ExecStart=/usr/bin/spent daemon ' "$U"
check "LICENSE and the manuals in /usr/share/doc/spent" test -f "$R/usr/share/doc/spent/LICENSE" \
	-a -f "$R/usr/share/doc/spent/daemon.md" -a -f "$R/usr/share/doc/spent/studies-memmap.png"

# --- man pages: spent(1) and one per command, rendered by man
cmds=$("$S" help | awk '/^  [a-z]/ { print $1 }')
bad=""
for p in spent $(printf 'spent-%s\n' $cmds); do
	out=$(MANWIDTH=80 man -l "$R/usr/share/man/man1/$p.1" 2>&1)
	grep -q "^NAME" <<<"$out" && grep -q "^ *${p//-/.} " <<<"$out" || bad+=" $p"
done
check "man -l renders spent.1 and spent-CMD.1 for $(wc -w <<<"$cmds") commands (bad:${bad:-none})" test -z "$bad"
check "man -M finds spent-trace and names the installed manual" \
	grep -q '/usr/share/doc/spent/trace.md' <(MANWIDTH=200 man -M "$R/usr/share/man" spent-trace 2>&1)

# --- every command from the staged tree, with nothing set in the environment
"$S" stat -e task-clock -- "$PROGS/demo" 0.05 > "$TMP/stat.out" 2>&1
check "stat" grep -q 'task-clock' "$TMP/stat.out"
"$S" record -o "$TMP/prof" -- "$PROGS/demo" 0.2 > /dev/null 2>&1 &&
	"$S" report -i "$TMP/prof" --by function > "$TMP/report.out" 2>&1
check "record + report" grep -q 'heavy' "$TMP/report.out"
check "annotate" quiet "$S" annotate -i "$TMP/prof" heavy

"$S" trace -o "$TMP/env.log" -- /usr/bin/env > "$TMP/env.out" 2> "$TMP/env.err"
check "trace runs Valgrind with the installed tool directory" \
	grep -qx "VALGRIND_LIB=$L/valgrind" "$TMP/env.out"
"$S" trace -o "$TMP/m.log" -- "$PROGS/studies_mutex" > /dev/null 2> "$TMP/m.err"
n=$("$S" trace stats --json "$TMP/m.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')
check "trace + trace stats ($n instructions)" test "${n:-0}" -gt 100000
check "trace dump" test "$("$S" trace dump "$TMP/m.log" --limit 10 | wc -l)" -ge 10
check "cachesim" quiet "$S" cachesim "$TMP/m.log" --config alpha21164 --json
check "hitcurve" quiet "$S" hitcurve "$TMP/m.log" --json
"$S" memmap "$TMP/m.log" --png "$TMP/m.png" > /dev/null
check "memmap" test -s "$TMP/m.png"
check "locks finds mtx" grep -q ' mtx ' <("$S" locks "$TMP/m.log")

"$S" citcat record -o "$TMP/rec" -- /bin/echo installed > /dev/null 2>&1
check "citcat record + replay" grep -q '^verified *yes' <("$S" citcat replay "$TMP/rec" 2>&1)

# a program built against the installed headers only (shim.h is macros): plain, as Shim
# programs are, so it can be preloaded even in the sanitizer pass
cat > "$TMP/phases.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <spent/shim.h>
SPENT_SHIM_SIGNAL(phase);
int main(void)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;
	/* 100 ms of CPU in phase 7: CPU time, so a loaded machine cannot shorten it */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	SPENT_SHIM_SET(phase, 7);
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 100000000L);
	SPENT_SHIM_SET(phase, 0);
	printf("LD_PRELOAD=%s\n", getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
	return 0;
}
EOF
export PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$R/usr/lib/pkgconfig
cflags=$(echo $(pkg-config --cflags spent)) libs=$(echo $(pkg-config --libs spent))
check "pkg-config points into DESTDIR ($cflags $libs)" \
	test "$cflags" = "-I$R/usr/include" -a "$libs" = "-L$R/usr/lib -lspent"
cc -O1 $cflags -o "$TMP/phases" "$TMP/phases.c"
"$S" shim --tag phase=phase -o "$TMP/p.shim" -- "$TMP/phases" > "$TMP/shim.out" 2>&1
check "shim preloads the installed libspent-shim.so" grep -qx "LD_PRELOAD=$L/libspent-shim.so" "$TMP/shim.out"
check "shim sees the program's phase 7 ($(grep -E '^ +[0-9.]+% ' "$TMP/shim.out" | tr -s ' \n' ' '))" \
	grep -qE '^ +[0-9.]+% +[0-9]+ +7$' "$TMP/shim.out"
check "shim dump" test "$("$S" shim dump "$TMP/p.shim" --limit 5 | wc -l)" -ge 5

# the counter library, linked shared and static as pkg-config says
cat > "$TMP/count.c" <<'EOF'
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <spent/counters.h>
int main(void)
{
	struct spent_counters *c;
	uint64_t v = 0;
	volatile unsigned long x = 0;
	if (spent_counters_open("task-clock", 0, &c)) {
		fprintf(stderr, "open: %s\n", spent_counters_error());
		return 1;
	}
	clock_t t0 = clock();
	spent_counters_start(c);
	while (clock() - t0 < CLOCKS_PER_SEC / 50)	/* 20 ms of CPU */
		x++;
	spent_counters_stop(c);
	if (spent_counters_read(c, &v, 1))
		return 1;
	printf("%s %" PRIu64 "\n", spent_counters_name(c, 0), v);
	spent_counters_free(c);
	return 0;
}
EOF
# a sanitized library needs sanitized programs (the runtime must come first)
progsan=""
[ $san = 1 ] && progsan="-fsanitize=address,undefined"
cc -O1 $progsan $cflags -o "$TMP/count" "$TMP/count.c" $libs 2> "$TMP/cc.err"
out=$(LD_LIBRARY_PATH=$R/usr/lib "$TMP/count" 2>&1)
check "a program linked with pkg-config --libs runs on the installed libspent.so ($out)" \
	test "$(awk '{ print ($1 == "task-clock" && $2 > 5000000) }' <<<"$out")" = 1
check "it loads libspent.so.0 from DESTDIR" \
	grep -q "libspent.so.0 => $R/usr/lib/libspent.so.0" <(LD_LIBRARY_PATH=$R/usr/lib ldd "$TMP/count")
static_libs=$(pkg-config --static --libs spent | sed 's/-lspent/-Wl,-Bstatic -lspent -Wl,-Bdynamic/')
cc -O1 $progsan $cflags -o "$TMP/count-static" "$TMP/count.c" $static_libs 2>> "$TMP/cc.err"
check "linked statically with pkg-config --static --libs" \
	grep -q '^task-clock [1-9]' <("$TMP/count-static" 2>&1)
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR

# --- the daemon inside the sandbox of its installed unit (tests/e2e/unit_sandbox.py: the
# capability bounding set, read-only file system, syscall filter, ... without systemd)
check "daemon --help" grep -q 'spent daemon' <("$S" daemon --help 2>&1)
DB=$TMP/db SPENT=$S
mkdir -m 0750 "$DB"
# LeakSanitizer stops the world with ptrace, which the unit's syscall filter refuses: the
# sanitizer pass checks leaks in the daemon_*.sh scripts, not here
lsan=()
[ $san = 1 ] && lsan=(env ASAN_OPTIONS=detect_leaks=0)
"${lsan[@]}" python3 "$SPENT_TOP/tests/e2e/unit_sandbox.py" "$U" "$DB" -- "$S" daemon --db "$DB" --foreground \
	> "$TMP/daemon.log" 2>&1 &
DAEMON_PID=$!
up=0
for _ in $(seq 1 300); do
	"$S" db "$DB" status --json 2>/dev/null | grep -q '"daemon":true' && { up=1; break; }
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
check "daemon starts inside its unit's sandbox ($(tr '\n' ' ' < "$TMP/daemon.log" | cut -c1-200))" test $up = 1
if [ $up = 1 ]; then
	check "daemon aggregates with BPF in the sandbox" test "$(status_field "$DB" aggregator)" = bpf
	"$PROGS/demo" 0.3 > /dev/null
	"$S" db "$DB" flush > /dev/null
	check "db flush, then report -i DB sees the program" grep -q ' demo *$' <("$S" report -i "$DB" --by image)
	check "db epoch" grep -q 'epoch 1' <("$S" db "$DB" epoch)
fi
stop_daemon
check "daemon stops cleanly on SIGTERM" test $? -eq 0
if grep -qiE 'read-only|permission denied|operation not permitted' "$TMP/daemon.log"; then
	fail "daemon log shows a sandbox refusal: $(grep -iE 'read-only|denied|not permitted' "$TMP/daemon.log" | head -2)"
else
	pass "no sandbox refusal in the daemon log"
fi

# --- systemd's own checks of the unit, when systemd-analyze is there (scripts/deps.sh installs it)
exposure=$(systemd-analyze security --offline=yes "$U" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
check "systemd-analyze security rates the unit <= 2.0 (got ${exposure:-nothing})" \
	awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
verify=$(systemd-analyze verify --man=no "$U" 2>&1 | grep -v 'is not executable')
check "systemd-analyze verify finds no unknown or invalid settings (${verify:-clean})" test -z "$verify"

# --- uninstall leaves no file behind (a copy of the binary stays, for the compiled-in path below)
mkdir -p "$TMP/elsewhere"
cp "$S" "$TMP/elsewhere/spent-usr"
if mk DESTDIR="$R" PREFIX=/usr uninstall > "$TMP/uninstall.log" 2>&1; then
	left=$(find "$R" ! -type d | head -5)
	check "make uninstall leaves no files (left: ${left:-none})" test -z "$left"
	check "make uninstall removes spent's own directories" \
		test ! -e "$L" -a ! -e "$R/usr/include/spent" -a ! -e "$R/usr/share/doc/spent"
else
	fail "make uninstall: $(tail -3 "$TMP/uninstall.log")"
fi

# --- the compiled-in path. The PREFIX=/usr binary, moved away from its tree, looks in
# /usr/lib/spent (and finds it only if this machine has spent installed there).
"$TMP/elsewhere/spent-usr" trace -o "$TMP/x.log" -- /usr/bin/env > "$TMP/usr.out" 2> "$TMP/usr.err"
check "a PREFIX=/usr binary looks in /usr/lib/spent: $(head -c 300 "$TMP/usr.err")" \
	grep -qE "^VALGRIND_LIB=/usr/lib/spent/valgrind$|no spent valgrind tool in $TMP/elsewhere, .*, /usr/lib/spent:" \
	"$TMP/usr.out" "$TMP/usr.err"
# An install without DESTDIR is found from anywhere; spent.pc follows the new PREFIX.
mk PREFIX="$TMP/pfx" install > "$TMP/install2.log" 2>&1
check "make install PREFIX=\$TMP/pfx (no DESTDIR)" test $? -eq 0
check "spent.pc regenerated for the new PREFIX" grep -qx "prefix=$TMP/pfx" "$TMP/pfx/lib/pkgconfig/spent.pc"
cp "$TMP/pfx/bin/spent" "$TMP/elsewhere/spent"
"$TMP/elsewhere/spent" trace -o "$TMP/x.log" -- /usr/bin/env > "$TMP/pfx.out" 2>&1
check "a moved binary finds its helpers at the compiled-in \$TMP/pfx/lib/spent" \
	grep -qx "VALGRIND_LIB=$TMP/pfx/lib/spent/valgrind" "$TMP/pfx.out"
SPENT_LIB_DIR=$SPENT_BUILD "$TMP/elsewhere/spent" trace -o "$TMP/x.log" -- /usr/bin/env > "$TMP/over.out" 2>&1
check "SPENT_LIB_DIR (a build tree) overrides the compiled-in path" \
	grep -qx "VALGRIND_LIB=$SPENT_BUILD/valgrind/lib" "$TMP/over.out"
SPENT_LIB_DIR=$TMP/nothing-here "$TMP/elsewhere/spent" shim --tag phase=phase -- "$TMP/phases" \
	> /dev/null 2> "$TMP/over.err"
check "SPENT_LIB_DIR is the only place looked at when set" \
	grep -q "libspent-shim.so not found in $TMP/nothing-here: " "$TMP/over.err"

# --- the user's CFLAGS replace only the optimisation: -fPIC and the rest stay (ALL_CFLAGS).
# -O0, the quickest to compile; gen/ (vmlinux.h from the kernel's BTF, the BPF skeletons: built
# with flags of their own, never CFLAGS) is copied
mkdir -p "$TMP/o0/gen" && cp -p "$B"/gen/* "$TMP/o0/gen/"
if [ $san = 0 ]; then
	make -C "$SPENT_TOP" --no-print-directory -j2 SAN=0 BUILD="$TMP/o0" CFLAGS=-O0 \
		"$TMP/o0/libspent.so" "$TMP/o0/spent" > "$TMP/o0.log" 2>&1
	check "make CFLAGS=-O0 builds libspent.so and spent" test $? -eq 0 -a -f "$TMP/o0/libspent.so"
else
	# the sanitized pass checks the commands only (make -n): the whole -O0 build under the
	# sanitizers took 17 s of this script's 31, and the plain pass builds it for real
	make -C "$SPENT_TOP" --no-print-directory -n SAN=1 BUILD="$TMP/o0" CFLAGS=-O0 \
		"$TMP/o0/libspent.so" "$TMP/o0/spent" > "$TMP/o0.log" 2>&1
	check "make -n SAN=1 CFLAGS=-O0 plans libspent.so and spent" test $? -eq 0
	link=$(grep -E -- "-o $TMP/o0/spent( |\$)" "$TMP/o0.log" | head -1)
	check "SAN=1 CFLAGS=-O0 still links spent with the sanitizers" \
		bash -c '[[ "$1" == *-fsanitize=address* ]]' _ "$link"
fi
ccl=$(grep -E ' -c -o .*/src/core/' "$TMP/o0.log" | head -1)
check "with -O0 -fPIC -Werror -MMD and not -O2" \
	bash -c '[[ "$1" == *" -O0"* && "$1" == *-fPIC* && "$1" == *-Werror* && "$1" == *-MMD* && "$1" != *-O2* ]]' _ "$ccl"
if [ $san = 1 ]; then
	check "SAN=1 CFLAGS=-O0 still sanitizes its objects" \
		bash -c '[[ "$1" == *-fsanitize=address* ]]' _ "$ccl"
fi
