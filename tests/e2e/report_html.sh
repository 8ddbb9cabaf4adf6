#!/bin/bash
# tests/e2e/report_html.sh - `spent report --html`: the page of a real recording (who_split's
# three threads, and python3) fetches nothing from a network, and in headless Chromium its
# JavaScript builds what the profile holds: flame graph frames with the hot function, heat map
# cells with samples, the tables' rows (functions, commands, threads), the matched percentage
# of a search and the flame graph of a time range (both asked for in the URL hash), the
# embedded plots loaded, and no JavaScript error; a screenshot is a real PNG. Chromium is a
# package (scripts/deps.sh), so a machine without it FAILs.
source "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	fail "report_html_browser: chromium is not installed (scripts/deps.sh installs it)"
	exit 0
fi
# a profile directory of its own: nothing shared with the user's or another run's browser
BROWSER=("$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
	--user-data-dir="$TMP/chromium" --enable-logging=stderr --window-size=1200,1000
	--virtual-time-budget=2000)

# dom PAGE HASH OUT: the DOM after the page's script ran into OUT, Chromium's log into OUT.log
dom() {
	timeout 60 "${BROWSER[@]}" --dump-dom "file://$1$2" > "$3" 2> "$3.log"
}

# facts DOM: what the script built, as one JSON object
facts() {
	python3 - "$1" <<'EOF'
import html.parser, json, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__()
        s.f = {"frames": [], "cells": 0, "cell_samples": 0, "selected": 0, "rows": {},
               "search_percent": None, "errors": "", "ready": None, "flame_info": "",
               "plots": [], "cell_text": {}}
        s.stack, s.table, s.text_of = [], None, None
    def handle_starttag(s, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "body":
            s.f["ready"] = a.get("data-ready")
        if tag == "div" and "fr" in cls:
            s.text_of = "frame"; s.f["frames"].append("")
        if tag == "div" and "hc" in cls:
            s.f["cells"] += 1; s.f["cell_samples"] += int(a.get("data-n", "0"))
            s.f["selected"] += "sel" in cls
        if tag == "span" and a.get("id") == "search-result":
            s.f["search_percent"] = float(a["data-percent"]) if "data-percent" in a else None
        if a.get("id") in ("errors", "flame-info"):
            s.text_of = a["id"]
        if tag == "table":
            s.table = a.get("id"); s.f["rows"][s.table] = []
        if tag == "tr" and s.table:
            s.f["rows"][s.table].append([])
        if tag == "td" and s.table:
            s.text_of = "cell"; s.f["rows"][s.table][-1].append("")
        if tag == "img":
            s.f["plots"].append([a.get("alt"), int(a.get("data-width") or 0), a.get("src", "")[:22]])
    def handle_endtag(s, tag):
        if tag in ("div", "td", "pre", "p"):
            s.text_of = None
        if tag == "table":
            s.table = None
    def handle_data(s, d):
        if s.text_of == "frame": s.f["frames"][-1] += d
        elif s.text_of == "cell": s.f["rows"][s.table][-1][-1] += d
        elif s.text_of == "errors": s.f["errors"] += d
        elif s.text_of == "flame-info": s.f["flame_info"] += d
p = P()
p.feed(open(sys.argv[1]).read())
print(json.dumps(p.f))
EOF
}
# q FACTS PYTHON-EXPR [ARG]: evaluate an expression over the facts (f) and ARG (a)
q() {
	python3 -c 'import json, sys; f = json.loads(sys.argv[1]); a = sys.argv[3]; print(eval(sys.argv[2]))' "$1" "$2" "${3:-}"
}
no_js_errors() { # FACTS LOG
	[ "$(q "$1" 'f["errors"].strip() == "" and f["ready"] == "1"')" = True ] &&
		! grep -q 'Uncaught' "$2"
}

# --- who_split: three threads, a call graph, a plot of each kind -----------------------------
"$SPENT" record -g -o "$TMP/who" -- "$PROGS/who_split" 100 >/dev/null 2>&1
"$SPENT" report -i "$TMP/who" --flamegraph "$TMP/fg.svg" 2>/dev/null
"$SPENT" report -i "$TMP/who" --html "$TMP/who.html" --html-plot "$TMP/fg.svg" \
	--html-plot "$SPENT_TOP/docs/studies-memmap.png" 2>"$TMP/who.err"
check html_written test -s "$TMP/who.html"
check html_says_where grep -q "wrote HTML report '$TMP/who.html'" "$TMP/who.err"
# nothing the page loads comes from elsewhere: no element with a src or href that is not a
# fragment, no URL at all (the plots' SVG namespace is inside their base64)
check html_fetches_nothing bash -c "! grep -Eiq '<[a-z]+[^>]*(src|href)=\"?[^#\"]' '$TMP/who.html' &&
	! grep -Eiq 'https?:|@import|url\(' '$TMP/who.html'"

start=$(date +%s%N)
dom "$TMP/who.html" "#search=worker&range=0-0.2" "$TMP/who.dom"
browser_ms=$((($(date +%s%N) - start) / 1000000))
f=$(facts "$TMP/who.dom")
check html_browser_no_js_errors no_js_errors "$f" "$TMP/who.dom.log"
check html_flame_graph_has_hot_function test "$(q "$f" '"worker" in f["frames"]')" = True
check html_heat_map_has_cells_with_samples test "$(q "$f" 'f["cells"] > 0 and f["cell_samples"] > 0')" = True
check html_hash_range_selects_cells test "$(q "$f" 'f["selected"] > 0 and f["selected"] < f["cells"]')" = True
check html_hash_range_redraws_flame_graph test "$(q "$f" 'f["flame_info"].startswith("from 0.000 s to 0.200 s: ")')" = True
check html_search_matches_hot_function test "$(q "$f" '(f["search_percent"] or 0) >= 50')" = True
check html_functions_table_rows test "$(q "$f" 'any(r[3] == "worker" for r in f["rows"]["functions"][1:])')" = True
check html_threads_table_has_three_threads test "$(q "$f" 'sorted(r[2] for r in f["rows"]["threads"][1:] if r[2].startswith("who-")) == ["who-1", "who-2", "who-3"]')" = True
check html_comms_table_rows test "$(q "$f" 'len(f["rows"]["comms"]) > 1')" = True
check html_plots_embedded_and_loaded test "$(q "$f" '[(p[0], p[1] > 0, p[2]) for p in f["plots"]] == [("fg.svg", True, "data:image/svg+xml;bas"), ("studies-memmap.png", True, "data:image/png;base64,")]')" = True
range_samples=$(q "$f" 'int(f["flame_info"].split(": ")[1].split()[0])')

# the whole profile: every sample, more than the first 0.2 s held
dom "$TMP/who.html" "" "$TMP/whole.dom"
f=$(facts "$TMP/whole.dom")
total=$("$SPENT" report -i "$TMP/who" --json | python3 -c 'import json, sys; print(sum(json.loads(l)["samples"] for l in sys.stdin))')
check html_whole_profile_flame_graph test "$(q "$f" 'f["flame_info"].startswith("whole profile: ")')" = True
check html_whole_flame_graph_counts_every_sample test "$(q "$f" 'int(f["flame_info"].split(": ")[1].split()[0])')" = "$total"
check html_range_holds_fewer_samples test "$range_samples" -lt "$total"
check html_heat_map_holds_every_timed_sample test "$(q "$f" 'f["cell_samples"]')" = "$total"
whole_cells=$(q "$f" 'f["cell_samples"]')

# one thread: its flame graph and its heat map (who-3 burns half of the CPU time)
task=$(python3 -c 'import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r"id=\"spent-data\">(.*?)</script>", page, re.S).group(1))
print([t[0] for t in d["tasks"]].index("who-3"))' "$TMP/who.html")
dom "$TMP/who.html" "#task=$task" "$TMP/task.dom"
f=$(facts "$TMP/task.dom")
check html_thread_flame_graph test "$(q "$f" 'f["flame_info"].startswith("task who-3 ") and "worker" in f["frames"]')" = True
check html_thread_heat_map_is_its_share test "$(q "$f" '0.3 * int(a) < f["cell_samples"] < 0.7 * int(a)' "$whole_cells")" = True

timeout 60 "${BROWSER[@]}" --screenshot="$TMP/who.png" "file://$TMP/who.html#search=worker" >/dev/null 2>&1
check html_screenshot_is_a_png bash -c "[ \$(stat -c %s '$TMP/who.png') -gt 10000 ] && head -c 8 '$TMP/who.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"

# --- a real program: python3 -----------------------------------------------------------------
"$SPENT" record -g -o "$TMP/py" -- python3 -c 'import time
t = time.time()
while time.time() - t < 0.5: sum(i * i for i in range(1000))' >/dev/null 2>&1
"$SPENT" report -i "$TMP/py" --html "$TMP/py.html" 2>/dev/null
hot=$("$SPENT" report -i "$TMP/py" --json --limit 1 | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["symbol"])')
dom "$TMP/py.html" "#search=$hot" "$TMP/py.dom"
f=$(facts "$TMP/py.dom")
check html_python_no_js_errors no_js_errors "$f" "$TMP/py.dom.log"
check html_python_flame_graph_has_hot_function test "$(q "$f" 'a in f["frames"]' "$hot")" = True
check html_python_search_finds_it test "$(q "$f" '(f["search_percent"] or 0) > 10')" = True
check html_python_heat_map_cells test "$(q "$f" 'f["cells"] > 0')" = True
check html_python_comms_table test "$(q "$f" 'any(r[2].startswith("python3") for r in f["rows"]["comms"][1:])')" = True

# --- the checks above see errors: a page whose data names a chain that is not there ----------
sed 's/"stacks":\[/"stacks":[[99999999,1],/' "$TMP/who.html" > "$TMP/broken.html"
dom "$TMP/broken.html" "" "$TMP/broken.dom"
f=$(facts "$TMP/broken.dom")
check html_browser_errors_are_seen test "$(q "$f" 'f["errors"].strip() != ""')" = True
check html_browser_errors_reach_the_log grep -q 'Uncaught' "$TMP/broken.dom.log"

# --- the command line ----------------------------------------------------------------------
# the page shows what --comm selects: every detail row it holds is who-2's
"$SPENT" report -i "$TMP/who" --comm who-2 --html "$TMP/who2.html" 2>/dev/null
check html_page_of_a_selection python3 -c 'import json, re, sys
d = json.loads(re.search(r"id=\"spent-data\">(.*?)</script>", open(sys.argv[1]).read(), re.S).group(1))
comms = {d["tasks"][r[1]][0] for r in d["detail"]["rows"]}
sys.exit(not (comms == {"who-2"} and sum(s[1] for s in d["stacks"]) > 0))' "$TMP/who2.html"
"$SPENT" report -i "$TMP/who" --sort tid --html "$TMP/x.html" 2>/dev/null
check html_refuses_sort test $? = 2
echo text > "$TMP/notes.txt"
"$SPENT" report -i "$TMP/who" --html "$TMP/x.html" --html-plot "$TMP/notes.txt" 2>"$TMP/e1"
check html_refuses_a_plot_that_is_no_image bash -c "grep -q 'neither an SVG nor a PNG' '$TMP/e1' && [ ! -e '$TMP/x.html' ]"
"$SPENT" report -i "$TMP/who" --html-plot "$TMP/fg.svg" 2>"$TMP/e2"
rc=$?
check html_plot_needs_html bash -c "[ $rc = 2 ] && grep -q 'give --html too' '$TMP/e2'"
ln -s who.html "$TMP/link.html"
"$SPENT" report -i "$TMP/who" --html "$TMP/link.html" 2>"$TMP/e3"
check html_refuses_a_symlink grep -q 'it is a symlink' "$TMP/e3"
echo "# report_html: page $(stat -c %s "$TMP/who.html") bytes, python3 page $(stat -c %s "$TMP/py.html") bytes, chromium ${browser_ms} ms"
