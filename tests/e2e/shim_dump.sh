#!/bin/bash
# tests/e2e/shim_dump.sh - the bounded sample log written with -o and read back by
# `spent shim dump`: when the buffer holds every sample, the tag histogram recomputed from the
# raw log equals the observer's online histogram exactly (two independent paths: the log
# counts the samples whose class is "app"), clocks are ordered, and the dump's summary equals
# the run's.
# test: serial (the shim's observer busy-loops on a CPU of its own)
source "$(dirname "$0")/lib.sh"

if ! "$SPENT" shim --tag phase=phase --period-ns 2000 --buffer 1000000 -o "$TMP/run.shim" --json \
	-- "$PROGS/shim_phases" 0.3 >"$TMP/run.out" 2>"$TMP/err"; then
	fail "shim_dump: spent shim failed: $(head -2 "$TMP/err")"
	exit 0
fi
if ! "$SPENT" shim dump "$TMP/run.shim" --json --limit 1000000 >"$TMP/dump.out" 2>"$TMP/err"; then
	fail "shim_dump: dump failed: $(head -2 "$TMP/err")"
	exit 0
fi
verdict=$(python3 - "$TMP/run.out" "$TMP/dump.out" <<'PY'
import json, sys
run = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
dump = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
rs = [r for r in run if r["type"] == "summary"][0]
ds = [r for r in dump if r["type"] == "summary"][0]
samples = [r for r in dump if r["type"] == "sample"]
online = {r["value"]: r["samples"] for r in run if r["type"] == "histogram"}
pid = ds["pid"]
recount = {}
classes = {}
for s in samples:
    classes[s["class"]] = classes.get(s["class"], 0) + 1
    if s["class"] == "app":
        recount[s["phase"]] = recount.get(s["phase"], 0) + 1
    if (s["class"] == "other") != (ds["thread_channel"] and s["pid"] != pid):
        classes["wrong"] = 1
print("summary_equal" if all(rs[k] == ds[k] for k in ("samples", "kept", "dropped", "samples_app", "logged", "pid")) else "summary_differs")
print("all_logged" if len(samples) == rs["samples"] == rs["logged"] else "not_all_logged:%d/%d" % (len(samples), rs["samples"]))
print("hist_equal" if recount == online else "hist_differs:%s/%s" % (recount, online))
print("classes_match" if classes.get("app", 0) == ds["samples_app"] and classes.get("other", 0) == ds["samples_other"]
      and classes.get("gap", 0) == ds["samples_gap"] and "wrong" not in classes else "classes_differ:%s" % classes)
print("ordered" if all(a["t_ns"] < b["t_ns"] for a, b in zip(samples, samples[1:])) else "unordered")
PY
)
check "shim_dump_summary dump's summary equals the run's" grep -qx summary_equal <<<"$verdict"
check "shim_dump_all_logged every sample is in the log when --buffer holds them" grep -qx all_logged <<<"$verdict"
check "shim_dump_histogram histogram from the raw log equals the online histogram" grep -qx hist_equal <<<"$verdict"
check "shim_dump_classes each logged sample's class (app/other/gap) matches the summary's counts" \
	grep -qx classes_match <<<"$verdict"
check "shim_dump_ordered logged sample clocks strictly increase" grep -qx ordered <<<"$verdict"
# a small buffer keeps only the last samples
"$SPENT" shim --tag phase=phase --buffer 100 -o "$TMP/small.shim" -- "$PROGS/shim_phases" 0.1 >/dev/null 2>&1
n=$("$SPENT" shim dump "$TMP/small.shim" --json --limit 1000 | grep -c '"type":"sample"')
check "shim_dump_bounded --buffer 100 logs exactly 100 samples" [ "$n" = 100 ]
