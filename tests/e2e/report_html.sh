#!/bin/bash
# tests/e2e/report_html.sh - `spent report --html`: the page of a real recording (who_split's
# three threads, and python3) fetches nothing from a network, and in headless Chromium its
# JavaScript builds what the profile holds: flame graph frames with the hot function, heat map
# cells with samples, the tables' rows (functions, commands, threads), the matched percentage
# of a search, the flame graph of a time range and of a thread (asked for in the URL hash, and
# by clicks, a drag and typing dispatched as DOM events), zoom on a frame, the embedded plots
# loaded, and no JavaScript error; a screenshot is a real PNG. Chromium is a package
# (scripts/deps.sh), so a machine without it FAILs. One browser run loads every view of the
# pages in frames of a harness page, which copies each frame's DOM into its own; one Python
# run reads them all and judges the checks (each interpreter start costs ~0.5 s here).
# test: serial (its threads' CPU split is measured by the clock)
source "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	fail "report_html_browser: chromium is not installed (scripts/deps.sh installs it)"
	exit 0
fi
# a profile directory of its own: nothing shared with the user's or another run's browser;
# file access from files lets the harness read its frames' documents
BROWSER=("$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
	--user-data-dir="$TMP/chromium" --enable-logging=stderr --window-size=1200,1000
	--allow-file-access-from-files --virtual-time-budget=3000)

# python3 $TMP/judge.py DOM < CHECKS: what the page's script built in each view the harness
# copied (element dom-NAME; a plain page's DOM is the view "page") as v["NAME"], the harness's
# notes as v["notes"]; then one PASS/FAIL line per "name: python expression" line of CHECKS,
# evaluated with v and env (the environment).
cat > "$TMP/judge.py" <<'EOF'
import html, html.parser, json, os, re, sys

class View(html.parser.HTMLParser):
    """What the page's script built: frames, heat cells, tables, search, errors, plots."""
    def __init__(s):
        super().__init__()
        s.f = {"frames": [], "cells": 0, "cell_samples": 0, "selected": 0, "rows": {},
               "search_percent": None, "errors": "", "ready": None, "flame_info": "",
               "plots": []}
        s.table, s.text_of = None, None
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
        if tag == "span" and a.get("id") == "search-result" and "data-percent" in a:
            s.f["search_percent"] = float(a["data-percent"])
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

def view(text):
    p = View()
    p.feed(text)
    return p.f

dom = open(sys.argv[1]).read()
copies = re.findall(r'<pre id="(dom-[a-z]+|notes)">(.*?)</pre>', dom, re.S)
v = {"page": view(dom)} if not copies else {}
for name, text in copies:
    text = html.unescape(text)
    v[name[4:] if name != "notes" else name] = json.loads(text) if name == "notes" else view(text)
env = os.environ
for line in sys.stdin:
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    name, expr = line.split(": ", 1)
    try:
        ok = bool(eval(expr))
    except Exception as e:
        ok, expr = False, expr + " (" + repr(e) + ")"
    print("PASS " + name if ok else "FAIL " + name + ": " + expr + " was false")
EOF

# --- the pages: who_split (three threads, a call graph, a plot of each kind) and python3 ---
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
"$SPENT" record -g -o "$TMP/py" -- python3 -c 'import time
t = time.time()
while time.time() - t < 0.5: sum(i * i for i in range(1000))' >/dev/null 2>&1
"$SPENT" report -i "$TMP/py" --html "$TMP/py.html" 2>/dev/null
# the hottest function of python3's table, who-3's index in the page's tasks, all samples
HOT=$("$SPENT" report -i "$TMP/py" --csv --limit 1 | awk -F, 'NR == 2 { print $2 }')
TASK=$(grep -o '"tasks":\[.*\],"detail"' "$TMP/who.html" | grep -o '\["[^"]*",' |
	awk '$0 == "[\"who-3\"," { print NR - 1 }')
TOTAL=$("$SPENT" report -i "$TMP/who" --csv | awk -F, 'NR > 1 { n += $4 } END { print n }')
export HOT TASK TOTAL

# --- the harness: each view in a frame, interactions as DOM events, each frame's DOM copied ---
sed -e "s/@TASK@/$TASK/" -e "s/@HOT@/$HOT/" > "$TMP/harness.html" <<'HARNESS'
<!DOCTYPE html><html><body><script>
var views = [["range", "who.html#search=worker&range=0-0.2"], ["whole", "who.html"],
	     ["task", "who.html#task=@TASK@"], ["py", "py.html#search=@HOT@"], ["click", "who.html"],
	     ["drag", "who.html"], ["zoom", "who.html"]];
