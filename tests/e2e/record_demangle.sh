#!/bin/bash
# tests/e2e/record_demangle.sh - C++ names demangled in every output (report table and CSV,
# folded stacks, pprof, SVG flame graph, annotate), --no-demangle shows them as in the binary,
# and annotate finds a function by its demangled name.
# test: serial (its workloads are sampled for a time, not a count)
source "$(dirname "$0")/lib.sh"

"$SPENT" record -e task-clock -g -o "$TMP/p" -- "$PROGS/cxx_names" 1 2>/dev/null
"$SPENT" report -i "$TMP/p" > "$TMP/table.txt"
check report_table_demangles_template_method grep -q 'ns::Box<double>::sum() const' "$TMP/table.txt"
check report_table_demangles_overload grep -q 'ns::twice(int)' "$TMP/table.txt"
check report_table_has_no_mangled_name test "$(grep -c '_ZN' "$TMP/table.txt")" -eq 0
"$SPENT" report -i "$TMP/p" --csv > "$TMP/t.csv"
check report_csv_demangles grep -q '"ns::Box<double>::sum() const"\|ns::Box<double>::sum() const' "$TMP/t.csv"
"$SPENT" report -i "$TMP/p" --no-demangle > "$TMP/raw.txt"
check no_demangle_shows_mangled grep -q '_ZNK2ns3BoxIdE3sumEv' "$TMP/raw.txt"
check no_demangle_hides_demangled test "$(grep -c 'ns::Box' "$TMP/raw.txt")" -eq 0
"$SPENT" report -i "$TMP/p" --by line > "$TMP/line.txt"
check report_by_line_demangles grep -q 'ns::Box<double>::sum() const.*(cxx_names.cc:' "$TMP/line.txt"

"$SPENT" report -i "$TMP/p" --folded > "$TMP/folded.txt"
check folded_demangles grep -q ';ns::Box<double>::sum() const [0-9]' "$TMP/folded.txt"
"$SPENT" report -i "$TMP/p" --flamegraph "$TMP/fg.svg" 2>/dev/null
check flamegraph_demangles grep -q 'ns::Box&lt;double&gt;::sum() const' "$TMP/fg.svg"
"$SPENT" report -i "$TMP/p" --pprof "$TMP/p.pb.gz" 2>/dev/null
check pprof_demangles sh -c "zcat '$TMP/p.pb.gz' | grep -aq 'ns::Box<double>::sum() const'"
check pprof_has_no_mangled_name sh -c "! zcat '$TMP/p.pb.gz' | grep -aq '_ZNK2ns3BoxIdE3sumEv'"

"$SPENT" annotate -i "$TMP/p" 'ns::Box<double>::sum' > "$TMP/ann.txt"; rc=$?
check annotate_finds_demangled_name test "$rc" -eq 0
# the header names the function found, in full, whether the query had its parameters or not
check annotate_header_demangled grep -q '^# ns::Box<double>::sum() const in ' "$TMP/ann.txt"
"$SPENT" annotate -i "$TMP/p" '_ZN2ns5twiceEi' > "$TMP/ann2.txt"; rc=$?
check annotate_mangled_name_still_works test "$rc" -eq 0
check annotate_mangled_name_shown_demangled grep -q '^# ns::twice(int) in ' "$TMP/ann2.txt"
"$SPENT" annotate -i "$TMP/p" 'ns::Box' > /dev/null 2>&1; rc=$?
check annotate_prefix_is_not_a_match test "$rc" -ne 0

# overloads named without parameters: annotate takes the one with most samples, as it does
# among images (it took the first in the file, over(int), with a fifth of the samples)
cat > "$TMP/ov.cc" <<'CC'
static volatile double sink;
__attribute__((noinline)) void over(int n) { for (int i = 0; i < n; i++) sink += i * 0.5; }
__attribute__((noinline)) void over(long n) { for (long i = 0; i < n; i++) sink += i * 0.25; }
int main() { over(20000000); over(80000000L); return 0; }
CC
if g++ -O1 -g -o "$TMP/ov" "$TMP/ov.cc" 2> "$TMP/ov.err"; then
	"$SPENT" record -e task-clock -o "$TMP/ovp" -- "$TMP/ov" 2> /dev/null
	"$SPENT" annotate -i "$TMP/ovp" over > "$TMP/ov.txt" 2>&1
	check "annotate_overloads_take_the_one_with_most_samples ($(head -1 "$TMP/ov.txt"))" \
		grep -q '^# over(long) in ' "$TMP/ov.txt"
else
	fail "annotate_overloads: g++ failed: $(head -2 "$TMP/ov.err")"
fi