var left = views.length, notes = {};
function send(win, el, type) { el.dispatchEvent(new win.MouseEvent(type, { bubbles: true })); }
function click(win, el) { send(win, el, "mousedown"); send(win, el, "mouseup"); }
function named(d, name) {
	return Array.prototype.filter.call(d.querySelectorAll(".fr"),
		function (e) { return e.textContent === name; })[0];
}
views.forEach(function (v) {
	var f = document.createElement("iframe");
	f.style.width = "1200px";
	f.style.height = "900px";
	f.onload = function () {
		var d = f.contentDocument, w = f.contentWindow, cells = d.querySelectorAll(".hc");
		if (v[0] === "click") {		/* a start cell, then an end cell */
			click(w, cells[0]);
			notes.pending = d.querySelectorAll(".hc.pending").length;
			click(w, cells[cells.length - 1]);
		} else if (v[0] === "drag") {	/* across cells, then a typed search */
			send(w, cells[1], "mousedown");
			send(w, cells[cells.length - 2], "mouseup");
			d.getElementById("search").value = "worker";
			d.getElementById("search").dispatchEvent(new w.Event("input", { bubbles: true }));
		} else if (v[0] === "zoom") {
			named(d, "worker").dispatchEvent(new w.MouseEvent("click", { bubbles: true }));
			notes.zoomed_width = named(d, "worker").style.width;
			notes.ancestors = d.querySelectorAll(".fr.anc").length;
			notes.detail = d.getElementById("frame-detail").textContent;
		}
		var out = document.createElement("pre");
		out.id = "dom-" + v[0];
		out.textContent = d.documentElement.outerHTML;
		document.body.appendChild(out);
		if (--left === 0) {
			var n = document.createElement("pre");
			n.id = "notes";
			n.textContent = JSON.stringify(notes);
			document.body.appendChild(n);
			document.body.setAttribute("data-done", "1");
		}
	};
	f.src = v[1];
	document.body.appendChild(f);
});
</script></body></html>
HARNESS
start=$(date +%s%N)
timeout 60 "${BROWSER[@]}" --dump-dom "file://$TMP/harness.html" > "$TMP/h.dom" 2> "$TMP/h.log"
browser_ms=$((($(date +%s%N) - start) / 1000000))
check html_browser_loaded_every_view grep -q 'data-done="1"' "$TMP/h.dom"
check html_browser_log_has_no_uncaught_error bash -c "! grep -q Uncaught '$TMP/h.log'"

python3 "$TMP/judge.py" "$TMP/h.dom" <<'CHECKS'
html_no_js_errors: all(v[n]["errors"].strip() == "" and v[n]["ready"] == "1" for n in v if n != "notes")
html_flame_graph_has_hot_function: "worker" in v["range"]["frames"]
html_heat_map_has_cells_with_samples: v["range"]["cells"] > 0 and v["range"]["cell_samples"] > 0
html_hash_range_selects_cells: 0 < v["range"]["selected"] < v["range"]["cells"]
html_hash_range_redraws_flame_graph: v["range"]["flame_info"].startswith("from 0.000 s to 0.200 s: ")
html_search_matches_hot_function: (v["range"]["search_percent"] or 0) >= 50
html_functions_table_rows: any(r[3] == "worker" for r in v["range"]["rows"]["functions"][1:])
html_threads_table_has_three_threads: sorted(r[2] for r in v["range"]["rows"]["threads"][1:] if r[2].startswith("who-")) == ["who-1", "who-2", "who-3"]
html_comms_table_rows: len(v["range"]["rows"]["comms"]) > 1
html_plots_embedded_and_loaded: [(p[0], p[1] > 0, p[2]) for p in v["range"]["plots"]] == [("fg.svg", True, "data:image/svg+xml;bas"), ("studies-memmap.png", True, "data:image/png;base64,")]
# the whole profile: every sample, in the flame graph and in the heat map; more than 0.2 s held
html_whole_profile_flame_graph: v["whole"]["flame_info"].startswith("whole profile: ")
html_whole_flame_graph_counts_every_sample: v["whole"]["flame_info"].split(": ")[1].split()[0] == env["TOTAL"]
html_heat_map_holds_every_timed_sample: v["whole"]["cell_samples"] == int(env["TOTAL"])
html_range_holds_fewer_samples: 0 < int(v["range"]["flame_info"].split(": ")[1].split()[0]) < int(env["TOTAL"])
# one thread: its flame graph and its heat map (who-3 burns half of the CPU time)
html_thread_flame_graph: v["task"]["flame_info"].startswith("task who-3 ") and "worker" in v["task"]["frames"]
html_thread_heat_map_is_its_share: 0.3 * v["whole"]["cell_samples"] < v["task"]["cell_samples"] < 0.7 * v["whole"]["cell_samples"]
# python3: the hottest function of the table is in the flame graph and the search finds it
html_python_flame_graph_has_hot_function: env["HOT"] in v["py"]["frames"]
html_python_search_finds_it: (v["py"]["search_percent"] or 0) > 10
html_python_heat_map_cells: v["py"]["cells"] > 0
html_python_comms_table: any(r[2].startswith("python3") for r in v["py"]["rows"]["comms"][1:])
# the controls: two clicks select a range (the first marks its start), so does a drag; typing
# searches; clicking a frame zooms into it (it spans the width, its callers stay, dimmed)
html_click_marks_the_start_cell: v["notes"]["pending"] == 1
html_clicks_select_a_range: v["click"]["selected"] >= 2 and v["click"]["flame_info"].startswith("from ")
html_drag_selects_a_range: v["drag"]["selected"] >= 2 and v["drag"]["flame_info"].startswith("from ")
html_typed_search_is_counted: (v["drag"]["search_percent"] or 0) > 0
html_zoom_spans_the_width: v["notes"]["zoomed_width"] == "100%" and v["notes"]["ancestors"] >= 1 and v["notes"]["detail"].startswith("worker ")
CHECKS

timeout 60 "${BROWSER[@]}" --screenshot="$TMP/who.png" "file://$TMP/who.html#search=worker" >/dev/null 2>&1
check html_screenshot_is_a_png bash -c "[ \$(stat -c %s '$TMP/who.png') -gt 10000 ] && head -c 8 '$TMP/who.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"

# --- the checks above see errors: a page whose data names a chain that is not there ----------
sed 's/"stacks":\[/"stacks":[[99999999,1],/' "$TMP/who.html" > "$TMP/broken.html"
timeout 60 "${BROWSER[@]}" --dump-dom "file://$TMP/broken.html" > "$TMP/broken.dom" 2> "$TMP/broken.log"
python3 "$TMP/judge.py" "$TMP/broken.dom" <<'CHECKS'
html_browser_errors_are_seen: v["page"]["errors"].strip() != "" and v["page"]["ready"] is None
CHECKS
check html_browser_errors_reach_the_log grep -q 'Uncaught' "$TMP/broken.log"

# --- the command line ----------------------------------------------------------------------
# the page shows what --comm selects: every task its detail rows name is who-2
"$SPENT" report -i "$TMP/who" --comm who-2 --html "$TMP/who2.html" 2>/dev/null
check html_page_of_a_selection python3 -c 'import json, re, sys
d = json.loads(re.search(r"id=\"spent-data\">(.*?)</script>", open(sys.argv[1]).read(), re.S).group(1))
sys.exit({d["tasks"][r[1]][0] for r in d["detail"]["rows"]} != {"who-2"} or not d["stacks"])' "$TMP/who2.html"
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
# --- many short-lived tasks (a shell spawning 400 processes: the count is what matters):
# the threads table shows its first 200 rows and one row saying how many more there are
"$SPENT" record -e cpu-clock -o "$TMP/many" -- sh -c 'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i + 1)); done' >/dev/null 2>&1
ntasks=$("$SPENT" report -i "$TMP/many" --sort comm,pid,tid --csv | tail -n +2 | wc -l)
"$SPENT" report -i "$TMP/many" --html "$TMP/many.html" 2>/dev/null
timeout 60 "${BROWSER[@]}" --dump-dom "file://$TMP/many.html" > "$TMP/many.dom" 2>/dev/null
threads_rows=$(python3 - "$TMP/many.dom" "$ntasks" <<'EOF'
import html.parser, sys
class T(html.parser.HTMLParser):
    table, rows, more, in_more = None, 0, "", False
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "table": s.table = a.get("id")
        if tag == "tr" and s.table == "threads":
            s.rows += 1; s.in_more = "more" in (a.get("class") or "").split()
    def handle_endtag(s, tag):
        if tag == "table": s.table = None
    def handle_data(s, d):
        if s.table == "threads" and s.in_more: s.more += d
t = T(); t.feed(open(sys.argv[1]).read())
n = int(sys.argv[2])
# header + 200 rows + the note, which counts the rest
ok = n > 200 and t.rows == 202 and t.more.startswith("%d more rows not shown" % (n - 200))
print("ok" if ok else "tasks %d, rows %d, note %r" % (n, t.rows, t.more))
EOF
)
check html_threads_table_capped_with_a_note test "$threads_rows" = ok
echo "# report_html: page $(stat -c %s "$TMP/who.html") bytes, python3 page $(stat -c %s "$TMP/py.html") bytes, chromium ${browser_ms} ms"
